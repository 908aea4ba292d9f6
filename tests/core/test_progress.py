"""Live progress, cooperative stops and attempt logs in the core (issue 15)."""

from __future__ import annotations

import math
from datetime import timedelta
from pathlib import Path

import pytest

from postproject import (
    ConflictError,
    FakeClock,
    InvalidArgumentError,
    JobState,
    NotFoundError,
    Production,
)
from postproject.model.jobs import AttemptOutcome
from postproject.model.progress import MAX_LOG_TAIL_BYTES, log_tail
from tests.core.jobs_helpers import Setup, make_setup, us


@pytest.fixture
def s(production: Production, clock: FakeClock, tmp_path: Path) -> Setup:
    return make_setup(production, clock, tmp_path)


def report(s: Setup, lease: object, **fields: object) -> bool:
    with s.production.edit() as tx:
        signalled = tx.report_progress(lease, **fields)  # type: ignore[arg-type]
        tx.commit()
    return signalled


def test_progress_is_stored_state_on_the_running_attempt(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 10_000_000)
    head = s.head()
    s.clock.advance(us(1000))
    assert report(s, lease, fraction=0.25, stage="encode", message="frame 25 of 100")
    progress = s.production.job(job).progress
    assert progress is not None
    assert (progress.fraction, progress.stage, progress.message) == (0.25, "encode", "frame 25 of 100")
    assert progress.updated_at == s.clock.now()
    # a field left out keeps its value
    report(s, lease, fraction=0.5)
    progress = s.production.job(job).progress
    assert progress is not None and (progress.fraction, progress.stage) == (0.5, "encode")
    assert s.head() == head, "progress publishes no revision"
    assert s.production.job(job).attempts[-1].progress == progress


def test_progress_is_fenced_after_the_lease_is_lost(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 1000)
    s.clock.advance(us(1000))  # expired
    with pytest.raises(ConflictError) as caught, s.production.edit() as tx:
        tx.report_progress(lease, fraction=0.5)
    assert caught.value.reason == "lease_lost"
    assert s.production.job(job).attempts[-1].progress is None
    # a re-claim by someone else fences the old lease for good
    other = s.claim(job, 10_000)
    with pytest.raises(ConflictError) as caught, s.production.edit() as tx:
        tx.report_progress(lease, fraction=0.5)
    assert caught.value.reason == "lease_lost"
    report(s, other, fraction=0.1)
    # cancelled: fenced as well
    with s.production.edit() as tx:
        tx.cancel_job(job)
        tx.commit()
    with pytest.raises(ConflictError) as caught, s.production.edit() as tx:
        tx.report_progress(other, fraction=0.9)
    assert caught.value.reason == "lease_lost"


def test_progress_may_renew_in_the_same_call(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 1000)
    s.clock.advance(us(500))
    head = s.head()
    report(s, lease, stage="decode", renew=timedelta(seconds=5))
    claim = s.production.job(job).claim
    assert claim is not None and claim.expires_at == s.clock.now() + timedelta(seconds=5)
    assert s.head() == head + 1, "the renewal is a revision"
    assert lease.expires_at == claim.expires_at


@pytest.mark.parametrize(
    ("fields", "what"),
    [
        ({"fraction": 1.5}, "fraction"),
        ({"fraction": -0.1}, "fraction"),
        ({"fraction": math.nan}, "fraction"),
        ({"fraction": "half"}, "fraction"),
        ({"stage": "x" * 1025}, "stage"),
        ({"message": "é" * 513}, "message"),
        ({"stage": ""}, "stage"),
    ],
)
def test_bad_progress_is_invalid_argument_and_changes_nothing(
    s: Setup, fields: dict[str, object], what: str
) -> None:
    job = s.request()
    lease = s.claim(job, 10_000)
    with pytest.raises(InvalidArgumentError) as caught, s.production.edit() as tx:
        tx.report_progress(lease, **fields)  # type: ignore[arg-type]
    assert caught.value.code.value == "invalid_argument" and what in str(caught.value)
    assert s.production.job(job).progress is None


def test_reports_signal_at_most_once_a_second_per_attempt(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 60_000_000)
    token = s.production.progress_token()
    head = s.head()
    signalled = 0
    for _ in range(100):  # 100 reports in one second
        signalled += report(s, lease, fraction=0.5)
        s.clock.advance(timedelta(milliseconds=10))
    assert s.production.progress_token() - token == signalled
    assert 1 <= signalled <= 2
    assert s.head() == head
    s.clock.advance(timedelta(seconds=1))
    assert report(s, lease, fraction=0.6)
    assert s.production.wait_for_progress(token, 0) != token


def test_cancel_asks_the_holder_to_stop_and_it_confirms(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 10_000_000)
    with s.production.edit() as tx:
        tx.cancel_job(job)
        tx.commit()
    found = s.production.job(job)
    assert found.state is JobState.CANCELLED, "cancelled at once (the spec)"
    attempt = found.attempts[-1]
    assert attempt.outcome is AttemptOutcome.CANCELLED and attempt.stopping
    assert attempt.stop_by == s.clock.now() + timedelta(seconds=10) - timedelta(microseconds=0)
    assert found.stopping == attempt
    s.clock.advance(timedelta(seconds=1))
    with s.production.edit() as tx:
        assert tx.confirm_stopped(lease) is AttemptOutcome.CANCELLED
        receipt = tx.commit()
    assert receipt.revision is not None
    assert [e.kind for e in receipt.revision.events] == ["job_stop_confirmed"]
    attempt = s.production.job(job).attempts[-1]
    assert attempt.stopped_at == s.clock.now() and not attempt.stopping
    assert attempt.outcome is AttemptOutcome.CANCELLED
    assert "job_stop_confirmed" in [e.kind for e in s.production.job_history(job)]


def test_a_stop_confirmed_after_the_lease_ran_out_is_lost(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 1_000_000)
    with s.production.edit() as tx:
        tx.requeue_job(job)
        tx.commit()
    assert s.production.job(job).attempts[-1].outcome is AttemptOutcome.RELEASED
    s.clock.advance(timedelta(seconds=2))
    with s.production.edit() as tx:
        assert tx.confirm_stopped(lease) is AttemptOutcome.LOST
        tx.commit()
    attempt = s.production.job(job).attempts[-1]
    assert attempt.outcome is AttemptOutcome.LOST and attempt.stopped_at is None


def test_the_loss_sweep_ends_unconfirmed_stops(s: Setup) -> None:
    job = s.request()
    s.claim(job, 1_000_000)
    with s.production.edit() as tx:
        tx.cancel_job(job)
        tx.commit()
    with s.production.edit() as tx:
        assert tx.finalize_lost() == 0, "the holder still has time"
        tx.commit()
    s.clock.advance(timedelta(seconds=1))
    with s.production.edit() as tx:
        assert tx.finalize_lost() == 1
        receipt = tx.commit()
    assert receipt.revision is not None and receipt.revision.events[0].kind == "job_stop_missed"
    found = s.production.job(job)
    assert found.state is JobState.CANCELLED and found.attempts[-1].outcome is AttemptOutcome.LOST


def test_cancelling_an_expired_claim_loses_its_attempt(s: Setup) -> None:
    job = s.request()
    s.claim(job, 1000)
    s.clock.advance(us(2000))
    with s.production.edit() as tx:
        tx.cancel_job(job)
        tx.commit()
    attempt = s.production.job(job).attempts[-1]
    assert attempt.outcome is AttemptOutcome.LOST and not attempt.stopping


def test_confirming_a_running_attempt_is_refused(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 10_000)
    with pytest.raises(ConflictError) as caught, s.production.edit() as tx:
        tx.confirm_stopped(lease)
    assert caught.value.reason == "stop_not_requested"


def test_attempts_their_holder_ended_are_stopped_at_their_end(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 10_000)
    s.clock.advance(us(5))
    with s.production.edit() as tx:
        tx.release_job_lease(lease)
        tx.commit()
    attempt = s.production.job(job).attempts[-1]
    assert attempt.stopped_at == attempt.ended_at == s.clock.now()


def test_attempt_log_tail_is_bounded_valid_utf8(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 10_000_000)
    log_file = s.root / "logs" / "attempt-1.log"
    with s.production.edit() as tx:
        tx.add_media_root("logs", s.root / "logs")  # a log path is recorded under a media root
        tx.commit()
    with s.production.edit() as tx:
        assert tx.record_attempt_log(lease, path=log_file) == 1
        receipt = tx.commit()
    assert receipt.revision is None, "stored state"
    running = s.production.attempt_log(job)
    assert running.attempt == 1 and running.tail is None and s.production.log_file(running) == log_file
    noisy = (b"frame \xff\xfe ok \xe2\x82 cut\n" * 10_000) + "end é\n".encode()
    with s.production.edit() as tx:
        tx.record_attempt_log(lease, tail=noisy)
        tx.release_job_lease(lease)
        tx.commit()
    log = s.production.attempt_log(job, 1)
    assert log.tail is not None and log.tail.endswith("end é\n")
    assert len(log.tail.encode("utf-8")) <= MAX_LOG_TAIL_BYTES
    assert "\ufffd" in log.tail and (log.root, str(log.path)) == ("logs", "attempt-1.log")
    with pytest.raises(NotFoundError):
        s.production.attempt_log(job, 2)


def test_log_tail_cuts_whole_characters() -> None:
    text = "é" * 40_000  # 80,000 bytes
    tail = log_tail(text)
    assert len(tail.encode()) <= MAX_LOG_TAIL_BYTES and set(tail) == {"é"}
    assert log_tail("a\udcffb\x00") == "a\ufffdb\ufffd", "a byte a file name smuggled in"
    mixed = log_tail("a\udcffb\ud800c")
    mixed.encode("utf-8")  # valid: no lone surrogate survives
    assert mixed.startswith("a\ufffd") and mixed.endswith("c")
