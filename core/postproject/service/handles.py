"""A bounded pool of production handles, and the threads the core's calls run in.

The core is synchronous and a :class:`~postproject.Production` handle holds one edit at a
time, so the service opens ``pool_size`` handles once and runs each core call in a worker
thread that takes one handle for the call: however many clients call, the instance holds
those handles' connections and no more (on PostgreSQL a handle holds its write connection
and one pooled read connection while used one call at a time: ``2 * pool_size`` connections,
plus the feed listener's two). A call that waits longer than the request's time limit gives
up (``504``); its thread keeps its handle until the core call ends (on PostgreSQL within the
statement timeout), then returns it.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.to_thread

from postproject.production import Production
from postproject.service.auth import Principal
from postproject.service.problems import Problem

T = TypeVar("T")


class Handles:
    """``size`` open productions lent to one call at a time (see the module docstring)."""

    def __init__(self, open_production: Callable[[], Production], size: int, time_limit: float) -> None:
        if size < 1:
            raise ValueError("the pool needs at least one handle")
        self._open = open_production
        self._idle: queue.LifoQueue[Production] = queue.LifoQueue()
        self._all: list[Production] = []
        self._lock = threading.Lock()
        self._limiter = anyio.CapacityLimiter(size)
        self.size = size
        self.time_limit = time_limit
        self.closed = False

    def open(self) -> None:
        """Open every handle now (a bad location fails the start, not the first request)."""
        for _ in range(self.size):
            production = self._open()
            self._all.append(production)
            self._idle.put(production)

    async def run(
        self,
        call: Callable[[Production], T],
        *,
        principal: Principal | None = None,
        time_limit: float | None = None,
    ) -> T:
        """``call(production)`` in a worker thread with a handle of the pool, within the time
        limit; ``principal`` is resolved first on the same handle (its token looked up)."""
        if self.closed:
            raise Problem(503, "unavailable", "the service is shutting down", reason="shutting_down")
        limit = self.time_limit if time_limit is None else time_limit
        try:
            with anyio.fail_after(limit):
                return await anyio.to_thread.run_sync(
                    self._lend, call, principal, limit, limiter=self._limiter, abandon_on_cancel=True
                )
        except TimeoutError:
            raise Problem(
                504, "timeout", f"the request took longer than its {limit:g} s time limit"
            ) from None

    def _lend(self, call: Callable[[Production], T], principal: Principal | None, limit: float) -> T:
        try:
            production = self._idle.get(timeout=limit)
        except queue.Empty:
            raise Problem(
                503, "unavailable", "no production handle became free in time", reason="no_connection"
            ) from None
        try:
            if principal is not None:
                principal.resolve(production)
            return call(production)
        finally:
            self._idle.put(production)

    def close(self) -> None:
        """Close every handle (calls still running finish on theirs first: closing waits for none)."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            handles, self._all = self._all, []
        for production in handles:
            production.close()
