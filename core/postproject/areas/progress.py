"""The progress area of a transaction: live progress, cooperative stops and attempt logs,
what a running worker uses while it works.

``Transaction`` builds one :class:`ProgressOperations` per edit, given the edit's state and
its jobs area (lease fencing, renewals), and delegates ``report_progress``,
``confirm_stopped`` and ``record_attempt_log`` to it (their public docstrings are on
:class:`postproject.transaction.Transaction`).

Progress and logs are stored state, not revisions: an edit that only reports progress (or
records a log) commits without publishing a revision, and followers learn of progress
through the coalesced progress signal (:meth:`postproject.Production.progress_token`).
A stop confirmation is a revision (``job_stop_confirmed``), so the monitor's
"cancelling..." ends with the feed.
"""

from __future__ import annotations

import os
from datetime import timedelta

from postproject.areas.jobs import JobOperations
from postproject.base.edit import EditState, event
from postproject.base.leases import JobLease, lease_micros
from postproject.model import names
from postproject.model.errors import ConflictError, InvalidArgumentError, NotFoundError, Reason
from postproject.model.jobs import AttemptOutcome
from postproject.model.progress import (
    MAX_LOG_PATH_BYTES,
    SIGNAL_EVERY,
    check_fraction,
    check_text,
    log_tail,
)

SIGNAL_EVERY_MICROS = SIGNAL_EVERY // timedelta(microseconds=1)


class ProgressOperations:
    """Progress reports, stop confirmations and attempt logs (see the module docstring)."""

    def __init__(self, edit: EditState, jobs: JobOperations) -> None:
        self._edit = edit
        self._handle = edit.handle
        self._jobs = jobs

    def report_progress(
        self,
        lease: JobLease,
        *,
        fraction: float | None = None,
        stage: str | None = None,
        message: str | None = None,
        renew: timedelta | None = None,
    ) -> bool:
        """Keep the running attempt's latest progress; fenced by the lease like a renewal."""
        job_id, secret = self._jobs.held(lease)
        value = check_fraction(fraction)
        stage_text = check_text("progress stage", stage)
        message_text = check_text("progress message", message)
        if renew is not None:
            lease_micros(renew)
        with self._edit.operation(savepoint=renew is not None) as s:
            now = self._edit.now_guarded()
            done = s.report_progress(
                job_id.bytes, secret, now, value, stage_text, message_text, SIGNAL_EVERY_MICROS
            )
            if done is None:
                self._jobs.lease_row(s, job_id, secret, now)  # raises not_found or lease_lost
                raise ConflictError(f"job lease on {job_id} has no running attempt", reason=Reason.LEASE_LOST)
            _, signalled, expires = done
            self._edit.guards.append(expires)
            if renew is not None:
                self._jobs.renew_job_lease(lease, renew)
        return signalled

    def confirm_stopped(self, lease: JobLease) -> AttemptOutcome:
        """Confirm that this lease's holder stopped working after ``cancel_job`` or ``requeue_job`` ended
        its attempt (and removed its partial output)."""
        job_id, secret = self._jobs.held(lease)
        with self._edit.operation(savepoint=False) as s:
            now = self._edit.now_guarded()
            done = s.confirm_stop(job_id.bytes, secret, now)
            if done is None:
                facts = s.attempt_facts(job_id.bytes, secret)
                if facts is None:
                    if s.job(job_id.bytes) is None:
                        raise NotFoundError(f"job {job_id} does not exist")
                    raise ConflictError(
                        f"this lease claimed no attempt of job {job_id}", reason=Reason.LEASE_LOST
                    )
                if facts.outcome is None:
                    raise ConflictError(
                        f"attempt {facts.number} of job {job_id} is still running: nobody asked it to stop",
                        reason=Reason.STOP_NOT_REQUESTED,
                    )
                return AttemptOutcome.from_code(facts.outcome)
            attempt, code = done
            outcome = AttemptOutcome.from_code(code)
            kind = "job_stop_missed" if outcome is AttemptOutcome.LOST else "job_stop_confirmed"
            event(s, kind, job_id, job_id=job_id, attempt=attempt)
            self._edit.effects.append((lease, "end", 0))
        return outcome

    def record_attempt_log(
        self,
        lease: JobLease,
        *,
        tail: str | bytes | None = None,
        path: str | os.PathLike[str] | None = None,
        root: str | None = None,
    ) -> int:
        """Record this lease's attempt's log: where the full log lives (``path``, relative to media
        ``root`` or absolute) and/or its tail, kept as the last 64 KiB of valid UTF-8 (bytes that are
        not UTF-8 become U+FFFD). Works on the attempt the lease claimed, running or ended (record it
        before or with the commit that ends the lease). Stored state, not a revision. Returns the
        attempt's number."""
        job_id, secret = self._jobs.held(lease)
        if tail is None and path is None:
            raise InvalidArgumentError("record_attempt_log needs a tail or a path")
        text = log_tail(tail) if tail is not None else None
        stored: str | None = None
        if path is not None:
            if root is None:  # an absolute path: only one inside a media root is recorded
                root = self._handle.root_containing(path)
                if root is None:
                    raise InvalidArgumentError(
                        f"log path {os.fspath(path)!r} is under no media root: an attempt's log is "
                        "recorded relative to a media root (job log reads nothing outside them)"
                    )
            stored, _ = self._handle.locate(path, root)
            names.bounded_text("log path", stored, MAX_LOG_PATH_BYTES)
        elif root is not None:
            raise InvalidArgumentError("a log root needs a log path")
        with self._edit.operation(savepoint=False) as s:
            number = s.record_attempt_log(
                job_id.bytes,
                secret,
                root if path is not None else None,
                stored,
                text,
                self._handle.now_micros(),
            )
            if number is None:
                if s.job(job_id.bytes) is None:
                    raise NotFoundError(f"job {job_id} does not exist")
                raise ConflictError(
                    f"this lease claimed no attempt of job {job_id}", reason=Reason.LEASE_LOST
                )
        return number
