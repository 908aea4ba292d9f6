"""Registered workers as the window knows them, kept current without polling the feed.

A worker's liveness is derived from its last heartbeat (online until ``OFFLINE_AFTER`` has
passed since), and heartbeats are stored state, not revisions: the feed does not tick for
them. So :class:`WorkerWatch` reads ``production.workers()`` (on a reader thread, through
the service):

- once when the production opens;
- after revisions that can change what workers do (a worker registered, a job claimed,
  finished, released, requeued or lost), at most once a second however many arrive;
- every ``POLL_SECONDS`` while a view that shows workers is visible (``set_polling``);
- and when the clock reaches the instant a worker that was online would turn offline (its
  last heartbeat plus ``OFFLINE_AFTER``): one read confirms it, since the worker may have
  sent heartbeats since. That read is what turns a worker offline, so ``went_offline``
  (the desktop notification's hook) fires on real liveness changes even with no view open.

Between reads the views derive liveness and ages from the last read and the clock
(:func:`~postproject_gui.services.types.liveness`).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from postproject import Revision
from postproject.model.clock import monotonic
from postproject.model.workers import OFFLINE_AFTER, WorkerState
from postproject_gui.services.production_service import ProductionService
from postproject_gui.services.types import WorkerList, liveness

POLL_SECONDS = 5
MIN_GAP_SECONDS = 1.0  # feed-driven reads are at most this frequent
BOUNDARY_SLACK = 0.25  # seconds after a worker's liveness boundary before reading again
WORKER_EVENTS = frozenset(
    {
        "worker_registered",
        "job_claimed",
        "job_claim_released",
        "job_succeeded",
        "job_failed",
        "job_cancelled",
        "job_requeued",
        "job_retry_scheduled",
        "job_lost",
    }
)

Spawn = Callable[[Coroutine[Any, Any, Any], str], object]


class WorkerWatch(QObject):
    """The last read of the registered workers (see the module docstring).

    Signals:
        changed(WorkerList): a read finished.
        went_offline(list[str]): workers that were online at the previous read and are not now.
    """

    changed = Signal(object)
    went_offline = Signal(list)

    def __init__(self, service: ProductionService, spawn: Spawn, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._service, self._spawn = service, spawn
        self.current: WorkerList | None = None
        self._reading = False
        self._again = False
        self._last_read = -1e9
        self._stopped = False
        self._started = False  # the production is open: reads may run
        self._wanted = False  # polling asked for (it starts once the production is open)
        self._poll = QTimer(self)
        self._poll.setInterval(POLL_SECONDS * 1000)
        self._poll.timeout.connect(self.refresh)
        self._soon = QTimer(self)  # a throttled feed-driven read
        self._soon.setSingleShot(True)
        self._soon.timeout.connect(self.refresh)
        self._boundary = QTimer(self)  # the next worker that could go offline
        self._boundary.setSingleShot(True)
        self._boundary.timeout.connect(self.refresh)

    @property
    def reading(self) -> bool:
        return self._reading

    @property
    def polling(self) -> bool:
        return self._wanted

    def start(self) -> None:
        """The production is open: read now (and every few seconds if asked already)."""
        self._started = True
        if self._wanted and not self._stopped:
            self._poll.start()
        self.refresh()

    def stop(self) -> None:
        self._stopped = True
        for timer in (self._poll, self._soon, self._boundary):
            timer.stop()

    def set_polling(self, on: bool) -> None:
        """Read every ``POLL_SECONDS`` while ``on`` (a view showing workers is visible)."""
        if self._stopped or on == self._wanted:
            return
        self._wanted = on
        if not self._started:
            return
        if on:
            self._poll.start()
            self.refresh()
        else:
            self._poll.stop()

    def on_revisions(self, revisions: list[Revision]) -> None:
        """Read again (throttled) when revisions change what workers hold or did."""
        if any(e.kind in WORKER_EVENTS for r in revisions for e in r.events):
            wait = MIN_GAP_SECONDS - (monotonic() - self._last_read)
            if wait <= 0:
                self.refresh()
            elif not self._soon.isActive():
                self._soon.start(int(wait * 1000) + 1)

    def on_progress(self) -> None:
        """A running job reported progress: read again (throttled) while workers are shown."""
        if not self._wanted:
            return
        wait = MIN_GAP_SECONDS - (monotonic() - self._last_read)
        if wait <= 0:
            self.refresh()
        elif not self._soon.isActive():
            self._soon.start(int(wait * 1000) + 1)

    def refresh(self) -> None:
        """Read the workers now (or right after the read in flight)."""
        if self._stopped or not self._started:
            return
        if self._reading:
            self._again = True
            return
        self._reading = True
        self._spawn(self._read(), "Reading the workers")

    async def _read(self) -> None:
        try:
            while True:
                self._again = False
                self._last_read = monotonic()
                fresh = await self._service.workers()
                if self._stopped:
                    return
                self._take(fresh)
                if not self._again:
                    break
        finally:
            self._reading = False

    def _take(self, fresh: WorkerList) -> None:
        before = self.current
        self.current = fresh
        if before is not None:
            was = {w.name for w in before.workers if liveness(w, before.read_at) is WorkerState.ONLINE}
            gone = sorted(
                w.name
                for w in fresh.workers
                if w.name in was and liveness(w, fresh.read_at) is WorkerState.OFFLINE
            )
            if gone:
                self.went_offline.emit(gone)
        self._arm_boundary(fresh)
        self.changed.emit(fresh)

    def _arm_boundary(self, fresh: WorkerList) -> None:
        now = self._service.now()
        moments = [
            w.last_seen + OFFLINE_AFTER
            for w in fresh.workers
            if liveness(w, fresh.read_at) is WorkerState.ONLINE
        ]
        self._boundary.stop()
        if moments:
            wait = (min(moments) - now).total_seconds()
            self._boundary.start(int(min(max(wait, 0.0) + BOUNDARY_SLACK, 3600.0) * 1000))
