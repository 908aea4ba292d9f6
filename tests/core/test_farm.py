"""The farm's work model (issue 13): workers, attempts, lost work, retries, scheduling, idempotency."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from postproject import (
    AgentIdentity,
    ConflictError,
    FakeClock,
    InvalidArgumentError,
    JobId,
    JobRef,
    JobRequest,
    JobState,
    NotFoundError,
    Production,
    Property,
    Reason,
    RepresentationKind,
    StringValue,
)
from postproject.model.jobs import AttemptOutcome
from postproject.model.workers import WorkerSession, WorkerState
from tests.conftest import START
from tests.core import farm_processes as procs
from tests.core.jobs_helpers import KIND, TOOL, Setup, at, make_setup, us
from tests.races.test_races import CTX, Processes

PROFILE = Property("https://example.com/transcode", "profile")


@pytest.fixture
def s(production: Production, clock: FakeClock, tmp_path: Path) -> Setup:
    at(clock, 0)
    return make_setup(production, clock, tmp_path)


def register(production: Production, name: str, **options: object) -> WorkerSession:
    with production.edit() as tx:
        session = tx.register_worker(name, **options)  # type: ignore[arg-type]
        tx.commit()
    return session


def claim_next(
    production: Production, worker: WorkerSession | None = None, micros: int = 10_000_000, **kw: object
):  # type: ignore[no-untyped-def]
    with production.edit() as tx:
        lease = tx.claim_next_job_lease(TOOL, us(micros), worker=worker, **kw)  # type: ignore[arg-type]
        tx.commit()
    return lease


# --- workers ------------------------------------------------------------------------------


def test_workers_register_heartbeat_and_go_offline(s: Setup) -> None:
    production = s.production
    session = register(production, "render-07", capacity=2, kinds=[KIND], host="node7")
    head = production.latest_sequence()
    (worker,) = production.workers()
    assert (worker.name, worker.host, worker.capacity, worker.kinds) == ("render-07", "node7", 2, (KIND,))
    assert worker.state is WorkerState.ONLINE and worker.running == ()
    s.clock.advance(timedelta(seconds=25))
    with production.edit() as tx:
        tx.heartbeat(session)
        assert tx.commit().revision is None  # stored state, not a revision
    assert production.latest_sequence() == head  # the feed does not tick
    s.clock.advance(timedelta(seconds=30))
    assert production.workers()[0].state is WorkerState.ONLINE
    s.clock.advance(timedelta(microseconds=1))
    assert production.workers()[0].state is WorkerState.OFFLINE
    with pytest.raises(ConflictError) as offline:
        claim_next(production, session)
    assert offline.value.reason == Reason.WORKER_OFFLINE


def test_registering_again_fences_the_old_session(s: Setup) -> None:
    old = register(s.production, "render-07")
    new = register(s.production, "render-07", capacity=3)
    assert old.worker_id == new.worker_id and old.session_id != new.session_id
    s.request()
    with pytest.raises(ConflictError) as fenced:
        claim_next(s.production, old)
    assert fenced.value.reason == Reason.WORKER_SESSION_REPLACED
    with s.production.edit() as tx, pytest.raises(ConflictError) as beat:
        tx.heartbeat(old)
    assert beat.value.reason == Reason.WORKER_SESSION_REPLACED
    assert claim_next(s.production, new) is not None
    assert s.production.workers()[0].capacity == 3


def test_claims_respect_the_workers_kinds_and_capacity(s: Setup) -> None:
    worker = register(s.production, "render-07", capacity=2, kinds=["org.example:other"])
    s.request()  # of KIND: not this worker's
    assert claim_next(s.production, worker) is None
    other = [s.request(kind="org.example:other") for _ in range(3)]
    first, second = claim_next(s.production, worker), claim_next(s.production, worker)
    assert {first.job_id, second.job_id} <= set(other)
    assert claim_next(s.production, worker) is None  # at capacity
    assert set(s.production.workers()[0].running) == {first.job_id, second.job_id}
    s.clock.advance(timedelta(seconds=11))  # both leases expire: capacity frees up
    with s.production.edit() as tx:
        tx.heartbeat(worker)
        tx.commit()
    assert claim_next(s.production, worker) is not None
    job = s.production.job(first.job_id)
    assert job.claim is None or job.claim.worker in (None, "render-07")


def test_capacity_is_never_exceeded_by_racing_threads(
    production_factory: Callable[..., Production], tmp_path: Path, clock: FakeClock
) -> None:
    production = production_factory()
    setup = make_setup(production, clock, tmp_path)
    with production.edit() as tx:
        for _ in range(100):
            tx.request_job(JobRequest(KIND, (setup.original,), setup.asset, RepresentationKind.PROXY))
        tx.commit()
    sessions = [register(production, f"w{i}", capacity=2) for i in range(3)]
    violations: list[str] = []
    done: list[JobId] = []
    lock = threading.Lock()

    def lane(session: WorkerSession) -> None:
        with Production.open(production.location, clock=clock, allow_injected_clock=True) as mine:
            while True:
                lease = claim_next(mine, session)
                if lease is None:
                    if mine.job_counts()[JobState.REQUESTED] == 0:
                        return
                    continue
                running = next(w for w in mine.workers() if w.name == session.name).running
                if len(running) > 2:
                    violations.append(f"{session.name} holds {len(running)}")
                setup.complete(lease, production=mine)
                with lock:
                    done.append(lease.job_id)

    threads = [threading.Thread(target=lane, args=(w,)) for w in sessions for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert violations == []
    assert len(done) == len(set(done)) == 100


# --- attempts and lost work --------------------------------------------------------------


def test_every_claim_starts_an_attempt_and_a_reclaim_ends_the_lost_one(s: Setup) -> None:
    job = s.request()
    s.claim(job, 100)
    at(s.clock, 200)
    lease = s.claim(job, 10_000)
    s.complete(lease)
    first, second = s.production.job(job).attempts
    assert (first.number, first.outcome, second.number, second.outcome) == (
        1,
        AttemptOutcome.LOST,
        2,
        AttemptOutcome.SUCCEEDED,
    )
    assert first.agent == AgentIdentity("render-07") and first.ended_at == second.claimed_at
    assert second.ended_at is not None


def test_finalize_lost_requeues_or_fails_with_a_diagnostic(s: Setup) -> None:
    worker = register(s.production, "render-07", capacity=2)
    with s.production.edit() as tx:
        limited = tx.request_job(
            JobRequest(KIND, (s.original,), s.asset, RepresentationKind.PROXY, max_attempts=1)
        )
        tx.commit()
    unlimited = s.request()
    leases = [claim_next(s.production, worker, 100) for _ in range(2)]
    assert {lease.job_id for lease in leases} == {limited, unlimited}
    with s.production.edit() as tx:
        assert tx.finalize_lost() == 0  # nothing expired yet
        tx.commit()
    at(s.clock, 100)  # both leases expire exactly now
    with s.production.edit() as tx:
        assert tx.finalize_lost() == 2
        receipt = tx.commit()
    assert receipt.revision is not None
    assert sorted(e.kind for e in receipt.revision.events) == ["job_failed", "job_lost"]
    failed = s.production.job(limited)
    assert failed.state is JobState.FAILED and failed.failure is not None
    assert "attempt 1" in failed.failure.diagnostic and "worker render-07" in failed.failure.diagnostic
    assert "expired at" in failed.failure.diagnostic
    assert failed.attempts[0].outcome is AttemptOutcome.LOST
    back = s.production.job(unlimited)
    assert back.state is JobState.REQUESTED and back.attempts[0].outcome is AttemptOutcome.LOST
    with pytest.raises(InvalidArgumentError), s.production.edit() as tx:
        tx.finalize_lost(0)


def test_without_a_sweep_an_expired_claim_stays_claimed(s: Setup) -> None:
    job = s.request()
    s.claim(job, 100)
    at(s.clock, 10_000)
    assert s.production.job(job).state is JobState.CLAIMED  # the spec's rule holds


def test_an_expired_claim_that_used_the_last_attempt_is_not_claimed_again(s: Setup) -> None:
    """max_attempts bounds claims: a lost claim that used the job's last attempt waits for the
    loss sweep to fail it; no claim runs it once more (before, any claim took it again)."""
    with s.production.edit() as tx:
        spent = tx.request_job(
            JobRequest(KIND, (s.original,), s.asset, RepresentationKind.PROXY, max_attempts=1)
        )
        spare = tx.request_job(
            JobRequest(KIND, (s.original,), s.asset, RepresentationKind.PROXY, max_attempts=2)
        )
        tx.commit()
    claimed = {claim_next(s.production, None, 100).job_id for _ in range(2)}  # type: ignore[union-attr]
    assert claimed == {spent, spare}
    at(s.clock, 100)  # both leases expired
    again = claim_next(s.production, None, 100)
    assert again is not None and again.job_id == spare  # its second attempt
    assert claim_next(s.production, None, 100) is None
    with pytest.raises(ConflictError), s.production.edit() as tx:
        tx.claim_job_lease(spent, TOOL, us(100))
    assert len(s.production.job(spent).attempts) == 1
    with s.production.edit() as tx:
        assert tx.finalize_lost() == 1
        tx.commit()
    assert s.production.job(spent).state is JobState.FAILED


def test_two_sweepers_racing_a_reclaim(
    production_factory: Callable[..., Production], tmp_path: Path, clock: FakeClock
) -> None:
    production = production_factory()
    setup = make_setup(production, clock, tmp_path)
    jobs = []
    with production.edit() as tx:
        for _ in range(30):
            jobs.append(
                tx.request_job(JobRequest(KIND, (setup.original,), setup.asset, RepresentationKind.PROXY))
            )
        tx.commit()
    with production.edit() as tx:
        for job in jobs:
            tx.claim_job_lease(job, TOOL, us(100))
        tx.commit()
    path = production.location
    barrier = CTX.Barrier(3)
    start = (START + timedelta(seconds=1)).isoformat()
    runs = Processes()
    runs.start(procs.sweep, path, start, barrier)
    runs.start(procs.sweep, path, start, barrier)
    runs.start(procs.reclaim_all, path, start, barrier)
    swept_a, swept_b, reclaimed = runs.results(120)
    assert swept_a + swept_b + reclaimed == 30  # each expired claim ended exactly once
    for job in jobs:
        attempts = production.job(job).attempts
        assert attempts[0].outcome is AttemptOutcome.LOST
        assert len(attempts) in (1, 2)


# --- retries, requeue, priority ----------------------------------------------------------


def test_retryable_failures_and_request_again(s: Setup) -> None:
    with s.production.edit() as tx:
        job = tx.request_job(
            JobRequest(KIND, (s.original,), s.asset, RepresentationKind.PROXY, priority=7, max_attempts=2)
        )
        tx.add_metadata(JobRef(job), PROFILE, "proxy-720p")
        tx.commit()
    lease = s.claim(job, 10_000)
    with s.production.edit() as tx:
        tx.fail_job_lease(lease, "encoder crashed", retry=True)
        receipt = tx.commit()
    assert [e.kind for e in receipt.revision.events] == ["job_retry_scheduled"]  # type: ignore[union-attr]
    assert s.production.job(job).state is JobState.REQUESTED
    lease = s.claim(job, 10_000)
    with s.production.edit() as tx:
        tx.fail_job_lease(lease, "encoder crashed again", retry=True)  # out of attempts: terminal
        receipt = tx.commit()
    assert [e.kind for e in receipt.revision.events] == ["job_failed"]  # type: ignore[union-attr]
    with s.production.edit() as tx:
        again = tx.request_again(job)
        with pytest.raises(ConflictError):
            tx.request_again(job)  # already requested again
        tx.commit()
    new = s.production.job(again)
    assert (new.kind, new.inputs, new.priority, new.max_attempts, new.retry_of) == (
        KIND,
        (s.original,),
        7,
        2,
        job,
    )
    assert s.production.job(job).retried_as == again
    assert [a.value for a in s.production.metadata[JobRef(again)]] == [StringValue("proxy-720p")]
    with s.production.edit() as tx:
        with pytest.raises(ConflictError):
            tx.request_again(again)  # requested, not failed
        with pytest.raises(NotFoundError):
            tx.request_again(JobId.new())


def test_requeue_fences_the_lease_and_ends_the_attempt_released(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 10_000)
    with s.production.edit() as tx:
        tx.requeue_job(job)
        with pytest.raises(ConflictError):
            tx.requeue_job(job)
        tx.commit()
    assert s.production.job(job).state is JobState.REQUESTED
    assert s.production.job(job).attempts[0].outcome is AttemptOutcome.RELEASED
    with s.production.edit() as tx, pytest.raises(ConflictError) as lost:
        tx.renew_job_lease(lease, us(20_000))
    assert lost.value.reason == Reason.LEASE_LOST


def test_claim_order_is_priority_then_availability_then_id(s: Setup) -> None:
    def request(priority: int = 0, not_before_us: int | None = None) -> JobId:
        with s.production.edit() as tx:
            job = tx.request_job(
                JobRequest(
                    KIND,
                    (s.original,),
                    s.asset,
                    RepresentationKind.PROXY,
                    priority=priority,
                    not_before=START + us(not_before_us) if not_before_us is not None else None,
                )
            )
            tx.commit()
        return job

    plain_old = request()
    later = request(not_before_us=500)
    rush = request(priority=100)
    plain_new = request()
    low = request(priority=-5)
    order = [claim_next(s.production).job_id for _ in range(3)]
    assert order == [rush, plain_old, plain_new]
    assert claim_next(s.production).job_id == low  # `later` is not claimable yet
    at(s.clock, 500)
    assert claim_next(s.production).job_id == later
    with s.production.edit() as tx:
        job = tx.request_job(JobRequest(KIND, (s.original,), s.asset, RepresentationKind.PROXY))
        tx.set_job_priority(job, 1000)
        with pytest.raises(ConflictError):
            tx.set_job_priority(later, 5)  # claimed
        tx.commit()
    assert s.production.job(job).priority == 1000


# --- idempotency -----------------------------------------------------------------------


def test_idempotent_requests_replay_and_conflict(s: Setup) -> None:
    request = JobRequest(
        KIND, (s.original,), s.asset, RepresentationKind.PROXY, idempotency_key="delivery-42"
    )
    with s.production.edit() as tx:
        job = tx.request_job(request)
        tx.commit()
    with s.production.edit() as tx:
        assert tx.request_job(request) == job
        assert tx.commit().revision is None  # nothing new
    different = JobRequest(
        KIND, (s.original,), s.asset, RepresentationKind.PROXY, priority=1, idempotency_key="delivery-42"
    )
    with s.production.edit() as tx, pytest.raises(ConflictError) as clash:
        tx.request_job(different)
    assert clash.value.reason == Reason.IDEMPOTENCY_KEY_CONFLICT


def test_four_processes_racing_one_key_create_one_job(
    production_factory: Callable[..., Production], tmp_path: Path, clock: FakeClock
) -> None:
    production = production_factory()
    setup = make_setup(production, clock, tmp_path)
    barrier = CTX.Barrier(4)
    args = (production.location, str(setup.asset), str(setup.original), barrier)
    runs = Processes()
    for _ in range(4):
        runs.start(procs.keyed_request, *args)
    ids = runs.results(120)
    assert len(set(ids)) == 1
    assert production.job_counts()[JobState.REQUESTED] == 1


# --- bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda s: JobRequest(KIND, (), s.asset, RepresentationKind.PROXY, priority=1001),
        lambda s: JobRequest(KIND, (), s.asset, RepresentationKind.PROXY, priority=True),
        lambda s: JobRequest(
            KIND, (), s.asset, RepresentationKind.PROXY, not_before=START.replace(tzinfo=None)
        ),
        lambda s: JobRequest(KIND, (), s.asset, RepresentationKind.PROXY, idempotency_key=""),
        lambda s: JobRequest(KIND, (), s.asset, RepresentationKind.PROXY, idempotency_key="k" * 1_000_000),
        lambda s: JobRequest(KIND, (), s.asset, RepresentationKind.PROXY, max_attempts=0),
    ],
    ids=["priority-range", "priority-bool", "naive-datetime", "empty-key", "1mb-key", "zero-attempts"],
)
def test_bad_requests_are_invalid_arguments(s: Setup, make: Callable[[Setup], JobRequest]) -> None:
    with pytest.raises(InvalidArgumentError):
        make(s)


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"capacity": 0}, "capacity"),
        ({"capacity": 2000}, "capacity"),
        ({"kinds": []}, "kinds"),
        ({"kinds": "x:y"}, "kinds"),
    ],
)
def test_bad_registrations_change_nothing(s: Setup, options: dict[str, object], field: str) -> None:
    head = s.production.latest_sequence()
    with s.production.edit() as tx, pytest.raises(InvalidArgumentError, match=field):
        tx.register_worker("render-07", **options)  # type: ignore[arg-type]
    with s.production.edit() as tx, pytest.raises(InvalidArgumentError):
        tx.register_worker("")
    assert s.production.workers() == [] and s.production.latest_sequence() == head


def test_an_unknown_worker_cannot_claim(s: Setup, production_factory: Callable[..., Production]) -> None:
    other = production_factory("other.pproj")
    stranger = register(other, "render-07")
    s.request()
    with pytest.raises(InvalidArgumentError):
        claim_next(s.production, stranger)  # a session of another production
    forged = WorkerSession(s.production.id, JobId.new().bytes, "ghost", b"\0" * 16, 1, None)
    with pytest.raises(NotFoundError):
        claim_next(s.production, forged)
    with s.production.edit() as tx, pytest.raises(InvalidArgumentError):
        tx.set_job_priority(JobId.new(), 5000)
    assert s.production.job_counts()[JobState.CLAIMED] == 0
