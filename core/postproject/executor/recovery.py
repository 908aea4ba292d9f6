"""One recovery policy for every loop that talks to a production, over either transport.

A worker, its renewals and ``revisions follow`` talk either to the database (a ``.pproj``
file or a ``postgresql://`` server) or to the service (``http(s)://``). Both lose their
peer sometimes: a server restart, a failover, a proxy restart, an idle-session reaper. The
rules, the same for both (the execution roadmap's bounded recovery, issue 28 item 1):

- **Idle** (registering, heartbeating, claiming, waiting for work, following the feed):
  reconnect without limit, with capped, jittered backoff (:class:`Backoff`), and say so once
  in the log ("database unreachable, retrying" / "service unreachable, retrying") and once
  when it answers again (:class:`Outage`).
- **In flight** (a renewal, a progress report, a frozen completion or failure report, a
  release, a stop confirmation): retried until the lease would have expired
  (:func:`retrying` with ``until``), then left to the loss sweep.
- **Ambiguous claims**: a claim whose answer was lost (the request may have committed) is
  never repeated (``repeat_ambiguous=False``): the claim, if it was made, expires and the
  sweep returns the job.
- Anything else (a refused token or credentials, a missing production, a conflict) is not
  the transport's fault: it is raised at once, and a worker ends on the ones nothing can cure.

What counts as transient is decided by :func:`transient` and :func:`ambiguous` from the error
alone: :class:`~postproject.model.errors.StorageError` with a reason that names a lost or
busy peer (``busy``, ``unreachable``, ``connection_lost``), and the service client's
:class:`ServiceUnavailable` (a transport failure or a ``429``/``502``/``503``/``504``).
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from postproject.model import clock as clocks
from postproject.model.errors import SERVER_AWAY, PostProjectError, Reason, StorageError

log = logging.getLogger(__name__)
T = TypeVar("T")

FIRST_DELAY = 0.05  # seconds before the first retry
MAX_DELAY = 5.0  # the cap of the backoff (an idle loop retries at least this often)
TRANSIENT_REASONS = SERVER_AWAY | {Reason.BUSY}


class ServiceUnavailable(StorageError):
    """The service could not be reached or answered that it cannot serve now (a transport
    failure, or a ``429``/``502``/``503``/``504``). ``sent`` is true when the request may
    have reached the service (its answer was lost, or came back as a time-out): such a
    request may have taken effect. ``retry_after`` is the service's hint in seconds."""

    def __init__(
        self,
        message: str,
        *,
        reason: Reason | None = Reason.UNREACHABLE,
        sent: bool = False,
        retry_after: float | None = None,
        status: int | None = None,
        problem: dict[str, object] | None = None,
    ) -> None:
        super().__init__(message, reason=reason)
        self.sent = sent
        self.retry_after = retry_after
        self.status = status
        self.problem = problem


def transient(error: BaseException) -> bool:
    """Whether trying again later may succeed (a busy, lost or unreachable peer)."""
    if isinstance(error, ServiceUnavailable):
        return True
    return isinstance(error, StorageError) and error.reason in TRANSIENT_REASONS


def ambiguous(error: BaseException) -> bool:
    """Whether a transient failure may have happened after the request took effect (the
    connection dropped mid-way, or the answer was lost): repeating it is safe only when the
    request is idempotent (a renewal, a report with its report id)."""
    if isinstance(error, ServiceUnavailable):
        return error.sent
    return isinstance(error, StorageError) and error.reason is Reason.CONNECTION_LOST


@dataclass
class Backoff:
    """Capped, jittered exponential delays ("full jitter": uniform between the first delay and
    the current cap), so that many workers coming back at once do not come back in step."""

    first: float = FIRST_DELAY
    cap: float = MAX_DELAY
    _ceiling: float = 0.0

    def next(self, hint: float | None = None) -> float:
        """The next delay in seconds (at least ``hint``, the peer's Retry-After, when given)."""
        self._ceiling = min(self.cap, max(self.first, self._ceiling * 2 or self.first))
        delay = random.uniform(self.first, self._ceiling)
        return max(delay, min(hint, self.cap * 6)) if hint else delay

    def reset(self) -> None:
        self._ceiling = 0.0


class Outage:
    """Whether one peer (``"database"`` or ``"service"``) is unreachable, said once when it
    goes and once when it answers again, however many threads notice. ``say`` overrides
    where the two lines go (the executor's log by default)."""

    def __init__(self, peer: str, say: Callable[[int, str, str], None] | None = None) -> None:
        self.peer = peer
        self._down = False
        self._lock = threading.Lock()
        self._say = say or _log

    @property
    def down(self) -> bool:
        return self._down

    def failed(self, error: BaseException) -> None:
        with self._lock:
            if self._down:
                return
            self._down = True
        detail = error.message if isinstance(error, PostProjectError) else str(error)
        if isinstance(error, StorageError) and error.reason is Reason.BUSY and self.peer == "database":
            self._say(logging.WARNING, f"waiting for the database (busy): {detail}", "db_busy")
        else:
            self._say(logging.WARNING, f"{self.peer} unreachable, retrying: {detail}", "unreachable")

    def answered(self) -> None:
        if not self._down:  # the common case, without the lock
            return
        with self._lock:
            if not self._down:
                return
            self._down = False
        self._say(logging.INFO, f"the {self.peer} answers again", "reachable")


def _log(level: int, message: str, action: str) -> None:
    log.log(level, message, extra={"action": action})


def retrying(
    action: Callable[[], T],
    outage: Outage,
    *,
    stop: threading.Event | None = None,
    until: float | None = None,
    repeat_ambiguous: bool = True,
) -> T | None:
    """Run ``action`` until it does not fail transiently.

    Between attempts it waits a :class:`Backoff` delay (the peer's ``Retry-After`` when it
    gave one). It returns None when ``stop`` is set meanwhile; with ``until`` (a
    :func:`~postproject.model.clock.monotonic` deadline: the lease's expiry) the last
    transient error is raised once the deadline has passed; with ``repeat_ambiguous=False``
    an ambiguous failure (:func:`ambiguous`) is raised at once instead of being repeated.
    Errors that are not transient are raised at once.
    """
    backoff = Backoff()
    halt = stop or threading.Event()
    while True:
        try:
            result = action()
        except PostProjectError as exc:
            if not transient(exc):
                raise
            outage.failed(exc)  # said at once, also when an ambiguous failure is not repeated
            if not repeat_ambiguous and ambiguous(exc):
                raise
            hint = exc.retry_after if isinstance(exc, ServiceUnavailable) else None
            delay = backoff.next(hint)
            if until is not None:
                left = until - clocks.monotonic()
                if left <= 0:
                    raise
                delay = min(delay, left)
            if halt.wait(delay):
                return None
            continue
        outage.answered()
        return result
