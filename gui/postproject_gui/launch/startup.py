"""What the monitor checks and sets up before Qt starts (nothing here imports Qt).

- :func:`missing_gui_extra`: the install hint when the ``gui`` extra (PySide6, qasync) is
  not installed, so ``postproject-monitor`` explains itself instead of a traceback.
- :func:`diagnose_qt`: when Qt cannot load (an ``ImportError`` naming a shared library, or
  the fatal "could not load the Qt platform plugin" message), the exact system libraries
  that are missing and the Debian/Ubuntu packages that provide them.
- :func:`setup_logging`: the rotating log file in the user's log directory (``--verbose``
  also echoes to stderr); no line carries a lease token or a password.
"""

from __future__ import annotations

import ctypes
import importlib.util
import logging
import logging.handlers
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from postproject.logs import secret_free

INSTALL_HINT: Final = (
    "postproject-monitor needs the GUI extra, which is not installed in this environment:\n"
    "    pip install 'postproject-monitor[gui]'\n"
    "(the command line, workers and the demo's media work without it)"
)
EXIT_CANNOT_START: Final = 3

# Shared libraries Qt's widgets and its xcb (X11) platform plugin load, and the
# Debian/Ubuntu packages that provide them. libxcb-cursor is loaded at run time (dlopen),
# so no linker tool lists it: it is checked by name.
PACKAGES: Final = {
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libOpenGL.so.0": "libopengl0",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libglib-2.0.so.0": "libglib2.0-0",
    "libdbus-1.so.3": "libdbus-1-3",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-xinerama.so.0": "libxcb-xinerama0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb.so.1": "libxcb1",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libX11.so.6": "libx11-6",
    "libSM.so.6": "libsm6",
    "libICE.so.6": "libice6",
}
DLOPENED: Final = ("libxcb-cursor.so.0",)
_NOT_FOUND: Final = re.compile(r"^\s*(\S+)\s+=>\s+not found", re.MULTILINE)
_CANNOT_OPEN: Final = re.compile(r"(\S+\.so(?:\.\d+)*): cannot open shared object file")


def missing_gui_extra() -> str | None:
    """The install hint when PySide6 or qasync cannot be imported (None when both can)."""
    for module in ("PySide6", "qasync"):
        if importlib.util.find_spec(module) is None:
            return INSTALL_HINT
    return None


def packages_for(libraries: Iterable[str]) -> list[str]:
    """Debian/Ubuntu package names for sonames (the soname itself when unknown)."""
    return sorted({PACKAGES.get(library, library) for library in libraries})


def unresolved_libraries(ldd_output: str) -> list[str]:
    """The sonames ``ldd`` reports as ``not found`` (each once, in order)."""
    return list(dict.fromkeys(_NOT_FOUND.findall(ldd_output)))


def qt_directory() -> Path | None:
    """PySide6's bundled Qt (``.../site-packages/PySide6/Qt``), found without importing Qt."""
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "Qt"


def missing_libraries(platform: str = "xcb") -> list[str]:
    """The shared libraries that Qt's ``platform`` plugin needs and the loader cannot find."""
    if not sys.platform.startswith("linux"):
        return []
    found: list[str] = []
    qt = qt_directory()
    plugin = qt / "plugins" / "platforms" / f"libq{platform}.so" if qt is not None else None
    ldd = shutil.which("ldd")
    if plugin is not None and plugin.is_file() and ldd is not None:
        listing = subprocess.run([ldd, str(plugin)], capture_output=True, text=True, check=False)
        found += unresolved_libraries(listing.stdout + listing.stderr)
    if platform == "xcb":
        for library in DLOPENED:
            try:
                ctypes.CDLL(library)
            except OSError:
                found.append(library)
    return list(dict.fromkeys(found))


def _platform() -> str:
    return os.environ.get("QT_QPA_PLATFORM", "").partition(":")[0] or (
        "wayland" if os.environ.get("WAYLAND_DISPLAY") and not os.environ.get("DISPLAY") else "xcb"
    )


def diagnose_qt(message: str) -> str:
    """What to tell a user whose Qt could not start, from Qt's (or the importer's) message."""
    platform = _platform()
    libraries = _CANNOT_OPEN.findall(message) or missing_libraries(platform)
    lines = [f"postproject-monitor: Qt could not start ({' '.join(message.split())[:300]})"]
    if libraries:
        lines.append(f"Missing system libraries: {', '.join(libraries)}")
        lines.append(f"Install them with:\n    sudo apt-get install {' '.join(packages_for(libraries))}")
        lines.append("(package names for Debian and Ubuntu; other distributions ship the same libraries)")
    elif platform == "xcb" and not os.environ.get("DISPLAY"):
        lines.append("No X display: DISPLAY is not set. Run it in a desktop session, or headless with")
        lines.append("    QT_QPA_PLATFORM=offscreen postproject-monitor PRODUCTION --snapshot out.png")
    else:
        lines.append(f"Qt's {platform!r} platform plugin failed to load; QT_DEBUG_PLUGINS=1 shows why.")
    return "\n".join(lines)


LOG_FILE_NAME: Final = "monitor.log"
LOG_BYTES: Final = 1_000_000
LOG_BACKUPS: Final = 5
LOG_FORMAT: Final = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def setup_logging(log_file: Path, *, verbose: bool) -> logging.Handler | None:
    """Send the monitor's log records to a rotating ``log_file`` (1 MB x 5; created with its
    folder), and also to stderr when ``verbose``. Returns the file handler (None when the file
    cannot be opened: the monitor then logs to stderr only and says so once)."""
    root = logging.getLogger()
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    handler: logging.Handler | None
    try:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.handlers.RotatingFileHandler(
            log_file, maxBytes=LOG_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8", delay=False
        )
    except OSError as exc:
        handler = None
        sys.stderr.write(
            f"postproject-monitor: cannot write the log file {log_file}: {exc.strerror or exc}\n"
        )
    outputs: list[logging.Handler] = [handler] if handler is not None else []
    if verbose or handler is None:
        outputs.append(logging.StreamHandler(sys.stderr))
    for output in outputs:
        output.setFormatter(logging.Formatter(LOG_FORMAT))
        output.setLevel(logging.DEBUG if verbose else logging.INFO)
        root.addHandler(secret_free(output))
    return handler
