"""Jobs: durable facts that work is wanted, in progress, or did not succeed."""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass, field
from datetime import datetime

from postproject.errors import InvalidArgumentError
from postproject.ids import ActivityId, AssetId, JobId, RepresentationId
from postproject.lifecycle import JobState
from postproject.model import names
from postproject.model.assets import RepresentationKind
from postproject.model.identity import AgentIdentity, ToolIdentity

MAX_JOB_INPUTS = 100_000
MAX_DIAGNOSTIC_BYTES = 4096
MIN_PRIORITY, MAX_PRIORITY = -1000, 1000
MAX_ATTEMPTS_LIMIT = 1000
MAX_IDEMPOTENCY_KEY_BYTES = 256


@dataclass(frozen=True, slots=True)
class JobRequest:
    """What to request: kind, inputs, and the output's asset, kind and optional target root.

    Inputs must be distinct; they are stored and returned sorted by id.

    Scheduling (the host layer of ADR 0023; a production that uses none of it behaves as
    the spec says): ``priority`` from -1000 to 1000, higher first; ``not_before`` an aware
    datetime before which the job is not claimable; ``max_attempts`` how many claims the job
    may have before lost or retryable failures fail it (None: unlimited);
    ``idempotency_key`` (1-256 bytes) makes replaying an equivalent request return the
    original job instead of a new one.
    """

    kind: str
    inputs: tuple[RepresentationId, ...] | list[RepresentationId]
    output_asset_id: AssetId
    output_representation_kind: RepresentationKind
    target_root: str | None = None
    priority: int = 0
    not_before: datetime | None = None
    max_attempts: int | None = None
    idempotency_key: str | None = None

    def __post_init__(self) -> None:
        names.namespaced("job kind", self.kind)
        if not isinstance(self.inputs, (tuple, list)):
            raise InvalidArgumentError("job inputs must be a tuple or list of RepresentationId")
        if len(self.inputs) > MAX_JOB_INPUTS:
            raise InvalidArgumentError(f"a job has at most {MAX_JOB_INPUTS} inputs; got {len(self.inputs)}")
        for item in self.inputs:
            if type(item) is not RepresentationId:
                raise InvalidArgumentError(
                    f"job inputs must be RepresentationId values; got {type(item).__name__}"
                )
        if len(set(self.inputs)) != len(self.inputs):
            raise InvalidArgumentError("job input representations must be distinct")
        if type(self.output_asset_id) is not AssetId:
            raise InvalidArgumentError(
                f"job output_asset_id must be an AssetId; got {type(self.output_asset_id).__name__}"
            )
        if not isinstance(self.output_representation_kind, RepresentationKind):
            raise InvalidArgumentError("job output_representation_kind must be a RepresentationKind")
        if self.target_root is not None:
            names.root_name("job target root", self.target_root)
        check_priority(self.priority)
        if self.not_before is not None and (
            not isinstance(self.not_before, datetime) or self.not_before.tzinfo is None
        ):
            raise InvalidArgumentError(
                f"job not_before must be a timezone-aware datetime; got {self.not_before!r}"
            )
        if self.max_attempts is not None and (
            isinstance(self.max_attempts, bool)
            or not isinstance(self.max_attempts, int)
            or not 1 <= self.max_attempts <= MAX_ATTEMPTS_LIMIT
        ):
            raise InvalidArgumentError(
                f"job max_attempts must be None or an int from 1 to {MAX_ATTEMPTS_LIMIT}; got {self.max_attempts!r}"
            )
        if self.idempotency_key is not None:
            names.bounded_text("idempotency key", self.idempotency_key, MAX_IDEMPOTENCY_KEY_BYTES)
            if names.has_control(self.idempotency_key):
                raise InvalidArgumentError("idempotency key must not contain control characters")
        object.__setattr__(self, "inputs", tuple(sorted(self.inputs)))

    def digest(self, not_before_micros: int | None) -> bytes:
        """What makes two keyed requests equivalent: kind, inputs, output, root, scheduling."""
        parts = [
            self.kind,
            ",".join(str(i) for i in self.inputs),
            str(self.output_asset_id),
            self.output_representation_kind.value,
            self.target_root or "",
            str(self.priority),
            str(not_before_micros) if not_before_micros is not None else "",
            str(self.max_attempts) if self.max_attempts is not None else "",
        ]
        return hashlib.sha256("\x1f".join(parts).encode()).digest()


def check_priority(value: object) -> int:
    """A job priority: an int from -1000 to 1000 (higher is claimed first)."""
    if isinstance(value, bool) or not isinstance(value, int) or not MIN_PRIORITY <= value <= MAX_PRIORITY:
        raise InvalidArgumentError(
            f"job priority must be an int from {MIN_PRIORITY} to {MAX_PRIORITY}; got {value!r}"
        )
    return value


class AttemptOutcome(enum.Enum):
    """How an attempt (one claim of a job) ended."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    RELEASED = "released"
    LOST = "lost"
    CANCELLED = "cancelled"

    @property
    def code(self) -> int:
        return _OUTCOME_CODES[self]

    @classmethod
    def from_code(cls, code: int) -> AttemptOutcome:
        return _OUTCOMES_BY_CODE[code]


_OUTCOME_CODES = {outcome: number for number, outcome in enumerate(AttemptOutcome, start=1)}
_OUTCOMES_BY_CODE = {number: outcome for outcome, number in _OUTCOME_CODES.items()}


@dataclass(frozen=True, slots=True)
class Attempt:
    """One claim of a job: who worked on it, when, and how it ended (``outcome`` None while running)."""

    number: int
    outcome: AttemptOutcome | None
    agent: AgentIdentity | None
    worker: str | None  # the registered worker's name, when a worker claimed it
    tool: ToolIdentity
    claimed_at: datetime
    ended_at: datetime | None
    diagnostic: str | None


@dataclass(frozen=True, slots=True)
class JobClaim:
    """Who holds a claimed job, since when, and until when (never the secret)."""

    tool: ToolIdentity
    agent: AgentIdentity | None
    claimed_at: datetime
    expires_at: datetime
    worker: str | None = None  # the registered worker's name, when a worker claimed it
    attempt: int = 1

    def expired(self, now: datetime) -> bool:
        """A lease is expired from the instant ``now == expires_at``."""
        return self.expires_at <= now


@dataclass(frozen=True, slots=True)
class JobCompletion:
    """What a succeeded job produced."""

    representation_id: RepresentationId
    activity_id: ActivityId


@dataclass(frozen=True, slots=True)
class JobFailure:
    """Why a job failed."""

    diagnostic: str


@dataclass(frozen=True, slots=True)
class Job:
    """A job as stored; ``state`` is a :class:`JobState` compared with ``is``."""

    id: JobId
    kind: str
    inputs: tuple[RepresentationId, ...]
    output_asset_id: AssetId
    output_representation_kind: RepresentationKind
    target_root: str | None
    state: JobState
    claim: JobClaim | None
    completion: JobCompletion | None
    failure: JobFailure | None
    requested_at: datetime
    updated_sequence: int
    priority: int = 0
    not_before: datetime | None = None
    max_attempts: int | None = None
    attempts: tuple[Attempt, ...] = field(default=())
    retry_of: JobId | None = None
    retried_as: JobId | None = None
    finished_at: datetime | None = None  # when it reached a final state

    def request(self) -> JobRequest:
        """The request this job was made from (without its idempotency key)."""
        return JobRequest(
            self.kind,
            self.inputs,
            self.output_asset_id,
            self.output_representation_kind,
            self.target_root,
            priority=self.priority,
            not_before=self.not_before,
            max_attempts=self.max_attempts,
        )


def diagnostic(value: object) -> str:
    """Validate a failure diagnostic: 1-4096 UTF-8 bytes, no NUL."""
    return names.bounded_text("failure diagnostic", value, MAX_DIAGNOSTIC_BYTES)
