#!/usr/bin/env python3
"""Set up and run PostProject Monitor from a fresh checkout (needs only Python 3.11+).

    python3 dev.py demo     set up, create a live demo production, open the monitor on it
                            (--postgres: the same on a local PostgreSQL server in .pgdata/;
                            --service: the workers through a local service, not the database)
    python3 dev.py test     set up, then run the whole test suite offscreen (what CI runs)
    python3 dev.py bench    set up, then run the benchmarks and print their figures

Setup creates ``.venv`` beside this file and installs the project (editable) with its
extras; it is repeated only when ``pyproject.toml`` changes. On Linux it checks the system
libraries Qt needs and, for tests and benchmarks, PostgreSQL's server programs, and installs
them with apt-get when it can (root), or names them.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".postproject-setup"

# Shared libraries the Qt wheels load, and the Debian/Ubuntu packages that provide them.
QT_LIBRARIES = {
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libglib-2.0.so.0": "libglib2.0-0",
    "libdbus-1.so.3": "libdbus-1-3",
}
# Only for windows on a real X11 display (the demo), not for offscreen tests.
QT_X11_LIBRARIES = {
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libX11-xcb.so.1": "libx11-xcb1",
}


def say(message: str) -> None:
    print(f"[dev] {message}", flush=True)


def run(*args: str | Path, env: dict[str, str] | None = None) -> int:
    """Run a command; Ctrl-C reaches it too (same process group): wait for it to finish."""
    process = subprocess.Popen([str(a) for a in args], cwd=ROOT, env=env)
    while True:
        try:
            return process.wait()
        except KeyboardInterrupt:
            # A terminal's Ctrl-C reaches the child too; pass it on in case it did not.
            process.send_signal(signal.SIGINT)


def setup(extras: str) -> None:
    """Create the virtual environment and install the project with ``extras``."""
    if sys.version_info < (3, 11):
        sys.exit(f"PostProject Monitor needs Python 3.11 or newer (this is {sys.version.split()[0]})")
    if not PYTHON.exists():
        say(f"creating {VENV.relative_to(ROOT)}")
        venv.EnvBuilder(with_pip=True).create(VENV)
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    wanted = set(extras.split(","))
    if STAMP.exists():
        stamped_digest, _, stamped_extras = STAMP.read_text().partition(" ")
        if stamped_digest == digest and wanted <= set(stamped_extras.split(",")):
            return  # installed from this pyproject.toml with these extras (or more) already
    say(f"installing postproject-monitor[{extras}] into .venv (first run or pyproject.toml changed)")
    quiet = ["--quiet", "--disable-pip-version-check"]
    if run(PYTHON, "-m", "pip", "install", *quiet, "--upgrade", "pip") != 0:
        sys.exit("pip could not upgrade itself; see the messages above")
    # --no-compile: the tests read compiled bytecode from .venv/pycache (test_environment), never
    # from site-packages, and Python compiles a module on its first import anyway (fresh venv:
    # 25.5 -> 18.6 s, 23 -> 18 s of CPU).
    if run(PYTHON, "-m", "pip", "install", *quiet, "--no-compile", "--editable", f".[{extras}]") != 0:
        sys.exit("installing the project failed; see the messages above")
    STAMP.write_text(f"{digest} {extras}")


# Commands the test suite runs: jq (the spec's shell examples), zsh and fish (the completion
# scripts are checked by the real shells), the desktop-entry and AppStream validators.
TEST_COMMANDS = {
    "jq": "jq",
    "zsh": "zsh",
    "fish": "fish",
    "desktop-file-validate": "desktop-file-utils",
    "appstreamcli": "appstream",
}


def missing_libraries(libraries: dict[str, str]) -> list[str]:
    """Packages providing the libraries the dynamic loader cannot find."""
    if not sys.platform.startswith("linux"):
        return []
    try:
        cache = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, check=False).stdout
    except OSError:
        cache = ""
    if not cache:
        return []  # cannot tell; Qt will say what is missing if anything is
    return sorted({package for library, package in libraries.items() if library not in cache})


def apt_install(packages: list[str], *flags: str) -> bool:
    """Install Debian/Ubuntu ``packages`` with apt-get when we can (root); whether it worked."""
    apt = shutil.which("apt-get")
    if not (apt and hasattr(os, "geteuid") and os.geteuid() == 0):
        return False
    say(f"installing system packages: {' '.join(packages)}")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    return (
        run(apt, "update", "-qq", env=env) == 0
        and run(apt, "install", "-y", "-qq", *flags, *packages, env=env) == 0
    )


class SystemPackages:
    """The system packages a command needs, installed by one apt-get run in the background
    while pip installs the Python packages (on a fresh machine each takes about a minute).

    ``required``: what the command cannot run without (it stops, naming them, when they cannot
    be installed); ``postgresql``: PostgreSQL's server programs, which the tests start their own
    server from (without them those tests are skipped, and fail under CI=true); ``optional``:
    commands installed when missing, which the command goes on without (a benchmark that
    needs one says so and is skipped)."""

    def __init__(
        self,
        libraries: dict[str, str],
        commands: dict[str, str] | None = None,
        *,
        postgresql: bool = False,
        optional: dict[str, str] | None = None,
    ) -> None:
        self.required = missing_libraries(libraries) + sorted(
            {package for command, package in (commands or {}).items() if not shutil.which(command)}
        )
        wants_server = postgresql and sys.platform.startswith("linux") and not has_postgresql_server()
        self.optional = (["postgresql"] if wants_server else []) + sorted(
            {package for command, package in (optional or {}).items() if not shutil.which(command)}
        )
        self._installed = True
        self._thread: threading.Thread | None = None
        if self.required or self.optional:
            self._thread = threading.Thread(target=self._install, name="apt-get", daemon=True)
            self._thread.start()

    def _install(self) -> None:
        self._installed = apt_install(self.required + self.optional, "--no-install-recommends")

    def wait(self) -> None:
        """Wait for the installation; stop if what is required is still missing."""
        if self._thread is None:
            return
        self._thread.join()
        if self._installed:
            return
        if self.required:
            sys.exit(
                "These system packages are missing:\n"
                f"    sudo apt-get install {' '.join(self.required + self.optional)}\n"
                "(names for Debian/Ubuntu; other distributions ship the same libraries)"
            )
        if "postgresql" in self.optional:
            say("PostgreSQL's server is missing (sudo apt-get install postgresql): its tests will be skipped")
        if others := [p for p in self.optional if p != "postgresql"]:
            say(f"not installed (sudo apt-get install {' '.join(others)}): what needs them is skipped")


def has_postgresql_server() -> bool:
    """Whether PostgreSQL's server programs are here (Debian keeps them outside PATH)."""
    if configured := os.environ.get("POSTPROJECT_PG_BINDIR"):
        return (Path(configured) / "initdb").is_file()
    return any(Path("/usr/lib/postgresql").glob("*/bin/initdb")) or shutil.which("initdb") is not None


def test_processes() -> int:
    """pytest-xdist workers: one per core, plus two. A good share of the suite waits on other
    processes (workers, servers, the demo) rather than computing, so two more workers than cores
    keep the cores busy (measured on 2 cores, the same tree: 3 workers 12 min 02 s, 4 workers
    10 min 33 s; see tests/README.md)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores + 2


def parallel_options(args: list[str]) -> list[str]:
    """Run the tests in parallel (pytest-xdist) unless the arguments choose otherwise.

    ``--dist loadgroup`` hands tests out one by one as workers free up, and keeps the tests
    marked with the same ``xdist_group`` on one worker, one after the other."""
    chosen = any(
        a in ("-n", "--numprocesses", "no:xdist") or a.startswith(("-n", "--numprocesses=")) for a in args
    )
    return [] if chosen else ["--numprocesses", str(test_processes()), "--dist", "loadgroup"]


def test_environment() -> dict[str, str]:
    """Offscreen, with Python's compiled bytecode cached under ``.venv/pycache`` rather than beside
    the sources (the checkout stays clean). Without a cache every process the suite starts
    (the pytest-xdist workers, and the workers, services and monitors the tests spawn)
    compiled the project's modules again, and pytest rewrote every test module's asserts again
    in each worker: collecting the suite took 13.6 s of CPU per worker without, 4.8 s with."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPYCACHEPREFIX=str(VENV / "pycache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # (set by some environments; it would turn the cache off)
    if "TMPDIR" not in os.environ and (scratch := memory_scratch()) is not None:
        env["TMPDIR"] = str(scratch)
    return env


def memory_scratch(folder: Path = Path("/dev/shm"), needed: int = 8 << 30) -> Path | None:
    """A folder in memory (tmpfs) for the suite's temporary files, when there is room.

    The suite creates and removes files by the hundred thousand (a SQLite production or two per
    test, a PostgreSQL schema of ~50 tables and indexes per test, the wheel's environments):
    on a journalled disk that is kernel time the parallel suite shares its cores with. Measured:
    creating a PostgreSQL production took 169 ms of the server's CPU with its data on ext4,
    72 ms on tmpfs. Used only where ``folder`` is a tmpfs with ``needed`` bytes free (a
    container's default 64 MiB /dev/shm is not); ``TMPDIR`` set by the caller wins."""
    try:
        stats = os.statvfs(folder)
        with open("/proc/mounts", encoding="utf-8") as mounts:
            tmpfs = any(f.split()[1:3] == [str(folder), "tmpfs"] for f in mounts if len(f.split()) > 2)
    except OSError:
        return None
    if not tmpfs or stats.f_bavail * stats.f_frsize < needed:
        return None
    scratch = folder / "postproject-tests"
    scratch.mkdir(exist_ok=True)
    scratch.chmod(0o1777)  # as /tmp: the throwaway PostgreSQL servers run as another account
    return scratch


def test(args: list[str]) -> int:
    system = SystemPackages(QT_LIBRARIES, TEST_COMMANDS, postgresql=True)
    setup("gui,test,bench,postgresql,service")
    system.wait()
    env = test_environment()
    pytest = [PYTHON, "-m", "pytest", *parallel_options(args), *args]
    if args:
        say("running the test suite (offscreen)")
        return run(*pytest, env=env)
    checks: list[tuple[str, list[str | Path]]] = [
        ("ruff (lint)", [BIN / "ruff", "check", "."]),
        ("ruff (format)", [BIN / "ruff", "format", "--check", "."]),
        ("import-linter", [BIN / "lint-imports"]),
    ]
    for name, command in checks:
        say(f"running {name}")
        if run(*command, env=env) != 0:
            say(f"{name} failed")
            return 1
    # mypy takes a while without its cache (a fresh CI machine): it checks beside the tests.
    say("running mypy beside the test suite (offscreen)")
    mypy = subprocess.Popen(
        [str(BIN / "mypy")], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    tests = run(*pytest, env=env)
    said, _ = mypy.communicate()
    if mypy.returncode != 0:
        print(said, end="", flush=True)
        say("mypy failed")
        return 1
    say(f"mypy: {said.strip().splitlines()[-1] if said.strip() else 'passed'}")
    return tests


def demo(args: list[str]) -> int:
    postgres = "--postgres" in args
    x11 = bool(os.environ.get("DISPLAY")) and not os.environ.get("WAYLAND_DISPLAY")
    system = SystemPackages(QT_LIBRARIES | (QT_X11_LIBRARIES if x11 else {}), postgresql=postgres)
    # --service (passed on to demo run): the workers through a local service.
    setup(
        ",".join(
            ["gui", *(["postgresql"] if postgres else []), *(["service"] if "--service" in args else [])]
        )
    )
    system.wait()
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")) and sys.platform.startswith(
        "linux"
    ):
        say("no display found: the monitor will run offscreen (use --snapshot to save pictures)")
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        os.environ.setdefault("QT_LOGGING_RULES", "qt.qpa.*=false")
    if postgres:
        return demo_postgres([a for a in args if a != "--postgres"])
    # POSTPROJECT_DEMO_PRODUCTION lets the Quick start test keep the demo in a scratch folder.
    production = Path(os.environ.get("POSTPROJECT_DEMO_PRODUCTION", ROOT / "demo" / "demo.pproj"))
    return run(BIN / "postproject", "demo", "run", production, "--fresh", *args)


def demo_postgres(args: list[str]) -> int:
    """The demo on a local PostgreSQL server kept in .pgdata/ (reused by later runs): the demo
    production in it, workers as separate processes connecting over TCP, the monitor on its URI.
    Ctrl-C or closing the monitor stops the workers, then the server."""
    if not has_postgresql_server():
        sys.exit("the PostgreSQL demo needs PostgreSQL's server programs: sudo apt-get install postgresql")
    # POSTPROJECT_DEMO_PGDATA lets the demo test keep the server in a scratch folder.
    data = Path(os.environ.get("POSTPROJECT_DEMO_PGDATA", ROOT / ".pgdata"))
    media = Path(os.environ.get("POSTPROJECT_DEMO_MEDIA", ROOT / "demo" / "postgres-media"))
    return run(PYTHON, "-m", "postproject.cli.demo_postgres", data, media, *args)


def bench(args: list[str]) -> int:
    system = SystemPackages({}, postgresql=True, optional={"valgrind": "valgrind"})  # (instruction counts)
    setup("gui,test,bench,postgresql,service")
    system.wait()
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return run(PYTHON, "benchmarks/run_all.py", *args, env=env)


def main() -> int:
    commands = {"test": test, "demo": demo, "bench": bench}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        print(__doc__.strip())
        return 2
    return commands[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
