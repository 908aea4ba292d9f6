"""What the Dashboard tab draws, computed from the revision feed (no Qt).

Every figure comes from job events in the feed (``job_requested``, ``job_claimed``,
``job_claim_released``, ``job_succeeded``, ``job_failed``, ``job_cancelled``, and the farm's
``job_requeued``, ``job_retry_scheduled`` and ``job_lost``, which return a claim to the
backlog), stamped with
their revision's commit time, plus two store facts the window already keeps current: the
number of requested jobs (the maintained counts) and when the oldest of them was requested.

- When a production opens, the service reads the last day of the feed once
  (:func:`~postproject_gui.services.dashboard_reads.read_history`).
- Afterwards, new revisions are added as the feed delivers them (:meth:`DashboardData.add`).

Series, per bucket (1 minute over the last hour, 15 minutes over the last day):

- ``throughput``: succeeded jobs per bucket, per kind;
- ``failure_rate``: failed / (succeeded + failed) per bucket (None for a bucket with neither);
- ``backlog``: requested jobs at each bucket's end, walked back from the current count
  through the events (a claim or cancel of a job whose earlier state falls outside the day
  read counts as leaving the backlog), and ``backlog_age``: seconds since the oldest of them
  was requested, from the jobs that left the backlog later and the oldest still waiting;
- ``utilisation``: worker utilisation, the share of the online workers' capacity their
  claims use (in %), time-weighted per bucket from samples the window takes whenever it reads
  the registered workers (:class:`~postproject_gui.session.worker_watch.WorkerWatch`); heartbeats are
  not revisions, so there is no history before the window opened (None there).
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from postproject import JobId
from postproject_gui.services.dashboard_reads import DAY, RETURNED, History, JobEvent, JobFacts

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
    """Job events of the last day, the jobs' facts, and the backlog as the store counts it."""

    events: list[JobEvent] = field(default_factory=list)
    facts: dict[JobId, JobFacts] = field(default_factory=dict)
    backlog_now: int = 0
    oldest_waiting: datetime | None = None
    complete: bool = True
    loaded: bool = False
    samples: list[tuple[datetime, int, int]] = field(default_factory=list)  # (at, used, capacity)

    def sample(self, at: datetime, used: int, capacity: int) -> None:
        """Worker utilisation at ``at`` (kept only when it changed; the last day)."""
        if self.samples and (self.samples[-1][1:] == (used, capacity) or at < self.samples[-1][0]):
            return
        self.samples.append((at, used, capacity))
        if len(self.samples) > MAX_SAMPLES:
            del self.samples[: len(self.samples) - MAX_SAMPLES]

    def load(self, history: History) -> None:
        """Take the day read at open; live events that arrived meanwhile and are newer stay."""
        self.events = [*history.events, *(e for e in self.events if e.sequence > history.through)]
        self.facts.update(history.facts)
        self.complete = history.complete
        self.loaded = True

    def add(self, events: Iterable[JobEvent]) -> None:
        self.events.extend(events)
        self.events.sort(key=lambda e: e.at)

    def missing_facts(self) -> set[JobId]:
        return {e.job_id for e in self.events if e.job_id not in self.facts}

    def forget_before(self, when: datetime) -> None:
        if self.events and self.events[0].at < when:
            self.events = [e for e in self.events if e.at >= when]
        keep = next((i for i, s in enumerate(self.samples) if s[0] >= when), len(self.samples))
        if keep > 1:  # the last sample before ``when`` still says what held at ``when``
            del self.samples[: keep - 1]

    def series(self, now: datetime, span: str = "hour") -> Series:
        length, bucket = SPANS[span]
        count = int(length / bucket)
        origin = _floor(now, bucket) - bucket * (count - 1)
        starts = tuple(origin + bucket * i for i in range(count))
        throughput: dict[str, list[int]] = {}
        done = [Counter[str]() for _ in range(count)]
        for event in self.events:
            index = int((event.at - origin) / bucket) if event.at >= origin else -1
            if not 0 <= index < count:
                continue
            if event.event == "job_succeeded":
                facts = self.facts.get(event.job_id)
                kind = facts.kind if facts else "(unknown kind)"
                throughput.setdefault(kind, [0] * count)[index] += 1
                done[index]["succeeded"] += 1
            elif event.event == "job_failed":
                done[index]["failed"] += 1
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
            self._backlog(ends),
            self._backlog_age(ends),
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

    def _backlog(self, ends: list[datetime]) -> list[int]:
        """Requested jobs at each instant of ``ends`` (ascending), walked back from now."""
        deltas = _backlog_deltas(self.events)
        size = self.backlog_now
        result = [0] * len(ends)
        position = len(deltas) - 1
        for index in range(len(ends) - 1, -1, -1):
            while position >= 0 and deltas[position][0] > ends[index]:
                size -= deltas[position][1]
                position -= 1
            result[index] = max(0, size)
        return result

    def _backlog_age(self, ends: list[datetime]) -> list[float | None]:
        """Age of the oldest requested job at each instant of ``ends`` (ascending)."""
        spells = []  # (requested at, left the backlog at) of jobs that left it in the window
        for event in self.events:
            if event.event in ("job_claimed", "job_cancelled"):
                facts = self.facts.get(event.job_id)
                if facts is not None:
                    spells.append((facts.requested_at, event.at))
        spells.sort()
        heap: list[tuple[datetime, datetime]] = []
        result: list[float | None] = []
        position = 0
        for end in ends:
            while position < len(spells) and spells[position][0] <= end:
                heapq.heappush(heap, spells[position])
                position += 1
            while heap and heap[0][1] <= end:
                heapq.heappop(heap)
            candidates = [heap[0][0]] if heap else []
            if self.oldest_waiting is not None and self.oldest_waiting <= end:
                candidates.append(self.oldest_waiting)
            result.append((end - min(candidates)).total_seconds() if candidates else None)
        return result


def _backlog_deltas(events: list[JobEvent]) -> list[tuple[datetime, int]]:
    """How each event changed the number of requested jobs (+1 in, -1 out, 0 neither)."""
    state: dict[JobId, str] = {}
    deltas = []
    for event in events:
        before = state.get(event.job_id)
        change = 0
        if event.event == "job_requested" or event.event in RETURNED:
            change = 1
        elif event.event == "job_claimed" or event.event == "job_cancelled":
            change = 0 if before == "job_claimed" else -1
        state[event.job_id] = event.event
        deltas.append((event.at, change))
    return deltas


def _floor(when: datetime, bucket: timedelta) -> datetime:
    seconds = int(bucket.total_seconds())
    stamp = int(when.timestamp())
    return datetime.fromtimestamp(stamp - stamp % seconds, when.tzinfo)
