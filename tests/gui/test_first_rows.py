"""The first rows first (issue 26, item 0): opening a production, the window reads the first page
without waiting for a turn of the GUI thread, paints the table only once that page is in, and
builds the lifecycle diagram only after the rows are painted, once per state it shows."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QFocusEvent
from PySide6.QtWidgets import QApplication, QWidget

from postproject import JobState, Production
from postproject_gui.app import build_window
from postproject_gui.dialogs.error_presenter import ErrorPresenter
from postproject_gui.look import theme as theme_module
from postproject_gui.look.theme import ThemeManager, ThemeMode
from postproject_gui.services import reads
from postproject_gui.services.production_service import ProductionService
from postproject_gui.settings import Settings
from postproject_gui.window import opening
from tests.gui.conftest import WindowFactory
from tests.gui.helpers import ready, wait_for


class TablePaints(QObject):
    """The number of rows in the table at each paint of its viewport."""

    def __init__(self, window: Any) -> None:
        super().__init__()
        self.window = window
        self.rows: list[int] = []
        window.table.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            model = self.window.table.model()
            self.rows.append(model.rowCount() if model is not None else -1)
        return False


def test_the_first_paint_after_an_open_has_the_rows_and_the_diagram_follows_them(
    qtbot: Any, make_window: WindowFactory, big_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: the empty table was painted 3-4 times while the first page was read (each paint
    of the window delaying the page) and the lifecycle diagram was rebuilt 4-6 times, all of it
    before the rows. Now the table paints once the page is in, and the diagram, deferred until
    the rows are painted, is built at most once per state it shows (the production's name, then
    its counts), with the same counts in the end."""
    window = make_window()
    qtbot.waitExposed(window)
    paints = TablePaints(window)
    scene = window.detail.scene
    rebuilds: list[int] = []  # how many table paints had rows at each rebuild
    rebuild = scene._rebuild

    def counted() -> None:
        rebuilds.append(sum(1 for n in paints.rows if n > 0))
        rebuild()

    monkeypatch.setattr(scene, "_rebuild", counted)
    window.open_production(big_copy)
    wait_for(qtbot, lambda: ready(window))
    session = window.session
    assert session is not None and session.counts is not None
    wait_for(qtbot, lambda: scene.state.counts == session.counts.by_state)  # type: ignore[union-attr]
    assert paints.rows and paints.rows[0] > 0, f"the table painted {paints.rows[:5]} rows first"
    assert rebuilds and all(rows_painted > 0 for rows_painted in rebuilds), rebuilds
    assert len(rebuilds) <= 2, rebuilds
    assert window.detail.mode == "production"
    assert sum(scene.state.counts.values()) == 10_000


def test_the_window_chrome_paints_after_the_first_rows_not_with_them(
    qtbot: Any, make_window: WindowFactory, big_copy: Path
) -> None:
    """The paint that brings the first rows draws the job table alone: the event log, the
    status bar, the menus and toolbars (which the opening does not change) are still held then
    and paint right after it, so the rows come a few milliseconds sooner (PostgreSQL 200k, 8
    alternated runs: over the core's page by a median of 48 -> 37 ms). Before, they were let
    go with the central widget and painted with the rows. So are the filter bar, the failure
    groups and the tab bar, which the central widget had let paint with the rows (the GUI
    thread's CPU from the open to the painted rows 45.6 -> 38.6 ms, medians of 8 alternated
    runs), and the table's scroll bars and the splitters' handles (about 2 ms of that paint)."""
    window = make_window()
    qtbot.waitExposed(window)
    page = window.jobs_page
    chrome = [window.log, window.statusBar(), window.menuBar(), window.workspaces.toolbar]
    chrome += [page.filters, page.failures, window.tabs.tabBar(), page.splitter.handle(1)]
    bars = (window.table.horizontalScrollBar(), window.table.verticalScrollBar())
    chrome += [container for container in (bar.parentWidget() for bar in bars) if container is not None]
    at_first_rows: list[list[bool]] = []

    class Paints(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            model = window.table.model()
            if event.type() == QEvent.Type.Paint and not at_first_rows and model and model.rowCount():
                at_first_rows.append([w.updatesEnabled() for w in chrome])
            return False

    spy = Paints()
    window.table.viewport().installEventFilter(spy)
    try:
        window.open_production(big_copy)
        wait_for(
            qtbot, lambda: ready(window) and bool(at_first_rows) and all(w.updatesEnabled() for w in chrome)
        )
    finally:
        window.table.viewport().removeEventFilter(spy)
    assert at_first_rows == [[False] * len(chrome)]


def test_the_state_icons_are_made_with_the_window_not_by_the_first_rows_paint(
    qtbot: Any, make_window: WindowFactory, big_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, the first paint with rows made the state icons (a pixmap per size for each state's
    glyph and colour) after the page was in, in the time to the first rows; now the window makes
    them (and loads the table's fonts) while it is built (``opening.prepare_first_paint``)."""
    monkeypatch.setattr(theme_module, "_GLYPHS", {})  # as in a process that made none yet
    window = make_window()
    qtbot.waitExposed(window)
    made: list[object] = []
    real = theme_module.glyph_pixmap

    def counted(*args: Any) -> Any:
        made.append(args[0])
        return real(*args)

    monkeypatch.setattr(theme_module, "glyph_pixmap", counted)
    paints = TablePaints(window)
    window.open_production(big_copy)
    wait_for(qtbot, lambda: any(rows > 0 for rows in paints.rows))
    assert not made, f"the first rows' paint made icons for {sorted({str(g) for g in made})}"
    wait_for(qtbot, lambda: ready(window))


def _first_rows_painted(
    qtbot: Any, make_window: WindowFactory, big_copy: Path
) -> list[tuple[int, bool, int]]:
    """Open ``big_copy`` in a new window: (rows, scroll bar shown, viewport width) per paint of
    the table's viewport, the first with rows checked to have the scroll bar and final width."""
    window = make_window()
    qtbot.waitExposed(window)
    widths: list[tuple[int, bool, int]] = []  # (rows, scroll bar shown, viewport width) per paint

    class Paints(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint:
                table = window.table
                model = table.model()
                widths.append(
                    (
                        model.rowCount() if model is not None else -1,
                        table.verticalScrollBar().isVisible(),
                        table.viewport().width(),
                    )
                )
            return False

    spy = Paints()
    window.table.viewport().installEventFilter(spy)
    window.open_production(big_copy)
    wait_for(qtbot, lambda: ready(window))
    qtbot.wait(50)
    first = next(paint for paint in widths if paint[0] > 0)
    assert first[1], f"the first rows were painted without their scroll bar: {widths[:4]}"
    assert first[2] == window.table.viewport().width(), widths[:4]
    return widths


def test_the_first_rows_are_painted_laid_out(qtbot: Any, make_window: WindowFactory, big_copy: Path) -> None:
    """The table's layout follows its rows before the paint that shows them: the first paint with
    rows has the vertical scroll bar they need and the viewport's final width. Before, the paint
    came first and the layout (a scroll bar appearing, the viewport narrowed) after it, with the
    whole table painted again."""
    _first_rows_painted(qtbot, make_window, big_copy)


def test_rows_that_come_after_the_hold_are_laid_out_before_any_paint(
    qtbot: Any, make_window: WindowFactory, big_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first page that comes after the hold ended (a slow server, or a loaded machine; the
    window painted its "Loading..." meanwhile, or is about to) is laid out the moment it is in,
    before the loop can paint its rows: when the table says the page is in, the scroll bar the
    rows need is already there. Before, only a page that came while the paints were held was:
    the layout waited for a later turn of the loop, which a paint could come before (the rows
    painted without their scroll bar, then again with it: seen once in a loaded suite run)."""
    jobs_page = reads.jobs_page

    def slow(*args: Any, **kwargs: Any) -> Any:
        time.sleep(2 * opening.HOLD_MS / 1000)
        return jobs_page(*args, **kwargs)

    monkeypatch.setattr(reads, "jobs_page", slow)
    window = make_window()
    qtbot.waitExposed(window)
    window.open_production(big_copy)
    session = window.session
    assert session is not None
    seen: list[tuple[int, bool]] = []  # (rows, scroll bar shown) when the page is said to be in

    def page_in() -> None:  # (connected after the window's own slot: runs after it)
        if not session.table.loading and session.table.rowCount() > 0 and not seen:
            seen.append((session.table.rowCount(), window.table.verticalScrollBar().isVisible()))

    session.table.status_changed.connect(page_in)
    wait_for(qtbot, lambda: ready(window))
    assert not window._first_rows.holding
    assert seen and seen[0][1], f"the rows were not laid out when the page came in: {seen}"


def pages_read(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Set (on a reader thread) once a page of jobs has been read."""
    read = threading.Event()
    jobs_page = reads.jobs_page

    def reading(*args: Any, **kwargs: Any) -> Any:
        page = jobs_page(*args, **kwargs)
        read.set()
        return page

    monkeypatch.setattr(reads, "jobs_page", reading)
    return read


def test_the_first_page_is_read_before_the_gui_thread_takes_another_turn(
    make_window: WindowFactory, big_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """open_production hands the opening and the first page to a reader before it returns:
    the page is read while the GUI thread is still busy (here: blocked), not at a later turn
    of its loop (before, the page waited for that turn, which came after a paint of the window)."""
    window = make_window()
    read = pages_read(monkeypatch)
    window.open_production(big_copy)
    assert read.wait(10), "the first page was not read while the GUI thread was busy"
    session = window.session
    assert session is not None
    window.close()


def test_a_page_read_reaches_the_table_at_the_gui_threads_next_turn(
    make_window: WindowFactory, big_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page that has been read is in the table after one turn of the GUI thread's loop (a
    queued Qt call). Before, it came through the asyncio loop in three turns (qasync's
    thread-safe call, a zero timer to settle the future, another to wake the task awaiting
    it), and each turn could paint the window first: a first page read while the window
    first showed waited behind two paints of the window without its rows."""
    window = make_window()
    read = pages_read(monkeypatch)
    window.open_production(big_copy)
    assert read.wait(10)  # the GUI thread blocked meanwhile: no turn taken
    session = window.session
    assert session is not None
    for reader in session.service._readers:  # each runs its tasks in turn: once a later one
        reader.executor.submit(lambda: None).result(10)  # is done, the page's was handed over
    turns = 0
    while session.table.rowCount() == 0 and turns < 10:
        QApplication.processEvents()
        turns += 1
    table = session.table
    assert table.rowCount() > 0 and turns == 1, f"the page reached the table after {turns} turns"
    window.close()


def test_the_production_opens_while_the_window_gets_ready_for_it(
    make_window: WindowFactory, big_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """open_production hands the opening to a reader before anything else it does (on
    PostgreSQL a connection is a server process and a handshake: it is made while the table gets
    its model, the columns and the filter are restored and the window is wired). Here the table's
    model waits until the reader has begun to open the production; before, the opening was handed
    over after the table had its model."""
    window = make_window()
    opening = threading.Event()
    opened = ProductionService._opened

    def begun(self: ProductionService, worker: Any) -> Any:
        opening.set()
        return opened(self, worker)

    monkeypatch.setattr(ProductionService, "_opened", begun)
    began_first: list[bool] = []
    set_table_model = window.table.set_table_model

    def when_begun(model: Any) -> None:
        began_first.append(opening.wait(5))
        set_table_model(model)

    monkeypatch.setattr(window.table, "set_table_model", when_begun)
    window.open_production(big_copy)
    assert began_first == [True], "the table had its model before the opening was begun"
    window.close()


def test_the_interpreter_hands_over_sooner_while_a_first_page_is_read_from_a_database(
    qtbot: Any, make_window: WindowFactory, big_copy: Path, postgres_uri: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a production in a database opens and its first page is read, the GUI thread hands
    the interpreter over every 0.5 ms, not every 5 (the reader wakes at each round trip and
    waits for it otherwise); the interval is Python's again once the page is in, and after a
    window closed while its page was read. A SQLite production keeps Python's interval."""
    Production.create(postgres_uri).close()
    before = sys.getswitchinterval()
    during: list[float] = []
    jobs_page = reads.jobs_page

    def reading(*args: Any, **kwargs: Any) -> Any:
        during.append(sys.getswitchinterval())
        return jobs_page(*args, **kwargs)

    monkeypatch.setattr(reads, "jobs_page", reading)
    window = make_window()
    window.open_production(postgres_uri)
    wait_for(qtbot, lambda: ready(window, 0))
    assert during[:1] == [opening.SWITCH_S] and before > opening.SWITCH_S
    assert sys.getswitchinterval() == before
    window.open_production(big_copy)
    wait_for(qtbot, lambda: ready(window) and len(during) >= 2)
    assert during[1] == before
    window.open_production(postgres_uri)  # and closed before its page is in
    assert sys.getswitchinterval() == opening.SWITCH_S
    window.close()
    assert sys.getswitchinterval() == before


def test_a_page_that_does_not_come_does_not_hold_the_window_back(
    qtbot: Any, make_window: WindowFactory, big_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hold has a bound: while the first page is still being read (here: held back until the
    window has painted), the window paints its empty table ("Loading…"), then the rows."""
    window = make_window()
    qtbot.waitExposed(window)
    paints = TablePaints(window)
    painted_empty = threading.Event()
    jobs_page = reads.jobs_page

    def slow(*args: Any, **kwargs: Any) -> Any:
        painted_empty.wait(30)
        return jobs_page(*args, **kwargs)

    monkeypatch.setattr(reads, "jobs_page", slow)
    window.open_production(big_copy)
    wait_for(qtbot, lambda: 0 in paints.rows)
    session = window.session
    assert session is not None and session.table.loading
    painted_empty.set()
    wait_for(qtbot, lambda: ready(window) and any(n > 0 for n in paints.rows))
    wait_for(qtbot, lambda: window.detail.scene.state.counts.get(JobState.REQUESTED) == 10_000)


def test_the_window_becoming_active_keeps_the_overview(
    qtbot: Any, make_window: WindowFactory, big_copy: Path
) -> None:
    """The window becoming active (after the first rows, or when the user comes back to it)
    leaves the production's overview in the detail panel: Qt made the table's first row current
    when the table got the focus without a current row, and the detail panel showed that job
    instead (the opening's result hung on whether the window was activated before or after the
    first page came in). Tabbing into the table still makes a row current, as before."""
    window = make_window(big_copy)
    table = window.table
    assert window.detail.mode == "production" and not table.currentIndex().isValid()
    table.clearFocus()
    QApplication.sendEvent(table, QFocusEvent(QEvent.Type.FocusIn, Qt.FocusReason.ActiveWindowFocusReason))
    qtbot.wait(50)
    assert not table.currentIndex().isValid()
    assert window.detail.mode == "production"
    QApplication.sendEvent(table, QFocusEvent(QEvent.Type.FocusIn, Qt.FocusReason.TabFocusReason))
    wait_for(qtbot, lambda: table.currentIndex().row() == 0 and window.detail.mode == "job")


class LayoutRequests(QObject):
    """The widgets, hidden from the window, that got a layout request while it first showed."""

    def __init__(self, window: Any) -> None:
        super().__init__()
        self.window = window
        self.hidden: list[str] = []

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.LayoutRequest
            and isinstance(watched, QWidget)
            and watched is not self.window
            and self.window.isAncestorOf(watched)
            and not watched.isVisibleTo(self.window)
        ):
            self.hidden.append(type(watched).__name__)
        return False


def test_the_window_is_polished_and_laid_out_before_its_first_show(qtbot: Any) -> None:
    """The first show comes with the first open (the application shows the window and opens the
    production in the same turn), so what it did went into the time to the first rows: it
    polished every widget it showed under the style sheet, and it ran the layout requests that
    building the window had posted, the other tabs' and closed panels' too. Now the window
    polishes what it will show and runs those requests while it is built
    (``opening.polish_shown``): before, no widget was polished before the show, and the show
    ran layout requests for the hidden Artifacts, Provenance, Dashboard and Workers pages."""
    theme = ThemeManager(ThemeMode.LIGHT)
    theme.apply()
    window = build_window(Settings.ephemeral(), theme, ErrorPresenter())
    qtbot.addWidget(window)
    shown = [w for w in window.findChildren(QWidget) if w.isVisibleTo(window)]
    assert len(shown) > 50
    unpolished = [w for w in shown if not w.testAttribute(Qt.WidgetAttribute.WA_WState_Polished)]
    assert not unpolished, (
        f"{len(unpolished)} of {len(shown)} shown widgets unpolished, e.g. {unpolished[:3]}"
    )
    requests = LayoutRequests(window)
    app = QApplication.instance()
    assert app is not None
    app.installEventFilter(requests)
    try:
        window.resize(1400, 860)
        window.show()
        qtbot.waitExposed(window)
        QApplication.processEvents()
    finally:
        app.removeEventFilter(requests)
    assert not requests.hidden, f"the first show laid out hidden widgets: {sorted(set(requests.hidden))}"
