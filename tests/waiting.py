"""Waiting for a condition instead of sleeping a fixed time.

A fixed sleep is either too short on a loaded machine (the test fails for no reason) or too
long everywhere else (the suite waits for nothing). These helpers poll a condition with a short
backoff and fail the test with what they waited for when it never comes.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import TypeVar

import pytest

from postproject.storage import signals

T = TypeVar("T")


def wait_until(condition: Callable[[], T], what: str, timeout: float = 60) -> T:
    """Call ``condition`` until it returns something true, and return that; fail the test
    naming ``what`` after ``timeout`` seconds (a bound for a broken run, not a speed claim)."""
    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        found = condition()
        if found:
            return found
        if time.monotonic() > deadline:
            pytest.fail(f"waited {timeout} s for {what}", pytrace=False)
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def sleeps_in(thread: threading.Thread, function: Callable[..., object]) -> bool:
    """Whether ``thread`` is blocked in a ``threading`` wait that ``function`` called (and not
    in one deeper down, such as a connection pool's)."""
    frame = sys._current_frames().get(thread.ident) if thread.ident is not None else None
    while frame is not None and frame.f_code.co_filename == threading.__file__:
        frame = frame.f_back  # Condition.wait, Event.wait, ...
    return frame is not None and frame.f_code is getattr(function, "__code__", None)


def wait_until_in_feed_wait(thread: threading.Thread, timeout: float = 60) -> None:
    """Wait until ``thread`` sleeps in a feed wait (``wait_for_changes``, ``wait_for_progress``,
    ``wait_for_activity``, on either engine): it has read what there was, and a change from now
    on is what wakes it."""
    wait_until(lambda: sleeps_in(thread, signals.wait), f"{thread.name} to sleep in a feed wait", timeout)
