"""Texts for a job's attempts (no Qt), the same in the job detail and a worker's attempt list:
an attempt whose claim expired without renewal reads "expired" (never "running"), and a lost
attempt names whose lease ran out and when it was found lost, diagnostic or not."""

from __future__ import annotations

from datetime import datetime

from postproject.model.jobs import Attempt, AttemptOutcome
from postproject_gui.text import timefmt

EXPIRED = "expired · not renewed"


def holder(attempt: Attempt) -> str:
    """``worker render-07``, ``agent farm/12`` or ``an unnamed claimer``."""
    if attempt.worker:
        return f"worker {attempt.worker}"
    return f"agent {attempt.agent}" if attempt.agent else "an unnamed claimer"


def expired(attempt: Attempt, lease_expires: datetime | None, now: datetime) -> bool:
    """A running attempt whose claim's lease ran out: nobody works on it any more."""
    return attempt.outcome is None and lease_expires is not None and lease_expires <= now


def outcome_text(attempt: Attempt, lease_expires: datetime | None, now: datetime) -> str:
    """``running``, ``expired · not renewed``, or how it ended."""
    if expired(attempt, lease_expires, now):
        return EXPIRED
    return attempt.outcome.value if attempt.outcome else "running"


def expired_tip(lease_expires: datetime, now: datetime) -> str:
    return (
        f"Its lease expired {timefmt.relative(lease_expires, now)} ({timefmt.stamp(lease_expires)}) "
        "without renewal: nobody works on it. Finalize lost work (Ctrl+Shift+L) ends it as lost."
    )


def diagnostic_text(attempt: Attempt) -> str:
    """The attempt's diagnostic; for a lost attempt that has none (its job had attempts left),
    whose lease ran out and when it was found lost."""
    if attempt.diagnostic:
        return attempt.diagnostic
    if attempt.outcome is AttemptOutcome.LOST:
        when = timefmt.stamp(attempt.ended_at) if attempt.ended_at else "an unknown time"
        return f"lost: the lease of {holder(attempt)} expired without renewal; found lost {when}"
    return ""
