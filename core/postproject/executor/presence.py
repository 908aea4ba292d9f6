"""A worker's presence on the farm: registration, heartbeats, the loss sweep, and patience
with a busy database.

:class:`Presence` registers the worker (a stable name, this process's session, its capacity
and kinds), then heartbeats every 10 s and, unless disabled, finalises lost work every few
seconds (the roadmap's hosted sweep), each in its own short edit. :func:`patiently` runs a
write until it goes through: a database busy because another process holds the write lock
makes it wait with backoff ("waiting for the database"), never give up.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable
from typing import TypeVar

from postproject.model import clock as clocks
from postproject.model.errors import ConflictError, PostProjectError, Reason, StorageError
from postproject.model.workers import HEARTBEAT_INTERVAL, WorkerSession
from postproject.production import Production

log = logging.getLogger(__name__)
T = TypeVar("T")

SWEEP_INTERVAL = 5.0  # seconds between loss sweeps
SWEEP_BATCH = 100
MAX_BACKOFF = 2.0


def patiently(action: Callable[[], T], stop: threading.Event, what: str) -> T | None:
    """Run ``action`` until it is not refused as busy (None if ``stop`` is set meanwhile)."""
    delay, waiting = 0.05, False
    while True:
        try:
            result = action()
        except StorageError as exc:
            if exc.reason is not Reason.BUSY:
                raise
            if not waiting:
                log.warning(
                    "waiting for the database (%s): %s", what, exc.message, extra={"action": "db_busy"}
                )
                waiting = True
            if stop.wait(delay):
                return None
            delay = min(delay * 2, MAX_BACKOFF)
            continue
        if waiting:
            log.info("the database answered again (%s)", what, extra={"action": "db_ready"})
        return result


class Presence:
    """Registration, heartbeats and the loss sweep of one worker (a background thread)."""

    def __init__(
        self,
        open_production: Callable[[], Production],
        name: str,
        capacity: int,
        kinds: tuple[str, ...],
        *,
        origin: str,
        sweep: bool,
        on_fenced: Callable[[str], None],
    ) -> None:
        self._open = open_production
        self._name = name
        self._capacity = capacity
        self._kinds = kinds
        self._origin = origin
        self._sweep = sweep
        self._on_fenced = on_fenced
        self._halt = threading.Event()
        self._thread = threading.Thread(target=self._run, name="worker-presence", daemon=True)
        self.session: WorkerSession | None = None
        self.swept = 0

    def register(self, production: Production) -> WorkerSession:
        """Register now (before any claim); waits while the database is busy."""

        def attempt() -> WorkerSession:
            with production.edit(origin=self._origin, message=f"Register worker {self._name}") as tx:
                session = tx.register_worker(
                    self._name, capacity=self._capacity, kinds=list(self._kinds), host=socket.gethostname()
                )
                tx.commit()
            return session

        session = patiently(attempt, self._halt, "registering")
        assert session is not None  # only stop() interrupts, and it is not running yet
        self.session = session
        log.info(
            "registered as worker %s (capacity %d)",
            self._name,
            self._capacity,
            extra={"action": "registered"},
        )
        return session

    def start(self) -> Presence:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._halt.set()
        if self._thread.is_alive():
            self._thread.join()

    def heartbeat(self, production: Production) -> bool:
        """One heartbeat; False (and ``on_fenced``) when the name registered again elsewhere."""
        session = self.session
        assert session is not None

        def beat() -> None:
            with production.edit(origin=self._origin) as tx:
                tx.heartbeat(session)
                tx.commit()

        try:
            patiently(beat, self._halt, "heartbeat")
        except ConflictError as exc:
            if exc.reason is Reason.WORKER_SESSION_REPLACED:
                self._on_fenced(str(exc))
                return False
            raise
        return True

    def sweep(self, production: Production) -> int:
        """Finalise lost work once (a bounded batch)."""

        def once() -> int:
            with production.edit(origin=self._origin, message="Finalize lost work") as tx:
                count = tx.finalize_lost(SWEEP_BATCH)
                tx.commit()
            return count

        count = patiently(once, self._halt, "loss sweep") or 0
        if count:
            log.warning(
                "finalized %d lost claim(s) of crashed or stalled workers",
                count,
                extra={"action": "swept_lost"},
            )
        self.swept += count
        return count

    def _run(self) -> None:
        beat_every = HEARTBEAT_INTERVAL.total_seconds()
        next_beat = clocks.monotonic() + beat_every
        next_sweep = clocks.monotonic()
        try:
            with self._open() as production:
                while not self._halt.is_set():
                    now = clocks.monotonic()
                    if now >= next_beat:
                        if not self.heartbeat(production):
                            return
                        next_beat = now + beat_every
                    if self._sweep and now >= next_sweep:
                        self.sweep(production)
                        next_sweep = now + SWEEP_INTERVAL
                    wake = min(next_beat, next_sweep if self._sweep else next_beat)
                    self._halt.wait(max(0.05, wake - clocks.monotonic()))
        except PostProjectError as exc:
            log.error("worker presence stopped: %s", exc, extra={"action": "presence_error"})
