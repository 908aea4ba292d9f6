"""The job authority clock: a backward clock blocks guarded operations only, a forward jump
expires leases (acceptance checks 39-40 of the notes §8), and a clock a day fast is undone
by resetting it."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from postproject import (
    ConflictError,
    FakeClock,
    JobLease,
    JobRequest,
    JobState,
    Production,
    Reason,
    RepresentationKind,
)
from tests.core.jobs_helpers import KIND, TOOL, Setup, at, make_setup, us


@pytest.fixture
def s(production: Production, clock: FakeClock, tmp_path: Path) -> Setup:
    return make_setup(production, clock, tmp_path)


def test_39_a_backward_clock_blocks_guarded_operations_only(s: Setup) -> None:
    jobs = [s.request() for _ in range(3)]
    at(s.clock, 500)
    lease = s.claim(jobs[0], 10_000)
    token = lease.export_token()
    at(s.clock, 400)
    with s.production.edit() as tx:
        for action in (
            lambda: tx.claim_job_lease(jobs[1], TOOL, us(100)),
            lambda: tx.renew_job_lease(lease, us(100_000)),
            lambda: tx.release_job_lease(lease),
            lambda: tx.fail_job_lease(lease, "x"),
        ):
            with pytest.raises(ConflictError, match="backward"):
                action()
        with pytest.raises(ConflictError, match="backward"):
            JobLease.import_token(s.production, token)
        tx.request_job(JobRequest(KIND, (s.original,), s.asset, RepresentationKind.PROXY))
        tx.cancel_job(jobs[2])
        tx.commit()
    assert s.production.job(jobs[2]).state is JobState.CANCELLED
    at(s.clock, 500)
    with s.production.edit() as tx:
        tx.renew_job_lease(lease, us(100_000))
        tx.commit()


def test_40_a_forward_jump_expires_the_lease(s: Setup) -> None:
    job = s.request()
    at(s.clock, 0)
    lease = s.claim(job, 100)
    at(s.clock, 1_000_000)
    with s.production.edit() as tx, pytest.raises(ConflictError):
        tx.renew_job_lease(lease, us(100))
    s.claim(job, 100)


def test_a_day_fast_clock_locks_everyone_out_until_the_clock_is_reset(s: Setup) -> None:
    job = s.request()
    fast = FakeClock(s.clock.now() + timedelta(days=1))
    with (
        Production.open(s.production.location, clock=fast, allow_injected_clock=True) as ahead,
        ahead.edit() as tx,
    ):
        tx.claim_job_lease(job, TOOL, timedelta(minutes=5))  # raises the durable mark a day ahead
        tx.commit()
    other = s.request()
    with s.production.edit() as tx, pytest.raises(ConflictError) as refused:
        tx.claim_job_lease(other, TOOL, timedelta(minutes=5))
    assert refused.value.reason == Reason.CLOCK_REGRESSED  # check 28 still holds
    with s.production.edit() as tx:
        reset = tx.reset_clock()
        receipt = tx.commit()
    assert reset.old_mark is not None and reset.old_mark > reset.new_mark == s.clock.now()
    assert reset.fenced == (job,)  # the lease granted under the future clock
    assert receipt.revision is not None
    kinds = [e.kind for e in receipt.revision.events]
    assert kinds == ["clock_reset", "job_requeued"]
    assert receipt.revision.events[0].payload["old_mark"] == reset.old_mark.isoformat()
    assert s.production.job(job).state is JobState.REQUESTED
    lease = s.claim(other, 10_000)  # everyone works again
    s.complete(lease)
