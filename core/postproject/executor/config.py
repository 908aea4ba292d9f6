"""What a worker is told (:class:`WorkerConfig`), what it tells (:class:`WorkerEvent`) and
its small bookkeeping helpers."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from postproject import humanize, locations
from postproject.executor import jobs
from postproject.model import clock as clocks
from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.model.ids import JobId
from postproject.production import Production

if TYPE_CHECKING:
    from postproject.executor.backend import WorkerBackend


def default_agent() -> AgentIdentity:
    """``<hostname>/<pid>``."""
    return AgentIdentity(f"{socket.gethostname()}/{os.getpid()}")


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    """How a worker runs. ``renew_interval`` defaults to a third of ``lease``."""

    path: str | Path  # a production file, a postgresql:// URI, or a service's http(s):// URL
    kinds: tuple[str, ...] = jobs.KINDS
    lease: timedelta = timedelta(seconds=60)
    root_map: Mapping[str, str | os.PathLike[str]] = field(default_factory=dict)
    concurrency: int = 1
    once: bool = False
    watch: bool = False
    tool: ToolIdentity = jobs.TOOL
    agent: AgentIdentity = field(default_factory=default_agent)
    clock: clocks.Clock | None = None
    proxy_format: str = "mp4"
    thumbnail_format: str = "jpg"
    renew_interval: float | None = None
    sweep: bool = True  # finalise lost work of crashed workers every few seconds
    token: str | None = field(default=None, repr=False)  # the service's API token (http(s):// only)

    def open(self) -> Production:
        """A new handle on the production (one per thread: a handle is not for concurrent edits)."""
        return Production.open(
            self.path, clock=self.clock, root_map=dict(self.root_map) or None, allow_injected_clock=True
        )  # (only tests give a worker a clock)

    @property
    def remote(self) -> bool:
        """Whether the worker reaches the production through a service (``http(s)://``)."""
        return isinstance(self.path, str) and self.path.lower().startswith(("http://", "https://"))

    def backend(self) -> WorkerBackend:
        """The transport for :attr:`path`: the service's Worker API for a URL (httpx, imported
        only then), the production itself otherwise."""
        from postproject.executor.backend import DirectBackend

        if not self.remote:
            return DirectBackend(self.open, locations.display_location(self.path))
        from postproject.executor.access import connect, read_token

        token = self.token if self.token is not None else read_token(None)
        client = connect(str(self.path), token, max_connections=max(8, 2 * self.concurrency + 4))
        from postproject.executor.http_backend import HttpBackend

        return HttpBackend(client, self.root_map, self.clock)


@dataclass(frozen=True, slots=True)
class WorkerEvent:
    """A transition (or progress) of one job, for displays. ``action`` is one of
    claimed, progress, succeeded, failed, released, skipped, cancelled, requeued (a cancel or
    requeue stopped the work and the worker confirmed the stop), lease_lost."""

    action: str
    job_id: JobId
    label: str
    fraction: float = 0.0
    detail: str = ""


Listener = Callable[[WorkerEvent], None]


@dataclass
class WorkerStats:
    """What a run did, by outcome (``lease_lost`` counts claims lost while working)."""

    counts: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, action: str) -> None:
        with self._lock:
            self.counts[action] = self.counts.get(action, 0) + 1

    def __getitem__(self, action: str) -> int:
        return self.counts.get(action, 0)


class Budget:
    """How many more jobs may be claimed (None: unlimited)."""

    def __init__(self, limit: int | None) -> None:
        self._left = limit
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            if self._left is None:
                return True
            if self._left <= 0:
                return False
            self._left -= 1
            return True

    def give_back(self) -> None:
        with self._lock:
            if self._left is not None:
                self._left += 1


def duration_text(duration: timedelta) -> str:
    """The shortest exact spelling: ``60s`` -> ``1m``, ``250ms``, ``1us`` (the CLI's grammar)."""
    return humanize.format_duration(duration)
