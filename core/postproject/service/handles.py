"""A bounded pool of production handles, and the threads the core's calls run in.

The core is synchronous and a :class:`~postproject.Production` handle holds one edit at a
time, so the service opens ``pool_size`` handles once and runs each core call in a worker
thread that takes one handle for the call: however many clients call, the instance holds
those handles' connections and no more (on PostgreSQL a handle holds its write connection
and one pooled read connection while used one call at a time: ``2 * pool_size`` connections,
plus the feed listener's two). A call that waits longer than the request's time limit gives
up (``504``); its thread keeps its handle until the core call ends (on PostgreSQL within the
statement timeout), then returns it.

A call answered ``504`` never commits afterwards: the service's edits commit through
:func:`commit`, which asks the call's :class:`Deadline` first. Once a commit has begun the
time limit no longer answers for the call: the request waits for the call's own outcome (a
commit's wait is bounded by the engine: the write lock is already held on SQLite, the
statement timeout bounds it on PostgreSQL, and a commit the statement timeout cancelled is
answered ``504`` too), so a ``504`` always means nothing was committed.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from postproject.model import clock as clocks
from postproject.model.errors import StorageError
from postproject.model.revisions import CommitReceipt
from postproject.production import Production
from postproject.service.auth import Principal
from postproject.service.problems import Problem
from postproject.transaction import Transaction

T = TypeVar("T")
_current = threading.local()  # the Deadline of the call this worker thread runs


class Deadline:
    """One call's race between its time limit and its commits (decided once, under a lock)."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self.ends = clocks.monotonic() + limit
        self._lock = threading.Lock()
        self._state = "running"  # then "expired" (answered 504) or "committing" (for good)

    def begin_commit(self) -> bool:
        """From the call's thread: may the call commit? (never once it has been answered 504)."""
        with self._lock:
            if self._state == "expired":
                return False
            self._state = "committing"
            return True

    def expire(self) -> bool:
        """From the request: answer 504? (not once a commit has begun: its outcome answers)."""
        with self._lock:
            if self._state == "committing":
                return False
            self._state = "expired"
            return True


def timed_out(limit: float) -> Problem:
    return Problem(504, "timeout", f"the request took longer than its {limit:g} s time limit")


def commit(tx: Transaction) -> CommitReceipt:
    """``tx.commit()``, unless the call it belongs to was answered ``504`` (then it ends
    unpublished). A commit that fails on storage after the time limit passed (on PostgreSQL the
    statement timeout cancelled it: its locks were held elsewhere) is the time limit too, as
    any of the call's storage errors then is (:meth:`Handles._lend`)."""
    committing()
    return tx.commit()


def committing() -> None:
    """Before a core call that commits by itself (a worker's one-call claim), as before
    :func:`commit`: the ``504`` if the call was answered it, else the call commits for good."""
    deadline: Deadline | None = getattr(_current, "deadline", None)
    if deadline is not None and not deadline.begin_commit():
        raise timed_out(deadline.limit)


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
        deadline = Deadline(limit)
        # A task of its own: the time limit (or the request's cancellation) never cancels the
        # call's thread, which runs on until the core call ends and then gives its handle back.
        task = asyncio.ensure_future(
            anyio.to_thread.run_sync(self._lend, call, principal, limit, deadline, limiter=self._limiter)
        )
        task.add_done_callback(_retrieved)
        done, _ = await asyncio.wait({task}, timeout=limit)
        if not done and deadline.expire():
            raise timed_out(limit)
        return await asyncio.shield(task)  # done, or committing: its outcome is the answer

    def _lend(
        self, call: Callable[[Production], T], principal: Principal | None, limit: float, deadline: Deadline
    ) -> T:
        try:
            production = self._idle.get(timeout=limit)
        except queue.Empty:
            raise Problem(
                503, "unavailable", "no production handle became free in time", reason="no_connection"
            ) from None
        _current.deadline = deadline
        try:
            if principal is not None:
                principal.resolve(production)
            return call(production)
        except StorageError:
            # A statement the statement timeout cancelled began after this call did, so the time
            # limit has passed: the answer is the time limit's, even when this thread gets there
            # before the request's own wait does (under load it can).
            if clocks.monotonic() >= deadline.ends:
                raise timed_out(limit) from None
            raise
        finally:
            _current.deadline = None
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


def _retrieved(task: asyncio.Future[Any]) -> None:
    """Mark an abandoned call's error as seen (it was answered 504; its error is no news)."""
    if not task.cancelled():
        task.exception()
