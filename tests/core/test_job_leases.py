"""Job leases: claiming (expiry, attribution, durations, tokens, another production's
lease), renewing and releasing (acceptance checks 8-21 of the notes §8)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from postproject import (
    ConflictError,
    FakeClock,
    InvalidArgumentError,
    JobLease,
    JobState,
    LeaseState,
    NotFoundError,
    Production,
)
from tests.conftest import START
from tests.core.jobs_helpers import AGENT, TOOL, Setup, at, make_setup, us


@pytest.fixture
def s(production: Production, clock: FakeClock, tmp_path: Path) -> Setup:
    return make_setup(production, clock, tmp_path)


def events_of(setup: Setup, sequence: int) -> list[str]:
    (revision,) = setup.production.changes_since(sequence - 1, 1)
    return [event.kind for event in revision.events]


# --- claim / lease -----------------------------------------------------------------------


def test_08_claim_sets_expiry_attribution_and_lease_states(s: Setup) -> None:
    job = s.request()
    at(s.clock, 100)
    with s.production.edit() as tx:
        lease = tx.claim_job_lease(job, TOOL, us(100), agent=AGENT)
        assert lease.state is LeaseState.PENDING
        tx.commit()
    assert lease.state is LeaseState.ACTIVE
    assert lease.expires_at == START + us(200)
    stored = s.production.job(job)
    assert stored.state is JobState.CLAIMED
    assert stored.claim is not None
    assert (stored.claim.tool, stored.claim.agent, stored.claim.expires_at) == (TOOL, AGENT, START + us(200))


@pytest.mark.parametrize(
    "duration", [timedelta(0), timedelta(microseconds=-1), timedelta.max, timedelta(hours=24, microseconds=1)]
)
def test_09_bad_durations_are_invalid(s: Setup, duration: timedelta) -> None:
    job = s.request()
    head = s.head()
    with s.production.edit() as tx:
        with pytest.raises(InvalidArgumentError):  # also a ValueError
            tx.claim_job_lease(job, TOOL, duration)
        tx.commit()
    assert s.production.job(job).state is JobState.REQUESTED
    assert s.head() == head


@pytest.mark.parametrize("duration", [True, 100, 1.5, "5m"])
def test_09_non_timedelta_durations_are_type_errors(s: Setup, duration: object) -> None:
    job = s.request()
    with s.production.edit() as tx, pytest.raises(TypeError):
        tx.claim_job_lease(job, TOOL, duration)


@pytest.mark.parametrize("duration", [us(1), timedelta(hours=24)])
def test_09_one_microsecond_and_a_day_are_accepted(s: Setup, duration: timedelta) -> None:
    job = s.request()
    with s.production.edit() as tx:
        tx.claim_job_lease(job, TOOL, duration)
        tx.commit()
    assert s.production.job(job).state is JobState.CLAIMED


def test_10_expiry_is_exclusive(s: Setup) -> None:
    job = s.request()
    at(s.clock, 100)
    first = s.claim(job, 100)
    at(s.clock, 199)
    with s.production.edit() as tx, pytest.raises(ConflictError):
        tx.claim_job_lease(job, TOOL, us(100))
    at(s.clock, 200)
    second = s.claim(job, 100)
    assert second.export_token() != first.export_token()


@pytest.mark.parametrize("end", ["complete", "fail", "cancel"])
def test_11_claiming_a_terminal_job_is_a_conflict(s: Setup, end: str) -> None:
    job = s.request()
    lease = s.claim(job, 1000)
    if end == "complete":
        s.complete(lease)
    else:
        with s.production.edit() as tx:
            tx.fail_job_lease(lease, "boom") if end == "fail" else tx.cancel_job(job)
            tx.commit()
    with s.production.edit() as tx, pytest.raises(ConflictError):
        tx.claim_job_lease(job, TOOL, us(100))


def test_11_claiming_an_absent_job_is_not_found(s: Setup) -> None:
    from postproject import JobId

    with s.production.edit() as tx, pytest.raises(NotFoundError):
        tx.claim_job_lease(JobId.new(), TOOL, us(100))


def test_12_rolled_back_claim_leaves_the_job_requested_and_the_lease_closed(s: Setup) -> None:
    job = s.request()
    head = s.head()
    with s.production.edit() as tx:
        lease = tx.claim_job_lease(job, TOOL, us(100))
    assert lease.state is LeaseState.CLOSED
    with pytest.raises(ConflictError):
        lease.export_token()
    assert s.production.job(job).state is JobState.REQUESTED
    assert s.head() == head


def test_13_export_token_needs_a_committed_claim(s: Setup) -> None:
    job = s.request()
    with s.production.edit() as tx:
        lease = tx.claim_job_lease(job, TOOL, us(100))
        with pytest.raises(InvalidArgumentError):
            lease.export_token()
        tx.commit()
    token = lease.export_token()
    assert token.startswith(f"ppl1:{s.production.id}:{job}:")
    assert len(token) == 115


def test_14_the_secret_never_appears_in_reads_events_or_reprs(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 1000)
    secret = lease.export_token().rsplit(":", 1)[1]
    visible = [
        repr(lease),
        repr(s.production.job(job)),
        repr(s.production.jobs()),
        repr(list(s.production.changes_since(0, 1000))),
    ]
    with s.production.edit() as tx:
        tx.release_job_lease(lease)
        tx.commit()
    with s.production.edit() as tx:
        try:
            tx.release_job_lease(lease)
        except ConflictError as exc:
            visible.append(str(exc))
    assert all(secret not in text and secret.replace("-", "") not in text for text in visible)


def test_15_token_import_validation(s: Setup, production_factory: Callable[..., Production]) -> None:
    job = s.request()
    token = s.claim(job, 1000).export_token()
    other = production_factory("other.pproj")
    with pytest.raises(InvalidArgumentError, match="another production"):
        JobLease.import_token(other, token)
    prefix, prod, _, secret = token.split(":")
    from postproject import JobId

    with pytest.raises((NotFoundError, ConflictError)):
        JobLease.import_token(s.production, ":".join([prefix, prod, str(JobId.new()), secret]))
    for junk in ["", "x" * 10_000, "y" * 115, token.upper(), token + "\n"]:
        with pytest.raises(InvalidArgumentError):
            JobLease.import_token(s.production, junk)
    imported = JobLease.import_token(s.production, token)
    assert imported.state is LeaseState.ACTIVE
    assert imported.expires_at == s.production.job(job).claim.expires_at  # type: ignore[union-attr]


def test_16_a_lease_of_another_production_is_invalid_there(
    s: Setup, production_factory: Callable[..., Production]
) -> None:
    job = s.request()
    lease = s.claim(job, 1000)
    other_setup = make_setup(production_factory("other.pproj"), s.clock, s.root / "other")
    head = other_setup.head()
    with other_setup.production.edit() as tx:
        with pytest.raises(InvalidArgumentError):
            tx.release_job_lease(lease)
        tx.commit()
    assert other_setup.head() == head


# --- renew --------------------------------------------------------------------------------


def test_17_renew_must_strictly_extend(s: Setup) -> None:
    job = s.request()
    at(s.clock, 100)
    lease = s.claim(job, 100)
    at(s.clock, 150)
    with s.production.edit() as tx:
        with pytest.raises(ConflictError):
            tx.renew_job_lease(lease, us(10))
        tx.renew_job_lease(lease, us(200))
        tx.commit()
    assert lease.expires_at == START + us(350)


def test_18_renewal_committed_after_the_old_expiry_fails(s: Setup) -> None:
    job = s.request()
    at(s.clock, 100)
    lease = s.claim(job, 100)
    head = s.head()
    at(s.clock, 150)
    with s.production.edit() as tx:
        tx.renew_job_lease(lease, us(200))
        at(s.clock, 200)
        with pytest.raises(ConflictError):
            tx.commit()
    assert s.head() == head
    assert lease.state is LeaseState.ACTIVE and lease.expires_at == START + us(200)
    with s.production.edit() as tx, pytest.raises(ConflictError):
        tx.release_job_lease(lease)


def test_19_renew_emits_its_event_and_keeps_the_lease_in_step(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 100)
    with s.production.edit() as tx:
        tx.renew_job_lease(lease, us(500))
        tx.commit()
    assert events_of(s, s.head()) == ["job_claim_renewed"]
    stored = s.production.job(job)
    assert stored.state is JobState.CLAIMED
    assert stored.claim is not None and lease.expires_at == stored.claim.expires_at


# --- release ------------------------------------------------------------------------------


def test_20_release_returns_the_job_and_fences_the_token(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 1000)
    token = lease.export_token()
    with s.production.edit() as tx:
        tx.release_job_lease(lease)
        tx.commit()
    assert events_of(s, s.head()) == ["job_claim_released"]
    stored = s.production.job(job)
    assert stored.state is JobState.REQUESTED and stored.claim is None
    assert lease.state is LeaseState.CLOSED
    with pytest.raises(ConflictError):
        JobLease.import_token(s.production, token)


def test_21_release_after_expiry_is_a_conflict(s: Setup) -> None:
    job = s.request()
    at(s.clock, 100)
    lease = s.claim(job, 100)
    at(s.clock, 200)
    with s.production.edit() as tx, pytest.raises(ConflictError):
        tx.release_job_lease(lease)
