"""Jobs: durable facts that work is wanted, in progress, or did not succeed."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from postproject.errors import InvalidArgumentError
from postproject.ids import ActivityId, AssetId, JobId, RepresentationId
from postproject.lifecycle import JobState
from postproject.model import names
from postproject.model.assets import RepresentationKind
from postproject.model.identity import AgentIdentity, ToolIdentity

MAX_JOB_INPUTS = 100_000
MAX_DIAGNOSTIC_BYTES = 4096


@dataclass(frozen=True, slots=True)
class JobRequest:
    """What to request: kind, inputs, and the output's asset, kind and optional target root.

    Inputs must be distinct; they are stored and returned sorted by id.
    """

    kind: str
    inputs: tuple[RepresentationId, ...] | list[RepresentationId]
    output_asset_id: AssetId
    output_representation_kind: RepresentationKind
    target_root: str | None = None

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
        object.__setattr__(self, "inputs", tuple(sorted(self.inputs)))


@dataclass(frozen=True, slots=True)
class JobClaim:
    """Who holds a claimed job, since when, and until when (never the secret)."""

    tool: ToolIdentity
    agent: AgentIdentity | None
    claimed_at: datetime
    expires_at: datetime

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

    def request(self) -> JobRequest:
        """The request this job was made from."""
        return JobRequest(
            self.kind,
            self.inputs,
            self.output_asset_id,
            self.output_representation_kind,
            self.target_root,
        )


def diagnostic(value: object) -> str:
    """Validate a failure diagnostic: 1-4096 UTF-8 bytes, no NUL."""
    return names.bounded_text("failure diagnostic", value, MAX_DIAGNOSTIC_BYTES)
