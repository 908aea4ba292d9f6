"""The farm area of a transaction: registered workers, lost work, the clock, retries, requeue, priority.

ADR 0023 leaves priorities, retries and scheduling to the host's task system; this is that
layer, built on the protocol. A production that uses none of it behaves as the spec says:
an expired claim stays ``claimed`` (and re-claimable) until :meth:`FarmOperations.finalize_lost`
ends it. ``Transaction`` builds one :class:`FarmOperations` per edit, given the edit's state
and its jobs area (``request_again`` requests through it), and delegates the farm methods to
it (their public docstrings are on :class:`postproject.transaction.Transaction`).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from datetime import datetime

from postproject.areas.jobs import JobOperations
from postproject.base.edit import EditState, event
from postproject.model.clock import from_micros
from postproject.model.errors import ConflictError, InvalidArgumentError, NotFoundError, Reason
from postproject.model.ids import JobId, check_id
from postproject.model.jobs import check_priority
from postproject.model.lifecycle import JobState
from postproject.model.refs import JobRef
from postproject.model.workers import WorkerSession, check_registration

MAX_SWEEP = 1000


@dataclass(frozen=True, slots=True)
class ClockReset:
    """What ``Transaction.reset_clock`` did."""

    old_mark: datetime | None
    new_mark: datetime
    fenced: tuple[JobId, ...]


class FarmOperations:
    """Workers, the loss sweep, the clock reset, retries, requeue and priority (see the module docstring)."""

    def __init__(self, edit: EditState, jobs: JobOperations) -> None:
        self._edit = edit
        self._handle = edit.handle
        self._jobs = jobs

    # --- workers -----------------------------------------------------------------------

    def register_worker(
        self,
        name: str,
        *,
        capacity: int = 1,
        kinds: list[str] | tuple[str, ...] | None = None,
        host: str | None = None,
    ) -> WorkerSession:
        """Register the worker ``name`` (a stable identity) with a fresh session for this process."""
        text, capacity, checked_kinds, host_text = check_registration(name, capacity, kinds, host)
        session = os.urandom(16)
        with self._edit.operation(savepoint=False) as s:
            worker_id = s.register_worker(
                JobId.new().bytes,
                text,
                session,
                capacity,
                checked_kinds,
                host_text,
                self._handle.now_micros(),
            )
            s.event("worker_registered", worker_id, {"worker": text})
        return WorkerSession(self._handle.production_id, worker_id, text, session, capacity, checked_kinds)

    def heartbeat(self, session: WorkerSession) -> None:
        """Record that the worker is alive (stored state: no revision, the feed does not tick)."""
        if not isinstance(session, WorkerSession):
            raise InvalidArgumentError(f"session must be a WorkerSession; got {type(session).__name__}")
        if session.production_id != self._handle.production_id:
            raise InvalidArgumentError("worker session belongs to another production")
        with self._edit.operation(savepoint=False) as s:
            if not s.heartbeat(session.worker_id, session.session_id, self._handle.now_micros()):
                raise ConflictError(
                    f"worker {session.name!r} registered again elsewhere (or was removed); this session is fenced",
                    reason=Reason.WORKER_SESSION_REPLACED,
                )

    # --- lost work ---------------------------------------------------------------------

    def finalize_lost(self, limit: int = 100) -> int:
        """End up to ``limit`` expired, unrenewed claims' attempts as ``lost``, then, within the same
        limit, the attempts a cancel or requeue asked to stop whose holder did not confirm before its
        lease's expiry; returns how many attempts it ended."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_SWEEP:
            raise InvalidArgumentError(f"limit must be an int from 1 to {MAX_SWEEP}; got {limit!r}")
        finalized = self._end_lost_claims(limit)
        if finalized >= limit:
            return finalized
        with self._edit.operation(savepoint=False) as s:
            missed = s.end_missed_stops(self._edit.now_guarded(), limit - finalized)
            for job, attempt in missed:
                event(s, "job_stop_missed", JobId(job), job_id=JobId(job), attempt=attempt)
        return finalized + len(missed)

    def _end_lost_claims(self, limit: int) -> int:
        """End up to ``limit`` lost claims' attempts (retry or fail their jobs); how many."""
        finalized = 0
        with self._edit.operation() as s:
            now = self._edit.now_guarded()
            for claim in s.claims_expiring(now, limit):  # expired by now: lost, unless re-claimed first
                job_id = JobId(claim.job_id)
                retry = claim.max_attempts is None or claim.attempts < claim.max_attempts
                holder = f"worker {claim.worker}" if claim.worker else f"agent {claim.agent or '(unnamed)'}"
                diagnostic = None
                if not retry:
                    diagnostic = (
                        f"attempt {claim.attempt} of {claim.attempts} by {holder} was lost: its lease expired at "
                        f"{from_micros(claim.expires).isoformat()} without renewal; no attempts left"
                    )
                if s.finalize_lost(claim.job_id, claim.attempt, now, diagnostic):
                    kind = "job_lost" if retry else "job_failed"
                    event(s, kind, job_id, job_id=job_id, attempt=claim.attempt)
                    finalized += 1
        return finalized

    # --- the clock ------------------------------------------------------------------------

    def reset_clock(self) -> ClockReset:
        """Lower the job clock's durable high-water mark to now."""
        with self._edit.operation() as s:
            now = self._handle.now_micros()
            old, fenced = s.reset_clock(now)
            s.event(
                "clock_reset",
                None,
                {
                    "old_mark": from_micros(old).isoformat() if old is not None else None,
                    "new_mark": from_micros(now).isoformat(),
                },
            )
            for job in fenced:
                event(s, "job_requeued", JobId(job), job_id=JobId(job))
        return ClockReset(
            from_micros(old) if old is not None else None, from_micros(now), tuple(JobId(j) for j in fenced)
        )

    # --- retries, requeue, priority ------------------------------------------------------

    def request_again(self, job_id: JobId) -> JobId:
        """Request a failed or cancelled job again: same kind, inputs (its output bindings and other
        dependencies too), output, root, priority, attempt limit, regenerated artifact and parameters,
        linked both ways (``retry_of`` / ``retried_as``). Every job that depended on it depends on the
        new job instead (in the same transaction), so a job blocked by it waits again."""
        check_id("job_id", job_id, JobId)
        with self._edit.operation() as s:
            job = s.job(job_id.bytes)
            if job is None:
                raise NotFoundError(f"job {job_id} does not exist")
            if job.state not in (JobState.FAILED, JobState.CANCELLED):
                raise ConflictError(
                    f"job {job_id} is {job.state.value}; only failed or cancelled jobs can be retried"
                )
            if job.retried_as is not None:
                raise ConflictError(f"job {job_id} was already requested again as {job.retried_as}")
            new_id = self._jobs.request_job(dataclasses.replace(job.request(), not_before=None))
            for vocabulary, prop, value in s.metadata(JobRef(job_id).code, job_id.bytes):
                s.insert_metadata(JobRef(new_id).code, new_id.bytes, vocabulary, prop, value)
            s.link_retry(job_id.bytes, new_id.bytes)
            s.move_dependents(job_id.bytes, new_id.bytes)
        return new_id

    def requeue_job(self, job_id: JobId) -> None:
        """Return a claimed job (expired or not) to ``requested`` without a token: fences the lease like
        ``cancel_job`` and ends its attempt ``released``."""
        check_id("job_id", job_id, JobId)
        with self._edit.operation(savepoint=False) as s:
            if not s.requeue(job_id.bytes, self._handle.now_micros()):
                job = s.job(job_id.bytes)
                if job is None:
                    raise NotFoundError(f"job {job_id} does not exist")
                raise ConflictError(f"job {job_id} is {job.state.value}; only claimed jobs can be requeued")
            event(s, "job_requeued", job_id, job_id=job_id)

    def set_job_priority(self, job_id: JobId, priority: int) -> None:
        """Change a requested job's priority (-1000 to 1000, higher is claimed first)."""
        check_id("job_id", job_id, JobId)
        check_priority(priority)
        with self._edit.operation(savepoint=False) as s:
            if not s.set_priority(job_id.bytes, priority):
                job = s.job(job_id.bytes)
                if job is None:
                    raise NotFoundError(f"job {job_id} does not exist")
                raise ConflictError(f"job {job_id} is {job.state.value}; only requested jobs change priority")
            event(s, "job_priority_changed", job_id, job_id=job_id, priority=priority)
