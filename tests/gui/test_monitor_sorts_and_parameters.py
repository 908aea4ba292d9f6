"""The monitor's store-side data features at scale (issue 26 items 6 and 7): the Finished and
Claimed by columns sort in the store (keyset pages by finished time, by worker) and keep live
changes in their place; the search box finds a job by a typed parameter's string value (a
ticket) and keeps it as it changes; the exports carry every column the table can show."""

from __future__ import annotations

import csv
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, Qt

from postproject import FakeClock, JobId, JobRef, JobState, Property, StringValue, ToolIdentity
from postproject_gui.models.columns import COLUMNS, column
from postproject_gui.services.filters import JobFilter
from postproject_gui.services.job_export import COLUMN_FIELDS, FIELDS
from tests.gui.conftest import WindowFactory
from tests.gui.helpers import ProductionBuilder, ready, wait_for

TICKET = Property("https://example.com/editorial", "ticket")


def _ids(window: Any) -> list[JobId]:
    table = window.session.table
    return [table.row(i).id for i in range(table.rowCount())]


def _click_header(qtbot: Any, window: Any, key: str) -> None:
    """A click on a column's header, as a person makes it (Qt turns the sort indicator over)."""
    header = window.table.horizontalHeader()
    section = column(key)
    at = QPoint(
        header.sectionViewportPosition(section) + header.sectionSize(section) // 2, header.height() // 2
    )
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=at)


def _sorted_by(window: Any, sort: str, count: int) -> bool:
    session = window.session
    return session.filter.sort == sort and not session.busy and session.table.rowCount() == count


def test_the_finished_column_sorts_in_the_store_and_keeps_live_finishes_in_place(
    qtbot: Any, qtmodeltester: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    clock: FakeClock = builder.production.clock  # type: ignore[assignment]
    ids = builder.request(5)
    for job in (ids[3], ids[0], ids[4]):  # finished in this order
        clock.advance(timedelta(seconds=10))
        builder.fail(job, "decoder error")
    window = make_window(builder.production.path, clock)
    session = window.session
    assert session is not None
    table = window.table
    table.set_hidden_columns([])  # the header menu's "Finished" (hidden by default) ticked
    assert not table.isColumnHidden(column("finished"))
    header = table.horizontalHeader()
    table.scrollTo(session.table.index(0, column("finished")))
    _click_header(qtbot, window, "finished")
    wait_for(qtbot, lambda: _sorted_by(window, "finished", 5))
    unfinished = sorted(ids[1:3])  # by id, as a block: not finished yet comes first ascending
    ascending = [*unfinished, ids[3], ids[0], ids[4]]
    expected = ascending if not session.filter.newest_first else ascending[::-1]
    assert _ids(window) == expected
    assert header.sortIndicatorSection() == column("finished")
    _click_header(qtbot, window, "finished")  # the other way
    wait_for(qtbot, lambda: _sorted_by(window, "finished", 5) and _ids(window) == expected[::-1])
    if not session.filter.newest_first:
        _click_header(qtbot, window, "finished")
        wait_for(qtbot, lambda: session.filter.newest_first and _ids(window) == ascending[::-1])
    qtmodeltester.check(session.table)
    clock.advance(timedelta(seconds=10))
    builder.fail(ids[1], "moov atom not found")  # the newest finish: first, newest finished first
    wait_for(qtbot, lambda: ready(window) and _ids(window)[:2] == [ids[1], ids[4]])
    assert _ids(window) == [ids[1], ids[4], ids[0], ids[3], ids[2]]


def test_the_claimed_by_column_sorts_by_worker_in_the_store(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    ids = builder.request(6)
    production = builder.production
    with production.edit() as tx:
        render_b = tx.register_worker("render-b")
        render_a = tx.register_worker("render-a", capacity=3)
        tx.commit()
    tool = ToolIdentity("ffmpeg", "6.1")
    with production.edit() as tx:
        for job, worker in ((ids[0], render_b), (ids[2], render_a), (ids[4], render_a)):
            tx.claim_job_lease(job, tool, timedelta(hours=1), worker=worker)
        tx.commit()
    builder.claim(ids[5], agent="render-09")  # an agent's claim: no registered worker
    window = make_window(production.path, production.clock)
    session = window.session
    assert session is not None
    window.table.horizontalHeader().sectionClicked.emit(column("claimed_by"))
    wait_for(qtbot, lambda: _sorted_by(window, "worker", 6))
    ascending = [ids[2], ids[4], ids[0], ids[1], ids[3], ids[5]]  # render-a, render-b, then by id
    assert _ids(window) == (ascending if not session.filter.newest_first else ascending[::-1])
    session.set_filter(session.filter.with_(newest_first=False))
    wait_for(qtbot, lambda: not session.busy and _ids(window) == ascending)
    with production.edit() as tx:  # render-a takes another job: it moves among render-a's
        tx.claim_job_lease(ids[1], tool, timedelta(hours=1), worker=render_a)
        tx.commit()
    wait_for(
        qtbot, lambda: ready(window) and _ids(window) == [ids[1], ids[2], ids[4], ids[0], ids[3], ids[5]]
    )


def test_the_search_box_finds_a_job_by_a_parameter_and_keeps_it_as_it_changes(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    production = builder.production
    ids = builder.request(4)
    with production.edit() as tx:
        for n, job in enumerate(ids):
            tx.add_metadata(JobRef(job), TICKET, StringValue(f"TCK-05432{n}"))
        tx.commit()
    window = make_window(production.path, production.clock)
    session = window.session
    assert session is not None
    qtbot.keyClicks(window.filters.search, "tck-054322")
    wait_for(qtbot, lambda: session.filter.text and not session.busy and _ids(window) == [ids[2]])
    builder.claim(ids[2])  # a live change of the row found: it stays (its ticket did not change)
    wait_for(qtbot, lambda: ready(window) and session.table.row(0).job.state is JobState.CLAIMED)
    assert _ids(window) == [ids[2]]
    (later,) = builder.request(1)  # a new job with the ticket: it comes in live
    with production.edit() as tx:
        tx.add_metadata(JobRef(later), TICKET, StringValue("see TCK-054322"))
        tx.commit()
    builder.claim(ids[1])  # another ticket: not listed
    wait_for(qtbot, lambda: ready(window) and _ids(window) == [later, ids[2]])


def test_the_exports_carry_every_column_the_table_can_show(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder, tmp_path: Path
) -> None:
    assert set(COLUMN_FIELDS) == {c.key for c in COLUMNS}
    assert {f for fields in COLUMN_FIELDS.values() for f in fields} <= set(FIELDS)
    ids = builder.request(2)
    builder.fail(ids[0], "moov atom not found")
    window = make_window(builder.production.path, builder.production.clock)
    session = window.session
    assert session is not None
    session.set_filter(JobFilter(sort="finished", newest_first=False))
    wait_for(qtbot, lambda: ready(window) and session.table.rowCount() == 2)
    done: list[int] = []
    window.jobs.exported.connect(lambda _path, count: done.append(count))
    window.jobs.export_to(session, tmp_path / "jobs.csv")
    wait_for(qtbot, lambda: done, timeout=20_000)
    window.jobs.export_to(session, tmp_path / "jobs.json")
    wait_for(qtbot, lambda: len(done) == 2, timeout=20_000)
    finished_at = builder.production.job(ids[0]).finished_at
    assert finished_at is not None
    with (tmp_path / "jobs.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["id"] for r in rows] == [str(ids[1]), str(ids[0])]  # the table's order
    assert [r["finished_at"] for r in rows] == ["", finished_at.isoformat()]
    items = json.loads((tmp_path / "jobs.json").read_text(encoding="utf-8"))["items"]
    assert [i["finished_at"] for i in items] == [None, finished_at.isoformat()]
    assert set(items[0]) == set(FIELDS)
