"""The job table model: keyset pages, in-place reconciliation, filters, stuck claims."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QTimer

from postproject import FakeClock, JobState
from postproject_gui.dialogs.error_presenter import ErrorPresenter
from postproject_gui.models import roles
from postproject_gui.models.columns import column
from postproject_gui.models.job_table_model import JobTableModel
from postproject_gui.services.filters import JobFilter
from postproject_gui.services.production_service import PAGE_SIZE, ProductionService, page_size
from postproject_gui.services.types import JobPage, JobRow, StoreQuery
from postproject_gui.session.monitor_session import MonitorSession
from tests.gui.helpers import LoopRunner, ProductionBuilder, wait_for
from tests.gui.test_pure import NOW, make_job

SessionFactory = Callable[..., MonitorSession]


@pytest.fixture
def open_session(qloop: LoopRunner, presented: list[Any]) -> Iterator[SessionFactory]:
    sessions: list[MonitorSession] = []

    def make(path: Path, clock: FakeClock | None = None) -> MonitorSession:
        session = MonitorSession(ProductionService(path, clock=clock, loop=qloop.loop), ErrorPresenter())
        sessions.append(session)
        session.start()
        return session

    yield make
    for session in sessions:
        session.close()
    assert not presented


def settled(session: MonitorSession, revision: int) -> bool:
    return session.applied_revision >= revision and not session.busy


@pytest.mark.parametrize("jobs", [0, 1])
def test_small_productions(
    qtbot: Any, qtmodeltester: Any, open_session: SessionFactory, builder: ProductionBuilder, jobs: int
) -> None:
    builder.request(jobs) if jobs else None
    session = open_session(builder.production.path, builder.production.clock)
    head = builder.production.latest_revision().sequence  # type: ignore[union-attr]
    wait_for(qtbot, lambda: settled(session, head))
    assert session.table.rowCount() == jobs
    assert not session.table.canFetchMore()
    qtmodeltester.check(session.table)


def test_ten_thousand_jobs_arrive_page_by_page(
    qtbot: Any, qtmodeltester: Any, open_session: SessionFactory, big_copy: Path
) -> None:
    session = open_session(big_copy)
    wait_for(qtbot, lambda: session.applied_revision > 0 and not session.busy)
    model = session.table
    assert model.rowCount() == PAGE_SIZE and model.canFetchMore()
    qtmodeltester.check(model)
    expected = PAGE_SIZE
    for _ in range(4):
        model.fetchMore()
        wait_for(qtbot, lambda: not model.loading)
        expected += page_size(expected)  # the pages after the first grow with the list
    assert model.rowCount() == expected == 2600
    ids = [model.row(i).id for i in range(model.rowCount())]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == len(ids)  # newest first, no duplicates
    assert session.counts is not None and session.counts.total == 10_000
    session.set_filter(session.filter.with_(newest_first=False))
    wait_for(qtbot, lambda: not session.busy and model.rowCount() == PAGE_SIZE)
    assert model.row(0).id < model.row(1).id


class FakeLoader:
    """Serves pages from a list, without a database, and records the requests."""

    def __init__(self, model: JobTableModel, rows: list[JobRow], size: int = 3) -> None:
        self.model, self.rows, self.size = model, rows, size
        self.requests: list[tuple[int, str | None]] = []
        model.set_loader(self.request)

    def request(self, generation: int, query: StoreQuery, cursor: str | None) -> None:
        self.requests.append((generation, cursor))

    def serve(self) -> None:
        generation, cursor = self.requests[-1]
        start = int(cursor or 0)
        chunk = self.rows[start : start + self.size]
        more = str(start + self.size) if start + self.size < len(self.rows) else None
        self.model.page_loaded(generation, JobPage(tuple(chunk), more))


@pytest.fixture
def model() -> Iterator[JobTableModel]:
    table = JobTableModel(lambda: NOW)
    yield table
    table.shutdown()


def newest_first(rows: list[JobRow]) -> list[JobRow]:
    return sorted(rows, key=lambda r: r.id, reverse=True)


def test_changes_are_reconciled_in_place(qtbot: Any, qtmodeltester: Any, model: JobTableModel) -> None:
    older = newest_first([make_job() for _ in range(6)])
    loader = FakeLoader(model, older)
    model.reset(JobFilter(state=JobState.REQUESTED))
    loader.serve()
    assert model.rowCount() == 3 and model.canFetchMore()
    updated = JobRow(older[1].job, "renamed", older[1].first_input)
    fresh = make_job()  # newer than everything loaded: goes on top
    unseen = older[5]  # beyond the loaded window: a later page brings it
    failed = make_job(JobState.FAILED, diagnostic="x")  # does not match the filter
    with qtbot.waitSignal(model.dataChanged):
        model.apply_changes(
            {older[1].id: updated, fresh.id: fresh, unseen.id: unseen, failed.id: failed, older[2].id: None}
        )
    assert [model.row(i).id for i in range(model.rowCount())] == [fresh.id, older[0].id, older[1].id]
    assert model.row(2).output_name == "renamed"
    qtmodeltester.check(model)
    model.fetchMore()
    loader.serve()
    assert [model.row(i).id for i in range(model.rowCount())][-3:] == [older[3].id, older[4].id, older[5].id]


def test_changes_during_a_page_load_wait_for_it(model: JobTableModel) -> None:
    rows = newest_first([make_job() for _ in range(2)])
    loader = FakeLoader(model, rows[1:], size=5)
    model.reset()
    model.apply_changes({rows[0].id: rows[0]})  # the first page is still in flight
    assert model.rowCount() == 0
    loader.serve()
    assert [model.row(i).id for i in range(model.rowCount())] == [rows[0].id, rows[1].id]


def test_a_stale_page_is_ignored(model: JobTableModel) -> None:
    loader = FakeLoader(model, [make_job()])
    model.reset()
    stale = loader.requests[-1][0]
    model.reset(JobFilter(state=JobState.FAILED))
    model.page_loaded(stale, JobPage((make_job(),), None))
    assert model.rowCount() == 0 and model.loading


def test_a_session_is_busy_until_its_opening_read_the_claim_outlook(
    qtbot: Any, open_session: SessionFactory, builder: ProductionBuilder, clock: FakeClock
) -> None:
    """The opening reads the counts, kinds and claim outlook after the first page: the session is
    busy from the first rows until then (it was idle in between, for a turn of the loop or more
    on a loaded machine: a test waiting for rows and idle then found ``outlook`` None)."""
    (job,) = builder.request(1)
    builder.claim(job, seconds=120)
    seen: list[bool] = []
    session = open_session(builder.production.path, clock)
    session.table.rowsInserted.connect(lambda *_: QTimer.singleShot(0, lambda: seen.append(session.busy)))
    wait_for(qtbot, lambda: session.table.rowCount() == 1 and not session.busy and bool(seen))
    assert seen == [True]  # a turn after the first rows: the opening still reading
    assert session.outlook is not None


def test_stuck_and_expiring_claims_are_marked_with_a_fake_clock(
    qtbot: Any, open_session: SessionFactory, builder: ProductionBuilder, clock: FakeClock
) -> None:
    (job,) = builder.request(1)
    builder.claim(job, seconds=120)
    session = open_session(builder.production.path, clock)
    wait_for(qtbot, lambda: session.table.rowCount() == 1 and not session.busy)
    model, state, lease = session.table, column("state"), column("lease")

    def health() -> str:
        return str(model.index(0, state).data(roles.HEALTH_ROLE))

    assert (
        health() == "live" and model.index(0, lease).data() == "in 2m"
    )  # the one human format (postproject.humanize)
    clock.advance(timedelta(seconds=90))
    assert health() == "expiring" and model.index(0, state).data() == "Claimed · expiring"
    clock.advance(timedelta(seconds=31))
    assert health() == "stuck" and model.index(0, lease).data() == "expired 1s ago"
    assert model.index(0, state).data(Qt.ItemDataRole.ForegroundRole).name() == "#b35c00"
    session.recheck_time()
    assert session.outlook is not None and len(session.outlook.stuck(clock.now())) == 1


def test_stuck_filter_lists_claims_soonest_expiry_first(
    qtbot: Any, open_session: SessionFactory, builder: ProductionBuilder, clock: FakeClock
) -> None:
    ids = builder.request(4)
    builder.claim(ids[1], seconds=10)
    builder.claim(ids[2], seconds=3600)
    renewed = builder.claim(ids[3], seconds=60)
    clock.advance(timedelta(seconds=50))
    with builder.production.edit() as tx:
        tx.renew_job_lease(renewed, timedelta(seconds=60))  # a new 60 s term: ends at 110 s
        tx.commit()
    builder.claim(ids[0], seconds=30)
    clock.advance(timedelta(seconds=25))
    # Now: ids[1] expired (stuck); ids[0] has 5 of its 30 s left (expiring); ids[3] has 35 of
    # its renewed 60 s (live, though only 35 of 110 s since its claim); ids[2] has nearly an hour.
    session = open_session(builder.production.path, clock)
    wait_for(qtbot, lambda: session.applied_revision > 0 and not session.busy)
    session.set_filter(JobFilter(stuck=True))
    wait_for(qtbot, lambda: not session.busy and session.table.rowCount() == 2)
    assert [session.table.row(i).id for i in range(2)] == [ids[1], ids[0]]
    assert [session.table.row(i).state_text(clock.now()) for i in range(2)] == [
        "Claimed · stuck",
        "Claimed · expiring",
    ]
    outlook = session.outlook
    assert outlook is not None and len(outlook.expiring(clock.now())) == 1
    clock.advance(timedelta(seconds=2400))  # the hour-long lease has less than 20 minutes left
    session.recheck_time()
    wait_for(qtbot, lambda: session.table.rowCount() == 4)
    assert [session.table.row(i).id for i in range(4)] == [ids[1], ids[0], ids[3], ids[2]]
    assert session.table.row(3).state_text(clock.now()) == "Claimed · expiring"


def test_countdown_refresh_touches_only_claimed_rows(qtbot: Any, model: JobTableModel) -> None:
    rows = newest_first([make_job(), make_job(JobState.CLAIMED, expires_in=30), make_job()])
    loader = FakeLoader(model, rows, size=10)
    model.reset()
    loader.serve()
    model.set_visible_rows(0, 2)
    changed: list[tuple[int, int]] = []
    model.dataChanged.connect(lambda top, bottom, *_: changed.append((top.row(), top.column())))
    model._tick()
    claimed = next(i for i in range(3) if model.row(i).job.state is JobState.CLAIMED)
    assert sorted(changed) == sorted([(claimed, column("state")), (claimed, column("lease"))])


def test_a_commit_from_another_process_reaches_the_table_and_counts(
    qtbot: Any, open_session: SessionFactory, builder: ProductionBuilder
) -> None:
    from tests.gui.helpers import commit_from_another_process

    builder.request(2)
    session = open_session(builder.production.path)
    wait_for(qtbot, lambda: session.table.rowCount() == 2 and session.live)
    (new_id,) = commit_from_another_process(builder)
    wait_for(qtbot, lambda: session.table.rowCount() == 3, timeout=10_000)
    assert str(session.table.row(0).id) == new_id  # newest first: on top
    wait_for(qtbot, lambda: session.counts is not None and session.counts.total == 3)
    assert "org.example:from-elsewhere" in session.kinds
    assert session.events.rowCount() >= 1 and session.events.entry(0).origin == "other-process"


def test_fake_clock_start_is_2026() -> None:
    assert datetime(2026, 1, 1, 12, tzinfo=UTC) == NOW
