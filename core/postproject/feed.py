"""Waking feed waiters: same-process commits signal at once; other processes are seen by
polling SQLite's ``PRAGMA data_version`` (a few microseconds) with a short backoff."""

from __future__ import annotations

import functools
import threading
from pathlib import Path

_lock = threading.Lock()
_signals: dict[str, threading.Condition] = {}
_generations: dict[str, int] = {}


@functools.lru_cache(maxsize=256)
def _key(path: Path) -> str:
    return str(path.resolve())


def notify(path: Path) -> None:
    """A commit landed on ``path`` in this process."""
    key = _key(path)
    with _lock:
        condition = _signals.setdefault(key, threading.Condition())
        _generations[key] = _generations.get(key, 0) + 1
    with condition:
        condition.notify_all()


def generation(path: Path) -> int:
    with _lock:
        return _generations.get(_key(path), 0)


def wait(path: Path, seen: int, timeout: float) -> None:
    """Sleep up to ``timeout`` seconds, or until a same-process commit after ``seen``."""
    key = _key(path)
    with _lock:
        condition = _signals.setdefault(key, threading.Condition())
    with condition:
        condition.wait_for(lambda: generation(path) != seen, timeout=timeout)
