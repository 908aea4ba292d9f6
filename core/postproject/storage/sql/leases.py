"""Lease transitions in SQL, for both engines: the claim's columns, what makes a job
claimable or held, and the description of a transition that ends a claim (each adapter's
``end_claim`` and ``stop_claim`` run it as one step, in its own statements).

Job states appear by their codes (:class:`postproject.model.lifecycle.JobState`) and each
transition's allowed source states come from the lifecycle table, so storage and the rules
cannot disagree. Statements are in SQLite's placeholders (:meth:`.dialect.Dialect.sql`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.model.jobs import AttemptOutcome
from postproject.model.lifecycle import Action, JobState, sources

REQUESTED = JobState.REQUESTED.code
CLAIMED = JobState.CLAIMED.code
SUCCEEDED = JobState.SUCCEEDED.code
FAILED = JobState.FAILED.code
CANCELLED = JobState.CANCELLED.code
LOST = AttemptOutcome.LOST.code


def codes(action: Action) -> str:
    """The SQL list of stored state codes an action may start from (from the lifecycle table)."""
    return ",".join(str(state.code) for state in sorted(sources(action), key=lambda s: s.code))


# A claim: the job's claim columns, its attempt counted (a trigger starts the attempt).
SET_CLAIM = f"""state = {CLAIMED}, claim_secret_hash = :secret, claim_tool_name = :tool_name,
    claim_tool_version = :tool_version, claim_tool_uri = :tool_uri, claim_agent_name = :agent,
    claim_worker_id = :worker, claim_session = :session, claimed_at = :now, claim_expires_at = :expires,
    claim_sequence = :seq, claim_attempt = attempts + 1, attempts = attempts + 1, updated_sequence = :seq"""
CLEAR_CLAIM = """claim_secret_hash = NULL, claim_tool_name = NULL, claim_tool_version = NULL,
    claim_tool_uri = NULL, claim_agent_name = NULL, claim_worker_id = NULL, claim_session = NULL,
    claimed_at = NULL, claim_expires_at = NULL, claim_sequence = NULL, claim_attempt = NULL"""
# Claimable: requested, waiting on no dependency and not held back by not_before, or claimed
# with a lease that expired at or before now while the job has attempts left (a lost claim
# that used the last attempt is the loss sweep's to fail, never a claim's to run once more).
# (available_at only orders the queue: a request from a host whose clock runs ahead is
# claimable at once.)
READY = "(not_before IS NULL OR not_before <= :now)"
ATTEMPTS_LEFT = "(max_attempts IS NULL OR attempts < max_attempts)"
EXPIRED = f"state = {CLAIMED} AND claim_expires_at <= :now AND {ATTEMPTS_LEFT}"
CLAIMABLE = f"((state = {REQUESTED} AND waiting = 0 AND {READY}) OR ({EXPIRED}))"
# Held by a lease: claimed by this secret and not expired.
HELD = f"state = {CLAIMED} AND claim_secret_hash = :secret AND claim_expires_at > :now"
RETURNING_CLAIM = "RETURNING id, claim_attempt, output_asset_id, inputs"
AWAITING_STOP = f"stop_by IS NOT NULL AND stopped_at IS NULL AND outcome <> {LOST}"  # job_attempts_stopping


@dataclass(frozen=True, slots=True)
class EndClaim:
    """A lease transition that ends a claim: one guarded update of the job (``set_job`` where
    ``where``, SQLite's placeholders over ``params`` and ``:now``) that clears its claim, and
    the end of its running attempt with ``outcome`` (``stopped_at`` set when ``by_holder``
    ended it itself), as one step. A success also lowers each dependent's waiting count."""

    job_id: bytes
    set_job: str
    where: str
    params: dict[str, Any]
    outcome: AttemptOutcome
    diagnostic: str | None = None  # the attempt's
    predicted: bool | None = None  # known to match (the edit read and locked the job's row), or not
    succeeds: bool = False
    by_holder: bool = True


@dataclass(frozen=True, slots=True)
class StopClaim:
    """A cancel or requeue: the job's update (as :class:`EndClaim`) ends a running attempt
    ``outcome`` with ``stop_by`` = the lease's expiry when the lease is live (its holder is
    asked to stop and confirm), ``lost`` when it had expired."""

    job_id: bytes
    set_job: str
    where: str
    now: int
    outcome: AttemptOutcome


def claim_params(
    bind: Callable[[bytes], Any],
    sequence: int,
    secret: bytes,
    tool: ToolIdentity,
    agent: AgentIdentity | None,
    worker: tuple[bytes, bytes] | None,
    now: int,
    expires: int,
) -> dict[str, Any]:
    """The parameters of :data:`SET_CLAIM` (``bind``: the dialect's id binding)."""
    return {
        "secret": secret,
        "tool_name": tool.name,
        "tool_version": tool.version,
        "tool_uri": tool.uri,
        "agent": agent.name if agent else None,
        "worker": bind(worker[0]) if worker else None,
        "session": bind(worker[1]) if worker else None,
        "now": now,
        "expires": expires,
        "seq": sequence,
    }


# --- the transitions (the lifecycle table's actions on a claim) -----------------------------


def release(job_id: bytes, secret: bytes, now: int, predicted: bool | None) -> EndClaim:
    """The holder gives the job back: requested again, its attempt released."""
    where = f"{HELD} AND state IN ({codes(Action.RELEASE)})"
    params = {"secret": secret, "now": now}
    return EndClaim(
        job_id, f"state = {REQUESTED}", where, params, AttemptOutcome.RELEASED, predicted=predicted
    )


def fail(
    job_id: bytes, secret: bytes, now: int, diagnostic: str, retry: bool, predicted: bool | None
) -> EndClaim:
    """The holder fails the job (``retry``: requested again); its attempt failed either way."""
    set_job = (
        f"state = {REQUESTED}, available_at = :now"
        if retry
        else f"state = {FAILED}, failure_diagnostic = :failure, finished_at = :now"
    )
    where = f"{HELD} AND state IN ({codes(Action.RETRY if retry else Action.FAIL)})"
    params = {"secret": secret, "now": now, "failure": diagnostic}
    return EndClaim(job_id, set_job, where, params, AttemptOutcome.FAILED, diagnostic, predicted=predicted)


def succeed(
    job_id: bytes, secret: bytes, now: int, activity: Any, rep: Any, predicted: bool | None
) -> EndClaim:
    """The holder completes the job with ``activity`` and its output ``rep`` (bound ids)."""
    set_job = (
        f"state = {SUCCEEDED}, completion_activity_id = :activity, completion_representation_id = :rep, "
        "finished_at = :now"
    )
    where = f"{HELD} AND state IN ({codes(Action.COMPLETE)})"
    params = {"secret": secret, "now": now, "activity": activity, "rep": rep}
    return EndClaim(
        job_id, set_job, where, params, AttemptOutcome.SUCCEEDED, predicted=predicted, succeeds=True
    )


def finalize_lost(job_id: bytes, attempt: int, now: int, diagnostic: str | None) -> EndClaim:
    """The loss sweep ends an expired claim's attempt as lost: requested again, or (with
    ``diagnostic``) failed. Guarded by the attempt and the expiry: a re-claim committed first wins."""
    set_job = (
        f"state = {REQUESTED}, available_at = :now"
        if diagnostic is None
        else f"state = {FAILED}, failure_diagnostic = :failure, finished_at = :now"
    )
    where = f"state = {CLAIMED} AND claim_attempt = :attempt AND claim_expires_at <= :now"
    params = {"now": now, "attempt": attempt, "failure": diagnostic}
    return EndClaim(job_id, set_job, where, params, AttemptOutcome.LOST, by_holder=False)


def cancel(job_id: bytes, now: int) -> StopClaim:
    where = f"state IN ({codes(Action.CANCEL)})"
    return StopClaim(job_id, f"state = {CANCELLED}, finished_at = :now", where, now, AttemptOutcome.CANCELLED)


def requeue(job_id: bytes, now: int) -> StopClaim:
    where = f"state IN ({codes(Action.REQUEUE)})"
    return StopClaim(job_id, f"state = {REQUESTED}, available_at = :now", where, now, AttemptOutcome.RELEASED)
