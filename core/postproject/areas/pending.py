"""The pending area of a production: ``explain_pending``, why a job is still requested.

``Production`` builds one :class:`PendingReads`, given its handle and its workers area (a
job may wait for an online worker of its kind), and delegates ``explain_pending`` to it (its
public docstring is on :class:`postproject.production.Production`).
"""

from __future__ import annotations

from postproject.areas.workers import WorkerReads
from postproject.base.handle import ProductionHandle
from postproject.model import clock as clocks
from postproject.model.ids import JobId, check_id
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


class PendingReads:
    """Why a job waits."""

    def __init__(self, handle: ProductionHandle, workers: WorkerReads) -> None:
        self._handle = handle
        self._workers = workers

    def explain_pending(self, job_id: JobId) -> PendingExplanation:
        """Why a job is still requested, in plain words with ids (read-only)."""
        self._handle.check_open()
        check_id("job_id", job_id, JobId)
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
            w.state is WorkerState.ONLINE and (w.kinds is None or job.kind in w.kinds)
            for w in self._workers.workers()
        ):
            reasons.append(NoOnlineWorker(job.kind))
        ahead = None if held else reads.jobs_ahead(job_id, now, MAX_AHEAD)
        if ahead is not None:
            reasons.append(JobsAhead(ahead, ahead >= MAX_AHEAD))
        return PendingExplanation(job_id, job.state, not held, tuple(reasons))
