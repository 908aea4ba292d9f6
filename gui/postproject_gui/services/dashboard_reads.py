"""The Dashboard tab's reads, on a thread of the service's (never the GUI thread), and the
values they return: the job events of the last day, summed per minute.

A day of a busy production holds hundreds of thousands of job events: they are never kept
one by one. :class:`DayTotals` sums them per minute as they are read (at most 1,441
minutes, whatever the number of jobs), so adding a revision's events costs what is in it and
drawing the series costs a day's minutes, never the number of jobs.

When the Dashboard is first shown, :func:`read_history` reads the last day once, on a thread
of its own: the job events of the feed (what entered and left the backlog, and failures)
and the jobs that succeeded in it, a page of 1,000 at a time with their kinds (throughput);
afterwards the window adds new revisions' job events as the feed delivers them
(:func:`job_events`), and the service reads the kinds of the jobs that just succeeded
(:func:`kinds_of`) and when the oldest waiting job was requested (:func:`oldest_requested`).
What the tab draws from them is computed in :mod:`postproject_gui.models.dashboard_data`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from postproject import JobId, JobState, NotFoundError, Production, Revision

DAY = timedelta(days=1)
DAY_MINUTES = 24 * 60
BATCH = 500  # revisions per feed read
JOB_PAGE = 1000  # succeeded jobs per page read
UNKNOWN_KIND = "(unknown kind)"
RETURNED = frozenset(
    {"job_claim_released", "job_requeued", "job_retry_scheduled", "job_lost"}
)  # claimed -> requested
JOB_EVENTS = frozenset(
    {"job_requested", "job_claimed", "job_succeeded", "job_failed", "job_cancelled", *RETURNED}
)


@dataclass(frozen=True, slots=True)
class JobEvent:
    at: datetime
    event: str
    job_id: JobId
    sequence: int


def job_events(revisions: Iterable[Revision]) -> list[JobEvent]:
    return [
        JobEvent(r.committed_at, e.kind, JobId.parse(e.payload["job_id"]), r.sequence)
        for r in revisions
        for e in r.events
        if e.kind in JOB_EVENTS and "job_id" in e.payload
    ]


def minute_of(when: datetime) -> int:
    """The minute ``when`` falls in, counted from the Unix epoch."""
    return int(when.timestamp() // 60)


def requested_at(job_id: JobId) -> datetime:
    """When a job was requested, to the millisecond, from its id (a UUIDv7 carries the instant
    it was made, on the requesting host's clock), so that no job has to be read for it."""
    return datetime.fromtimestamp((job_id.int >> 80) / 1000, UTC)


@dataclass(slots=True)
class Minute:
    """The job events of one minute."""

    succeeded: Counter[str] = field(default_factory=Counter)  # per kind
    failed: int = 0
    backlog: int = 0  # jobs that entered the backlog (requested, returned) less those that left it
    left_oldest: datetime | None = None  # the earliest request among the jobs that left it


@dataclass
class DayTotals:
    """Job events summed per minute (the last day's, see the module docstring).

    A claim or cancel takes a job out of the backlog unless its last event here was a claim
    (a claim of an expired claim, a cancel of a claimed job): ``claimed`` holds the jobs whose
    last event was a claim, as many as there are claims in flight. A success waits in
    ``unresolved`` until its job's kind is known (:meth:`add_kinds`).
    """

    minutes: dict[int, Minute] = field(default_factory=dict)
    claimed: set[JobId] = field(default_factory=set)
    unresolved: list[tuple[int, JobId]] = field(default_factory=list)

    def minute(self, index: int) -> Minute:
        found = self.minutes.get(index)
        if found is None:
            found = self.minutes[index] = Minute()
        return found

    def add(self, events: Iterable[JobEvent], *, successes: bool = True) -> None:
        """Count these events (``successes=False``: their successes are counted apart, by kind)."""
        for event in events:
            kind, job = event.event, event.job_id
            index = minute_of(event.at)
            if kind == "job_requested" or kind in RETURNED:
                self.minute(index).backlog += 1
                self.claimed.discard(job)
            elif kind in ("job_claimed", "job_cancelled"):
                if job not in self.claimed:
                    minute = self.minute(index)
                    minute.backlog -= 1
                    asked = requested_at(job)
                    if minute.left_oldest is None or asked < minute.left_oldest:
                        minute.left_oldest = asked
                if kind == "job_claimed":
                    self.claimed.add(job)
                else:
                    self.claimed.discard(job)
            else:
                self.claimed.discard(job)
                if kind == "job_failed":
                    self.minute(index).failed += 1
                elif successes:
                    self.unresolved.append((index, job))

    def succeeded(self, when: datetime, kind: str) -> None:
        self.minute(minute_of(when)).succeeded[kind] += 1

    def missing_kinds(self) -> set[JobId]:
        return {job for _index, job in self.unresolved}

    def add_kinds(self, kinds: Mapping[JobId, str]) -> None:
        """Count the successes waiting for their jobs' kinds (a job not found: unknown kind)."""
        for index, job in self.unresolved:
            self.minute(index).succeeded[kinds.get(job, UNKNOWN_KIND)] += 1
        self.unresolved.clear()

    def forget_before(self, when: datetime) -> None:
        first = minute_of(when)
        for index in [i for i in self.minutes if i < first]:
            del self.minutes[index]


@dataclass(slots=True)
class History:
    """The feed of the last day as read when the Dashboard is first shown."""

    totals: DayTotals
    through: int  # the revision read up to
    complete: bool = True  # every job event of the day was read (sums leave none out)


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


def kinds_of(production: Production, ids: Iterable[JobId]) -> dict[JobId, str]:
    """The kinds of these jobs (one read each: a revision's worth at a time)."""
    found: dict[JobId, str] = {}
    for job_id in ids:
        if job_id in found:
            continue
        try:
            found[job_id] = production.job(job_id).kind
        except NotFoundError:
            continue
    return found


def read_history(production: Production, now: datetime, head: int) -> History:
    """The job events of the day before ``now`` up to revision ``head``, summed per minute."""
    since = now - DAY
    totals = DayTotals()
    after = first_sequence_since(production, since, head) - 1
    while after < head:
        changes = production.changes_since(after, BATCH, kinds=JOB_EVENTS)
        totals.add(job_events(r for r in changes.revisions if r.sequence <= head), successes=False)
        if changes.through_sequence <= after:
            break
        after = changes.through_sequence
    # Successes by kind: the jobs that succeeded in the day, read with their kinds in pages
    # (a success never changes again: its last revision is the success itself).
    cursor: str | None = None
    while True:
        page = production.jobs(JOB_PAGE, cursor, JobState.SUCCEEDED, finished_after=since, sort="finished")
        for job in page.items:
            if job.finished_at is not None and job.updated_sequence <= head:
                totals.succeeded(job.finished_at, job.kind)
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    return History(totals, head)


def oldest_requested(production: Production) -> datetime | None:
    """When the oldest job still waiting was requested (None: nothing waits)."""
    page = production.jobs(limit=1, state=JobState.REQUESTED)
    return page.items[0].requested_at if page.items else None
