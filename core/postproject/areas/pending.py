"""``explain_pending``: why a job is still requested (:class:`PendingReads` is part of ``Production``)."""

from __future__ import annotations

from postproject.areas.workers import WorkerReads
from postproject.base.handle import ProductionHandle
from postproject.model import clock as clocks
from postproject.model.errors import InvalidArgumentError
from postproject.model.ids import JobId
from postproject.model.lifecycle import JobState
from postproject.model.pending import (
    MAX_AHEAD,
    BlockedByJob,
    JobsAhead,
    NoOnlineWorker,
    NotBefore,
    NotPending,
    PendingExplanation,
    PendingReason,
    WaitingOnJob,
)
from postproject.model.workers import WorkerState


class PendingReads(WorkerReads):
    """Why a job waits (part of :class:`Production`)."""

    _handle: ProductionHandle

    def explain_pending(self, job_id: JobId) -> PendingExplanation:
        """Why a job is still requested, in plain words with ids (read-only).

        Reasons, in this order: each job it waits on (``waiting_on``), each failed or
        cancelled job that blocks it (``blocked_by``), its ``not_before`` when that is later
        than now, ``no_online_worker`` when no online registered worker takes its kind, and,
        when nothing else holds it back, how many claimable jobs of its kind come first
        (``jobs_ahead``, counted up to 10 000). A job in any other state gets one
        ``not_pending`` reason.

        Raises:
            NotFoundError: (not_found) no such job.
            InvalidArgumentError: (invalid_argument) not a JobId.
        """
        self._handle.check_open()
        if type(job_id) is not JobId:
            raise InvalidArgumentError(f"job_id must be a JobId; got {type(job_id).__name__}")
        reads = self._handle.reads
        job = reads.job(job_id)
        if job.state is not JobState.REQUESTED:
            return PendingExplanation(job_id, job.state, False, (NotPending(job.state),))
        now = self._handle.now_micros()
        states = {j.id: j.state for j in (reads.job(d) for d in (*job.waiting_on, *job.blocked_by))}
        reasons: list[PendingReason] = [WaitingOnJob(d, states[d]) for d in job.waiting_on]
        reasons.extend(BlockedByJob(d, states[d]) for d in job.blocked_by)
        if job.not_before is not None and clocks.to_micros(job.not_before) > now:
            reasons.append(NotBefore(job.not_before))
        held = bool(reasons)
        if not any(
            w.state is WorkerState.ONLINE and (w.kinds is None or job.kind in w.kinds) for w in self.workers()
        ):
            reasons.append(NoOnlineWorker(job.kind))
        ahead = None if held else reads.jobs_ahead(job_id, now, MAX_AHEAD)
        if ahead is not None:
            reasons.append(JobsAhead(ahead, ahead >= MAX_AHEAD))
        return PendingExplanation(job_id, job.state, not held, tuple(reasons))
