"""GUI test fixtures: offscreen Qt, a qasync loop of our own, temporary settings, the
monitor's garbage collection on the GUI thread, and a guard that fails any test leaving
threads, timers or executors running (and destroys what the test left, at its end)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import asyncio
import gc
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import qasync
import shiboken6
from PySide6.QtCore import QCoreApplication, QEvent, QSettings, QThread, QTimer
from PySide6.QtWidgets import QApplication

from postproject import (
    FakeClock,
    Production,
)
from postproject_gui.app import build_window, collecting_on_the_gui_thread
from postproject_gui.dialogs.error_presenter import ErrorPresenter, Presentation
from postproject_gui.look.theme import ThemeManager, ThemeMode
from postproject_gui.settings import Settings
from postproject_gui.window.main_window import MainWindow
from tests.gui.helpers import LoopRunner, ProductionBuilder, ready, wait_for

WindowFactory = Callable[..., MainWindow]


@pytest.fixture(autouse=True)
def _garbage_on_the_gui_thread(qapp: QApplication) -> Iterator[None]:
    """As in the application: Python's cyclic garbage is collected on the GUI thread only, never
    on a service's reader, writer or long-read thread (which would destroy Qt objects there).
    Per test, so that tests outside tests/gui run with Python's own collection."""
    with collecting_on_the_gui_thread():
        yield


@pytest.fixture(autouse=True)
def _settings_in_tmp(tmp_path: Path) -> None:
    """QSettings go to a temporary INI tree, never to the user's configuration."""
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))


@pytest.fixture(autouse=True)
def _no_dangling_work(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fail a test that leaves a QTimer or QThread running, or a thread of ours (the service's
    executors, the feed watcher) alive. Close the session or window to stop them."""
    started: list[QTimer | QThread] = []
    for cls in (QTimer, QThread):
        original = cls.start

        def recording_start(self: Any, *args: Any, _original: Any = original) -> None:
            started.append(self)
            _original(self, *args)

        monkeypatch.setattr(cls, "start", recording_start)
    before = set(threading.enumerate())
    yield
    app = QApplication.instance()
    if app is not None:
        app.processEvents()
        # Destroy the windows the test closed (pytest-qt closes them and calls deleteLater,
        # which a bare processEvents does not carry out), then collect what they held: each
        # test's Qt objects go at its own end, on the GUI thread, and none is left for a
        # later test to destroy (on whatever thread would collect it then).
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()
    # What survives is the session's (caches, modules a test imported first): out of the next
    # collections' way, as after collection (tests/conftest.py), so each test's collection
    # walks only what that test made (a collection took 33 ms at a GUI test's end, ~2 ms after).
    gc.freeze()
    running = [
        o
        for o in started
        if shiboken6.isValid(o) and (o.isActive() if isinstance(o, QTimer) else o.isRunning())
    ]
    threads = [
        t for t in threading.enumerate() if t not in before and t.is_alive() and t.name.startswith("pp-")
    ]
    assert not running, f"test left {running} running; stop them (close the session or window)"
    assert not threads, f"test left threads running: {[t.name for t in threads]}; close the service"


@pytest.fixture
def qloop(qapp: QApplication) -> Iterator[LoopRunner]:
    """A qasync loop made current and running for the test (qtbot.waitUntil drives it)."""
    loop = qasync.QEventLoop(qapp)
    asyncio.set_event_loop(loop)
    asyncio.events._set_running_loop(loop)
    runner = LoopRunner(loop, qapp)
    loop.set_exception_handler(lambda _loop, context: runner.errors.append(context))
    try:
        yield runner
    finally:
        asyncio.events._set_running_loop(None)
        loop.close()
        asyncio.set_event_loop(None)
    if runner.errors:
        raise AssertionError(f"the event loop reported errors: {runner.errors}")


@pytest.fixture
def presented(monkeypatch: pytest.MonkeyPatch) -> list[Presentation]:
    """Errors the presenter would have shown (no message boxes in tests)."""
    shown: list[Presentation] = []
    monkeypatch.setattr(ErrorPresenter, "show", classmethod(lambda cls, parent, p: shown.append(p)))
    return shown


@pytest.fixture
def builder(production: Production, tmp_path: Path) -> ProductionBuilder:
    return ProductionBuilder(production, tmp_path / "media")


@pytest.fixture(scope="session")
def ten_thousand(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A production file with 10,000 requested jobs (built once, copied per test)."""
    folder = tmp_path_factory.mktemp("big")
    with Production.create(folder / "big.pproj", clock=FakeClock(0), allow_injected_clock=True) as production:
        builder = ProductionBuilder(production, folder / "media")
        for _ in range(10):
            builder.request(1000)
    return folder / "big.pproj"


@pytest.fixture
def big_copy(ten_thousand: Path, tmp_path: Path) -> Path:
    target = tmp_path / "big.pproj"
    shutil.copy(ten_thousand, target)
    return target


@pytest.fixture
def make_window(qtbot: Any, qloop: LoopRunner, presented: list[Presentation]) -> Iterator[WindowFactory]:
    """Main windows (light theme, 1400 x 860) opening ``path`` and waiting until it is ready;
    fails the test when anything reached the error presenter."""

    def make(
        path: str | Path | None = None, clock: FakeClock | None = None, settings: Settings | None = None
    ) -> MainWindow:
        theme = ThemeManager(ThemeMode.LIGHT)
        theme.apply()
        window = build_window(settings or Settings.ephemeral(), theme, ErrorPresenter(), clock=clock)
        qtbot.addWidget(window)
        window.resize(1400, 860)
        window.show()
        if path is not None:
            window.open_production(path)
            wait_for(qtbot, lambda: ready(window))
        return window

    yield make
    assert not presented, presented
