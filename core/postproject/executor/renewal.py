"""Keeping a claim alive while the work runs: renewals, progress, and noticing a stop.

A :class:`Renewer` thread works on its own :class:`Production` handle (a handle is not for
concurrent edits from several threads) and its own lease object, imported from the
worker's exported token: the token stays in memory and is never logged. It

- follows the revision feed for its own job, so a ``cancel_job`` or ``requeue_job`` (or a
  re-claim after the lease was lost) is noticed within tens of milliseconds, not at the
  next renewal: it sets :attr:`Renewer.stop_requested` (or :attr:`Renewer.lost`), which
  the work's ``should_stop`` observes;
- publishes the latest progress the work reported (:meth:`Renewer.progress`) at most
  twice a second, each report a short edit of stored state (no revision), fenced by the
  lease: a refused report is a second way to learn that the claim is gone;
- renews the lease every ``interval`` (a third of its duration), in the same call as a
  progress report when one is due.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import timedelta

from postproject.base.leases import JobLease
from postproject.model import clock as clocks
from postproject.model.errors import ConflictError, NotFoundError, PostProjectError, Reason
from postproject.model.lifecycle import JobState
from postproject.model.progress import MAX_PROGRESS_TEXT_BYTES
from postproject.production import Production

log = logging.getLogger(__name__)

LOST_REASONS = frozenset({Reason.LEASE_LOST, Reason.LEASE_EXPIRED, Reason.LEASE_NOT_ACTIVE})
PROGRESS_EVERY = 0.5  # seconds between progress reports (at most twice a second)
# Events that end our claim from outside: a cancel, a requeue, a re-claim or the loss sweep.
STOP_EVENTS = ("job_cancelled", "job_requeued", "job_claimed", "job_lost", "job_failed")

Fields = tuple[float | None, str | None, str | None]


class Renewer:
    """Renews one lease, reports its progress and watches for a stop (see the module docstring)."""

    def __init__(
        self,
        open_production: Callable[[], Production],
        token: str,
        duration: timedelta,
        interval: float,
        on_lost: Callable[[str], None],
        *,
        origin: str,
        since: int | None = None,
    ) -> None:
        self._open = open_production
        self._since = since  # the claim's revision: later events of the job are followed
        self._token = token
        self._duration = duration
        self._interval = interval
        self._on_lost = on_lost
        self._origin = origin
        self._halt = threading.Event()
        self._wake = threading.Event()  # halt, or progress to publish
        self._lost = threading.Event()
        self._stop_requested = threading.Event()
        self._pending: Fields | None = None
        self._pending_lock = threading.Lock()
        self._started = threading.Event()
        self.why: str | None = None  # "cancelled", "requeued" or why the claim was lost
        self._thread = threading.Thread(target=self._run, name="lease-renewer", daemon=True)

    @property
    def lost(self) -> bool:
        """The claim is gone (expired, superseded, or ended from outside)."""
        return self._lost.is_set()

    @property
    def stop_requested(self) -> bool:
        """A cancel or requeue asked this attempt to stop (its holder should confirm)."""
        return self._stop_requested.is_set()

    def start(self) -> Renewer:
        self._thread.start()
        self._started.wait(5.0)  # following the feed from now on
        return self

    def progress(
        self, fraction: float | None = None, stage: str | None = None, message: str | None = None
    ) -> None:
        """Remember the latest progress (published within half a second; never blocks)."""
        with self._pending_lock:
            old = self._pending
            merged = old or (None, None, None)
            self._pending = (
                fraction if fraction is not None else merged[0],
                stage if stage is not None else merged[1],
                message if message is not None else merged[2],
            )
        if old is None:
            self._wake.set()

    def stop(self) -> None:
        """Stop (publishing the last progress first) and wait for an edit in flight to end."""
        self._halt.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join()

    # --- the thread ---------------------------------------------------------------------

    def _run(self) -> None:
        try:
            with self._open() as production:
                lease = JobLease.import_token(production, self._token)
                head = self._since if self._since is not None else production.latest_sequence()
                self._started.set()
                self._loop(production, lease, head)
        except (ConflictError, NotFoundError) as exc:
            self._mark_lost(str(exc))
        except PostProjectError as exc:
            log.warning("cannot renew leases: %s", exc, extra={"action": "renew_error"})
        finally:
            self._started.set()

    def _loop(self, production: Production, lease: JobLease, head: int) -> None:
        job = str(lease.job_id)
        next_renewal = clocks.monotonic() + self._interval
        next_report = clocks.monotonic()
        while True:
            self._wake.clear()
            now = clocks.monotonic()
            due = next_renewal
            if self._pending is not None:
                due = min(due, next_report)
            changes = production.wait_for_changes(
                head, min(max(0.0, due - now), 60.0), kinds=STOP_EVENTS, stop=self._wake
            )
            head = max(head, changes.through_sequence)
            for revision in changes:
                for event in revision.events:
                    if event.kind in STOP_EVENTS and event.payload.get("job_id") == job:
                        self._ended_elsewhere(event.kind)
                        return
            now = clocks.monotonic()
            if self._halt.is_set():
                if self._pending is not None:
                    self._report(production, lease, renew=False)
                return
            if self._pending is not None and now >= next_report:
                renew = now >= next_renewal - PROGRESS_EVERY
                if not self._report(production, lease, renew=renew):
                    return
                next_report = now + PROGRESS_EVERY
                if renew:
                    next_renewal = now + self._interval
            elif now >= next_renewal:
                if not self._renew(production, lease):
                    return
                next_renewal = now + self._interval

    def _ended_elsewhere(self, kind: str) -> None:
        if kind == "job_cancelled":
            self.why = "cancelled"
            self._stop_requested.set()
            log.info("the job was cancelled; stopping", extra={"action": "stop_requested"})
        elif kind == "job_requeued":
            self.why = "requeued"
            self._stop_requested.set()
            log.info("the job was requeued; stopping", extra={"action": "stop_requested"})
        else:
            self._mark_lost(f"the claim ended elsewhere ({kind.replace('_', ' ')})")

    def _report(self, production: Production, lease: JobLease, *, renew: bool) -> bool:
        """Publish the pending progress (renewing too when ``renew``); False once the claim is gone."""
        with self._pending_lock:
            fields, self._pending = self._pending, None
        if fields is None:
            return True
        fraction, stage, message = fields[0], _text(fields[1]), _text(fields[2])
        try:
            with production.edit(origin=self._origin, message="Renew job claim") as tx:
                tx.report_progress(
                    lease,
                    fraction=fraction,
                    stage=stage,
                    message=message,
                    renew=self._duration if renew else None,
                )
                tx.commit()
        except ConflictError as exc:
            if exc.reason in LOST_REASONS:
                self._claim_gone(production, lease, str(exc))
                return False
            log.warning("progress of job %s skipped: %s", lease.job_id, exc, extra={"action": "renew_error"})
        except PostProjectError as exc:  # busy database, I/O: try again next time
            log.warning("progress of job %s failed: %s", lease.job_id, exc, extra={"action": "renew_error"})
        return True

    def _renew(self, production: Production, lease: JobLease) -> bool:
        """One renewal; False once the claim is gone."""
        try:
            with production.edit(origin=self._origin, message="Renew job claim") as tx:
                tx.renew_job_lease(lease, self._duration)
                tx.commit()
            log.debug("renewed the lease on job %s", lease.job_id, extra={"action": "renewed"})
        except ConflictError as exc:
            if exc.reason in LOST_REASONS:
                self._claim_gone(production, lease, str(exc))
                return False
            log.warning("renewal of job %s skipped: %s", lease.job_id, exc, extra={"action": "renew_error"})
        except PostProjectError as exc:  # busy database, I/O: try again next time
            log.warning("renewal of job %s failed: %s", lease.job_id, exc, extra={"action": "renew_error"})
        return True

    def _claim_gone(self, production: Production, lease: JobLease, reason: str) -> None:
        """A refused renewal or report: a cancel or requeue asks for a stop, anything else is a loss."""
        try:
            job = production.job(lease.job_id)
        except PostProjectError:
            job = None
        if job is not None and job.stopping is not None:
            self._ended_elsewhere("job_cancelled" if job.state is JobState.CANCELLED else "job_requeued")
        else:
            self._mark_lost(reason)

    def _mark_lost(self, reason: str) -> None:
        if not self._halt.is_set():
            self.why = reason
            self._lost.set()
            self._on_lost(reason)


def _text(value: str | None) -> str | None:
    """A stage or message the core accepts: valid UTF-8 (a file name's stray bytes become
    U+FFFD), no NUL, at most 1 KiB; None when nothing is left."""
    if not value:
        return None
    try:
        raw = value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raw = value.encode("utf-8", "surrogatepass")
    clean = raw.decode("utf-8", "replace").replace("\x00", "\ufffd")
    return clean.encode()[:MAX_PROGRESS_TEXT_BYTES].decode("utf-8", "ignore") or None
