"""Waking this process's feed waiters at once when a commit lands through one of its
productions (keyed by the production's location); engines see other processes' commits
their own way."""

from __future__ import annotations

import threading

_lock = threading.Lock()
_signals: dict[str, threading.Condition] = {}
_generations: dict[str, int] = {}


def notify(key: str) -> None:
    """A commit landed on the production ``key`` names, in this process."""
    with _lock:
        condition = _signals.get(key)  # (setdefault would build a Condition on every commit)
        if condition is None:
            condition = _signals[key] = threading.Condition()
        _generations[key] = _generations.get(key, 0) + 1
    with condition:
        condition.notify_all()


def generation(key: str) -> int:
    with _lock:
        return _generations.get(key, 0)


def wait(key: str, seen: int, timeout: float) -> None:
    """Sleep up to ``timeout`` seconds, or until a same-process commit after ``seen``."""
    with _lock:
        condition = _signals.setdefault(key, threading.Condition())
    with condition:
        condition.wait_for(lambda: generation(key) != seen, timeout=timeout)
