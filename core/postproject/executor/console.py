"""What the executor shows on a terminal: one line per transition, progress bars on a TTY.

Everything goes to stderr (stdout stays free for results). On a terminal, ``rich`` draws a
progress bar per running job with the log lines scrolling above it; elsewhere (pipes, log
files, CI) each transition is one plain, timestamped line. With ``--log-format json`` each
line is one JSON object (:class:`postproject.logs.JsonFormatter`) carrying the ``job``, the
``attempt`` and the ``worker``. Lines come from the ``postproject.executor`` loggers, never
contain a lease token or a password (:mod:`postproject.logs`), and text lines never carry a
character that steers a terminal (:func:`postproject.humanize.printable`).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType

from rich.console import Console
from rich.logging import RichHandler
from rich.progress import BarColumn, Progress, TaskID, TaskProgressColumn, TextColumn, TimeElapsedColumn

from postproject import humanize
from postproject.executor.config import WorkerEvent
from postproject.logs import JsonFormatter, secret_free
from postproject.model.ids import JobId

LOGGER = "postproject.executor"
# The database driver's own loggers: their warnings (one per reconnection attempt of the pool)
# repeat what the recovery policy says once, so only their errors show, in the same format.
DRIVER_LOGGERS = ("psycopg",)
_PLAIN_FORMAT = "%(asctime)s %(levelname)s %(message)s"


def stderr_console() -> Console:
    return Console(stderr=True)


class _PrintableFormatter(logging.Formatter):
    """A text formatter whose lines cannot steer a terminal."""

    def format(self, record: logging.LogRecord) -> str:
        return "\n".join(humanize.printable(line) for line in super().format(record).split("\n"))


class _Worker(logging.Filter):
    """Adds ``worker`` (the agent name) to every record that has none."""

    def __init__(self, worker: str) -> None:
        super().__init__()
        self._worker = worker

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "worker", None) is None:
            record.worker = self._worker
        return True


@contextmanager
def executor_logging(
    console: Console | None,
    *,
    level: int = logging.INFO,
    log_format: str = "text",
    worker: str | None = None,
) -> Iterator[None]:
    """Route ``postproject.executor`` log lines of ``level`` and up to ``console`` (rich),
    plain stderr lines, or (``log_format="json"``) JSON lines on stderr; the database driver's
    errors (``psycopg``) go the same way, so a JSON log stays all JSON during an outage."""
    handler: logging.Handler
    if log_format == "json":
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(JsonFormatter())
    elif console is not None and console.is_terminal:
        handler = RichHandler(console=console, show_path=False, markup=False, rich_tracebacks=False)
        handler.setFormatter(_PrintableFormatter("%(message)s"))
    else:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(_PrintableFormatter(_PLAIN_FORMAT))
    secret_free(handler)
    if worker is not None:
        handler.addFilter(_Worker(worker))
    routed = [(logging.getLogger(LOGGER), level)]
    routed += [
        (logging.getLogger(name), level if level <= logging.DEBUG else logging.ERROR)
        for name in DRIVER_LOGGERS
    ]
    previous = [(logger, logger.level, logger.propagate) for logger, _ in routed]
    for logger, wanted in routed:
        logger.addHandler(handler)
        logger.setLevel(wanted)
        logger.propagate = False
    try:
        yield
    finally:
        for logger, old_level, old_propagate in previous:
            logger.removeHandler(handler)
            logger.setLevel(old_level)
            logger.propagate = old_propagate


class JobBars:
    """A worker listener drawing one progress bar per running job (only on a terminal)."""

    def __init__(self, console: Console, *, enabled: bool = True) -> None:
        self._enabled = enabled and console.is_terminal
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        )
        self._tasks: dict[JobId, TaskID] = {}

    def __enter__(self) -> JobBars:
        if self._enabled:
            self._progress.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._enabled:
            self._progress.stop()

    def __call__(self, event: WorkerEvent) -> None:
        if not self._enabled:
            return
        task = self._tasks.get(event.job_id)
        if event.action == "claimed":
            self._tasks[event.job_id] = self._progress.add_task(
                f"{event.label} {str(event.job_id)[-8:]}", total=1.0
            )
        elif task is not None and event.action == "progress":
            self._progress.update(task, completed=event.fraction)
        elif task is not None:
            self._progress.remove_task(task)
            del self._tasks[event.job_id]
