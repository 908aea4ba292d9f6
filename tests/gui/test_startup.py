"""Starting the monitor on a user's machine: the configuration, the log file, the desktop
entry, and clear words (never a traceback) when the GUI extra or a system library is missing."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from postproject import Production, RepresentationKind
from postproject.knowledge.provenance import RepresentationNode
from postproject_gui.launch import desktop, startup
from postproject_gui.services.production_service import ProductionService
from tests.gui.helpers import LoopRunner

# The three libraries the issue names, as the loader knows them, and their packages.
X11_LIBRARIES = {
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-cursor.so.0": "libxcb-cursor0",
}


def run_monitor(
    *args: str, env: dict[str, str] | None = None, code: str | None = None
) -> subprocess.CompletedProcess[str]:
    program = code or "import sys; from postproject_gui.app import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", program, *args],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def loadable(library: str) -> bool:
    try:
        ctypes.CDLL(library)
    except OSError:
        return False
    return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Qt's xcb plugin")
def test_a_platform_plugin_that_cannot_load_is_diagnosed_not_a_core_dump() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["QT_QPA_PLATFORM"] = "xcb"
    done = subprocess.run(
        [sys.executable, "-m", "postproject_gui"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == startup.EXIT_CANNOT_START, done  # not -6 (SIGABRT)
    assert "Traceback" not in done.stderr
    assert "postproject-monitor: Qt could not start" in done.stderr
    missing = [package for library, package in X11_LIBRARIES.items() if not loadable(library)]
    for package in missing:
        assert package in done.stderr
    if missing:
        assert f"sudo apt-get install {' '.join(sorted(missing))}" in done.stderr or all(
            p in done.stderr.split("sudo apt-get install", 1)[1] for p in missing
        )
    else:  # every library is there: then it is the display that is missing
        assert "DISPLAY is not set" in done.stderr


def test_ldd_listings_and_import_errors_name_the_libraries() -> None:
    listing = (
        "\tlinux-vdso.so.1 (0x00007ffc)\n"
        "\tlibxcb-icccm.so.4 => not found\n"
        "\tlibQt6Gui.so.6 => /venv/PySide6/Qt/lib/libQt6Gui.so.6 (0x00007f)\n"
        "\tlibxcb-icccm.so.4 => not found\n"
        "\tlibxcb-keysyms.so.1 => not found\n"
    )
    assert startup.unresolved_libraries(listing) == ["libxcb-icccm.so.4", "libxcb-keysyms.so.1"]
    assert startup.packages_for(["libxcb-keysyms.so.1", "libEGL.so.1", "libodd.so.3"]) == [
        "libegl1", "libodd.so.3", "libxcb-keysyms1",
    ]  # fmt: skip
    text = startup.diagnose_qt("libEGL.so.1: cannot open shared object file: No such file or directory")
    assert "Missing system libraries: libEGL.so.1" in text and "sudo apt-get install libegl1" in text


def test_without_the_gui_extra_the_monitor_says_how_to_install_it() -> None:
    blocked = (
        "import sys; sys.modules['PySide6'] = None; sys.modules['qasync'] = None\n"
        "from postproject_gui.app import main; sys.exit(main(sys.argv[1:]))"
    )
    done = run_monitor("show.pproj", code=blocked)
    assert done.returncode == startup.EXIT_CANNOT_START
    assert "pip install 'postproject-monitor[gui]'" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_snapshot_logs_to_the_rotating_file_and_verbose_to_stderr(tmp_path: Path) -> None:
    production = tmp_path / "show.pproj"
    Production.create(production).close()
    log_file = tmp_path / "logs" / "monitor.log"
    env = {"QT_QPA_PLATFORM": "offscreen", "POSTPROJECT_MONITOR_LOG_FILE": str(log_file)}
    quiet = run_monitor(str(production), "--snapshot", str(tmp_path / "a.png"), env=env)
    assert quiet.returncode == 0, quiet.stderr
    assert "starting (production" in log_file.read_text() and "starting" not in quiet.stderr
    loud = run_monitor(str(production), "--snapshot", str(tmp_path / "b.png"), "--verbose", env=env)
    assert loud.returncode == 0 and "DEBUG" in loud.stderr and "DEBUG" in log_file.read_text()


def test_the_default_log_file_is_in_the_user_log_directory(tmp_path: Path) -> None:
    production = tmp_path / "show.pproj"
    Production.create(production).close()
    env = {"QT_QPA_PLATFORM": "offscreen", "XDG_STATE_HOME": str(tmp_path / "state")}
    done = run_monitor(str(production), "--snapshot", str(tmp_path / "a.png"), env=env)
    assert done.returncode == 0, done.stderr
    if sys.platform.startswith("linux"):
        assert "starting" in (tmp_path / "state" / "postproject" / "log" / "monitor.log").read_text()


def test_the_configured_production_and_theme_are_used(tmp_path: Path) -> None:
    production = tmp_path / "show.pproj"
    Production.create(production).close()
    config = tmp_path / "config.toml"
    config.write_text(f"production = '{production}'\n[monitor]\ntheme = 'purple'\n")
    env = {"QT_QPA_PLATFORM": "offscreen", "POSTPROJECT_CONFIG": str(config)}
    bad = run_monitor("--snapshot", str(tmp_path / "a.png"), env=env)
    assert (
        bad.returncode == 2 and "monitor.theme must be one of" in bad.stderr and "Traceback" not in bad.stderr
    )
    config.write_text(f"production = '{production}'\n[monitor]\ntheme = 'dark'\n")
    done = run_monitor("--snapshot", str(tmp_path / "a.png"), env=env)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "a.png").read_bytes().startswith(b"\x89PNG")


@pytest.fixture
def mounted_elsewhere(tmp_path: Path) -> tuple[Path, Path, str]:
    """A production whose root ``shared`` has no stored directory, one file under it, and
    this machine's mount of the root."""
    mount = tmp_path / "mnt" / "shared"
    (mount / "shots").mkdir(parents=True)
    (mount / "shots" / "A001.mov").write_bytes(b"essence")
    path = tmp_path / "show.pproj"
    with Production.create(path, root_map={"shared": mount}) as production, production.edit() as tx:
        tx.add_media_root("shared")
        asset = tx.create_asset("A001")
        rep = tx.add_representation(asset, RepresentationKind.ORIGINAL, "shots/A001.mov", root="shared")
        tx.commit()
    return path, mount, str(rep)


def test_the_monitor_sees_media_through_configured_root_maps(
    mounted_elsewhere: tuple[Path, Path, str], qloop: LoopRunner
) -> None:
    from postproject import RepresentationId

    path, mount, rep = mounted_elsewhere

    def availability(root_map: dict[str, str] | None) -> object:
        service = ProductionService(path, loop=qloop.loop, root_map=root_map)
        try:
            qloop.run(service.open())
            read = qloop.run(service.provenance(RepresentationId.parse(rep)))
        finally:
            service.close()
        node = next(n for n in read.graph.nodes if isinstance(n, RepresentationNode) and str(n.id) == rep)
        return node.availability.value if node.availability is not None else None

    assert availability({"shared": str(mount)}) == "online"
    assert availability(None) != "online"


def test_install_desktop_writes_valid_entry_icon_and_metadata(tmp_path: Path) -> None:
    env = {"XDG_DATA_HOME": str(tmp_path / "share")}
    done = run_monitor("--install-desktop", env=env)
    assert done.returncode == 0, done.stderr
    share = tmp_path / "share"
    entry = share / "applications" / "org.postproject.Monitor.desktop"
    icon = share / "icons" / "hicolor" / "scalable" / "apps" / "org.postproject.Monitor.svg"
    metainfo = share / "metainfo" / "org.postproject.Monitor.metainfo.xml"
    assert sorted(done.stdout.split()) == sorted(["installed"] * 3 + [str(entry), str(icon), str(metainfo)])
    exec_line = next(line for line in entry.read_text().splitlines() if line.startswith("Exec="))
    command = exec_line.removeprefix("Exec=").removesuffix(" %f")
    assert Path(command.strip('"')).name.startswith("postproject-monitor") or "-m postproject_gui" in command
    assert icon.read_text().startswith("<svg")
    for tool, args in (
        ("desktop-file-validate", [str(entry)]),
        ("appstreamcli", ["validate", "--no-net", str(metainfo)]),
    ):
        if shutil.which(tool) is None:  # dev.py installs both for the test suite
            pytest.skip(f"{tool} is not installed")
        checked = subprocess.run([tool, *args], capture_output=True, text=True, check=False)
        assert checked.returncode == 0, checked.stdout + checked.stderr


def test_desktop_exec_quoting_follows_the_specification() -> None:
    entry = desktop.desktop_entry(["/opt/Post Project/bin/postproject-monitor"])
    assert 'Exec="/opt/Post Project/bin/postproject-monitor" %f' in entry
    assert "Icon=org.postproject.Monitor" in entry


def test_the_running_application_names_its_desktop_file(tmp_path: Path) -> None:
    production = tmp_path / "show.pproj"
    Production.create(production).close()
    probe = (
        "import sys\n"
        "from PySide6.QtGui import QGuiApplication\n"
        "import postproject_gui.app as app\n"
        "async def report(window, args):\n"
        "    print(QGuiApplication.desktopFileName())\n"
        "    return 0\n"
        "app._snapshot = report  # look at the live application instead of taking a picture\n"
        "sys.exit(app.main(sys.argv[1:]))\n"
    )
    done = run_monitor(
        str(production),
        "--snapshot",
        str(tmp_path / "x.png"),
        code=probe,
        env={"QT_QPA_PLATFORM": "offscreen"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == desktop.APP_ID == "org.postproject.Monitor"
