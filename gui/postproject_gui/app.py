"""``postproject-monitor [PRODUCTION]``: the application's entry point.

Builds the QApplication and a qasync event loop (asyncio on top of Qt's), the theme, the
error presenter and the main window (:func:`build_window`, which also says how a production
is opened: a :class:`~postproject_gui.services.production_service.ProductionService` and the
:class:`~postproject_gui.session.monitor_session.MonitorSession` over it), then either runs
interactively or, with ``--snapshot OUT.png``, takes one headless snapshot and exits.

Before Qt starts it reads the configuration (:mod:`postproject.config`: root maps, the
default production, ``[monitor]`` preferences; flags win), opens the rotating log file, and
checks that the ``gui`` extra is installed. When Qt cannot start (a missing system library,
no display), it names what is missing and exits with status 3, never with a traceback or a
core dump (:mod:`postproject_gui.launch.startup`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import logging
import os
import re
import signal
import socket
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from postproject import Clock, __version__, humanize
from postproject import config as settings
from postproject.model.errors import PostProjectError
from postproject_gui.launch import startup
from postproject_gui.text import location as production_location

if TYPE_CHECKING:  # Qt is imported only once the gui extra is known to be installed
    from postproject_gui.dialogs.error_presenter import ErrorPresenter
    from postproject_gui.look.theme import ThemeManager
    from postproject_gui.session.monitor_session import MonitorSession
    from postproject_gui.settings import Settings
    from postproject_gui.window.main_window import MainWindow

log = logging.getLogger("postproject_gui")

EXIT_OK, EXIT_TIMEOUT, EXIT_USAGE, EXIT_CANNOT_START = 0, 1, 2, 3


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="postproject-monitor",
        description="Watch and steer the jobs of a PostProject production.",
    )
    parser.add_argument(
        "production",
        nargs="?",
        help="the .pproj file or postgresql:// URI to open (default: the configured one)",
    )
    parser.add_argument(
        "--theme",
        choices=("system", "light", "dark"),
        help="colour theme (default: config monitor.theme, else remembered)",
    )
    parser.add_argument(
        "--root-map",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="this machine's directory for media root NAME (repeatable; adds to the configured ones)",
    )
    parser.add_argument(
        "--verbose", action="store_true", help="log debug details, to the log file and to stderr"
    )
    parser.add_argument(
        "--install-desktop",
        action="store_true",
        help="install the desktop entry, icon and AppStream metadata for this user, then exit",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    shot = parser.add_argument_group("headless snapshot")
    shot.add_argument(
        "--snapshot", type=Path, metavar="OUT.png", help="save the window as OUT.png and OUT.json, then exit"
    )
    shot.add_argument(
        "--view",
        default="jobs",
        help="jobs (default), lifecycle, job:JOB_ID, artifacts, provenance:REP_ID, dashboard or workers",
    )
    shot.add_argument(
        "--filter-state",
        metavar="STATE",
        help="requested, claimed, succeeded, failed, cancelled or stuck; stale with --view artifacts",
    )
    shot.add_argument(
        "--until-revision", type=_revision, metavar="N", help="wait until the view reflects revision N"
    )
    shot.add_argument(
        "--timeout", default="30s", metavar="DUR", help="give up after DUR (250ms, 30s, 5m); default 30s"
    )
    shot.add_argument("--size", default="1440x900", metavar="WxH", help="window size; default 1440x900")
    shot.add_argument(
        "--search",
        default="",
        metavar="TEXT",
        help="search every job for TEXT first (the job table's search)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the monitor; the process exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.install_desktop:
        return _install_desktop()
    try:
        config = settings.load(
            flags={
                "monitor.theme": ("--theme", args.theme),
                "monitor.verbose": ("--verbose", True if args.verbose else None),
            },
            root_map_flags=args.root_map,
        )
    except PostProjectError as exc:
        parser.error(humanize.printable(exc.message))
    args.theme = config["monitor.theme"]
    args.root_map = config.root_map
    if args.production is None and config["production"] is not None:
        args.production = str(config["production"])
    if args.production is not None:
        args.production = production_location.of(args.production)
    if args.snapshot is not None:
        if args.production is None:
            parser.error("--snapshot needs a PRODUCTION")
        try:
            args.timeout = humanize.parse_duration(
                args.timeout, field="--timeout", minimum=timedelta(milliseconds=1), maximum=timedelta(hours=1)
            )
            args.size = _size(args.size)
        except ValueError as exc:
            parser.error(str(exc))
        from postproject_gui.launch.snapshot_options import SnapshotError, SnapshotOptions

        args.snapshot = SnapshotOptions(
            args.snapshot,
            args.view,
            args.filter_state,
            args.until_revision,
            args.timeout,
            args.size,
            args.search,
        )
        try:
            args.snapshot.check()  # before Qt loads: a bad option costs no window
        except SnapshotError as exc:
            sys.stderr.write(f"postproject-monitor: {exc}\n")
            return exc.exit_code
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    hint = startup.missing_gui_extra()
    if hint is not None:
        sys.stderr.write(hint + "\n")
        return EXIT_CANNOT_START
    log_file = Path(config["monitor.log_file"] or settings.log_dir() / startup.LOG_FILE_NAME)
    startup.setup_logging(log_file, verbose=config["monitor.verbose"])
    shown = production_location.shown(args.production) if args.production else "-"
    log.info("postproject-monitor %s starting (production %s)", __version__, shown)
    try:
        return _run(args)
    except ImportError as exc:  # Qt's own libraries could not load a system library
        log.error("Qt could not be imported: %s", exc)
        sys.stderr.write(startup.diagnose_qt(str(exc)) + "\n")
        return EXIT_CANNOT_START


def build_window(
    remembered: Settings,
    theme: ThemeManager,
    presenter: ErrorPresenter,
    *,
    clock: Clock | None = None,
    root_map: Mapping[str, str] | None = None,
) -> MainWindow:
    """The main window, and how it opens a production: a service (its threads own the
    production's connections) and the session that feeds the window from it.

    ``clock`` is the core clock (a ``FakeClock`` in tests); ``root_map`` this machine's
    directory per media root (from the configuration).
    """
    from postproject_gui.services.production_service import ProductionService
    from postproject_gui.session.monitor_session import MonitorSession
    from postproject_gui.window.main_window import MainWindow

    roots = dict(root_map or {})

    def open_session(location: str) -> MonitorSession:
        return MonitorSession(ProductionService(location, clock=clock, root_map=roots), presenter)

    return MainWindow(remembered, theme, presenter, open_session)


def _install_desktop() -> int:
    from postproject_gui.launch import desktop

    for path in desktop.install():
        sys.stdout.write(f"installed {path}\n")
    return EXIT_OK


def _revision(text: str) -> int:
    """A revision sequence: a whole number of ASCII digits (``int()`` would take ``३``)."""
    if not re.fullmatch(r"[0-9]{1,19}", text, re.ASCII):
        raise argparse.ArgumentTypeError(f"must be a whole number; got {text!r}")
    return int(text)


def _size(text: str) -> tuple[int, int]:
    """``1440x900`` -> (1440, 900); 400x300 to 7680x4320 (ASCII digits only)."""
    match = re.fullmatch(r"([0-9]{1,5})x([0-9]{1,5})", text.lower(), re.ASCII)
    if match is None:
        raise ValueError(f"--size must look like 1440x900; got {text!r}")
    size = (int(match.group(1)), int(match.group(2)))
    if not (400 <= size[0] <= 7680 and 300 <= size[1] <= 4320):
        raise ValueError(f"--size must be between 400x300 and 7680x4320; got {text!r}")
    return size


def _run(args: argparse.Namespace) -> int:
    import qasync
    from PySide6.QtCore import qInstallMessageHandler
    from PySide6.QtWidgets import QApplication

    from postproject_gui.dialogs.error_presenter import ErrorPresenter
    from postproject_gui.launch.desktop import APP_ID
    from postproject_gui.look.theme import ThemeManager, ThemeMode
    from postproject_gui.settings import APPLICATION, ORGANISATION, Settings

    app = QApplication.instance()
    if app is None:
        _diagnose_fatal_platform_errors()
        app = QApplication([sys.argv[0] if sys.argv else "postproject-monitor"])
        qInstallMessageHandler(None)  # the platform loaded: Qt's own handling from here on
    assert isinstance(app, QApplication)
    _quiet_offscreen_notices()
    app.setOrganizationName(ORGANISATION)
    app.setApplicationName(APPLICATION)
    app.setDesktopFileName(APP_ID)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with collecting_on_the_gui_thread():
        headless = args.snapshot is not None
        remembered = Settings.ephemeral() if headless else Settings.user()
        mode = ThemeMode(args.theme) if args.theme else (ThemeMode.LIGHT if headless else remembered.theme())
        theme = ThemeManager(mode)
        theme.apply()
        window = build_window(
            remembered, theme, ErrorPresenter(interactive=not headless), root_map=args.root_map
        )
        try:
            if headless:
                code: int = loop.run_until_complete(_snapshot(window, args))
                return code
            window.show()
            if args.production is not None:
                window.open_production(args.production)
                warning = production_location.network_warning(args.production)
                if warning is not None:  # SQLite on NFS/SMB (never a database): say so where the user looks
                    log.warning("%s", warning)
                    window.statusBar().showMessage(warning.removeprefix("warning: "), 0)
            with _closing_on_signals(loop):
                loop.run_forever()
            return EXIT_OK
        finally:
            window.close()
            window.deleteLater()
            app.processEvents()
            loop.close()
            asyncio.set_event_loop(None)


@contextlib.contextmanager
def collecting_on_the_gui_thread() -> Iterator[None]:
    """Collect Python's cyclic garbage on the GUI thread only (call once the QApplication exists).

    CPython runs its cyclic collector on whichever thread crosses the allocation threshold:
    in the monitor that is often a reader, writer or long-read thread of the service, or the
    feed watcher. Qt objects in reference cycles (a closed window's widgets, a theme manager
    connected to the application's signals, pyqtgraph's menus, cached pixmaps) would then be
    destroyed on that thread, while Qt objects must be destroyed on the thread they live in
    (widgets on the GUI thread), or Qt crashes. So automatic collection is switched off and the
    GUI thread collects on a 1 s timer, generation by generation as Python's thresholds say
    (the scheme of pyqtgraph's ``GarbageCollector``, which is not imported for it: pyqtgraph
    and numpy, ~50 MiB, load only when the Dashboard is first shown). On leaving, the timer
    stops and automatic collection is as it was.
    """
    from PySide6.QtCore import QTimer

    was_enabled = gc.isenabled()
    thresholds = gc.get_threshold()

    def collect() -> None:
        counts = gc.get_count()
        for generation in range(3):
            if counts[generation] <= thresholds[generation]:
                break
            gc.collect(generation)

    timer = QTimer()
    timer.timeout.connect(collect)
    gc.disable()
    timer.start(1000)
    try:
        yield
    finally:
        timer.stop()
        if was_enabled:
            gc.enable()


@contextlib.contextmanager
def _closing_on_signals(loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """Ctrl-C (SIGINT) and SIGTERM close the monitor cleanly instead of raising in a callback.

    Python runs signal handlers only between bytecodes, and Qt's event loop may sit in C++
    for a long time: the wakeup fd makes the signal a readable socket that Qt watches, so
    the handler runs at once.
    """
    from PySide6.QtCore import QSocketNotifier

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    reader, writer = socket.socketpair()
    reader.setblocking(False)
    writer.setblocking(False)
    notifier = QSocketNotifier(reader.fileno(), QSocketNotifier.Type.Read)
    notifier.activated.connect(lambda *_: reader.recv(64))  # drain; the handler already ran
    previous_fd = signal.set_wakeup_fd(writer.fileno())
    stop = lambda signum, frame: loop.stop()  # noqa: E731
    previous = {number: signal.signal(number, stop) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        signal.set_wakeup_fd(previous_fd)
        notifier.setEnabled(False)
        reader.close()
        writer.close()


def _diagnose_fatal_platform_errors() -> None:
    """Until the QApplication exists, turn Qt's fatal "could not load the Qt platform plugin"
    into a diagnosis naming the missing system libraries and exit 3 (Qt would abort)."""
    from PySide6.QtCore import QMessageLogContext, QtMsgType, qInstallMessageHandler

    def handler(kind: QtMsgType, context: QMessageLogContext, message: str) -> None:
        if kind == QtMsgType.QtFatalMsg:
            log.error("Qt could not start: %s", message)
            sys.stderr.write(startup.diagnose_qt(message) + "\n")
            sys.stderr.flush()
            logging.shutdown()
            os._exit(EXIT_CANNOT_START)
        if kind != QtMsgType.QtDebugMsg or os.environ.get("QT_DEBUG_PLUGINS"):
            sys.stderr.write(f"{message}\n")

    qInstallMessageHandler(handler)


OFFSCREEN_NOTICE = "This plugin does not support propagateSizeHints()"


def _quiet_offscreen_notices() -> None:
    """Drop the one warning Qt's offscreen platform prints each time a window with size limits
    is shown (it cannot pass size hints to a window system it does not have); every other
    message still reaches stderr."""
    from PySide6.QtCore import QMessageLogContext, QtMsgType, qInstallMessageHandler
    from PySide6.QtGui import QGuiApplication

    if QGuiApplication.platformName() != "offscreen":
        return

    def handler(kind: QtMsgType, context: QMessageLogContext, message: str) -> None:
        if message != OFFSCREEN_NOTICE:
            sys.stderr.write(f"{message}\n")

    qInstallMessageHandler(handler)


async def _snapshot(window: object, args: argparse.Namespace) -> int:
    from postproject_gui.launch.snapshot import take
    from postproject_gui.launch.snapshot_options import SnapshotError, SnapshotOptions
    from postproject_gui.window.main_window import MainWindow

    assert isinstance(window, MainWindow)
    options = args.snapshot
    assert isinstance(options, SnapshotOptions)
    try:
        document = await take(window, args.production, options)
    except SnapshotError as exc:
        sys.stderr.write(f"postproject-monitor: {exc}\n")
        return exc.exit_code
    what = next(
        f"{len(document[key]):,} {noun}"
        for key, noun in (
            ("workers", "workers"),
            ("rows", "rows"),
            ("items", "artifacts"),
            ("nodes", "nodes"),
        )
        if key in document
    )
    sys.stdout.write(f"wrote {options.out} and its .json: revision {document['head_revision']}, {what}\n")
    return EXIT_OK
