"""Install the monitor into the user's desktop: its ``.desktop`` entry, icon and AppStream
metadata (``postproject-monitor --install-desktop``). No Qt.

The three files ship in the wheel (``postproject_gui/resources/desktop`` and the app icon)
and go to the user's XDG data directory (``$XDG_DATA_HOME``, usually ``~/.local/share``):

- ``applications/org.postproject.Monitor.desktop``, whose ``Exec`` names this very
  installation's ``postproject-monitor`` (a virtual environment is rarely on ``PATH``);
- ``icons/hicolor/scalable/apps/org.postproject.Monitor.svg``;
- ``metainfo/org.postproject.Monitor.metainfo.xml``.

The running monitor calls ``QGuiApplication.setDesktopFileName(APP_ID)`` so window managers
match its windows to the entry.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Final

import platformdirs

from postproject_gui.look import resources

APP_ID: Final = "org.postproject.Monitor"
SCRIPT: Final = "postproject-monitor"


def data_home() -> Path:
    """The user's XDG data directory (``~/.local/share`` unless ``XDG_DATA_HOME`` says)."""
    return platformdirs.user_data_path(appname=None, appauthor=False)


def launcher() -> list[str]:
    """The command that starts this installation's monitor."""
    beside = Path(sys.executable).parent / (SCRIPT + (".exe" if os.name == "nt" else ""))
    if beside.is_file():
        return [str(beside)]
    found = shutil.which(SCRIPT)
    return [found] if found else [sys.executable, "-m", "postproject_gui"]


def _quote(argument: str) -> str:
    """An Exec argument quoted as the Desktop Entry specification asks."""
    if not any(ch in argument for ch in " \t\n\"'\\><~|&;$*?#()`"):
        return argument
    escaped = "".join("\\" + ch if ch in '"`$\\' else ch for ch in argument)
    return f'"{escaped}"'


def desktop_entry(command: list[str]) -> str:
    """The shipped entry with ``Exec`` and ``TryExec`` set to ``command``."""
    lines = []
    for line in resources.text("desktop", f"{APP_ID}.desktop").splitlines():
        if line.startswith("Exec="):
            line = "Exec=" + " ".join(_quote(part) for part in command) + " %f"
        elif line.startswith("TryExec="):
            line = "TryExec=" + command[0]
        lines.append(line)
    return "\n".join(lines) + "\n"


def install(target: Path | None = None) -> list[Path]:
    """Write the entry, icon and metadata under ``target`` (default :func:`data_home`);
    the paths written. Existing files of ours are replaced; nothing else is touched."""
    home = target or data_home()
    written = {
        home / "applications" / f"{APP_ID}.desktop": desktop_entry(launcher()).encode(),
        home / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg": resources.path(
            "icons", "app.svg"
        ).read_bytes(),
        home / "metainfo" / f"{APP_ID}.metainfo.xml": resources.path(
            "desktop", f"{APP_ID}.metainfo.xml"
        ).read_bytes(),
    }
    for path, data in written.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.part")
        partial.write_bytes(data)
        os.replace(partial, path)
    _refresh(home)
    return list(written)


def _refresh(home: Path) -> None:
    """Tell the desktop about the new entry and icon, where the tools exist (best effort)."""
    for command in (
        ["update-desktop-database", "-q", str(home / "applications")],
        ["gtk-update-icon-cache", "-q", "-t", str(home / "icons" / "hicolor")],
    ):
        if shutil.which(command[0]):
            subprocess.run(command, check=False, capture_output=True)
