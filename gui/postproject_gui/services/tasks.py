"""Background coroutines started from Qt slots: kept alive, cancelled together, and any
failure routed to one error handler (the error presenter) instead of being lost."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

ErrorHandler = Callable[[BaseException, str], object]


class TaskRunner:
    """Starts coroutines on one loop and reports their failures.

    Args:
        loop: the asyncio loop (qasync's in the application).
        on_error: called on the GUI thread with (exception, what was being done).
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, on_error: ErrorHandler) -> None:
        self._loop = loop
        self._on_error = on_error
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False

    @property
    def busy(self) -> bool:
        return bool(self._tasks)

    def spawn(self, coro: Coroutine[Any, Any, Any], what: str) -> asyncio.Task[Any] | None:
        """Run ``coro``; a failure is reported as "<what> failed" through ``on_error``."""
        if self._closed:
            coro.close()
            return None
        task = self._loop.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(lambda t: self._done(t, what))
        return task

    def _done(self, task: asyncio.Task[Any], what: str) -> None:
        self._tasks.discard(task)
        if task.cancelled() or self._closed:
            return
        exc = task.exception()
        if exc is not None:
            self._on_error(exc, what)

    def cancel_all(self) -> None:
        """Cancel everything still running; later spawns are refused."""
        self._closed = True
        for task in list(self._tasks):
            task.cancel()
        self._tasks.clear()
