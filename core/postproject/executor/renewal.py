"""Keeping a claim alive: a thread that renews a lease every third of its duration.

The renewer works on its own :class:`Production` handle (a handle is not for concurrent
edits from several threads) and its own lease object, imported from the worker's exported
token: the token stays in memory and is never logged. Each renewal is one short edit. When
the claim is gone (expired, superseded, cancelled) the renewer sets :attr:`Renewer.lost`,
which the work's ``should_stop`` observes, and says why through ``on_lost``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import timedelta

from postproject.errors import ConflictError, NotFoundError, PostProjectError, Reason
from postproject.leases import JobLease
from postproject.production import Production

log = logging.getLogger(__name__)

LOST_REASONS = frozenset({Reason.LEASE_LOST, Reason.LEASE_EXPIRED, Reason.LEASE_NOT_ACTIVE})


class Renewer:
    """Renews one lease in the background until :meth:`stop` (see the module docstring)."""

    def __init__(
        self,
        open_production: Callable[[], Production],
        token: str,
        duration: timedelta,
        interval: float,
        on_lost: Callable[[str], None],
        *,
        origin: str,
    ) -> None:
        self._open = open_production
        self._token = token
        self._duration = duration
        self._interval = interval
        self._on_lost = on_lost
        self._origin = origin
        self._halt = threading.Event()
        self._lost = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lease-renewer", daemon=True)

    @property
    def lost(self) -> bool:
        return self._lost.is_set()

    def start(self) -> Renewer:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop renewing and wait for an edit in flight to end."""
        self._halt.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        try:
            with self._open() as production:
                lease = JobLease.import_token(production, self._token)
                while not self._halt.wait(self._interval):
                    if not self._renew(production, lease):
                        return
        except (ConflictError, NotFoundError) as exc:
            self._mark_lost(str(exc))
        except PostProjectError as exc:
            log.warning("cannot renew leases: %s", exc, extra={"action": "renew_error"})

    def _renew(self, production: Production, lease: JobLease) -> bool:
        """One renewal; False once the claim is gone."""
        try:
            with production.edit(origin=self._origin, message="Renew job claim") as tx:
                tx.renew_job_lease(lease, self._duration)
                tx.commit()
            log.debug("renewed the lease on job %s", lease.job_id, extra={"action": "renewed"})
        except ConflictError as exc:
            if exc.reason in LOST_REASONS:
                self._mark_lost(str(exc))
                return False
            log.warning("renewal of job %s skipped: %s", lease.job_id, exc, extra={"action": "renew_error"})
        except PostProjectError as exc:  # busy database, I/O: try again next time
            log.warning("renewal of job %s failed: %s", lease.job_id, exc, extra={"action": "renew_error"})
        return True

    def _mark_lost(self, reason: str) -> None:
        if not self._halt.is_set():
            self._lost.set()
            self._on_lost(reason)
