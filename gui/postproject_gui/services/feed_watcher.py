"""Watch a production's revision feed and say, narrowly, what changed.

One background thread owns its own read-only :class:`~postproject.Production` and blocks
in :meth:`~postproject.Production.wait_for_activity` (new revisions or a moved progress
signal), which wakes the engine's way: on SQLite it probes ``PRAGMA data_version``
(microseconds) with a 5-50 ms backoff; on PostgreSQL it sleeps until a LISTEN/NOTIFY
notification and reads nothing in between. Commits made in this process wake it at once, and
it returns as soon as :meth:`FeedWatcher.stop` sets its stop event. New revisions are handed to
the GUI thread through the asyncio loop and re-emitted as signals. This is the application's
only change probe: no widget polls.

When the production cannot be read (a server restarted, a connection killed, a file gone),
the watcher says so (``live_changed(False)``), reopens the production with backoff and, once
it can read again, says it is live and catches up from the last revision it delivered.

The thread notes when each probe returns, and the wait's heartbeat between its short sleeps
(:meth:`FeedWatcher.silence`): a feed that has not answered for a few seconds (a hung network
disk, a lock) is *stalled*, which the window shows
in amber rather than claiming to be live.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from postproject import Changes, Clock, JobId, PostProjectError, Production, Revision
from postproject.model.clock import monotonic
from postproject_gui.text import location as production_location

log = logging.getLogger(__name__)

WAIT_SECONDS = 30.0  # one wait (stop() interrupts it within 50 ms); it returns at once on a change
BATCH = 200  # revisions read per wake-up
RETRY_SECONDS = (0.25, 0.5, 1.0, 2.0)  # backoff while the production cannot be read
STALL_SECONDS = 3.0  # a probe that has not returned for this long: the feed is stalled


def job_ids(revisions: list[Revision]) -> frozenset[JobId]:
    """The jobs named by these revisions' events (job events and job metadata)."""
    found: set[JobId] = set()
    for revision in revisions:
        for event in revision.events:
            if "job_id" in event.payload:
                found.add(JobId.parse(event.payload["job_id"]))
            else:
                target = event.payload.get("target")
                if isinstance(target, dict) and target.get("kind") == "job":
                    found.add(JobId.parse(target["id"]))
    return frozenset(found)


class FeedWatcher(QObject):
    """Emits what the feed says changed after revision ``after``.

    Signals:
        revisions_arrived(list[Revision]): new revisions, oldest first.
        jobs_changed(frozenset[JobId]): the jobs those revisions touched (may be empty).
        head_changed(int): the newest revision sequence read.
        live_changed(bool): whether the feed can be read (False while it cannot).
        progress_moved(int): the progress signal (``progress_token``) moved: a running
            attempt reported progress (at most once per attempt per second). Progress is
            not a revision; the same wait wakes on it.
    """

    revisions_arrived = Signal(list)
    jobs_changed = Signal(frozenset)
    progress_moved = Signal(int)
    head_changed = Signal(int)
    live_changed = Signal(bool)

    def __init__(
        self,
        location: str | Path,
        *,
        after: int,
        loop: asyncio.AbstractEventLoop,
        clock: Clock | None = None,
        parent: QObject | None = None,
        timer: Callable[[], float] = monotonic,
    ) -> None:
        super().__init__(parent)
        self._timer = timer  # seconds, for stalls (a fake one in tests)
        self._probed = timer()  # when the last probe returned (written by the thread)
        self._location = production_location.of(location)
        self._head = after
        self._loop = loop
        self._clock = clock
        self._live: bool | None = None  # unknown until the first probe (the GUI thread's)
        self._posted: bool | None = None  # the liveness last posted (the watcher thread's)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def head(self) -> int:
        return self._head

    @property
    def live(self) -> bool:
        return bool(self._live)

    def silence(self) -> float:
        """Seconds since the feed last answered a probe (stalled above ``STALL_SECONDS``)."""
        return max(0.0, self._timer() - self._probed)

    @property
    def stalled(self) -> bool:
        return self.running and self.silence() > STALL_SECONDS

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("a FeedWatcher starts once")
        self._thread = threading.Thread(target=self._run, args=(self._head,), name="pp-feed", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread: the wait notices the stop event at its next probe (at most 50 ms)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    # --- the watcher thread ------------------------------------------------------------

    def _run(self, after: int) -> None:
        production: Production | None = None
        progress: int | None = None  # the progress token last seen
        failures = 0
        try:
            while not self._stop.is_set():
                try:
                    if production is None:
                        production = Production.open(
                            self._location, read_only=True, clock=self._clock, allow_injected_clock=True
                        )
                        if progress is None:
                            progress = production.progress_token()  # the baseline, before "live"
                        if failures:
                            log.info("revision feed of %s readable again", production.location)
                        self._post(None, after, live=True)  # readable: live before the first wait ends
                    changes, token = production.wait_for_activity(
                        after,
                        progress if progress is not None else -1,
                        WAIT_SECONDS,
                        limit=BATCH,
                        stop=self._stop,
                        heartbeat=self._beat,
                    )
                    self._probed = self._timer()
                except PostProjectError as exc:
                    if not failures:
                        log.warning(
                            "revision feed of %s unreadable: %s",
                            production_location.shown(self._location),
                            exc,
                        )
                    _closed(production)
                    production = None
                    self._post(None, after, live=False)
                    self._stop.wait(RETRY_SECONDS[min(failures, len(RETRY_SECONDS) - 1)])
                    failures += 1
                    continue
                failures = 0
                after = max(after, changes.through_sequence)
                self._post(changes, after, live=True)
                if token != progress:
                    self._post_progress(token)
                    progress = token
        finally:
            _closed(production)

    def _beat(self) -> None:
        """The wait is alive (it answers between its short sleeps): not stalled."""
        self._probed = self._timer()

    def _post(self, changes: Changes | None, through: int, *, live: bool) -> None:
        # Compared with what this thread posted last, not with what the GUI thread has
        # delivered: after a quick reconnect "live" follows a "not live" still on its way.
        if not changes and live == self._posted:
            return
        self._posted = live
        try:
            self._loop.call_soon_threadsafe(self._deliver, changes, through, live)
        except RuntimeError:  # the loop closed under us: the window is going away
            self._stop.set()

    def _post_progress(self, token: int) -> None:
        try:
            self._loop.call_soon_threadsafe(self._deliver_progress, token)
        except RuntimeError:
            self._stop.set()

    # --- back on the GUI thread --------------------------------------------------------

    def _deliver(self, changes: Changes | None, through: int, live: bool) -> None:
        if self._stop.is_set():
            return
        if live != self._live:
            self._live = live
            self.live_changed.emit(live)
        if not changes:
            return
        revisions = list(changes.revisions)
        self.revisions_arrived.emit(revisions)
        self.jobs_changed.emit(job_ids(revisions))
        if through > self._head:
            self._head = through
            self.head_changed.emit(through)

    def _deliver_progress(self, token: int) -> None:
        if not self._stop.is_set():
            self.progress_moved.emit(token)


def _closed(production: Production | None) -> None:
    if production is not None:
        production.close()
