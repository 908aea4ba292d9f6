"""The farm layer of a transaction: registered workers, lost work, retries, requeue, priority.

ADR 0023 leaves priorities, retries and scheduling to the host's task system; this is that
layer, built on the protocol. A production that uses none of it behaves as the spec says:
an expired claim stays ``claimed`` (and re-claimable) until :meth:`finalize_lost` ends it.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from datetime import datetime

from postproject.areas.jobs import JobOperations
from postproject.model.clock import from_micros
from postproject.model.errors import ConflictError, InvalidArgumentError, NotFoundError, Reason
from postproject.model.ids import JobId
from postproject.model.jobs import check_priority
from postproject.model.lifecycle import JobState
from postproject.model.refs import JobRef
from postproject.model.workers import WorkerSession, check_registration

MAX_SWEEP = 1000


@dataclass(frozen=True, slots=True)
class ClockReset:
    """What :meth:`FarmOperations.reset_clock` did."""

    old_mark: datetime | None
    new_mark: datetime
    fenced: tuple[JobId, ...]


class FarmOperations(JobOperations):
    """Workers, loss finalisation, retries, requeue and priority (see the module docstring)."""

    # --- workers -----------------------------------------------------------------------

    def register_worker(
        self,
        name: str,
        *,
        capacity: int = 1,
        kinds: list[str] | tuple[str, ...] | None = None,
        host: str | None = None,
    ) -> WorkerSession:
        """Register the worker ``name`` (a stable identity) with a fresh session for this process.

        Registering the same name again replaces the session and fences the old one: its
        heartbeats and claims are refused (reason ``worker_session_replaced``).
        """
        text, capacity, checked_kinds, host_text = check_registration(name, capacity, kinds, host)
        session = os.urandom(16)
        with self._op(savepoint=False) as s:
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
        with self._op(savepoint=False) as s:
            if not s.heartbeat(session.worker_id, session.session_id, self._handle.now_micros()):
                raise ConflictError(
                    f"worker {session.name!r} registered again elsewhere (or was removed); this session is fenced",
                    reason=Reason.WORKER_SESSION_REPLACED,
                )

    # --- lost work ---------------------------------------------------------------------

    def finalize_lost(self, limit: int = 100) -> int:
        """End up to ``limit`` expired, unrenewed claims' attempts as ``lost``; returns how many.

        A job with attempts left returns to ``requested`` (``job_lost``); one out of attempts
        fails (``job_failed``) with a diagnostic naming the attempt, its worker and when the
        lease expired. Safe with several sweepers and racing re-claims: the first committed
        transition wins.
        """
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_SWEEP:
            raise InvalidArgumentError(f"limit must be an int from 1 to {MAX_SWEEP}; got {limit!r}")
        finalized = 0
        with self._op() as s:
            now = self._now_guarded()
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
                    self._event(s, kind, job_id, job_id=job_id, attempt=claim.attempt)
                    finalized += 1
        return finalized

    # --- the clock ------------------------------------------------------------------------

    def reset_clock(self) -> ClockReset:
        """Lower the job clock's durable high-water mark to now.

        The way out after a process with a clock running ahead (a day fast, or a host that
        booted with a future clock) raised the mark, as the spec requires, and every correct
        process is now refused claims, renewals and completions. Recorded as a revision
        (``clock_reset`` names the old and new mark); the leases granted under the future
        clock are fenced (their jobs return to requested, ``job_requeued``).
        """
        with self._op() as s:
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
                self._event(s, "job_requeued", JobId(job), job_id=JobId(job))
        return ClockReset(
            from_micros(old) if old is not None else None, from_micros(now), tuple(JobId(j) for j in fenced)
        )

    # --- retries, requeue, priority ------------------------------------------------------

    def request_again(self, job_id: JobId) -> JobId:
        """Request a failed or cancelled job again: same kind, inputs (its output bindings and
        other dependencies too), output, root, priority, attempt limit, regenerated artifact
        and parameters, linked both ways (``retry_of`` / ``retried_as``). Every job that
        depended on it depends on the new job instead (in the same transaction), so a job
        blocked by it waits again."""
        _typed_job(job_id)
        with self._op() as s:
            job = s.job(job_id.bytes)
            if job is None:
                raise NotFoundError(f"job {job_id} does not exist")
            if job.state not in (JobState.FAILED, JobState.CANCELLED):
                raise ConflictError(
                    f"job {job_id} is {job.state.value}; only failed or cancelled jobs can be retried"
                )
            if job.retried_as is not None:
                raise ConflictError(f"job {job_id} was already requested again as {job.retried_as}")
            new_id = self.request_job(dataclasses.replace(job.request(), not_before=None))
            for vocabulary, prop, value in s.metadata(JobRef(job_id).code, job_id.bytes):
                s.insert_metadata(JobRef(new_id).code, new_id.bytes, vocabulary, prop, value)
            s.link_retry(job_id.bytes, new_id.bytes)
            s.move_dependents(job_id.bytes, new_id.bytes)
        return new_id

    def requeue_job(self, job_id: JobId) -> None:
        """Return a claimed job (expired or not) to ``requested`` without a token: fences the
        lease like ``cancel_job`` and ends its attempt ``released``."""
        _typed_job(job_id)
        with self._op(savepoint=False) as s:
            if not s.requeue(job_id.bytes, self._handle.now_micros()):
                job = s.job(job_id.bytes)
                if job is None:
                    raise NotFoundError(f"job {job_id} does not exist")
                raise ConflictError(f"job {job_id} is {job.state.value}; only claimed jobs can be requeued")
            self._event(s, "job_requeued", job_id, job_id=job_id)

    def set_job_priority(self, job_id: JobId, priority: int) -> None:
        """Change a requested job's priority (-1000 to 1000, higher is claimed first)."""
        _typed_job(job_id)
        check_priority(priority)
        with self._op(savepoint=False) as s:
            if not s.set_priority(job_id.bytes, priority):
                job = s.job(job_id.bytes)
                if job is None:
                    raise NotFoundError(f"job {job_id} does not exist")
                raise ConflictError(f"job {job_id} is {job.state.value}; only requested jobs change priority")
            self._event(s, "job_priority_changed", job_id, job_id=job_id, priority=priority)


def _typed_job(value: object) -> None:
    if type(value) is not JobId:
        raise InvalidArgumentError(f"job_id must be a JobId; got {type(value).__name__}")
