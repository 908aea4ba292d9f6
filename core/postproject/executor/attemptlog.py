"""Each attempt's log: the executor's own lines and the codec library's messages.

:class:`AttemptLogs` is a :mod:`logging` handler the worker installs while it runs. It
routes every record of the executor's loggers and of PyAV's ``libav`` loggers (FFmpeg's
messages, which PyAV forwards once ``av.logging`` has a level) to the attempt the logging
thread works on; FFmpeg's own threads, which belong to no attempt, go to the attempt when
only one runs. Each :class:`AttemptLog` writes its lines to a file under a logs folder
beside the job's outputs (``<output directory>/.postproject-logs/<job>/attempt-<n>.log``)
as soon as that directory is known, and keeps the last bytes in memory for the tail the
worker stores with the attempt when it ends (at most 64 KiB of valid UTF-8, made by
:func:`postproject.model.progress.log_tail`: bytes that are not UTF-8 become U+FFFD).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import deque
from pathlib import Path
from typing import BinaryIO, Final

from postproject.model.ids import JobId
from postproject.model.progress import MAX_LOG_TAIL_BYTES, log_tail

LOGS: Final = ".postproject-logs"
LOGGERS: Final = ("postproject.executor", "libav")
KEEP_BYTES: Final = 2 * MAX_LOG_TAIL_BYTES  # kept in memory (the tail is cut from it)


def log_path(directory: Path, job_id: JobId, attempt: int) -> Path:
    """Where the full log of a job's attempt goes, beside its outputs."""
    return directory / LOGS / str(job_id) / f"attempt-{attempt}.log"


class AttemptLog:
    """The log of one attempt: a file once :meth:`open` names it, and the recent bytes."""

    def __init__(self, job_id: JobId, attempt: int) -> None:
        self.job_id = job_id
        self.attempt = attempt
        self.path: Path | None = None
        self._recent: deque[bytes] = deque()
        self._size = 0
        self._early: list[bytes] = []  # lines before the file was opened
        self._file: BinaryIO | None = None
        self._lock = threading.Lock()

    def open(self, directory: Path) -> Path | None:
        """Start the full log file beside the outputs (with the lines so far); its path, or
        None when it cannot be created (the tail is still kept)."""
        path = log_path(directory, self.job_id, self.attempt)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle = path.open("ab")
        except OSError:
            return None
        with self._lock:
            self._file, self.path = handle, path
            for line in self._early:
                handle.write(line)
            self._early.clear()
            handle.flush()
        return path

    def write(self, data: bytes | str) -> None:
        """Append a line (bytes as the tool printed them; text is written as UTF-8)."""
        raw = _bytes(data) if isinstance(data, str) else data
        if not raw.endswith(b"\n"):
            raw += b"\n"
        with self._lock:
            self._recent.append(raw)
            self._size += len(raw)
            while self._size > KEEP_BYTES and len(self._recent) > 1:
                self._size -= len(self._recent.popleft())
            if self._file is not None:
                with contextlib.suppress(OSError):
                    self._file.write(raw)
                    self._file.flush()
            elif sum(len(x) for x in self._early) < KEEP_BYTES:
                self._early.append(raw)

    def tail(self) -> str:
        """The last 64 KiB as valid UTF-8."""
        with self._lock:
            data = b"".join(self._recent)
        return log_tail(data)

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                with contextlib.suppress(OSError):
                    self._file.close()
                self._file = None


class AttemptLogs(logging.Handler):
    """Routes log records to the attempt of the thread that logs them (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self._by_thread: dict[int, AttemptLog] = {}
        self._by_job: dict[JobId, AttemptLog] = {}
        self._guard = threading.Lock()
        self._saved: list[tuple[logging.Logger, int, bool]] = []
        self._av_level: int | None = None
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))

    # --- installing -----------------------------------------------------------------------

    def install(self) -> AttemptLogs:
        """Listen to the executor's and FFmpeg's loggers (FFmpeg's messages at INFO and above)."""
        for name in LOGGERS:
            logger = logging.getLogger(name)
            self._saved.append((logger, logger.level, logger.propagate))
            logger.addHandler(self)
            if logger.getEffectiveLevel() > logging.INFO:
                logger.setLevel(logging.INFO)
            if name == "libav":
                logger.propagate = False  # FFmpeg's chatter goes to attempt logs, not the console
        import av.logging  # (PyAV loads with the worker, not with every command: executor.profiles)

        self._av_level = av.logging.get_level()
        av.logging.set_level(av.logging.INFO)
        return self

    def uninstall(self) -> None:
        for logger, level, propagate in self._saved:
            logger.removeHandler(self)
            logger.setLevel(level)
            logger.propagate = propagate
        self._saved.clear()
        import av.logging

        av.logging.set_level(self._av_level)

    # --- attempts -------------------------------------------------------------------------

    def begin(self, job_id: JobId, attempt: int) -> AttemptLog:
        """Route this thread's records (and those naming ``job_id``) to a new attempt log."""
        log = AttemptLog(job_id, attempt)
        with self._guard:
            self._by_thread[threading.get_ident()] = log
            self._by_job[job_id] = log
        return log

    def end(self, log: AttemptLog) -> None:
        with self._guard:
            for key, value in list(self._by_thread.items()):
                if value is log:
                    del self._by_thread[key]
            if self._by_job.get(log.job_id) is log:
                del self._by_job[log.job_id]
        log.close()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            log = self._route(record)
            if log is not None:
                log.write(self.format(record))
        except Exception:  # noqa: BLE001 - a log line must never break the work
            self.handleError(record)

    def _route(self, record: logging.LogRecord) -> AttemptLog | None:
        with self._guard:
            job = getattr(record, "job", None)
            if job is not None:
                for job_id, log in self._by_job.items():
                    if str(job_id) == str(job):
                        return log
            found = self._by_thread.get(record.thread or 0)
            if found is not None:
                return found
            if record.name.startswith("libav") and len(self._by_job) == 1:
                return next(iter(self._by_job.values()))
        return None


def _bytes(text: str) -> bytes:
    """UTF-8 of a line; bytes smuggled in as lone surrogates (a file name that is not UTF-8)
    come back as themselves, any other lone surrogate as bytes the tail replaces."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")
