"""Failing and cancelling jobs: diagnostics, superseded tokens, cancels with or without a lease
(acceptance checks 34-38 of the notes §8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from postproject import (
    ActivitySpec,
    ConflictError,
    FakeClock,
    InvalidArgumentError,
    JobLease,
    JobState,
    LeaseState,
    NotFoundError,
    Production,
    RepresentationKind,
)
from tests.core.jobs_helpers import KIND, Setup, at, make_setup


@pytest.fixture
def s(production: Production, clock: FakeClock, tmp_path: Path) -> Setup:
    return make_setup(production, clock, tmp_path)


def events_of(setup: Setup, sequence: int) -> list[str]:
    (revision,) = setup.production.changes_since(sequence - 1, 1)
    return [event.kind for event in revision.events]


@pytest.mark.parametrize("diagnostic", ["", "é" * 2049, "nul\x00byte"])
def test_34_bad_diagnostics_are_invalid(s: Setup, diagnostic: str) -> None:
    job = s.request()
    lease = s.claim(job, 1000)
    with s.production.edit() as tx, pytest.raises(InvalidArgumentError):
        tx.fail_job_lease(lease, diagnostic)


def test_34_35_a_4096_byte_diagnostic_is_stored_exactly(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 1000)
    with s.production.edit() as tx:
        tx.fail_job_lease(lease, "é" * 2048)
        tx.commit()
    stored = s.production.job(job)
    assert stored.state is JobState.FAILED and stored.failure is not None
    assert stored.failure.diagnostic == "é" * 2048 and stored.claim is None
    assert events_of(s, s.head()) == ["job_failed"]
    assert lease.state is LeaseState.CLOSED
    assert s.production.activities().items == ()


def test_36_failing_with_a_superseded_token(s: Setup) -> None:
    job = s.request()
    at(s.clock, 0)
    old = s.claim(job, 100)
    at(s.clock, 100)
    s.claim(job, 1000)
    head = s.head()
    with s.production.edit() as tx:
        with pytest.raises(ConflictError):
            tx.fail_job_lease(old, "late")
        tx.commit()
    assert s.head() == head and s.production.job(job).state is JobState.CLAIMED


@pytest.mark.parametrize("expired", [False, True])
def test_37_cancel_needs_no_token_and_fences_the_lease(s: Setup, expired: bool) -> None:
    job = s.request()
    at(s.clock, 0)
    lease = s.claim(job, 100)
    token = lease.export_token()
    at(s.clock, 150 if expired else 50)
    with s.production.edit() as tx:
        tx.cancel_job(job)
        tx.commit()
    assert events_of(s, s.head()) == ["job_cancelled"]
    assert s.production.job(job).state is JobState.CANCELLED
    with s.production.edit() as tx:
        rep = tx.add_representation(s.asset, RepresentationKind.PROXY, s.output_file())
        activity = tx.create_activity(ActivitySpec(KIND, inputs=(s.original,), outputs=(rep,)))
        with pytest.raises(ConflictError):
            tx.complete_job_lease(lease, rep, activity)
    with pytest.raises(ConflictError):
        JobLease.import_token(s.production, token)


def test_37_cancel_from_requested(s: Setup) -> None:
    job = s.request()
    with s.production.edit() as tx:
        tx.cancel_job(job)
        tx.commit()
    assert s.production.job(job).state is JobState.CANCELLED


def test_38_cancelling_terminal_or_absent_jobs(s: Setup) -> None:
    from postproject import JobId

    job = s.request()
    with s.production.edit() as tx:
        tx.cancel_job(job)
        tx.commit()
    with s.production.edit() as tx:
        with pytest.raises(ConflictError):
            tx.cancel_job(job)
        with pytest.raises(NotFoundError):
            tx.cancel_job(JobId.new())
