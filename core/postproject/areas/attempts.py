"""The attempts area of a production: the progress signal and attempt logs.

Progress is not in the revision feed. Followers watch the progress signal instead: a
counter that moves at most once per running attempt per second when progress is reported
(:meth:`AttemptReads.progress_token`, :meth:`AttemptReads.wait_for_progress`), then re-read
the jobs they show (``job.progress``). ``Production`` builds one :class:`AttemptReads`,
given its handle, and delegates these reads to it (their public docstrings are on
:class:`postproject.production.Production`); reporting progress and recording logs is the
progress area of a transaction (:mod:`postproject.areas.progress`).
"""

from __future__ import annotations

import threading
from datetime import timedelta
from pathlib import Path, PurePath

from postproject.areas.feed import wait_changed
from postproject.base.handle import ProductionHandle
from postproject.model import clock as clocks
from postproject.model.errors import InvalidArgumentError, NotFoundError
from postproject.model.ids import JobId, check_id
from postproject.model.progress import AttemptLog

MAX_WAIT = 60.0


class AttemptReads:
    """The progress signal and attempt logs."""

    def __init__(self, handle: ProductionHandle) -> None:
        self._handle = handle

    def progress_token(self) -> int:
        """The progress signal's current value: it moves when a progress report signals (at most once per
        running attempt per second); compare it with an earlier value."""
        self._handle.check_open()
        return self._handle.reads.progress_token()

    def wait_for_progress(
        self, after_token: int, timeout: float | timedelta, *, stop: threading.Event | None = None
    ) -> int:
        """Block until the progress signal differs from ``after_token`` (or ``timeout`` passes, or
        ``stop`` is set); returns the current token. Another process's report is noticed within a few
        tens of milliseconds (the engine's change notifications: on PostgreSQL a signalling report
        NOTIFYs, so nothing is polled)."""
        seconds = timeout.total_seconds() if isinstance(timeout, timedelta) else timeout
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds <= MAX_WAIT:
            raise InvalidArgumentError(f"timeout must be between 0 and 60 seconds; got {timeout!r}")
        engine = self._handle.engine
        deadline = clocks.monotonic() + seconds
        while True:
            change = engine.change_token()
            token = self.progress_token()
            if token != after_token or not wait_changed(engine, change, deadline, stop):
                return token

    def attempt_log(self, job_id: JobId, attempt: int | None = None) -> AttemptLog:
        """The log of a job's attempt ``attempt`` (its newest when None): where the full log lives and the
        stored tail (None while the attempt runs)."""
        self._handle.check_open()
        check_id("job_id", job_id, JobId)
        if attempt is not None and (isinstance(attempt, bool) or not isinstance(attempt, int) or attempt < 1):
            raise InvalidArgumentError(f"attempt must be a positive int; got {attempt!r}")
        row = self._handle.reads.attempt_log(job_id, attempt)
        if row is None:
            self._handle.reads.job(job_id)  # not_found for a job that does not exist
            if attempt is None:
                raise NotFoundError(f"job {job_id} has no attempts yet")
            raise NotFoundError(f"job {job_id} has no attempt {attempt}")
        number, root, path, tail, tail_at = row
        return AttemptLog(
            number,
            root,
            PurePath(path) if path is not None else None,
            tail,
            clocks.from_micros(tail_at) if tail_at is not None else None,
        )

    def log_file(self, log: AttemptLog) -> Path | None:
        """The attempt's full log on this machine, confined to its media root: None when no
        path was recorded, the path is under no media root, the root has no directory here, or
        the path leaves it through a symbolic link. The file may be gone or on another machine;
        read it with :func:`postproject.base.files.read_regular` (bounded, regular files only)."""
        if log.path is None or log.root is None:
            return None  # a path under no root (recorded before they were refused) is never read
        return self._handle.confined(log.root, log.path)
