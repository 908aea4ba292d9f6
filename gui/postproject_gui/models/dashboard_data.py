"""What the Dashboard tab draws, computed from the revision feed (no Qt).

Every figure comes from job events in the feed (``job_requested``, ``job_claimed``,
``job_claim_released``, ``job_succeeded``, ``job_failed``, ``job_cancelled``, and the farm's
``job_requeued``, ``job_retry_scheduled`` and ``job_lost``, which return a claim to the
backlog), stamped with their revision's commit time and summed per minute
(:class:`~postproject_gui.services.dashboard_reads.DayTotals`: a day is at most 1,441 minutes,
however many jobs it saw), plus two store facts the window already keeps current: the number
of requested jobs (the maintained counts) and when the oldest of them was requested.

- When the Dashboard is first shown, the service reads the last day of the feed once
  (:func:`~postproject_gui.services.dashboard_reads.read_history`).
- Afterwards, new revisions are added as the feed delivers them (:meth:`DashboardData.add`):
  each costs the events it holds, and each drawing a day's minutes, never the number of jobs.

Series, per bucket (1 minute over the last hour, 15 minutes over the last day):

- ``throughput``: succeeded jobs per bucket, per kind;
- ``failure_rate``: failed / (succeeded + failed) per bucket (None for a bucket with neither);
- ``backlog``: requested jobs at each bucket's end, walked back from the current count
  through the events (a claim or cancel of a job whose earlier state falls outside the day
  read counts as leaving the backlog), and ``backlog_age``: seconds since the oldest of them
  was requested, from the jobs that left the backlog later (their request time is read from
  their UUIDv7 ids, to the millisecond) and the oldest still waiting;
- ``utilisation``: worker utilisation, the share of the online workers' capacity their
  claims use (in %), time-weighted per bucket from samples the window takes whenever it reads
  the registered workers (:class:`~postproject_gui.session.worker_watch.WorkerWatch`); heartbeats are
  not revisions, so there is no history before the window opened (None there).
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from postproject import JobId
from postproject_gui.services.dashboard_reads import DAY, DayTotals, History, JobEvent, minute_of

MAX_SAMPLES = 20_000
INSTANT = 1e-6  # the weight (seconds) of a sample taken at the very end of the series
SPANS = {"hour": (timedelta(hours=1), timedelta(minutes=1)), "day": (DAY, timedelta(minutes=15))}


@dataclass(frozen=True, slots=True)
class Series:
    span: str
    bucket: timedelta
    starts: tuple[datetime, ...]
    throughput: dict[str, list[int]]
    failure_rate: list[float | None]
    backlog: list[int]
    backlog_age: list[float | None]
    utilisation: list[float | None]  # % of the online capacity in use (None: not sampled)

    def document(self) -> dict[str, Any]:
        """The snapshot JSON of these series."""
        return {
            "span": self.span,
            "bucket_seconds": int(self.bucket.total_seconds()),
            "buckets": [s.isoformat() for s in self.starts],
            "throughput": self.throughput,
            "failure_rate": [None if r is None else round(r, 4) for r in self.failure_rate],
            "backlog": self.backlog,
            "backlog_age_seconds": [None if a is None else round(a, 1) for a in self.backlog_age],
            "utilisation": [None if u is None else round(u, 1) for u in self.utilisation],
        }


@dataclass
class DashboardData:
    """The last day's job events summed per minute, and the backlog as the store counts it."""

    totals: DayTotals = field(default_factory=DayTotals)
    backlog_now: int = 0
    oldest_waiting: datetime | None = None
    complete: bool = True
    loaded: bool = False
    through: int = 0  # the revision the sums include everything up to (at load)
    samples: list[tuple[datetime, int, int]] = field(default_factory=list)  # (at, used, capacity)
    early: list[JobEvent] = field(default_factory=list)  # live events that arrived during the day's read

    def sample(self, at: datetime, used: int, capacity: int) -> None:
        """Worker utilisation at ``at`` (kept only when it changed; the last day)."""
        if self.samples and (self.samples[-1][1:] == (used, capacity) or at < self.samples[-1][0]):
            return
        self.samples.append((at, used, capacity))
        if len(self.samples) > MAX_SAMPLES:
            del self.samples[: len(self.samples) - MAX_SAMPLES]

    def load(self, history: History) -> None:
        """Take the day read; live events that arrived meanwhile and are newer are added to it."""
        self.totals = history.totals
        self.through = history.through
        self.complete = history.complete
        self.loaded = True
        early, self.early = self.early, []
        self.add(e for e in early if e.sequence > history.through)

    def add(self, events: Iterable[JobEvent]) -> None:
        """New job events (before the day is read, they wait for it)."""
        if not self.loaded:
            self.early.extend(events)
            return
        self.totals.add(e for e in events if e.sequence > self.through)

    def missing_facts(self) -> set[JobId]:
        """The jobs whose kinds are needed (they just succeeded)."""
        return self.totals.missing_kinds()

    def add_kinds(self, kinds: Mapping[JobId, str]) -> None:
        self.totals.add_kinds(kinds)

    def forget_before(self, when: datetime) -> None:
        self.totals.forget_before(when)
        keep = next((i for i, s in enumerate(self.samples) if s[0] >= when), len(self.samples))
        if keep > 1:  # the last sample before ``when`` still says what held at ``when``
            del self.samples[: keep - 1]

    def failed_since(self, when: datetime) -> int:
        first = minute_of(when)
        return sum(m.failed for i, m in self.totals.minutes.items() if i >= first)

    def series(self, now: datetime, span: str = "hour") -> Series:
        length, bucket = SPANS[span]
        count = int(length / bucket)
        origin = _floor(now, bucket) - bucket * (count - 1)
        starts = tuple(origin + bucket * i for i in range(count))
        per_bucket = int(bucket.total_seconds() // 60)
        first = minute_of(origin)
        throughput: dict[str, list[int]] = {}
        done = [Counter[str]() for _ in range(count)]
        for index, minute in self.totals.minutes.items():
            slot = (index - first) // per_bucket if index >= first else -1
            if not 0 <= slot < count:
                continue
            for kind, succeeded in minute.succeeded.items():
                throughput.setdefault(kind, [0] * count)[slot] += succeeded
                done[slot]["succeeded"] += succeeded
            done[slot]["failed"] += minute.failed
        failure_rate = [
            c["failed"] / (c["failed"] + c["succeeded"]) if c["failed"] + c["succeeded"] else None
            for c in done
        ]
        ends = [min(s + bucket, now) for s in starts]
        return Series(
            span,
            bucket,
            starts,
            dict(sorted(throughput.items())),
            failure_rate,
            self._backlog(ends, now),
            self._backlog_age(ends, now),
            self._utilisation(starts, bucket, now),
        )

    def _utilisation(
        self, starts: tuple[datetime, ...], bucket: timedelta, now: datetime
    ) -> list[float | None]:
        """Time-weighted % of the online capacity in use over each bucket (the samples are a
        step function: each holds until the next); None where nothing was sampled."""
        count = len(starts)
        busy, covered = [0.0] * count, [0.0] * count
        origin, samples = starts[0], self.samples
        for index, (at, used, capacity) in enumerate(samples):
            until = min(samples[index + 1][0] if index + 1 < len(samples) else now, now)
            low = max(at, origin)
            if until < low or capacity <= 0:
                continue
            share = used / capacity
            slot = int((low - origin) / bucket)
            if until == low:  # the newest sample, taken now: what holds at this instant
                if slot < count:
                    busy[slot] += INSTANT * share
                    covered[slot] += INSTANT
                continue
            while slot < count and low < until:
                high = min(until, origin + bucket * (slot + 1))
                seconds = (high - low).total_seconds()
                busy[slot] += seconds * share
                covered[slot] += seconds
                low, slot = high, slot + 1
        return [100.0 * b / c if c else None for b, c in zip(busy, covered, strict=True)]

    def _backlog(self, ends: list[datetime], now: datetime) -> list[int]:
        """Requested jobs at each instant of ``ends`` (ascending), walked back from now: the
        minutes after an end are undone (an end falls on a minute's start, or is now)."""
        minutes = sorted(self.totals.minutes.items(), reverse=True)
        size = self.backlog_now
        result = [0] * len(ends)
        position = 0
        for index in range(len(ends) - 1, -1, -1):
            last = _closed_by(ends[index], now)
            while position < len(minutes) and minutes[position][0] > last:
                size -= minutes[position][1].backlog
                position += 1
            result[index] = max(0, size)
        return result

    def _backlog_age(self, ends: list[datetime], now: datetime) -> list[float | None]:
        """Age of the oldest requested job at each instant of ``ends`` (ascending): the oldest
        of those still waiting, and of those that left the backlog after it (requested by then)."""
        later: dict[int, datetime] = {}  # minute -> earliest request among jobs leaving then or later
        earliest: datetime | None = None
        for index, minute in sorted(self.totals.minutes.items(), reverse=True):
            if minute.left_oldest is not None and (earliest is None or minute.left_oldest < earliest):
                earliest = minute.left_oldest
            if earliest is not None:
                later[index] = earliest
        starts = sorted(later)
        result: list[float | None] = []
        for end in ends:
            candidates = []
            # The jobs that left after ``end`` (from the minute after it) were waiting at it.
            at = bisect_left(starts, _closed_by(end, now) + 1)
            after = later[starts[at]] if at < len(starts) else None
            if after is not None and after <= end:
                candidates.append(after)
            if self.oldest_waiting is not None and self.oldest_waiting <= end:
                candidates.append(self.oldest_waiting)
            result.append((end - min(candidates)).total_seconds() if candidates else None)
        return result


def _closed_by(end: datetime, now: datetime) -> int:
    """The last minute whose events happened by ``end``: the one before it when ``end`` is a
    minute's start (a bucket's end), its own when ``end`` is now (nothing happened after)."""
    return minute_of(end) if end >= now else minute_of(end - timedelta(microseconds=1))


def _floor(when: datetime, bucket: timedelta) -> datetime:
    seconds = int(bucket.total_seconds())
    stamp = int(when.timestamp())
    return datetime.fromtimestamp(stamp - stamp % seconds, when.tzinfo)
