"""Reading a long, live job list (issue 16): the State column frozen, the scroll reset on a new
filter, the end of the list in one keystroke, rows that stay put while live inserts arrive,
columns that fit at the default size, and a window that fits 1024 px."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QFontMetrics

from postproject import JobState, Production
from postproject_gui.models.columns import column
from postproject_gui.services.filters import JobFilter
from tests.gui.conftest import WindowFactory
from tests.gui.helpers import ProductionBuilder, commit_from_another_process, ready, wait_for


def test_the_state_column_stays_in_view_and_a_new_filter_starts_at_the_left(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    ids = builder.request(30)
    builder.fail(ids[0], "moov atom not found")
    window = make_window(builder.production.path, builder.production.clock)
    window.resize(1024, 700)
    table = window.table
    table.setColumnWidth(column("diagnostic"), 900)  # wider than the table: it scrolls sideways
    bar = table.horizontalScrollBar()
    wait_for(qtbot, lambda: bar.maximum() > 0)
    assert not table.frozen.isVisible()  # nothing to freeze at the left edge
    bar.setValue(bar.maximum())
    assert table.frozen.isVisible() and table.frozen.geometry().left() <= table.frameWidth()
    frozen_cell = table.frozen.visualRect(table.model().index(3, column("state")))
    assert frozen_cell.width() == table.columnWidth(column("state")) and frozen_cell.left() == 0
    assert table.frozen.model() is table.model() and table.frozen.selectionModel() is table.selectionModel()
    table.verticalScrollBar().setValue(table.verticalScrollBar().maximum())
    assert table.frozen.verticalScrollBar().value() == table.verticalScrollBar().value()
    # A new filter: the list starts at its left edge (State in view) and at the top.
    window.session.set_filter(JobFilter(state=JobState.FAILED))  # type: ignore[union-attr]
    wait_for(qtbot, lambda: ready(window) and window.session.table.rowCount() == 1)  # type: ignore[union-attr]
    assert bar.value() == 0 and not table.frozen.isVisible()


def test_ctrl_end_reads_the_end_of_a_long_list_at_once(
    qtbot: Any, make_window: WindowFactory, big_copy: Path
) -> None:
    window = make_window(big_copy)
    session, table = window.session, window.table
    assert session is not None and session.table.rowCount() == 200
    with Production.open(big_copy, read_only=True) as production:
        oldest = production.jobs(limit=1).items[0].id
        newest = production.jobs(limit=1, newest_first=True).items[0].id
    table.setFocus()
    qtbot.keyClick(table, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    wait_for(qtbot, lambda: session.table.tail and not session.busy and table.currentIndex().isValid())
    model = session.table
    assert model.row(model.rowCount() - 1).id == oldest  # newest first: the end is the oldest job
    assert model.rowCount() == 200 and table.current_row() is not None and table.current_row().id == oldest  # type: ignore[union-attr]
    ordered = [model.row(i).id for i in range(model.rowCount())]
    assert ordered == sorted(ordered, reverse=True)
    assert "end of the list" in window.filters.shown.text()
    # Scrolling up reads the page before, and the rows under the reader stay put.
    reading = model.row(0).id
    table.verticalScrollBar().setValue(0)
    wait_for(qtbot, lambda: model.rowCount() == 400 and not session.busy)
    assert model.row(200).id == reading
    assert table.rowAt(0) >= 190  # the viewport still shows what it showed
    # Ctrl+Home goes back to the start.
    qtbot.keyClick(table, Qt.Key.Key_Home, Qt.KeyboardModifier.ControlModifier)
    wait_for(qtbot, lambda: not model.tail and not session.busy and model.rowCount() == 200)
    assert model.row(0).id == newest


def test_live_inserts_leave_the_rows_under_the_reader_in_place(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    builder.request(60)
    window = make_window(builder.production.path, builder.production.clock)
    session, table = window.session, window.table
    assert session is not None
    table.verticalScrollBar().setValue(10 * 22)
    reading = table.rowAt(0)
    reading_id = session.table.row(reading).id
    before = table.rowViewportPosition(reading)
    new_ids = commit_from_another_process(builder, 3)
    wait_for(qtbot, lambda: session.table.rowCount() == 63 and ready(window, 3))
    top = table.rowAt(0)
    assert session.table.row(top).id == reading_id and table.rowViewportPosition(top) == before
    assert table.new_jobs.isVisible() and table.new_jobs.text().endswith("3 new jobs")
    table.new_jobs.click()
    assert table.verticalScrollBar().value() == 0 and not table.new_jobs.isVisible()
    assert {str(session.table.row(i).id) for i in range(3)} == set(new_ids)


def test_live_inserts_at_the_top_wait_behind_the_bar(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    builder.request(60)
    window = make_window(builder.production.path, builder.production.clock)
    session, table = window.session, window.table
    assert session is not None and table.verticalScrollBar().value() == 0
    first = session.table.row(0).id
    commit_from_another_process(builder, 1)
    wait_for(qtbot, lambda: session.table.rowCount() == 61 and not session.busy)
    assert session.table.row(table.rowAt(0)).id == first  # the reader's first row did not move
    assert table.new_jobs.isVisible() and table.new_jobs.text().endswith("1 new job")
    table.verticalScrollBar().setValue(0)  # scrolling up to it is reading it
    assert not table.new_jobs.isVisible()


def test_a_short_list_shows_live_inserts_in_place(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    builder.request(3)
    window = make_window(builder.production.path, builder.production.clock)
    session = window.session
    assert session is not None
    (new_id,) = commit_from_another_process(builder, 1)
    wait_for(qtbot, lambda: session.table.rowCount() == 4 and not session.busy)
    assert str(session.table.row(window.table.rowAt(0)).id) == new_id  # every row is in view anyway
    assert not window.table.new_jobs.isVisible()


def test_columns_fit_their_titles_and_the_window_fits_1024_pixels(
    make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    builder.request(3)
    window = make_window(builder.production.path, builder.production.clock)
    header = window.table.horizontalHeader()
    bold = QFontMetrics(header.font())
    age = column("age")
    assert window.table.columnWidth(age) >= bold.horizontalAdvance("Age") * 1.1 + 30  # with the sort arrow
    assert window.table.columnWidth(age) >= QFontMetrics(window.table.font()).horizontalAdvance("999d") + 12
    assert window.minimumSizeHint().width() <= 1024
    window.resize(1024, 700)
    assert window.width() == 1024


def test_the_new_jobs_bar_never_covers_the_first_row(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    """Issue 26 item 10: the "↑ N new jobs" bar floated over the first row shown."""
    builder.request(60)
    window = make_window(builder.production.path, builder.production.clock)
    session, table = window.session, window.table
    assert session is not None
    table.verticalScrollBar().setValue(10 * 22)
    commit_from_another_process(builder, 2)
    wait_for(qtbot, lambda: session.table.rowCount() == 62 and not session.busy)
    bar = table.new_jobs
    assert bar.isVisible() and bar.text().endswith("2 new jobs")
    first = table.rowAt(0)
    row_top = table.viewport().mapTo(window, QPoint(0, table.rowViewportPosition(first)))
    bar_rect = QRect(bar.mapTo(window, QPoint(0, 0)), bar.size())
    header_top = table.horizontalHeader().mapTo(window, QPoint(0, 0)).y()
    assert bar_rect.bottom() < header_top <= row_top.y(), (bar_rect, header_top, row_top)
    table_left = table.mapTo(window, QPoint(0, 0)).x()
    assert table_left <= bar_rect.left() and bar_rect.right() <= table_left + table.width()  # over the table


def test_a_selected_row_keeps_its_state_colour(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    """The State and Lease cells of a selected row are drawn in their state's colour, not the
    selection's text colour (the cell delegate), though the delegate now does that work only for
    selected rows (on every row of every paint it read the colour from the model again and set
    it in the option's palette)."""
    ids = builder.request(3)
    builder.fail(ids[0], "moov atom not found")
    window = make_window(builder.production.path, builder.production.clock)
    table, model = window.table, window.table.model()
    row = next(
        r
        for r in range(model.rowCount())
        if model.data(model.index(r, 1), Qt.ItemDataRole.UserRole + 1) == str(ids[0])
    )

    def state_pixels() -> set[tuple[int, int, int]]:
        image = table.viewport().grab().toImage()
        cell = table.visualRect(model.index(row, column("state")))
        return {
            image.pixelColor(x, y).getRgb()[:3]
            for x in range(cell.left() + 20, cell.right())
            for y in range(cell.top(), cell.bottom())
        }

    colour = model.data(model.index(row, column("state")), Qt.ItemDataRole.ForegroundRole)
    wanted = colour.getRgb()[:3]

    def near(pixels: set[tuple[int, int, int]]) -> bool:
        return any(sum(abs(a - b) for a, b in zip(p, wanted, strict=True)) < 40 for p in pixels)

    assert near(state_pixels())  # unselected
    table.selectRow(row)
    qtbot.wait(50)
    assert near(state_pixels()), f"the selected Failed cell has no pixel near {wanted}"


def test_a_paint_reads_the_clock_once(qtbot: Any, make_window: WindowFactory, big_copy: Path) -> None:
    """Every cell of one paint is shown as of one "now": the clock is read once per paint of the
    table (before, three Python calls for each cell and role that shows a time or a claim's
    health: about 300 reads a paint; the paint's Python calls 13,667 -> 8,919 with the rows read
    from the store's list and Qt's unused roles answered at once)."""
    window = make_window(big_copy)
    model = window.table.table_model()
    reads: list[int] = []
    now = model._now

    def counted() -> Any:
        reads.append(1)
        return now()

    model._now = counted
    window.table.viewport().repaint()
    assert 1 <= len(reads) <= 2, f"one paint read the clock {len(reads)} times"


def test_opening_again_does_not_add_to_what_a_scroll_does(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    """The frozen State column connected itself to the table's scroll bars and header at every
    open (each open made a sideways scroll sync it once more); now once, when it is made, and it
    takes up the table's model only when it first shows (a hidden copy of the rows, laid out
    again with every page, before)."""
    builder.request(3)
    window = make_window(builder.production.path, builder.production.clock)
    table = window.table
    bar = table.horizontalScrollBar()
    signal = "2valueChanged(int)"  # (Qt's SIGNAL() spelling)
    first = bar.receivers(signal)
    assert table.frozen.model() is None  # not shown yet
    for _ in range(2):
        window.open_production(builder.production.path)
        wait_for(qtbot, lambda: ready(window))
    assert bar.receivers(signal) == first
