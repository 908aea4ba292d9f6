"""A worker's presence on the farm: registration, heartbeats and the loss sweep.

:class:`Presence` registers the worker (a stable name, this process's session, its capacity
and kinds), then heartbeats every 10 s and, when the worker sweeps (the direct transport;
the service sweeps for its workers), finalises lost work every few seconds (the roadmap's
hosted sweep), each in its own short call. All of it is idle work under the recovery policy
(:mod:`postproject.executor.recovery`): a busy, restarting or unreachable peer is waited
out without limit, said once in the log.

The session is kept while the peer knows it: after an outage the worker heartbeats with the
same session, so its claims in flight stay its own. It registers again only when the peer
no longer knows the worker (``not_found``). A fenced session (``worker_session_replaced``)
means another process registered under this name since: the worker stops (``on_fenced``)
rather than fence it back. An error that retrying cannot cure (a refused token or
credentials, a missing production) stops the worker too (``on_fatal``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from postproject.executor.backend import WorkerBackend
from postproject.executor.recovery import Outage, retrying
from postproject.model import clock as clocks
from postproject.model.errors import ConflictError, NotFoundError, PostProjectError, Reason
from postproject.model.workers import HEARTBEAT_INTERVAL

log = logging.getLogger(__name__)

SWEEP_INTERVAL = 5.0  # seconds between loss sweeps
SWEEP_BATCH = 100


class Presence:
    """Registration, heartbeats and the loss sweep of one worker (a background thread)."""

    def __init__(
        self,
        backend: WorkerBackend,
        name: str,
        capacity: int,
        kinds: tuple[str, ...],
        host: str,
        *,
        outage: Outage,
        sweep: bool,
        on_fenced: Callable[[str], None],
        on_fatal: Callable[[PostProjectError], None],
    ) -> None:
        self._backend = backend
        self._name = name
        self._capacity = capacity
        self._kinds = kinds
        self._host = host
        self._outage = outage
        self._sweep = sweep and backend.sweeps
        self._on_fenced = on_fenced
        self._on_fatal = on_fatal
        self._halt = threading.Event()
        self._thread = threading.Thread(target=self._run, name="worker-presence", daemon=True)
        self.session: object | None = None
        self.swept = 0

    def register(self, stop: threading.Event) -> object | None:
        """Register now (before any claim), waiting out an unreachable peer; None if ``stop``
        is set meanwhile."""

        def attempt() -> object:
            return self._backend.register(self._name, self._capacity, self._kinds, self._host)

        session = retrying(attempt, self._outage, stop=stop)
        if session is None:
            return None
        self.session = session
        log.info(
            "registered as worker %s (capacity %d)",
            self._name,
            self._capacity,
            extra={"action": "registered"},
        )
        return session

    def start(self) -> Presence:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._halt.set()
        if self._thread.is_alive():
            self._thread.join()

    def heartbeat(self) -> bool:
        """One heartbeat (registering again if the peer forgot the worker); False when fenced."""
        session = self.session
        assert session is not None
        try:
            retrying(lambda: self._backend.heartbeat(session), self._outage, stop=self._halt)
        except ConflictError as exc:
            if exc.reason is Reason.WORKER_SESSION_REPLACED:
                self._on_fenced(str(exc))
                return False
            raise
        except NotFoundError:
            log.warning("the worker is not known any more; registering again", extra={"action": "reregister"})
            return self.register(self._halt) is not None or self._halt.is_set()
        return True

    def sweep(self) -> int:
        """Finalise lost work once (a bounded batch)."""
        count = retrying(lambda: self._backend.finalize_lost(SWEEP_BATCH), self._outage, stop=self._halt) or 0
        if count:
            log.warning(
                "finalized %d lost claim(s) of crashed or stalled workers",
                count,
                extra={"action": "swept_lost"},
            )
        self.swept += count
        return count

    def _run(self) -> None:
        beat_every = HEARTBEAT_INTERVAL.total_seconds()
        next_beat = clocks.monotonic() + beat_every
        next_sweep = clocks.monotonic()
        try:
            with self._backend.attached():
                while not self._halt.is_set():
                    now = clocks.monotonic()
                    if now >= next_beat:
                        if not self.heartbeat():
                            return
                        next_beat = clocks.monotonic() + beat_every
                    if self._sweep and now >= next_sweep:
                        self.sweep()
                        next_sweep = clocks.monotonic() + SWEEP_INTERVAL
                    wake = min(next_beat, next_sweep if self._sweep else next_beat)
                    self._halt.wait(max(0.05, wake - clocks.monotonic()))
        except PostProjectError as exc:  # nothing retrying can cure: the worker stops
            log.error("worker presence stopped: %s", exc, extra={"action": "presence_error"})
            self._on_fatal(exc)
