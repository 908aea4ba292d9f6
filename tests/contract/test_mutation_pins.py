"""Pins for the one-line mutations of the core that the suite once let through (issue 28
item 12), and the fencing of requeued claims in focused tests of their own.

Each test reads as the rule it pins; all use the public API only, so they run on every
engine the suite's fixtures provide (``[sqlite]`` and ``[postgresql]``).
"""

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
    RepresentationKind,
)
from tests.core.jobs_helpers import AGENT, KIND, TOOL, Setup, at, make_setup, us


@pytest.fixture
def s(production: Production, clock: FakeClock, tmp_path: Path) -> Setup:
    at(clock, 0)
    return make_setup(production, clock, tmp_path)


def renew(s: Setup, lease: JobLease, micros: int) -> None:
    with s.production.edit() as tx:
        tx.renew_job_lease(lease, us(micros))
        tx.commit()


def request(s: Setup, *, priority: int = 0, after: tuple[object, ...] = ()) -> object:
    with s.production.edit() as tx:
        job = tx.request_job(
            JobRequest(KIND, (s.original,), s.asset, RepresentationKind.PROXY, priority=priority, after=after)  # type: ignore[arg-type]
        )
        tx.commit()
    return job


def claim_next(s: Setup) -> object:
    with s.production.edit() as tx:
        lease = tx.claim_next_job_lease(TOOL, us(1_000_000), agent=AGENT)
        tx.commit()
    return lease.job_id if lease is not None else None


# --- renewals strictly extend ------------------------------------------------------------


def test_a_renewal_to_exactly_the_current_expiry_is_refused(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 100)  # claimed at 0: expires at 100
    at(s.clock, 40)
    with pytest.raises(ConflictError), s.production.edit() as tx:
        tx.renew_job_lease(lease, us(60))  # 40 + 60 = 100: the same expiry, no extension
    claim = s.production.job(job).claim
    assert claim is not None and lease.expires_at == claim.expires_at == s.clock.now() + us(60)
    renew(s, lease, 61)  # one microsecond more extends it
    assert lease.expires_at == s.clock.now() + us(61)


# --- progress ------------------------------------------------------------------------------


def test_a_progress_report_without_a_fraction_keeps_the_previous_fraction(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 10_000_000)
    with s.production.edit() as tx:
        tx.report_progress(lease, fraction=0.4, stage="encode")
        tx.commit()
    s.clock.advance(us(1000))
    with s.production.edit() as tx:
        tx.report_progress(lease, stage="publish", message="writing")
        tx.commit()
    progress = s.production.job(job).progress
    assert progress is not None
    assert (progress.fraction, progress.stage, progress.message) == (0.4, "publish", "writing")


# --- dependencies -------------------------------------------------------------------------


def test_a_dependency_on_a_claimed_job_waits_until_that_job_succeeds(s: Setup) -> None:
    upstream = s.request()
    lease = s.claim(upstream, 1_000_000)
    dependent = request(s, after=(upstream,), priority=1000)
    job = s.production.job(dependent)  # type: ignore[arg-type]
    assert job.state is JobState.REQUESTED and job.waiting_on == (upstream,)
    assert claim_next(s) is None  # the only requested job waits
    s.complete(lease)
    assert s.production.job(dependent).waiting_on == ()  # type: ignore[arg-type]
    assert claim_next(s) == dependent


# --- claim order --------------------------------------------------------------------------


def test_claims_take_the_highest_priority_first_then_the_oldest(s: Setup) -> None:
    low = request(s, priority=-5)
    s.clock.advance(us(10))
    plain_old = request(s)
    s.clock.advance(us(10))
    high = request(s, priority=7)
    s.clock.advance(us(10))
    plain_new = request(s)
    s.clock.advance(us(10))
    top = request(s, priority=1000)
    order = [claim_next(s) for _ in range(5)]
    assert order == [top, high, plain_old, plain_new, low]
    assert claim_next(s) is None


def test_a_priority_change_reorders_waiting_jobs(s: Setup) -> None:
    first = request(s)
    s.clock.advance(us(10))
    second = request(s)
    with s.production.edit() as tx:
        tx.set_job_priority(second, 1)  # type: ignore[arg-type]
        tx.commit()
    assert [claim_next(s), claim_next(s)] == [second, first]


# --- the fencing of requeued claims ---------------------------------------------------------


def _assert_fenced(s: Setup, lease: JobLease) -> None:
    """Every use of a fenced lease is refused as ``lease_lost``, and changes nothing."""
    head = s.head()
    uses = (
        lambda tx: tx.renew_job_lease(lease, us(5_000_000)),
        lambda tx: tx.report_progress(lease, fraction=0.5),
        lambda tx: tx.release_job_lease(lease),
        lambda tx: tx.fail_job_lease(lease, "late"),
    )
    for use in uses:
        with pytest.raises(ConflictError) as caught, s.production.edit() as tx:
            use(tx)  # refused at once: the edit never commits
        assert caught.value.reason == "lease_lost", use
    with pytest.raises(ConflictError) as caught:
        s.complete(lease)
    assert caught.value.reason == "lease_lost"
    assert s.head() == head


def test_a_cancelled_claim_is_fenced(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 1_000_000)
    with s.production.edit() as tx:
        tx.cancel_job(job)
        tx.commit()
    _assert_fenced(s, lease)


def test_a_requeued_claim_is_fenced_and_a_new_claim_is_not(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 1_000_000)
    with s.production.edit() as tx:
        tx.requeue_job(job)
        tx.commit()
    assert s.production.job(job).state is JobState.REQUESTED
    _assert_fenced(s, lease)
    again = s.claim(job, 1_000_000)
    renew(s, again, 2_000_000)  # the new holder's lease is its own
    s.complete(again)
    assert s.production.job(job).state is JobState.SUCCEEDED


def test_a_clock_reset_fences_the_claims_granted_under_the_future_clock_only(s: Setup) -> None:
    healthy_job, future_job = s.request(), s.request()
    healthy = s.claim(healthy_job, 3_600_000_000)  # claimed at 0 for an hour
    at(s.clock, 1_800_000_000)  # a clock half an hour ahead claims
    future = s.claim(future_job, 3_600_000_000)
    at(s.clock, 1000)  # the right time again: refused until the mark is reset
    with s.production.edit() as tx:
        reset = tx.reset_clock()
        tx.commit()
    assert reset.fenced == (future_job,)
    assert s.production.job(future_job).state is JobState.REQUESTED
    _assert_fenced(s, future)
    renew(s, healthy, 3_600_000_000)  # a claim granted before the mark is untouched
    s.complete(healthy)
    assert s.production.job(healthy_job).state is JobState.SUCCEEDED


def test_a_fenced_holder_cannot_touch_the_next_holders_claim(s: Setup) -> None:
    """A requeue then a new claim: the first token is still refused, though the job is
    claimed again (fencing is per claim, not per job state)."""
    job = s.request()
    first = s.claim(job, 1_000_000)
    with s.production.edit() as tx:
        tx.requeue_job(job)
        tx.commit()
    second = s.claim(job, 1_000_000)
    _assert_fenced(s, first)
    assert s.production.job(job).state is JobState.CLAIMED
    assert timedelta(0) < second.expires_at - s.clock.now()
