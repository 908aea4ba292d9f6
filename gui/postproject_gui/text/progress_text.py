"""Texts for a job's live progress (no Qt): ``42% · encode · 1m 05s left``, time left, and
"cancelling…" while a cancelled or requeued attempt's holder has not confirmed it stopped.

Progress is the running attempt's latest report (``job.progress``); time left is what
:meth:`postproject.JobProgress.remaining` tells from the attempt's claim time, less the time
since the report.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from postproject import Job, JobState
from postproject_gui.text import timefmt

CANCELLING = "cancelling…"
STOPPING = "stopping…"


def stopping_text(job: Job) -> str | None:
    """``cancelling…`` (a cancel) or ``stopping…`` (a requeue) until the worker confirms; else None."""
    if job.stopping is None:
        return None
    return CANCELLING if job.state is JobState.CANCELLED else STOPPING


def started_at(job: Job) -> datetime | None:
    """When the running attempt was claimed (None when none runs)."""
    claim = job.claim
    return claim.claimed_at if claim is not None else None


def time_left(job: Job, now: datetime) -> timedelta | None:
    """Time left for the running attempt at ``now``: the estimate at its last report less the
    time since (None when it cannot be told, or the estimate has run out)."""
    progress, start = job.progress, started_at(job)
    if progress is None or start is None:
        return None
    remaining = progress.remaining(start)
    if remaining is None:
        return None
    left = remaining - max(now - progress.updated_at, timedelta(0))
    return left if left > timedelta(0) else None  # past the estimate: no honest figure


def fraction(job: Job) -> float | None:
    """The running attempt's fraction done (0-1), or None."""
    progress = job.progress
    return progress.fraction if progress is not None else None


def progress_text(job: Job, now: datetime) -> str:
    """``42% · encode · 1m 05s left`` for a running attempt that reported progress,
    ``cancelling…`` while a stop is unconfirmed, else empty."""
    stop = stopping_text(job)
    if stop is not None:
        return stop
    progress = job.progress
    if progress is None:
        return ""
    parts: list[str] = []
    if progress.fraction is not None:
        parts.append(f"{progress.fraction * 100:.0f}%")
    if progress.stage:
        parts.append(progress.stage)
    left = time_left(job, now)
    if left is not None and progress.fraction is not None and progress.fraction < 1.0:
        parts.append(f"{timefmt.span(left)} left")
    return " · ".join(parts)


def progress_tip(job: Job, now: datetime) -> str:
    """The full progress: fraction, stage, message, report time and time left."""
    stop = job.stopping
    if stop is not None:
        deadline = f" (by {timefmt.stamp(stop.stop_by)})" if stop.stop_by is not None else ""
        return f"Attempt {stop.number} was asked to stop; waiting for its worker to confirm{deadline}"
    progress = job.progress
    if progress is None:
        return "No progress reported" if job.state is JobState.CLAIMED else ""
    lines = []
    if progress.fraction is not None:
        lines.append(f"{progress.fraction * 100:.1f}% done")
    if progress.stage:
        lines.append(f"Stage: {progress.stage}")
    if progress.message:
        lines.append(progress.message[:500])
    left = time_left(job, now)
    if left is not None:
        lines.append(f"About {timefmt.span(left)} left")
    lines.append(f"Reported {timefmt.relative(progress.updated_at, now)}")
    return "\n".join(lines)
