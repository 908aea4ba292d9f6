"""Finding anything at any size in the monitor (issue 16 item 1): the search box searches the
store over every job, header clicks sort in the store, time filters, the Failure groups
panel (click lists them), saved filters, and ``--snapshot --search``."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from postproject import FakeClock, JobState, Production
from postproject_gui.models.columns import column
from postproject_gui.services.filters import JobFilter
from postproject_gui.settings import Settings
from postproject_gui.views.filter_bar import FilterBar
from postproject_gui.views.workspaces import filter_from_text, filter_to_text
from tests.gui.conftest import WindowFactory
from tests.gui.helpers import ProductionBuilder, wait_for
from tests.gui.test_snapshot import monitor


def _ids(window: Any) -> list[Any]:
    table = window.session.table
    return [table.row(i).id for i in range(table.rowCount())]


def test_the_search_box_finds_a_job_the_table_has_not_read(
    qtbot: Any, qtmodeltester: Any, make_window: WindowFactory, big_copy: Path
) -> None:
    with Production.open(big_copy, read_only=True) as production:
        oldest = production.jobs(limit=1).items[0].id  # the last row newest first: never loaded
    window = make_window(big_copy)
    session = window.session
    assert session is not None and session.table.rowCount() < 10_000
    qtbot.keyClicks(window.filters.search, str(oldest)[-12:])
    wait_for(qtbot, lambda: session.filter.text and not session.busy and _ids(window) == [oldest])
    assert session.table.scanned == 1  # the store answered: one row read, not 10,000
    assert "searched" not in window.filters.shown.text()
    qtmodeltester.check(session.table)
    window.filters.search.clear()
    qtbot.keyClicks(window.filters.search, "no job has this")
    wait_for(qtbot, lambda: session.filter.text == "no job has this" and not session.busy)
    assert session.table.rowCount() == 0 and session.table.exhausted


def test_header_clicks_sort_in_the_store(
    qtbot: Any, qtmodeltester: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    conform = builder.request(2, "org.example:conform")
    proxies = builder.request(2)
    window = make_window(builder.production.path, builder.production.clock)
    session = window.session
    assert session is not None
    header = window.table.horizontalHeader()
    header.sectionClicked.emit(column("kind"))  # what a click on the Kind header sends
    wait_for(
        qtbot, lambda: session.filter.sort == "kind" and not session.busy and session.table.rowCount() == 4
    )
    descending = session.filter.newest_first
    expected = [*conform, *proxies] if not descending else [*reversed(proxies), *reversed(conform)]
    assert _ids(window) == expected
    section, ascending = column("kind"), not descending
    assert header.sortIndicatorSection() == section
    assert (header.sortIndicatorOrder() is Qt.SortOrder.AscendingOrder) == ascending
    qtmodeltester.check(session.table)
    window.table.order_requested.emit("state", False)
    builder.fail(proxies[0], "moov atom not found")  # live: the failed row moves to its place
    wait_for(
        qtbot,
        lambda: (
            session.filter.sort == "state"
            and not session.busy
            and session.table.rowCount() == 4
            and session.table.row(3).id == proxies[0]
        ),
    )


def test_time_filter_lists_recent_finishes(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    clock: FakeClock = builder.production.clock  # type: ignore[assignment]
    ids = builder.request(3)
    builder.fail(ids[0], "old failure")
    clock.advance(timedelta(hours=2))
    builder.fail(ids[1], "new failure")
    window = make_window(builder.production.path, clock)
    session = window.session
    assert session is not None
    bar = window.filters
    bar.time.setCurrentIndex(bar.time.findText("Finished in the last hour"))
    wait_for(qtbot, lambda: session.filter.finished_within == "1h" and not session.busy)
    assert _ids(window) == [ids[1]]
    bar.time.setCurrentIndex(bar.time.findText("Requested in the last hour"))
    wait_for(qtbot, lambda: session.filter.requested_within == "1h" and not session.busy)
    assert _ids(window) == []
    bar.time.setCurrentIndex(0)
    wait_for(
        qtbot, lambda: session.filter == JobFilter() and not session.busy and session.table.rowCount() == 3
    )


def test_failure_groups_panel_lists_a_group_on_click(
    qtbot: Any, qtmodeltester: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    ids = builder.request(4)
    builder.fail(ids[0], "unsupported profile 'ProRes 4444 XQ'")
    builder.fail(ids[1], "unsupported profile 'DNxHR 444'")
    builder.fail(ids[2], "decoder crashed at frame 1200")
    window = make_window(builder.production.path, builder.production.clock)
    panel = window.jobs_page.failures
    assert window.workspaces.current.key == "producer" and panel.isVisible()
    wait_for(qtbot, lambda: panel.model.rowCount() == 2)
    qtmodeltester.check(panel.model)
    assert panel.model.index(0, 0).data() == "2"
    assert panel.model.index(0, 1).data() == "unsupported profile <text>"
    assert "3 failed jobs in 2 groups" in panel.title.text()
    index = panel.model.index(0, 1)
    qtbot.mouseClick(
        panel.view.viewport(), Qt.MouseButton.LeftButton, pos=panel.view.visualRect(index).center()
    )
    session = window.session
    assert session is not None
    wait_for(qtbot, lambda: session.filter.state is JobState.FAILED and not session.busy)
    assert session.filter.text == "unsupported profile"
    assert sorted(_ids(window)) == sorted(ids[:2])
    builder.fail(ids[3], "decoder crashed at frame 7")  # the feed regroups
    wait_for(qtbot, lambda: panel.model.rowCount() == 2 and panel.model.index(1, 0).data() == "2")
    window.workspaces.switch("supervisor")
    assert not panel.isVisible()


def test_saved_filters_round_trip_through_qsettings(qtbot: Any) -> None:
    settings = Settings.user()
    bar = FilterBar()
    qtbot.addWidget(bar)
    bar.attach_settings(settings)
    wanted = JobFilter(state=JobState.FAILED, text="render-07", sort="priority", finished_within="24h")
    bar.save_filter("night failures", wanted)
    settings.sync()
    again = FilterBar()
    qtbot.addWidget(again)
    again.attach_settings(Settings.user())
    assert again.saved_filters() == {"night failures": wanted}
    with qtbot.waitSignal(again.filter_requested) as emitted:
        again.apply_saved("night failures")
    assert emitted.args == [wanted]
    again._fill_saved_menu()  # the menu lists it, and saving / deleting
    titles = [a.text() for a in again.saved.menu().actions()]
    assert titles[0] == "night failures" and "Save current filter…" in titles
    again.delete_filter("night failures")
    assert again.saved_filters() == {}
    assert filter_from_text(filter_to_text(wanted), JobFilter()) == wanted
    assert filter_from_text(json.dumps({"sort": "colour"}), JobFilter(stuck=True)) == JobFilter(stuck=True)


def test_a_filter_shown_by_the_bar_is_not_searched_again_later(qtbot: Any) -> None:
    """The bar shows the filters the window sets (a failure group's search, a state card): showing
    a search text is not typing it, so no search runs later. It did: the shown text started the
    typing pause, and when the window set another filter within it (250 ms; seconds on a loaded
    machine) the bar kept the old text and then asked for it again, over the new filter."""
    bar = FilterBar()
    qtbot.addWidget(bar)
    asked: list[JobFilter] = []
    bar.filter_requested.connect(asked.append)
    bar.set_filter(JobFilter(state=JobState.FAILED, text="moov"))
    assert bar.search.text() == "moov"
    bar.set_filter(JobFilter(state=JobState.CLAIMED))
    assert bar.search.text() == ""
    bar.search.setText("render")  # typed: searched after the pause
    with qtbot.waitSignal(bar.filter_requested):
        pass
    assert asked == [JobFilter(state=JobState.CLAIMED, text="render")]


def test_snapshot_search_lists_the_matches(builder: ProductionBuilder, tmp_path: Path) -> None:
    ids = builder.request(3)
    builder.fail(ids[1], "unsupported profile 'XQ'")
    out = tmp_path / "search.png"
    done = monitor(builder.production.path, "--snapshot", out, "--search", "unsupported")
    assert done.returncode == 0, done.stderr
    shown = json.loads(out.with_suffix(".json").read_text())
    assert [r["id"] for r in shown["rows"]] == [str(ids[1])]
    assert shown["filter"]["text"] == "unsupported"
