"""The engine interface's part for live progress, cooperative stops and attempt logs.

:class:`postproject.engine.Reads` and :class:`postproject.engine.WriteSession` include these
protocols. Everything here is stored state, not revisions, except the two stop events the
core stages itself (``job_stop_confirmed``, ``job_stop_missed``). Times are Unix microseconds,
ids 16-byte ``bytes``, ``secret`` the SHA-256 hash of a lease secret, outcomes
:class:`postproject.model.jobs.AttemptOutcome` codes (1 succeeded, 2 failed, 3 released,
4 lost, 5 cancelled).

Schema (the baseline, ``migrations/0007_baseline.sql``): ``job_attempts`` has
``progress_fraction, progress_stage, progress_message, progress_at, progress_signalled_at,
stop_by, stopped_at``; ``progress_signal(token)`` is one counter row; ``job_attempt_logs``
holds ``(job_id, number) -> root_name, path, tail, tail_at``. ``cancel``/``requeue`` of a
live claim set the attempt's ``stop_by`` to the lease's expiry; release, fail and succeed
set ``stopped_at`` to ``ended_at``; the loss sweep and re-claims leave it unset.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from postproject.model.ids import JobId


@dataclass(frozen=True, slots=True)
class AttemptFacts:
    """The attempt a lease secret claimed, as a stop confirmation checks it."""

    number: int
    outcome: int | None  # AttemptOutcome code; None while running
    stop_by: int | None  # a cancel or requeue asked its holder to stop before this time
    stopped_at: int | None  # when its holder confirmed it stopped


AttemptLogRow = tuple[
    int, str | None, str | None, str | None, int | None
]  # number, root, path, tail, tail_at


class ProgressReads(Protocol):
    """Reads of progress and attempt logs (part of :class:`postproject.engine.Reads`)."""

    def progress_token(self) -> int:
        """The progress signal: a counter that moves when a report signals (at most once per
        attempt per ``SIGNAL_EVERY``). Followers compare it to see that progress changed."""
        ...

    def attempt_log(self, job_id: JobId, number: int | None) -> AttemptLogRow | None:
        """(attempt number, log root, log path, tail, tail recorded at) of the job's attempt
        ``number`` (its newest with None); None when the job has no such attempt. The root and
        path are None until recorded, the tail and its time until the attempt's log ended."""
        ...


class ProgressSession(Protocol):
    """Writes of progress, stop confirmations and logs (part of :class:`postproject.engine.WriteSession`).

    Every method is atomic, like the rest of the write session.
    """

    def report_progress(
        self,
        job_id: bytes,
        secret: bytes,
        now: int,
        fraction: float | None,
        stage: str | None,
        message: str | None,
        signal_every: int,
    ) -> tuple[int, bool, int] | None:
        """Keep the running attempt's latest progress: each non-None field replaces the stored
        one, ``progress_at`` = ``now``. Only while ``secret`` holds the job's unexpired claim
        (state claimed, secret hash equal, expiry > now; else None and nothing changes). When
        the attempt last signalled ``signal_every`` µs ago or more (or never), it signals now:
        ``progress_token()`` moves in the same atomic write. Returns (attempt, signalled, the
        lease's expiry).
        Marks the edit as stored state (no revision unless something else is staged)."""
        ...

    def attempt_facts(self, job_id: bytes, secret: bytes) -> AttemptFacts | None:
        """The attempt of ``job_id`` that ``secret`` claimed (any outcome), or None."""
        ...

    def confirm_stop(self, job_id: bytes, secret: bytes, now: int) -> tuple[int, int] | None:
        """The holder of ``secret`` confirms it stopped the attempt a cancel or requeue ended
        (one awaiting confirmation: stop_by set, stopped_at unset, outcome not lost). Before
        ``stop_by`` it records ``stopped_at = now`` (the outcome stays); at or after it the
        attempt ends ``lost`` instead. (attempt number, outcome code), or None (no change)."""
        ...

    def record_attempt_log(
        self,
        job_id: bytes,
        secret: bytes,
        root: str | None,
        path: str | None,
        tail: str | None,
        now: int,
    ) -> int | None:
        """Record, for the attempt ``secret`` claimed (running or ended), where its full log
        lives (``path``, under media root ``root`` or absolute) and/or its tail (<= 64 KiB of
        valid UTF-8; ``tail_at`` = ``now``). A None path or tail keeps the recorded one. The
        attempt number, or None when ``secret`` claimed no attempt of the job. Stored state."""
        ...
