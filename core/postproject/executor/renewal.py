"""Keeping a claim alive while the work runs: renewals, progress, and noticing a stop.

A :class:`Renewer` thread works through the worker's backend on a connection of its own
(:meth:`~postproject.executor.backend.WorkerBackend.attached`), with the claim's lease token
(kept in memory, never logged). It

- on the direct transport, follows the revision feed for its own job, so a ``cancel_job``
  or ``requeue_job`` (or a re-claim after the lease was lost) is noticed within tens of
  milliseconds; it sets :attr:`Renewer.stop_requested` (or :attr:`Renewer.lost`), which the
  work's ``should_stop`` observes;
- publishes the latest progress the work reported (:meth:`Renewer.progress`) at most twice a
  second, and, where the backend asks for it (the service, where a cancel arrives only with
  a renewal's or report's answer), at least once a second (:attr:`report_every`); each
  report is fenced by the lease, and its answer says when a supervisor stopped the job;
- renews the lease every ``interval`` (a third of its duration), in the same call as a
  progress report when one is due.

A renewal or report that fails because the peer is unreachable is retried with backoff
until the lease would have expired (:attr:`Renewer.deadline`, a monotonic time); then the
claim counts as lost (the work stops and publishes nothing; the loss sweep returns the job).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import timedelta

from postproject.executor.backend import LOST_REASONS, ClaimedJob, WorkerBackend
from postproject.executor.recovery import Backoff, Outage, transient
from postproject.model import clock as clocks
from postproject.model.errors import ConflictError, NotFoundError, PostProjectError
from postproject.model.progress import MAX_PROGRESS_TEXT_BYTES

log = logging.getLogger(__name__)

PROGRESS_EVERY = 0.5  # seconds between progress reports (at most twice a second)

Fields = tuple[float | None, str | None, str | None]


class Renewer:
    """Renews one lease, reports its progress and watches for a stop (see the module docstring)."""

    def __init__(
        self,
        backend: WorkerBackend,
        token: str,
        job: ClaimedJob,
        duration: timedelta,
        interval: float,
        on_lost: Callable[[str], None],
        *,
        outage: Outage,
        deadline: float,
    ) -> None:
        self._backend = backend
        self._token = token
        self._job = job
        self._duration = duration
        self._interval = interval
        self._on_lost = on_lost
        self._outage = outage
        self.deadline = deadline  # monotonic: when the lease expires as far as this process knows
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
            self._pending = _merged(old, (fraction, stage, message))
        if old is None:
            self._wake.set()

    def stop(self) -> None:
        """Stop (publishing the last progress first) and wait for a call in flight to end."""
        self._halt.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join()

    # --- the thread ---------------------------------------------------------------------

    def _run(self) -> None:
        try:
            with self._backend.attached():
                self._started.set()
                self._loop()
        except (ConflictError, NotFoundError) as exc:
            self._mark_lost(str(exc))
        except PostProjectError as exc:
            log.warning("cannot renew leases: %s", exc, extra={"action": "renew_error"})
        finally:
            self._started.set()

    def _loop(self) -> None:
        backend, every = self._backend, self._backend.report_every
        head = self._job.since or 0
        now = clocks.monotonic()
        next_renewal, next_report, last_contact = now + self._interval, now, now
        backoff = Backoff()
        while True:
            self._wake.clear()
            now = clocks.monotonic()
            due = next_renewal
            if self._pending is not None:
                due = min(due, next_report)
            if every is not None:
                due = min(due, last_contact + every)
            try:
                head, kind = backend.watch(self._job, head, max(0.0, due - now), self._wake)
            except PostProjectError as exc:  # the feed is unreachable: renewals say more
                if not transient(exc):
                    raise
                kind = None
                self._wake.wait(min(backoff.next(), max(0.05, due - clocks.monotonic())))
            if kind is not None:
                self._ended_elsewhere(kind)
                return
            now = clocks.monotonic()
            if self._halt.is_set():
                if self._pending is not None:
                    self._call(renew=False, report=True, retry=False)
                return
            if now >= self.deadline:
                self._mark_lost(
                    f"the lease expired before it could be renewed (the {backend.peer} did not answer)"
                )
                return
            report = (self._pending is not None and now >= next_report) or (
                every is not None and now >= last_contact + every
            )
            renew = now >= next_renewal - (PROGRESS_EVERY if report else 0.0)
            if not (report or renew):
                continue
            outcome = self._call(renew=renew, report=report, retry=True)
            if outcome is None:
                return  # the claim ended
            now = clocks.monotonic()
            if outcome:
                backoff.reset()
                last_contact = now
                next_report = now + PROGRESS_EVERY
                if renew:
                    next_renewal = now + self._interval
            else:  # the peer did not answer: try again soon (until the deadline)
                delay = backoff.next()
                next_report = now + delay
                if renew:
                    next_renewal = now + delay

    def _call(self, *, renew: bool, report: bool, retry: bool) -> bool | None:
        """One renewal or report: True when it went through, False when the peer did not
        answer (the progress is kept for the next try), None once the claim is gone."""
        with self._pending_lock:
            fields, self._pending = (self._pending, None) if report else (None, self._pending)
        sent = clocks.monotonic()
        try:
            if report:
                got = fields or (None, None, None)
                status = self._backend.progress(
                    self._token, got[0], _text(got[1]), _text(got[2]), self._duration if renew else None
                )
            else:
                status = self._backend.renew(self._token, self._duration)
        except ConflictError as exc:
            if exc.reason in LOST_REASONS:
                self._mark_lost(str(exc))
                return None
            log.warning("renewal of job %s skipped: %s", self._job.id, exc, extra={"action": "renew_error"})
            return True
        except PostProjectError as exc:
            if fields is not None and retry:
                with self._pending_lock:
                    self._pending = _merged(fields, self._pending)
            if transient(exc):
                self._outage.failed(exc)
                return False
            log.warning("renewal of job %s failed: %s", self._job.id, exc, extra={"action": "renew_error"})
            return True
        self._outage.answered()
        if renew:
            self.deadline = sent + self._duration.total_seconds()
            log.debug("renewed the lease on job %s", self._job.id, extra={"action": "renewed"})
        if status.stop is not None:
            self._ended_elsewhere("job_cancelled" if status.stop == "cancelled" else "job_requeued")
            return None
        return True

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

    def _mark_lost(self, reason: str) -> None:
        if not self._halt.is_set():
            self.why = reason
            self._lost.set()
            self._on_lost(reason)


def _merged(old: Fields | None, new: Fields | None) -> Fields | None:
    """``new`` over ``old`` field by field (None keeps the older value)."""
    if old is None or new is None:
        return new if old is None else old
    return (
        new[0] if new[0] is not None else old[0],
        new[1] if new[1] is not None else old[1],
        new[2] if new[2] is not None else old[2],
    )


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
