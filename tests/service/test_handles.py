"""The service's pool of production handles: a call's time limit decides its answer, whichever
of the two (the request's wait or the call's own storage error) the event loop sees first."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from postproject import Production
from postproject.model.errors import StorageError
from postproject.service.handles import Handles
from postproject.service.problems import Problem

LIMIT = 0.2  # seconds


@pytest.mark.sqlite_only("the pool's decision, not the engine's: one engine is enough")
def test_a_storage_error_after_the_time_limit_is_the_time_limit(production: Production) -> None:
    """On PostgreSQL the statement timeout (the time limit, set on every connection) cancels a
    call waiting on a lock: its error may reach the event loop before the request's own wait
    ends (a loaded machine). That error is the time limit's, so the answer is ``504``, not a
    storage ``503``."""
    handles = Handles(lambda: production, 1, LIMIT)
    handles.open()
    started, errored = threading.Event(), threading.Event()

    def call(_: Production) -> None:
        started.set()
        time.sleep(LIMIT * 1.5)  # as a statement cancelled by its timeout: past the limit
        errored.set()
        raise StorageError("canceling statement due to statement timeout")

    async def main() -> Problem:
        request = asyncio.ensure_future(handles.run(call))
        while not started.is_set():  # the call is on its thread
            await asyncio.sleep(0.001)
        assert errored.wait(10)  # this loop is busy elsewhere meanwhile (it does not run)
        time.sleep(0.05)  # the error is on its way to the loop: it comes before the timer does
        try:
            await request
        except Problem as answer:
            return answer
        raise AssertionError("the call answered")

    answer = asyncio.run(main())
    assert (answer.status, answer.code) == (504, "timeout")


@pytest.mark.sqlite_only("the pool's decision, not the engine's: one engine is enough")
def test_a_storage_error_within_the_time_limit_is_a_storage_error(production: Production) -> None:
    handles = Handles(lambda: production, 1, 30.0)
    handles.open()

    def call(_: Production) -> None:
        raise StorageError("the disk is full")

    with pytest.raises(StorageError, match="disk is full"):
        asyncio.run(handles.run(call))
