"""One notification listener per instance: the feed's head, shared by every waiter.

A thread follows the production on a read-only handle of its own
(:meth:`~postproject.Production.wait_for_changes`: on PostgreSQL one LISTEN connection, on
SQLite the ``data_version`` probe) and publishes the newest revision's sequence to the event
loop. Event streams and claims held with ``wait_seconds`` await :meth:`FeedHub.wait`: no
database connection and no thread per waiter, whatever their number. :meth:`FeedHub.close`
wakes them all (a shutdown).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable

from postproject.model.errors import PostProjectError
from postproject.production import Production

log = logging.getLogger(__name__)

POLL = 5.0  # seconds one wait of the listener thread lasts before it looks again


class FeedHub:
    """The newest revision's sequence as this instance knows it, and who waits for a newer one."""

    def __init__(self, open_production: Callable[[], Production]) -> None:
        self._open = open_production
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="service-feed", daemon=True)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._waiters: set[asyncio.Future[None]] = set()
        self._production: Production | None = None
        self.head = 0
        self.closed = False

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._production = self._open()
        self.head = self._production.latest_sequence()
        self._thread.start()

    async def wait(self, after: int, timeout: float) -> int:
        """Return once the head is past ``after`` (at once if it is), ``timeout`` passed, or the
        hub closed; the head then."""
        if self.head > after or self.closed or timeout <= 0:
            return self.head
        assert self._loop is not None
        waiter: asyncio.Future[None] = self._loop.create_future()
        self._waiters.add(waiter)
        try:
            await asyncio.wait_for(asyncio.shield(waiter), timeout)
        except TimeoutError:
            pass
        finally:
            self._waiters.discard(waiter)
        return self.head

    def close(self) -> None:
        """Wake every waiter and stop the listener (its handle closes as it ends)."""
        self.closed = True
        self._wake()
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(POLL + 1.0)

    # --- the listener thread --------------------------------------------------------------

    def _run(self) -> None:
        production = self._production
        assert production is not None
        assert self._loop is not None
        seen = self.head
        try:
            while not self._stop.is_set():
                try:
                    head = production.wait_for_head(seen, POLL, stop=self._stop)
                    if head > seen:  # (one statement: was the next revision with its events, then the head)
                        seen = head
                        self._loop.call_soon_threadsafe(self._publish, seen)
                except PostProjectError as exc:  # the database went away: keep trying
                    log.warning("feed listener: %s", exc, extra={"action": "feed_error"})
                    self._stop.wait(1.0)
        except RuntimeError:  # the event loop closed under us (a shutdown)
            pass
        finally:
            production.close()

    def _publish(self, head: int) -> None:
        if head > self.head:
            self.head = head
        self._wake()

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, set()
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)
