"""How job states look: label, glyph shape and colour per theme, never colour alone.

Qt-free so columns, snapshots and tests share one vocabulary. A claimed job also has a
*claim health* derived from its lease and the current time: ``live``, ``expiring`` (less
than a third of that lease's duration is left: its holder missed renewals, since workers
renew every third of their lease) or ``stuck`` (the lease expired; the stored state is still
claimed until another worker claims it, a supervisor requeues or cancels it, or the loss
sweep finalises it).

A lease's duration is measured from the start of its current term: the claim, or the last
renewal (a renewal moves the expiry, not ``claimed_at``; the service reads when the job last
changed, which for a claimed job is its claim or its last renewal, into
:attr:`~postproject_gui.services.types.JobRow.lease_start`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime, timedelta

from postproject import Job, JobClaim, JobState

EXPIRING_FRACTION = 3  # a live lease with less than 1/3 of its duration left is "expiring"
LONGEST_LEAD = timedelta(hours=24) / EXPIRING_FRACTION
"""The earliest a lease can turn expiring before it ends (leases last at most 24 hours)."""


class ClaimHealth(enum.Enum):
    """Where a claimed job's lease stands now."""

    LIVE = "live"
    EXPIRING = "expiring"
    STUCK = "stuck"


class Glyph(enum.Enum):
    """Shapes drawn for states (as painted icons, so no font is needed)."""

    RING = "ring"  # requested: waiting, hollow
    HALF = "half"  # claimed: in progress
    DISC = "disc"  # succeeded: done
    CROSS = "cross"  # failed
    SLASH = "slash"  # cancelled: circle with a bar
    WARNING = "warning"  # stuck claim
    CLOCK = "clock"  # expiring claim


@dataclass(frozen=True, slots=True)
class StateLook:
    """Label, text glyph (for plain-text outputs), painted glyph and description."""

    label: str
    text_glyph: str
    glyph: Glyph
    description: str


STATE_LOOKS: dict[JobState, StateLook] = {
    JobState.REQUESTED: StateLook("Requested", "○", Glyph.RING, "Waiting for a worker to claim it"),
    JobState.CLAIMED: StateLook("Claimed", "◐", Glyph.HALF, "A worker holds a lease and is working on it"),
    JobState.SUCCEEDED: StateLook("Succeeded", "●", Glyph.DISC, "Finished; its output is recorded"),
    JobState.FAILED: StateLook("Failed", "✕", Glyph.CROSS, "The worker gave up and recorded why"),
    JobState.CANCELLED: StateLook("Cancelled", "⊘", Glyph.SLASH, "Cancelled before it finished"),
}
HEALTH_LOOKS: dict[ClaimHealth, StateLook] = {
    ClaimHealth.STUCK: StateLook("Stuck", "⚠", Glyph.WARNING, "The lease expired; nobody holds the job"),
    ClaimHealth.EXPIRING: StateLook(
        "Expiring",
        "◔",
        Glyph.CLOCK,
        "Less than a third of the lease is left: its holder missed renewals",
    ),
}


@dataclass(frozen=True, slots=True)
class Palette:
    """Colours as ``#rrggbb`` text, per state and per claim health."""

    states: dict[JobState, str]
    stuck: str
    expiring: str
    accent: str
    muted: str

    def colour(self, state: JobState, health: ClaimHealth | None = None) -> str:
        if health is ClaimHealth.STUCK:
            return self.stuck
        if health is ClaimHealth.EXPIRING:
            return self.expiring
        return self.states[state]


LIGHT = Palette(
    states={
        JobState.REQUESTED: "#5a6b80",
        JobState.CLAIMED: "#1d6fb8",
        JobState.SUCCEEDED: "#2d7d3a",
        JobState.FAILED: "#c0392b",
        JobState.CANCELLED: "#80868e",
    },
    stuck="#b35c00",
    expiring="#98780a",
    accent="#1d6fb8",
    muted="#6b7280",
)
DARK = Palette(
    states={
        JobState.REQUESTED: "#9fb0c6",
        JobState.CLAIMED: "#5eaaf0",
        JobState.SUCCEEDED: "#6cc07a",
        JobState.FAILED: "#f07167",
        JobState.CANCELLED: "#9aa0a8",
    },
    stuck="#f2a246",
    expiring="#e0c25a",
    accent="#5eaaf0",
    muted="#98a1ad",
)


def lease_term(claim: JobClaim, lease_start: datetime | None = None) -> timedelta:
    """The duration of a lease's current term: from its claim, or from ``lease_start`` (the
    last renewal) when that is later, to its expiry."""
    start = claim.claimed_at if lease_start is None else max(claim.claimed_at, lease_start)
    return max(claim.expires_at - start, timedelta(0))


def expiring_at(claim: JobClaim, lease_start: datetime | None = None) -> datetime:
    """When a lease turns "expiring": a third of its term before it ends."""
    return claim.expires_at - lease_term(claim, lease_start) / EXPIRING_FRACTION


def claim_health(job: Job, now: datetime, lease_start: datetime | None = None) -> ClaimHealth | None:
    """The claim health of a claimed job at ``now`` (None for other states); ``lease_start``
    is when its lease's current term began (None: at the claim)."""
    if job.state is not JobState.CLAIMED or job.claim is None:
        return None
    if job.claim.expired(now):
        return ClaimHealth.STUCK
    if now > expiring_at(job.claim, lease_start):
        return ClaimHealth.EXPIRING
    return ClaimHealth.LIVE


def state_text(job: Job, now: datetime, lease_start: datetime | None = None) -> str:
    """``Claimed · stuck``-style label for a job's state and claim health."""
    label = STATE_LOOKS[job.state].label
    if job.stopping is not None:  # a cancel or requeue its worker has not confirmed yet
        return "Cancelling…" if job.state is JobState.CANCELLED else f"{label} · stopping…"
    health = claim_health(job, now, lease_start)
    if health is ClaimHealth.STUCK:
        return f"{label} · stuck"
    if health is ClaimHealth.EXPIRING:
        return f"{label} · expiring"
    return label
