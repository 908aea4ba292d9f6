"""Jobs: durable facts that work is wanted, in progress, or did not succeed."""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from postproject.model import names
from postproject.model.assets import RepresentationKind
from postproject.model.errors import InvalidArgumentError
from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.model.ids import ActivityId, AssetId, JobId, ProductionId, RepresentationId
from postproject.model.lifecycle import JobState
from postproject.model.progress import JobProgress

MAX_JOB_INPUTS = 100_000
MAX_DIAGNOSTIC_BYTES = 4096
MIN_PRIORITY, MAX_PRIORITY = -1000, 1000
MAX_ATTEMPTS_LIMIT = 1000
MAX_IDEMPOTENCY_KEY_BYTES = 256
MAX_DEPENDENCIES = 1000


@dataclass(frozen=True, slots=True, init=False)
class JobOutput:
    """An input bound to the output of another job of the same production.

    ``JobOutput(job_id)`` (or ``JobOutput(job)`` with a :class:`Job` read from a production)
    in a request's inputs makes the new job depend on that job; when the new job is claimed
    the binding resolves to the upstream job's completion representation, which joins the
    job's inputs (and so the inputs its completion's activity must record).
    """

    job_id: JobId
    production_id: ProductionId | None  # known when made from a Job: checked against the production

    def __init__(self, job: JobId | Job) -> None:
        job_id, production = dependency_of(job, "JobOutput")
        object.__setattr__(self, "job_id", job_id)
        object.__setattr__(self, "production_id", production)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JobOutput) and other.job_id == self.job_id

    def __hash__(self) -> int:
        return hash(("JobOutput", self.job_id))

    def __repr__(self) -> str:
        return f"JobOutput({self.job_id!r})"

    def __str__(self) -> str:
        return f"output of job {self.job_id}"


def dependency_of(value: object, field_name: str) -> tuple[JobId, ProductionId | None]:
    """(job id, its production when known) of a JobId or a Job read from a production."""
    if type(value) is JobId:
        return value, None
    if isinstance(value, Job):
        return value.id, value.production_id
    raise InvalidArgumentError(f"{field_name} takes a JobId (or a Job); got {type(value).__name__}")


def _input_key(item: RepresentationId | JobOutput) -> tuple[int, int]:
    return (1, item.job_id.int) if isinstance(item, JobOutput) else (0, item.int)


@dataclass(frozen=True, slots=True)
class JobRequest:
    """What to request: kind, inputs, and the output's asset, kind and optional target root.

    Inputs must be distinct; they are stored and returned sorted by id (representations
    first, then :class:`JobOutput` bindings by job id). An input may be ``JobOutput(job_id)``:
    bound to that job's output, resolved when this job is claimed.

    Dependencies: ``after`` names jobs (ids, or Jobs read from this production) that must
    have succeeded before this job can be claimed; every ``JobOutput`` input adds its job
    implicitly. ``regenerates`` names the artifact this job makes again (set by regeneration
    plans): when the job succeeds its output supersedes that artifact.

    Scheduling (the host layer of ADR 0023; a production that uses none of it behaves as
    the spec says): ``priority`` from -1000 to 1000, higher first; ``not_before`` an aware
    datetime before which the job is not claimable; ``max_attempts`` how many claims the job
    may have before lost or retryable failures fail it (None: unlimited);
    ``idempotency_key`` (1-256 bytes) makes replaying an equivalent request return the
    original job instead of a new one.
    """

    kind: str
    inputs: Sequence[RepresentationId | JobOutput]  # stored as a sorted tuple
    output_asset_id: AssetId
    output_representation_kind: RepresentationKind
    target_root: str | None = None
    priority: int = 0
    not_before: datetime | None = None
    max_attempts: int | None = None
    idempotency_key: str | None = None
    after: Sequence[JobId] = ()  # stored as a sorted tuple of ids
    regenerates: RepresentationId | None = None
    # (job id, production id) of every dependency given as a Job: checked when requested
    origins: tuple[tuple[JobId, ProductionId], ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        names.namespaced("job kind", self.kind)
        if not isinstance(self.inputs, (tuple, list)):
            raise InvalidArgumentError("job inputs must be a tuple or list of RepresentationId or JobOutput")
        if len(self.inputs) > MAX_JOB_INPUTS:
            raise InvalidArgumentError(f"a job has at most {MAX_JOB_INPUTS} inputs; got {len(self.inputs)}")
        for item in self.inputs:
            if type(item) is not RepresentationId and type(item) is not JobOutput:
                raise InvalidArgumentError(
                    f"job inputs must be RepresentationId or JobOutput values; got {type(item).__name__}"
                )
        if len(set(self.inputs)) != len(self.inputs):
            raise InvalidArgumentError("job inputs must be distinct")
        self._check_dependencies()
        if self.regenerates is not None and type(self.regenerates) is not RepresentationId:
            raise InvalidArgumentError(
                f"job regenerates must be a RepresentationId or None; got {type(self.regenerates).__name__}"
            )
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
        object.__setattr__(self, "inputs", tuple(sorted(self.inputs, key=_input_key)))

    def _check_dependencies(self) -> None:
        if isinstance(self.after, (str, bytes)) or not isinstance(self.after, (tuple, list)):
            raise InvalidArgumentError("job after must be a tuple or list of JobId")
        after: dict[JobId, None] = {}
        origins: dict[JobId, ProductionId] = {}
        for entry in self.after:
            job_id, production = dependency_of(entry, "job after")
            after[job_id] = None
            if production is not None:
                origins[job_id] = production
        for bound in self.inputs:
            if isinstance(bound, JobOutput) and bound.production_id is not None:
                origins[bound.job_id] = bound.production_id
        object.__setattr__(self, "after", tuple(sorted(after)))
        object.__setattr__(self, "origins", tuple(sorted(origins.items())))
        if len(self.dependencies) > MAX_DEPENDENCIES:
            raise InvalidArgumentError(
                f"a job depends on at most {MAX_DEPENDENCIES} jobs; got {len(self.dependencies)}"
            )

    @property
    def representation_inputs(self) -> tuple[RepresentationId, ...]:
        """The inputs known at request time (sorted)."""
        return tuple(i for i in self.inputs if isinstance(i, RepresentationId))

    @property
    def bound_outputs(self) -> tuple[JobOutput, ...]:
        """The inputs bound to other jobs' outputs (sorted by job id)."""
        return tuple(i for i in self.inputs if isinstance(i, JobOutput))

    @property
    def dependencies(self) -> tuple[JobId, ...]:
        """Every job this one waits for: ``after`` and the jobs of its bound inputs, sorted."""
        return tuple(sorted({*self.after, *(b.job_id for b in self.bound_outputs)}))

    def digest(self, not_before_micros: int | None) -> bytes:
        """What makes two keyed requests equivalent: kind, inputs, output, root, scheduling
        (and, when present, dependencies and the regenerated artifact)."""
        parts = [
            self.kind,
            ",".join(str(i) for i in self.representation_inputs),
            str(self.output_asset_id),
            self.output_representation_kind.value,
            self.target_root or "",
            str(self.priority),
            str(not_before_micros) if not_before_micros is not None else "",
            str(self.max_attempts) if self.max_attempts is not None else "",
        ]
        if self.bound_outputs or self.after or self.regenerates is not None:
            parts.append(",".join(str(b.job_id) for b in self.bound_outputs))
            parts.append(",".join(str(j) for j in self.after))
            parts.append(str(self.regenerates) if self.regenerates is not None else "")
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
    """One claim of a job: who worked on it, when, and how it ended (``outcome`` None while running).

    ``progress`` is the latest progress it reported. ``stopped_at`` is when its holder said it
    stopped working: at once for an attempt the holder ended itself (succeeded, failed,
    released), later for one that ``cancel_job`` or ``requeue_job`` ended (the holder
    confirms before ``stop_by``, its lease's expiry; else the attempt ends ``lost``), never
    for a lost one.
    """

    number: int
    outcome: AttemptOutcome | None
    agent: AgentIdentity | None
    worker: str | None  # the registered worker's name, when a worker claimed it
    tool: ToolIdentity
    claimed_at: datetime
    ended_at: datetime | None
    diagnostic: str | None
    progress: JobProgress | None = None
    stop_by: datetime | None = None
    stopped_at: datetime | None = None

    @property
    def stopping(self) -> bool:
        """Ended by a cancel or requeue while its holder has not yet confirmed it stopped
        (the monitor shows "cancelling..."); the holder has until ``stop_by``."""
        return (
            self.stop_by is not None
            and self.stopped_at is None
            and self.outcome in (AttemptOutcome.CANCELLED, AttemptOutcome.RELEASED)
        )


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
class BoundInput:
    """An input bound to another job's output, and what it resolved to when this job was
    claimed (None until then)."""

    output: JobOutput
    resolved: RepresentationId | None


@dataclass(frozen=True, slots=True)
class Job:
    """A job as stored; ``state`` is a :class:`JobState` compared with ``is``.

    ``inputs`` are the representation ids known at request time plus, once claimed, the
    resolutions of its ``bound_inputs``. ``depends_on`` lists every job it depends on;
    while it is requested, ``waiting_on`` lists those not finished yet and ``blocked_by``
    those that failed or were cancelled (it cannot be claimed until they are requested again
    or it is cancelled); both are empty in every other state.
    """

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
    depends_on: tuple[JobId, ...] = ()
    waiting_on: tuple[JobId, ...] = ()
    blocked_by: tuple[JobId, ...] = ()
    bound_inputs: tuple[BoundInput, ...] = ()
    regenerates: RepresentationId | None = None
    production_id: ProductionId | None = None
    finished_at: datetime | None = None  # when it reached a final state

    @property
    def progress(self) -> JobProgress | None:
        """The running attempt's latest progress (None when no attempt runs or none was reported)."""
        if self.claim is None:
            return None
        for attempt in reversed(self.attempts):
            if attempt.number == self.claim.attempt:
                return attempt.progress if attempt.outcome is None else None
        return None

    @property
    def stopping(self) -> Attempt | None:
        """The attempt a cancel or requeue asked to stop whose holder has not confirmed yet."""
        return next((a for a in reversed(self.attempts) if a.stopping), None)

    def request(self) -> JobRequest:
        """The request this job was made from (without its idempotency key): the inputs known
        at request time, its bound inputs and its other dependencies."""
        resolved = {b.resolved for b in self.bound_inputs if b.resolved is not None}
        bound = {b.output.job_id for b in self.bound_inputs}
        return JobRequest(
            self.kind,
            (
                *(i for i in self.inputs if i not in resolved),
                *(JobOutput(b.output.job_id) for b in self.bound_inputs),
            ),
            self.output_asset_id,
            self.output_representation_kind,
            self.target_root,
            priority=self.priority,
            not_before=self.not_before,
            max_attempts=self.max_attempts,
            after=tuple(j for j in self.depends_on if j not in bound),
            regenerates=self.regenerates,
        )


def diagnostic(value: object) -> str:
    """Validate a failure diagnostic: 1-4096 UTF-8 bytes, no NUL."""
    return names.bounded_text("failure diagnostic", value, MAX_DIAGNOSTIC_BYTES)
