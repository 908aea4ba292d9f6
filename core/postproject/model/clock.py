"""Time: the only module that reads the wall clock.

Storage samples an injected :class:`Clock` on every guarded lease operation; tests inject a
:class:`FakeClock` and never sleep.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol, runtime_checkable

from postproject.model.errors import InvalidArgumentError

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@runtime_checkable
class Clock(Protocol):
    """Anything with ``now() -> datetime`` returning a timezone-aware UTC instant."""

    def now(self) -> datetime: ...


class SystemClock:
    """The wall clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def __repr__(self) -> str:
        return "SystemClock()"


class FakeClock:
    """A clock that only moves when told to; thread-safe.

    Args:
        start: the initial instant (aware datetime), or microseconds since the Unix epoch.
    """

    def __init__(self, start: datetime | int = EPOCH) -> None:
        self._lock = threading.Lock()
        self._now = _instant(start)

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, delta: timedelta) -> datetime:
        """Move forward (or backward, for a negative delta) and return the new instant."""
        if not isinstance(delta, timedelta):
            raise TypeError(f"delta must be a timedelta, got {type(delta).__name__}")
        with self._lock:
            self._now = self._now + delta
            return self._now

    def set(self, when: datetime | int) -> None:
        """Jump to ``when`` (an aware datetime or Unix microseconds)."""
        with self._lock:
            self._now = _instant(when)

    def __repr__(self) -> str:
        return f"FakeClock({self.now().isoformat()})"


def _instant(value: datetime | int) -> datetime:
    if isinstance(value, bool):
        raise TypeError("a clock instant must be a datetime or an int of microseconds")
    if isinstance(value, int):
        return EPOCH + timedelta(microseconds=value)
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise InvalidArgumentError(f"clock instant must be timezone-aware; got {value!r}")
        return value.astimezone(UTC)
    raise TypeError("a clock instant must be a datetime or an int of microseconds")


def to_micros(value: datetime) -> int:
    """Unix microseconds of an aware datetime."""
    if value.tzinfo is None:
        raise InvalidArgumentError(f"timestamp must be timezone-aware; got {value!r}")
    delta = value - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_micros(micros: int) -> datetime:
    """The aware UTC datetime of Unix microseconds."""
    return EPOCH + timedelta(microseconds=micros)


def wall_millis() -> int:
    """Milliseconds of the wall clock, for time-ordered identifiers and for comparing with
    file-system timestamps (never for the production's own times: those come from a Clock)."""
    return time.time_ns() // 1_000_000


def monotonic() -> float:
    """Seconds on a monotonic clock, for timeouts and backoff (never stored)."""
    return time.monotonic()


def sleep(seconds: float) -> None:
    """Sleep (busy retries and feed polling only)."""
    time.sleep(seconds)


@dataclass(frozen=True, slots=True)
class MarkSource:
    """The revision that raised the clock's high-water mark: its number, commit time (on the
    clock that raised it), origin and principal, and the agent and worker of the first job
    attempt it touched."""

    sequence: int
    committed_at: int
    origin: str | None
    principal: str | None
    agent: str | None
    worker: str | None
