"""What the executor shows on a terminal: one line per transition, progress bars on a TTY.

Everything goes to stderr (stdout stays free for results). On a terminal, ``rich`` draws a
progress bar per running job with the log lines scrolling above it; elsewhere (pipes, log
files, CI) each transition is one plain, timestamped line. Lines come from the
``postproject.executor`` loggers and never contain a lease token.
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

from postproject.executor.config import WorkerEvent
from postproject.ids import JobId

LOGGER = "postproject.executor"
_PLAIN_FORMAT = "%(asctime)s %(levelname)s %(message)s"


def stderr_console() -> Console:
    return Console(stderr=True)


@contextmanager
def executor_logging(console: Console | None, *, level: int = logging.INFO) -> Iterator[None]:
    """Route ``postproject.executor`` log lines of ``level`` and up to ``console`` (rich) or
    plain stderr lines."""
    handler: logging.Handler
    if console is not None and console.is_terminal:
        handler = RichHandler(console=console, show_path=False, markup=False, rich_tracebacks=False)
        handler.setFormatter(logging.Formatter("%(message)s"))
    else:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(_PLAIN_FORMAT))
    logger = logging.getLogger(LOGGER)
    previous = (logger.level, logger.propagate)
    logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous[0])
        logger.propagate = previous[1]


class JobBars:
    """A worker listener drawing one progress bar per running job (only on a terminal)."""

    def __init__(self, console: Console) -> None:
        self._enabled = console.is_terminal
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
