"""Waiting for a busy database instead of failing at the user.

Another program holding the production's write lock makes a write fail with a ``storage``
error whose reason is ``busy`` (after the writer's short lock timeout). Nothing was written,
so trying again is safe. :class:`BusyWaiter` keeps such operations, retries them on its own
with a growing pause (while the window says "Waiting for the database…", non-modal, with
*Retry now* and *Give up*), and forgets each one that goes through.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from postproject import ErrorCode, PostProjectError
from postproject.model.clock import monotonic

RETRY_SECONDS = (2, 4, 8, 15)  # pauses between automatic retries (the last one repeats)
GIVE_UP_AFTER = 10  # automatic retries; then only "Retry now" tries again

Operation = Callable[[], Coroutine[Any, Any, Any]]
Spawn = Callable[[Coroutine[Any, Any, Any], str], object]


def is_busy(exc: BaseException) -> bool:
    """Whether ``exc`` says another program holds the production's lock (nothing was done)."""
    return isinstance(exc, PostProjectError) and exc.code is ErrorCode.STORAGE and exc.reason == "busy"


@dataclass(frozen=True, slots=True)
class Waiting:
    """What waits for the database: the operations (by what they do), the automatic retries
    made so far, and when the next one runs (a ``monotonic`` instant; None: not automatic)."""

    what: tuple[str, ...]
    attempts: int
    next_retry: float | None

    def text(self, now: float) -> str:
        first = self.what[0]
        more = f" and {len(self.what) - 1} more" if len(self.what) > 1 else ""
        if self.next_retry is not None:
            when = f"trying again in {max(0, round(self.next_retry - now))} s"
        elif self.attempts and self.attempts < GIVE_UP_AFTER:
            when = "trying again now"
        else:
            when = "try again when the other program is done"
        return (
            f"Waiting for the database… {first}{more}: another program is writing to the "
            f"production. Nothing was changed yet; {when}."
        )


class BusyWaiter(QObject):
    """Runs operations and keeps the ones the busy database refused, retrying them.

    Signals:
        changed(object): the :class:`Waiting` state, or None when nothing waits.
    """

    changed = Signal(object)

    def __init__(self, spawn: Spawn, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._spawn = spawn
        self._queue: list[tuple[Operation, str]] = []  # refused, waiting for the next retry
        self._retrying: list[str] = []  # retried, not answered yet
        self._attempts = 0
        self._next: float | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.retry)
        self._tick = QTimer(self)  # the countdown in the banner
        self._tick.setInterval(1000)
        self._tick.timeout.connect(self._announce)

    @property
    def waiting(self) -> Waiting | None:
        what = [w for _make, w in self._queue] + self._retrying
        if not what:
            return None
        return Waiting(tuple(what), self._attempts, self._next if self._queue else None)

    def run(self, make: Operation, what: str) -> None:
        """Run ``make()``; if the database is busy, keep it and retry."""
        self._spawn(self._attempt(make, what, retried=False), what)

    def accept(self, exc: BaseException, make: Operation, what: str) -> bool:
        """Keep an operation that failed with ``exc`` if the database was busy (True then)."""
        if not is_busy(exc):
            return False
        if all(what != queued for _m, queued in self._queue):
            self._queue.append((make, what))
        self._schedule()
        return True

    async def _attempt(self, make: Operation, what: str, *, retried: bool) -> None:
        try:
            await make()
        except PostProjectError as exc:
            if not self.accept(exc, make, what):
                raise
        finally:
            if retried and what in self._retrying:
                self._retrying.remove(what)
                self._announce()

    def retry(self) -> None:
        """Try everything that waits, now."""
        self._timer.stop()
        queued, self._queue = self._queue, []
        self._next = None
        if queued:
            self._attempts += 1
        for make, what in queued:
            self._retrying.append(what)
            self._spawn(self._attempt(make, what, retried=True), what)
        self._announce()

    def give_up(self) -> None:
        """Forget what waits (nothing of it was done)."""
        self._queue.clear()
        self._next = None
        self._timer.stop()
        self._announce()

    def stop(self) -> None:
        self._queue.clear()
        self._retrying.clear()
        self._timer.stop()
        self._tick.stop()

    def _schedule(self) -> None:
        if self._attempts >= GIVE_UP_AFTER:
            self._next = None
            self._timer.stop()
        elif not self._timer.isActive():
            pause = RETRY_SECONDS[min(self._attempts, len(RETRY_SECONDS) - 1)]
            self._next = monotonic() + pause
            self._timer.start(pause * 1000)
        self._announce()

    def _announce(self) -> None:
        state = self.waiting
        if state is None:
            self._attempts = 0
            self._tick.stop()
        elif not self._tick.isActive():
            self._tick.start()
        self.changed.emit(state)
