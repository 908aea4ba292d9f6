"""The engine's progress, stop and log methods (:mod:`postproject.engine.progress`) exercised
directly: every adapter must pass these."""

from __future__ import annotations

import os
from collections.abc import Callable

from postproject import JobId
from postproject.engine import Engine
from postproject.model.jobs import AttemptOutcome
from tests.contract.test_engine_contract import AGENT, T0, TOOL, commit, request, seed

SECOND = 1_000_000
CANCELLED, RELEASED, LOST = (
    o.code for o in (AttemptOutcome.CANCELLED, AttemptOutcome.RELEASED, AttemptOutcome.LOST)
)


def claimed(engine: Engine, expires: int = T0 + 10 * SECOND) -> tuple[bytes, bytes]:
    asset, rep = seed(engine)
    job = request(engine, asset, rep)
    secret = os.urandom(32)
    s = engine.begin_write(5.0)
    assert s.claim(job, secret, TOOL, AGENT, None, T0, expires) == 1
    s.event("job_claimed", job, {})
    assert commit(s)
    return job, secret


def test_progress_is_fenced_stored_state_and_signals_at_most_once_a_second(
    engine_factory: Callable[[], Engine],
) -> None:
    engine = engine_factory()
    job, secret = claimed(engine)
    head, token = engine.reads.latest_sequence(), engine.reads.progress_token()
    s = engine.begin_write(5.0)
    assert s.report_progress(job, os.urandom(32), T0 + 1, 0.5, None, None, SECOND) is None  # not the holder
    assert s.report_progress(job, secret, T0 + 10 * SECOND, 0.5, None, None, SECOND) is None  # expired
    assert s.report_progress(job, secret, T0 + 1, 0.25, "encode", "frame 1", SECOND) == (
        1,
        True,
        T0 + 10 * SECOND,
    )
    assert s.report_progress(job, secret, T0 + 2, 0.5, None, None, SECOND) == (1, False, T0 + 10 * SECOND)
    assert not commit(s), "stored state: no revision"
    assert engine.reads.latest_sequence() == head and engine.reads.progress_token() == token + 1
    progress = engine.reads.job(JobId(job)).progress
    assert progress is not None and (progress.fraction, progress.stage, progress.message) == (
        0.5,
        "encode",
        "frame 1",
    )
    s = engine.begin_write(5.0)
    assert s.report_progress(job, secret, T0 + 1 + SECOND, None, "publish", None, SECOND) == (
        1,
        True,
        T0 + 10 * SECOND,
    )
    assert not commit(s)
    assert engine.reads.progress_token() == token + 2


def test_a_cancel_waits_for_the_holders_confirmation(engine_factory: Callable[[], Engine]) -> None:
    engine = engine_factory()
    job, secret = claimed(engine)
    s = engine.begin_write(5.0)
    assert s.confirm_stop(job, secret, T0 + 1) is None  # still running
    facts = s.attempt_facts(job, secret)
    assert facts is not None and (facts.number, facts.outcome, facts.stop_by) == (1, None, None)
    assert s.cancel(job, T0 + 5)
    facts = s.attempt_facts(job, secret)
    assert facts is not None and (facts.outcome, facts.stop_by, facts.stopped_at) == (
        CANCELLED,
        T0 + 10 * SECOND,
        None,
    )
    assert s.report_progress(job, secret, T0 + 6, 0.9, None, None, SECOND) is None  # fenced
    assert s.end_missed_stops(T0 + 6, 10) == []  # still in time
    assert s.confirm_stop(job, secret, T0 + 7) == (1, CANCELLED)
    assert s.confirm_stop(job, secret, T0 + 8) is None  # once
    s.event("job_cancelled", job, {})
    assert commit(s)
    attempt = engine.reads.job(JobId(job)).attempts[0]
    assert attempt.outcome is AttemptOutcome.CANCELLED and attempt.stopped_at is not None


def test_a_requeue_nobody_confirms_ends_lost(engine_factory: Callable[[], Engine]) -> None:
    engine = engine_factory()
    job, secret = claimed(engine)
    s = engine.begin_write(5.0)
    assert s.requeue(job, T0 + 5)
    assert s.end_missed_stops(T0 + 10 * SECOND, 10) == [(job, 1)]
    assert s.confirm_stop(job, secret, T0 + 10 * SECOND + 1) is None  # already lost
    s.event("job_requeued", job, {})
    assert commit(s)
    assert engine.reads.job(JobId(job)).attempts[0].outcome is AttemptOutcome.LOST


def test_a_late_confirmation_ends_lost_and_an_expired_claim_is_lost_at_once(
    engine_factory: Callable[[], Engine],
) -> None:
    engine = engine_factory()
    job, secret = claimed(engine)
    s = engine.begin_write(5.0)
    assert s.cancel(job, T0 + 5)
    assert s.confirm_stop(job, secret, T0 + 10 * SECOND) == (1, LOST)
    s.event("job_cancelled", job, {})
    assert commit(s)
    other, other_secret = claimed(engine, T0 + 1)
    s = engine.begin_write(5.0)
    assert s.cancel(other, T0 + 2)  # its lease had expired
    facts = s.attempt_facts(other, other_secret)
    assert facts is not None and (facts.outcome, facts.stop_by) == (LOST, None)
    s.event("job_cancelled", other, {})
    assert commit(s)


def test_attempt_logs(engine_factory: Callable[[], Engine]) -> None:
    engine = engine_factory()
    job, secret = claimed(engine)
    assert engine.reads.attempt_log(JobId(job), None) == (1, None, None, None, None)
    assert engine.reads.attempt_log(JobId(job), 2) is None
    s = engine.begin_write(5.0)
    assert s.record_attempt_log(job, os.urandom(32), None, "/x.log", None, T0) is None
    assert s.record_attempt_log(job, secret, "proxies", "logs/a.log", None, T0) == 1
    assert s.record_attempt_log(job, secret, None, None, "tail é\n", T0 + 3) == 1  # keeps the path
    assert s.release(job, secret, T0 + 4)
    assert s.record_attempt_log(job, secret, None, None, "final tail\n", T0 + 5) == 1  # after the end too
    s.event("job_claim_released", job, {})
    assert commit(s)
    assert engine.reads.attempt_log(JobId(job), 1) == (1, "proxies", "logs/a.log", "final tail\n", T0 + 5)
    attempt = engine.reads.job(JobId(job)).attempts[0]
    assert attempt.stopped_at == attempt.ended_at
