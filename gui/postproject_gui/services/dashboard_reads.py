"""The Dashboard tab's reads, on a thread of the service's (never the GUI thread), and the
values they return: the job events of the last day and the facts of their jobs.

When a production opens, :func:`read_history` reads the last day of the feed once, on a
thread of its own (bounded: ``MAX_EVENTS``), and looks up each job's kind and request time;
afterwards the window adds new revisions' job events (:func:`job_events`) as the feed delivers
them, and the service reads the facts of jobs it has not seen (:func:`facts_of`) and when the
oldest waiting job was requested (:func:`oldest_requested`). What the tab draws from them is
computed in :mod:`postproject_gui.models.dashboard_data`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from postproject import JobId, JobState, NotFoundError, Production, Revision

DAY = timedelta(days=1)
MAX_EVENTS = 300_000  # job events read back at open (the newest ones are kept)
BATCH = 500  # revisions per feed read
RETURNED = frozenset(
    {"job_claim_released", "job_requeued", "job_retry_scheduled", "job_lost"}
)  # claimed -> requested
JOB_EVENTS = frozenset(
    {"job_requested", "job_claimed", "job_succeeded", "job_failed", "job_cancelled", *RETURNED}
)


@dataclass(frozen=True, slots=True)
class JobFacts:
    kind: str
    requested_at: datetime


@dataclass(frozen=True, slots=True)
class JobEvent:
    at: datetime
    event: str
    job_id: JobId
    sequence: int


@dataclass(slots=True)
class History:
    """The feed of the last day as read at open."""

    events: list[JobEvent]
    facts: dict[JobId, JobFacts]
    through: int  # the revision read up to
    complete: bool  # False when MAX_EVENTS cut the oldest part of the day


def job_events(revisions: Iterable[Revision]) -> list[JobEvent]:
    return [
        JobEvent(r.committed_at, e.kind, JobId.parse(e.payload["job_id"]), r.sequence)
        for r in revisions
        for e in r.events
        if e.kind in JOB_EVENTS and "job_id" in e.payload
    ]


def first_sequence_since(production: Production, since: datetime, head: int) -> int:
    """The first revision committed at or after ``since`` (head + 1 when none): a binary
    search over revision headers (commit times grow with sequence numbers)."""
    low, high = 1, head + 1
    while low < high:
        middle = (low + high) // 2
        (summary,) = production.revisions(limit=1, before=middle + 1)
        if summary.committed_at >= since:
            high = middle
        else:
            low = middle + 1
    return low


def facts_of(
    production: Production, ids: Iterable[JobId], known: Mapping[JobId, JobFacts]
) -> dict[JobId, JobFacts]:
    found: dict[JobId, JobFacts] = {}
    for job_id in ids:
        if job_id in known or job_id in found:
            continue
        try:
            job = production.job(job_id)
        except NotFoundError:
            continue
        found[job_id] = JobFacts(job.kind, job.requested_at)
    return found


def read_history(production: Production, now: datetime, head: int) -> History:
    """The job events of the day before ``now`` up to revision ``head``, with each job's facts."""
    start = first_sequence_since(production, now - DAY, head)
    events: deque[JobEvent] = deque(maxlen=MAX_EVENTS)
    after, cut = start - 1, False
    while after < head:
        changes = production.changes_since(after, BATCH, kinds=JOB_EVENTS)
        for event in job_events(r for r in changes.revisions if r.sequence <= head):
            cut = cut or len(events) == MAX_EVENTS
            events.append(event)
        if changes.through_sequence <= after:
            break
        after = changes.through_sequence
    kept = list(events)
    return History(kept, facts_of(production, {e.job_id for e in kept}, {}), head, not cut)


def oldest_requested(production: Production) -> datetime | None:
    """When the oldest job still waiting was requested (None: nothing waits)."""
    page = production.jobs(limit=1, state=JobState.REQUESTED)
    return page.items[0].requested_at if page.items else None
