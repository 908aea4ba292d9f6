"""Job leases: the worker's private capability over a claimed job.

A lease knows its production, its job and a secret that fences every earlier claim. The
secret never appears in ``repr``, events, errors or logs; it crosses processes only as an
exported ``ppl1:`` token. ``with lease:`` (or ``close()``) only drops the local handle: it
never writes, releases or renews.
"""

from __future__ import annotations

import enum
import hashlib
import re
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from postproject.base.handle import ProductionHandle
from postproject.engine.claims import InputChangedAtCommit
from postproject.model.clock import from_micros
from postproject.model.errors import ConflictError, InvalidArgumentError, NotFoundError, Reason
from postproject.model.ids import JobId, ProductionId, RepresentationId
from postproject.model.jobs import Job
from postproject.model.metadata import Assertion

MAX_LEASE = timedelta(hours=24)
TOKEN_VERSION = "ppl1"
TOKEN_LENGTH = 115
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_TOKEN = re.compile(rf"ppl1:({_UUID}):({_UUID}):({_UUID})")


class LeaseState(enum.Enum):
    """Local ownership of a lease."""

    PENDING = "pending"  # claimed in an edit that has not committed; usable only in that edit
    ACTIVE = "active"  # the claim committed; usable until it expires, is superseded or ends
    CLOSED = "closed"  # ownership ended (committed release/fail/complete, or the claim rolled back)


def lease_micros(duration: object) -> int:
    """Validate a lease duration: a timedelta of 1 µs to 24 h; returns microseconds."""
    if type(duration) is not timedelta:
        raise TypeError(f"lease duration must be a datetime.timedelta; got {type(duration).__name__}")
    if duration <= timedelta(0) or duration > MAX_LEASE:
        raise InvalidArgumentError(
            f"lease duration must be positive whole microseconds up to 24 h; got {duration}"
        )
    return duration // timedelta(microseconds=1)


class JobLease:
    """A handle on a claim. Obtain one from ``claim_job_lease``/``claim_next_job_lease`` or
    :meth:`import_token`."""

    __slots__ = (
        "_closed",
        "_expires",
        "_job_id",
        "_owner",
        "_production_id",
        "_secret",
        "_state",
    )

    def __init__(
        self,
        production_id: ProductionId,
        job_id: JobId,
        secret: bytes,
        state: LeaseState,
        expires: int | None,
        owner: object | None = None,
    ) -> None:
        self._production_id = production_id
        self._job_id = job_id
        self._secret = secret
        self._state = state
        self._expires = expires
        self._owner = owner
        self._closed = False

    # --- what anyone may see ------------------------------------------------------------

    @property
    def job_id(self) -> JobId:
        return self._job_id

    @property
    def production_id(self) -> ProductionId:
        return self._production_id

    @property
    def state(self) -> LeaseState:
        """Local ownership state; reading it after :meth:`close` raises RuntimeError."""
        if self._closed:
            raise RuntimeError("this lease handle is closed")
        return self._state

    @property
    def expires_at(self) -> datetime | None:
        """The last accepted expiry (None while pending or closed, or when not known here)."""
        if self._state is not LeaseState.ACTIVE or self._expires is None:
            return None
        return from_micros(self._expires)

    def export_token(self) -> str:
        """``ppl1:<production>:<job>:<secret>`` for another process; only for an active lease."""
        if self._closed or self._state is LeaseState.CLOSED:
            raise ConflictError(f"the lease on job {self._job_id} is closed and cannot be exported")
        if self._state is LeaseState.PENDING:
            raise InvalidArgumentError(
                f"the lease on job {self._job_id} is pending: commit its claim before exporting it"
            )
        return f"{TOKEN_VERSION}:{self._production_id}:{self._job_id}:{uuid.UUID(bytes=self._secret)}"

    @classmethod
    def import_token(cls, production: object, token: object, *, live: bool = True) -> JobLease:
        """An active lease from an exported token, if it is the job's current, unexpired claim.

        With ``live=False`` the claim is not checked: a handle for a holder whose claim may
        have ended meanwhile (a cancel, a requeue, its own completion), to confirm a stop or
        record the log of the attempt it claimed, for a front end acting for a remote holder.
        Every transaction method still checks the lease against the stored claim.

        Raises:
            InvalidArgumentError: (invalid_argument) malformed token, or another production's.
            NotFoundError: (not_found) the token's job does not exist.
            ConflictError: (conflict) the claim was released, superseded, cancelled, ended or
                expired, or the clock moved backward.
        """
        handle = ProductionHandle.of(production)
        production_id, job_id, secret = parse_token(token)
        if production_id != handle.production_id:
            raise InvalidArgumentError(f"job lease belongs to another production ({production_id})")
        handle.check_open()
        if not live:
            return cls(production_id, job_id, secret, LeaseState.ACTIVE, None)
        now = handle.guarded_now()
        row = handle.reads.job_secret(job_id)
        if row is None:
            raise NotFoundError(f"job {job_id} does not exist")
        _, stored_hash, expires = row
        if stored_hash != hashlib.sha256(secret).digest() or expires is None or expires <= now:
            raise ConflictError(
                f"job lease on {job_id} is expired, superseded or no longer claimed",
                reason=Reason.LEASE_LOST,
            )
        return cls(production_id, job_id, secret, LeaseState.ACTIVE, expires)

    @classmethod
    def replayed_completion(cls, production: object, token: object) -> RepresentationId | None:
        """The output of the completion this token's claim committed, or None.

        For a worker whose completion committed but whose response was lost: repeating the
        completion with the same token can then report the original instead of a conflict.
        """
        handle = ProductionHandle.of(production)
        production_id, job_id, secret = parse_token(token)
        if production_id != handle.production_id:
            raise InvalidArgumentError(f"job lease belongs to another production ({production_id})")
        handle.check_open()
        found = handle.reads.completed_by(job_id)
        if found is None or found[1] != hashlib.sha256(secret).digest():
            return None
        return RepresentationId(found[0])

    def close(self) -> None:
        """Drop the local handle (never writes, releases or renews)."""
        self._closed = True

    def __enter__(self) -> JobLease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed-handle" if self._closed else self._state.value
        expiry = f", expires_at={self.expires_at.isoformat()}" if self.expires_at else ""
        return f"JobLease(job_id={self._job_id}, state={state}{expiry})"

    def __reduce__(self) -> Any:
        raise TypeError("a JobLease cannot be pickled; pass export_token() to the other process")


# --- for transactions: the only ways to use a lease's secret or change its local state ---


def usable_secret(lease: JobLease, owner: object) -> bytes:
    """The secret, if ``lease`` may act inside the edit ``owner`` (else conflict)."""
    if (
        lease._closed
        or lease._state is LeaseState.CLOSED
        or (lease._state is LeaseState.PENDING and lease._owner is not owner)
    ):
        raise ConflictError(
            f"job lease on {lease._job_id} is not active in this edit",
            reason=Reason.LEASE_NOT_ACTIVE,
        )
    return lease._secret


def activate(lease: JobLease, expires: int) -> None:
    """The claim or renewal committed: the lease is active until ``expires``."""
    lease._state, lease._expires, lease._owner = LeaseState.ACTIVE, expires, None


def end(lease: JobLease) -> None:
    """Ownership ended (a committed release, failure or completion, or a rolled-back claim)."""
    lease._state, lease._expires, lease._owner = LeaseState.CLOSED, None, None


def end_if_pending(lease: JobLease) -> None:
    """The edit that claimed ``lease`` did not commit."""
    if lease._state is LeaseState.PENDING:
        end(lease)


@dataclass(frozen=True, slots=True)
class ClaimedWork:
    """A claim committed with what its work reads (``Production.claim_next_job``): the lease,
    the job as the claim left it, and its parameters (``production.metadata[JobRef(job.id)]``)."""

    lease: JobLease
    job: Job
    parameters: tuple[Assertion, ...]


class InputChangedError(ConflictError):
    """An input of a claimed job changed after the claim (reason ``input_changed``).

    ``input_id`` names the changed input; ``superseding_revision`` is the sequence of the
    revision that recorded its new fingerprint.
    """

    def __init__(self, message: str, *, input_id: RepresentationId, superseding_revision: int) -> None:
        super().__init__(message, reason=Reason.INPUT_CHANGED)
        self.input_id = input_id
        self.superseding_revision = superseding_revision

    @classmethod
    def at_commit(cls, error: InputChangedAtCommit) -> InputChangedError:
        """What a lease check deferred to the commit (or made by a one-call completion) found."""
        changed = error.changed
        return cls(
            error.message,
            input_id=RepresentationId(changed.representation_id),
            superseding_revision=changed.sequence,
        )


def parse_token(token: object) -> tuple[ProductionId, JobId, bytes]:
    """Split a ``ppl1:`` token (invalid_argument for anything malformed)."""
    if not isinstance(token, str) or len(token) != TOKEN_LENGTH:
        raise InvalidArgumentError("invalid scoped job lease token")
    match = _TOKEN.fullmatch(token)
    if match is None:
        raise InvalidArgumentError("invalid scoped job lease token")
    production, job, secret = match.groups()
    return ProductionId(production), JobId(job), uuid.UUID(secret).bytes
