"""The production service (threads, reads, one-transaction writes) and the feed watcher."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from postproject import (
    EXECUTOR_VOCABULARY,
    FakeClock,
    JobId,
    JobRef,
    JobRequest,
    JobState,
    NotFoundError,
    Production,
    Property,
    RepresentationKind,
    StringValue,
)
from postproject_gui.services.feed_watcher import FeedWatcher
from postproject_gui.services.production_service import ProductionService
from postproject_gui.services.types import RequestSpec, StoreQuery
from tests.gui.helpers import KIND, LoopRunner, ProductionBuilder, commit_from_another_process, wait_for


@pytest.fixture
def service(builder: ProductionBuilder, clock: FakeClock, qloop: LoopRunner) -> Iterator[ProductionService]:
    svc = ProductionService(builder.production.location, clock=clock, loop=qloop.loop)
    qloop.run(svc.open())
    yield svc
    svc.close()


def test_reads_run_on_reader_threads_not_the_gui_thread(
    service: ProductionService, builder: ProductionBuilder, qloop: LoopRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    from postproject_gui.services import reads

    builder.request(3)
    seen: list[str] = []
    original = reads.jobs_page

    def spy(*args: Any) -> Any:
        seen.append(threading.current_thread().name)
        return original(*args)

    monkeypatch.setattr(reads, "jobs_page", spy)
    page = qloop.run(service.jobs_page(StoreQuery(), None, 2))
    assert len(page.rows) == 2 and page.next_cursor is not None
    assert seen and all(name.startswith("pp-reader") for name in seen)
    rest = qloop.run(service.jobs_page(StoreQuery(), page.next_cursor, 2))
    assert len(rest.rows) == 1 and rest.next_cursor is None
    assert page.rows[0].output_name == "A001_C002" and page.rows[0].first_input == "A001_C002.mov"


def test_counts_kinds_detail_and_missing_jobs(
    service: ProductionService, builder: ProductionBuilder, qloop: LoopRunner
) -> None:
    ids = builder.request(2)
    builder.fail(ids[0], "boom\nmore")
    counts = qloop.run(service.counts())
    assert counts.by_state[JobState.FAILED] == 1 and counts.by_state[JobState.REQUESTED] == 1
    assert qloop.run(service.kinds()) == (KIND,)
    detail = qloop.run(service.job_detail(ids[0]))
    assert detail.job.failure is not None and detail.job.failure.diagnostic == "boom\nmore"
    assert [h.event for h in detail.history] == ["job_requested", "job_claimed", "job_failed"]
    assert detail.inputs[0].path.endswith("A001_C002.mov") and detail.target_root_path is not None
    missing = JobId.new()
    assert qloop.run(service.jobs([ids[1], missing])) == {
        ids[1]: qloop.run(service.jobs([ids[1]]))[ids[1]],
        missing: None,
    }
    with pytest.raises(NotFoundError):
        qloop.run(service.job_detail(missing))


def test_request_job_writes_the_job_and_its_parameters_in_one_revision(
    service: ProductionService, builder: ProductionBuilder, qloop: LoopRunner
) -> None:
    before = qloop.run(service.head())
    profile = Property(EXECUTOR_VOCABULARY, "profile")
    spec = RequestSpec(
        KIND,
        (builder.rep,),
        builder.asset,
        RepresentationKind.PROXY,
        "proxies",
        ((profile, StringValue("proxy-720p")),),
    )
    job_id, revision = qloop.run(service.request_job(spec))
    assert revision == before + 1
    assert builder.production.metadata[JobRef(job_id)][0].value == StringValue("proxy-720p")


def test_a_failed_request_leaves_nothing_behind(
    service: ProductionService, builder: ProductionBuilder, qloop: LoopRunner
) -> None:
    before = qloop.run(service.head())
    spec = RequestSpec(KIND, (builder.rep,), builder.asset, RepresentationKind.PROXY, "no-such-root")
    with pytest.raises(NotFoundError, match="no-such-root"):
        qloop.run(service.request_job(spec))
    assert qloop.run(service.head()) == before
    assert qloop.run(service.counts()).total == 0


def test_bulk_cancel_is_one_transaction_and_skips_finished_jobs(
    service: ProductionService, builder: ProductionBuilder, qloop: LoopRunner
) -> None:
    ids = builder.request(3)
    builder.claim(ids[1])
    builder.fail(ids[2], "nope")
    before = qloop.run(service.head())
    outcome = qloop.run(service.cancel_jobs(ids))
    assert set(outcome.cancelled) == {ids[0], ids[1]}
    assert [job for job, _ in outcome.skipped] == [ids[2]]
    assert outcome.revision == before + 1
    assert builder.production.job(ids[1]).state is JobState.CANCELLED


def test_bulk_cancel_of_a_missing_job_rolls_everything_back(
    service: ProductionService, builder: ProductionBuilder, qloop: LoopRunner
) -> None:
    (job,) = builder.request(1)
    with pytest.raises(NotFoundError):
        qloop.run(service.cancel_jobs([job, JobId.new()]))
    assert builder.production.job(job).state is JobState.REQUESTED


def test_calls_after_close_raise(builder: ProductionBuilder, clock: FakeClock, qloop: LoopRunner) -> None:
    svc = ProductionService(builder.production.location, clock=clock, loop=qloop.loop)
    qloop.run(svc.open())
    svc.close()
    svc.close()
    with pytest.raises(RuntimeError, match="closed"):
        qloop.run(svc.head())
    assert not [t for t in threading.enumerate() if t.name.startswith("pp-")]


class Recorder:
    def __init__(self, watcher: FeedWatcher) -> None:
        self.revisions: list[int] = []
        self.jobs: set[JobId] = set()
        self.heads: list[int] = []
        self.live: list[bool] = []
        watcher.revisions_arrived.connect(lambda revs: self.revisions.extend(r.sequence for r in revs))
        watcher.jobs_changed.connect(self.jobs.update)
        watcher.head_changed.connect(self.heads.append)
        watcher.live_changed.connect(self.live.append)


@pytest.fixture
def watcher(builder: ProductionBuilder, qloop: LoopRunner) -> Iterator[FeedWatcher]:
    latest = builder.production.latest_revision()
    feed = FeedWatcher(builder.production.location, after=latest.sequence if latest else 0, loop=qloop.loop)
    feed.start()
    yield feed
    feed.stop()


def test_watcher_reports_commits_of_this_process(
    qtbot: Any, watcher: FeedWatcher, builder: ProductionBuilder
) -> None:
    seen = Recorder(watcher)
    wait_for(qtbot, lambda: seen.live == [True])
    ids = builder.request(2)
    wait_for(qtbot, lambda: seen.jobs == set(ids))
    assert seen.heads[-1] == watcher.head == builder.production.latest_revision().sequence  # type: ignore[union-attr]
    assert len(seen.revisions) == 1


def test_watcher_reports_commits_of_another_process(
    qtbot: Any, watcher: FeedWatcher, builder: ProductionBuilder
) -> None:
    seen = Recorder(watcher)
    wait_for(qtbot, lambda: seen.live)
    ids = commit_from_another_process(builder, 3)
    wait_for(qtbot, lambda: {str(i) for i in seen.jobs} == set(ids), timeout=10_000)


def test_watcher_says_live_again_after_a_quick_reconnect(
    qtbot: Any, builder: ProductionBuilder, qloop: LoopRunner
) -> None:
    """Unreadable, then readable again before the GUI thread took the first news: both are
    delivered (it once dropped the second, and the status said Not live until the next commit
    or the 30 s wait's end)."""
    feed = FeedWatcher(builder.production.location, after=0, loop=qloop.loop)
    seen = Recorder(feed)
    feed._post(None, 0, live=True)  # as the watcher thread posts them (not started here)
    wait_for(qtbot, lambda: seen.live == [True])
    feed._post(None, 0, live=False)
    feed._post(None, 0, live=True)  # before the GUI thread delivered "not live"
    wait_for(qtbot, lambda: seen.live == [True, False, True])
    assert feed.live


def test_watcher_goes_offline_when_the_file_disappears(
    qtbot: Any, builder: ProductionBuilder, qloop: LoopRunner, tmp_path: Any
) -> None:
    feed = FeedWatcher(tmp_path / "missing.pproj", after=0, loop=qloop.loop)
    seen = Recorder(feed)
    feed.start()
    try:
        wait_for(qtbot, lambda: seen.live == [False])
        assert not feed.live
    finally:
        feed.stop()


def test_a_page_reads_its_names_together_however_many_assets_it_shows(builder: ProductionBuilder) -> None:
    """What a page of jobs shows beside each job (its output asset's name, its first input's
    file, a claimed job's lease start) is read together: the statements for a page are the same
    for 3 claimed jobs on 3 assets and 30 on 30 (one read per asset, per input and per claim
    before: 150 more for 30)."""
    from postproject_gui.services import reads
    from tests.reads_counting import counting

    production = builder.production
    statements = []
    for count in (3, 30):
        jobs = []
        with production.edit() as tx:
            for n in range(count):
                asset = tx.create_asset(f"S{count}_{n:03}")
                clip = builder.media / f"S{count}_{n:03}.mov"
                clip.write_bytes(b"essence")
                source = tx.add_representation(asset, RepresentationKind.ORIGINAL, clip)
                jobs.append(
                    tx.request_job(JobRequest(KIND, [source], asset, RepresentationKind.PROXY, "proxies"))
                )
            tx.commit()
        for job in jobs:  # each claimed in a revision of its own
            builder.claim(job)
        query = StoreQuery(newest_first=True, state=JobState.CLAIMED)
        # (opened inside the block: SQLite's statements are counted on the connections it opens)
        with (
            counting(production.location) as found,
            Production.open(production.location, read_only=True) as p,
        ):
            page = reads.jobs_page(p, reads.NameCache(), query, None, count)
        assert [r.output_name for r in page.rows] == [f"S{count}_{n:03}" for n in reversed(range(count))]
        assert [r.first_input for r in page.rows] == [f"S{count}_{n:03}.mov" for n in reversed(range(count))]
        assert all(r.lease_start == r.job.claim.claimed_at for r in page.rows if r.job.claim)
        assert all(r.lease_start is not None for r in page.rows)
        statements.append(found.statements)
    assert statements[0] == statements[1]


def test_a_read_is_handed_over_at_the_next_turn_even_when_done_already(qtbot: Any) -> None:
    """The courier that hands a page to the GUI thread (ProductionService.deliver_jobs_page)
    calls back at that thread's next turn, from a reader thread or when the read was done
    before its callback was added (then never inside the call that added it)."""
    from concurrent.futures import Future

    from PySide6.QtWidgets import QApplication

    from postproject_gui.services.production_service import _Courier

    courier = _Courier()
    handed: list[tuple[object, bool]] = []
    done: Future[int] = Future()
    done.set_result(7)
    courier.post(
        done, lambda f: handed.append((f.result(), threading.current_thread() is threading.main_thread()))
    )
    assert handed == []
    QApplication.processEvents()
    assert handed == [(7, True)]
    later: Future[int] = Future()
    courier.post(
        later, lambda f: handed.append((f.result(), threading.current_thread() is threading.main_thread()))
    )
    threading.Thread(target=later.set_result, args=(8,)).start()
    wait_for(qtbot, lambda: len(handed) == 2)
    assert handed[1] == (8, True)
