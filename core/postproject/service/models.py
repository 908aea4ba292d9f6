"""The wire format: request bodies (strict: no unknown members, no coercion between types)
and the response documents, for validation and for the OpenAPI document.

Responses are built by :mod:`postproject.views`, the serializer the CLI's ``--json`` uses;
their models here describe that JSON (a test checks every job, revision and worker the
service sends against them).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

UUID_PATTERN = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
KIND_PATTERN = r"^[A-Za-z0-9._-]+:[A-Za-z0-9._:-]+$"
Uuid = Annotated[str, Field(pattern=UUID_PATTERN, examples=["01a237ce-4f1c-765d-b3a2-a5c20f0ec6e5"])]
Kind = Annotated[str, Field(pattern=KIND_PATTERN, max_length=128, examples=["org.example:render"])]
OutputKind = Literal["original", "proxy", "optimized", "derived"]
State = Literal["requested", "claimed", "succeeded", "failed", "cancelled"]
JobSort = Literal["requested", "kind", "state", "priority", "finished", "worker"]  # engine.JOB_SORTS
Micros = Annotated[int, Field(ge=-(2**63), le=2**63 - 1)]
LeaseSeconds = Annotated[int, Field(ge=1, le=86_400)]
Text1K = Annotated[str, Field(min_length=1, max_length=1024)]


class Body(BaseModel):
    """A request body: strict types, no unknown members."""

    model_config = ConfigDict(extra="forbid", strict=True)


class Document(BaseModel):
    """A response document (described, not validated: the views build it)."""

    model_config = ConfigDict(extra="forbid")


# --- requests: the Client API ------------------------------------------------------------


class Parameter(Body):
    vocabulary: Annotated[str, Field(min_length=1, max_length=2048)]
    property: Annotated[str, Field(min_length=1, max_length=256)]
    value: dict[str, Any] = Field(description='a typed value, e.g. {"type": "string", "value": "proxy-720p"}')


class JobBody(Body):
    """``POST /v1/jobs``: what ``postproject job request`` takes."""

    kind: Kind
    inputs: Annotated[list[Uuid], Field(max_length=10_000)]
    output_asset_id: Uuid
    output_kind: OutputKind
    target_root: Annotated[str, Field(min_length=1, max_length=128)] | None = None
    parameters: Annotated[list[Parameter], Field(max_length=1000)] = []
    priority: Annotated[int, Field(ge=-1000, le=1000)] = 0
    not_before_unix_micros: Micros | None = None
    after: Annotated[list[Uuid], Field(max_length=1000)] = []
    input_from: Annotated[list[Uuid], Field(max_length=1000)] = []
    max_attempts: Annotated[int, Field(ge=1, le=1000)] | None = None


class PriorityBody(Body):
    priority: Annotated[int, Field(ge=-1000, le=1000)]


class RegenerationBody(Body):
    representation_id: Uuid
    current_inputs: bool = True


# --- requests: the Worker API ------------------------------------------------------------


class RegistrationBody(Body):
    capacity: Annotated[int, Field(ge=1, le=1024)] = 1
    kinds: Annotated[list[Kind], Field(min_length=1, max_length=1000)] | None = None
    host: Annotated[str, Field(min_length=1, max_length=256)] | None = None


class SessionBody(Body):
    session: Uuid


class ToolBody(Body):
    name: Annotated[str, Field(min_length=1, max_length=256)]
    version: Annotated[str, Field(min_length=1, max_length=128)] | None = None
    uri: Annotated[str, Field(min_length=1, max_length=2048)] | None = None


class AgentBody(Body):
    name: Annotated[str, Field(min_length=1, max_length=256)]


class ClaimBody(Body):
    session: Uuid
    lease_seconds: LeaseSeconds = 60
    tool: ToolBody | None = None  # the claim's tool (default: the service's identity)
    agent: AgentBody | None = None  # who claims (default: the worker's name)
    skip: Annotated[list[Uuid], Field(max_length=1000)] = Field(
        default=[], description="jobs this worker gave back because it cannot do them here: not claimed again"
    )


LeaseToken = Annotated[str, Field(min_length=1, max_length=200, description="the claim's ppl1: token")]


class LeaseBody(Body):
    lease_token: LeaseToken


class RenewBody(Body):
    lease_token: LeaseToken
    lease_seconds: LeaseSeconds = 60


class ProgressBody(Body):
    lease_token: LeaseToken
    fraction: Annotated[float, Field(ge=0.0, le=1.0)] | None = None
    stage: Text1K | None = None
    message: Text1K | None = None
    renew_seconds: LeaseSeconds | None = None


class LogBody(Body):
    lease_token: LeaseToken
    tail: Annotated[str, Field(max_length=200_000)] | None = None
    path: Annotated[str, Field(min_length=1, max_length=4096)] | None = None
    root: Annotated[str, Field(min_length=1, max_length=128)] | None = None


class OutputBody(Body):
    path: Annotated[str, Field(min_length=1, max_length=4096)]
    root: Annotated[str, Field(min_length=1, max_length=128)] | None = None
    kind: OutputKind | None = None


class ActivityBody(Body):
    tool: ToolBody
    agent: AgentBody | None = None
    started_at_unix_micros: Micros | None = None
    finished_at_unix_micros: Micros | None = None
    parameters: Annotated[list[Parameter], Field(max_length=1000)] = []


class ErrorBody(Body):
    code: Annotated[str, Field(min_length=1, max_length=128)]
    message: Annotated[str, Field(min_length=1, max_length=4000)]
    retry: bool = False


class CompletionBody(Body):
    lease_token: LeaseToken
    report_id: Annotated[str, Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._:-]+$")]
    outcome: Literal["succeeded", "failed"]
    output: OutputBody | None = None
    activity: ActivityBody | None = None
    error: ErrorBody | None = None


# --- responses -------------------------------------------------------------------------------


class ToolView(Document):
    name: str
    version: str | None
    uri: str | None


class AgentView(Document):
    name: str


class ProgressView(Document):
    fraction: float | None
    stage: str | None
    message: str | None
    updated_at: int | None
    updated_at_unix_micros: int | None


class AttemptView(Document):
    number: int
    outcome: Literal["succeeded", "failed", "released", "lost", "cancelled"] | None
    agent: AgentView | None
    worker: str | None
    tool: ToolView | None
    claimed_at_unix_micros: int | None
    ended_at_unix_micros: int | None
    diagnostic: str | None
    stopped_at: int | None
    stopped_at_unix_micros: int | None
    stop_by_unix_micros: int | None
    stopping: bool
    progress: ProgressView | None


class BoundInputView(Document):
    job_id: str
    representation_id: str | None


class JobView(Document):
    """A job: exactly what ``postproject --json job show`` prints."""

    id: str
    kind: str
    inputs: list[str]
    output_asset_id: str
    output_kind: OutputKind
    target_root: str | None
    state: State
    claim_tool: ToolView | None
    claim_agent: AgentView | None
    claimed_at_unix_micros: int | None
    claim_expires_at_unix_micros: int | None
    completion_activity_id: str | None
    completion_representation_id: str | None
    failure_diagnostic: str | None
    requested_at_unix_micros: int
    claim_worker: str | None
    priority: int
    not_before_unix_micros: int | None
    max_attempts: int | None
    attempts: list[AttemptView]
    retry_of: str | None
    retried_as: str | None
    depends_on: list[str]
    waiting_on: list[str]
    blocked_by: list[str]
    bound_inputs: list[BoundInputView]
    regenerates: str | None
    progress: ProgressView | None
    stopping: bool
    finished_at_unix_micros: int | None


class JobPage(Document):
    items: list[JobView]
    next_cursor: str | None


class JobCounts(Document):
    kind: str | None
    counts: dict[State, int]
    total: int


class HistoryEntryView(Document):
    sequence: int
    committed_at_unix_micros: int
    kind: str
    origin: str | None
    message: str | None
    principal: str | None


class JobHistory(Document):
    items: list[HistoryEntryView]


class EventView(BaseModel):
    """A revision event: ``position``, ``kind`` and its payload's members (ids as text)."""

    model_config = ConfigDict(extra="allow")
    position: int
    kind: str


class RevisionView(Document):
    id: str
    sequence: int
    committed_at_unix_micros: int
    origin: str | None
    message: str | None
    principal: str | None
    events: list[EventView]


class RevisionsPage(Document):
    revisions: list[RevisionView]
    through_sequence: int


class WorkerView(Document):
    name: str
    host: str | None
    state: Literal["online", "offline"]
    last_seen: int | None
    last_seen_unix_micros: int | None
    capacity: int
    kinds: list[str] | None
    running: list[str]
    attempts: dict[str, int]


class WorkerList(Document):
    items: list[WorkerView]


class StalePage(BaseModel):
    """``artifact stale``'s JSON: ``items`` (each an artifact's knowledge) and ``next_cursor``."""

    model_config = ConfigDict(extra="allow")
    items: list[dict[str, Any]]
    next_cursor: str | None


class Regeneration(Document):
    job_ids: list[str]
    plans: list[dict[str, Any]]
    unplannable: list[dict[str, Any]]
    truncated: bool


class Sweep(Document):
    finalized: int


class Registration(Document):
    worker: str
    session: str
    capacity: int
    kinds: list[str] | None
    host: str | None
    heartbeat_interval_seconds: int
    offline_after_seconds: int


class ClaimInput(Document):
    """An input representation of a claimed job (``representation``'s JSON)."""

    model_config = ConfigDict(extra="allow")
    id: str
    asset_id: str
    root: str | None
    path: str


class ClaimAsset(Document):
    id: str
    name: str | None
    created_at_unix_micros: int | None


class ClaimRoot(Document):
    name: str
    path: str | None


class ClaimParameter(Document):
    vocabulary: str
    property: str
    value: dict[str, Any]


class Claim(Document):
    """A claim, with what its work reads: the job's parameters, its input representations
    (the first 1000), its output asset, and the media roots the job names (their stored
    paths: a worker maps them with its own ``--root-map``)."""

    job: JobView
    lease_token: str
    expires_at_unix_micros: int
    parameters: list[ClaimParameter]
    inputs: list[ClaimInput]
    output_asset: ClaimAsset
    media_roots: list[ClaimRoot]


class LeaseState(Document):
    """A renewal's or progress report's answer: ``cancel_requested`` once a supervisor cancelled
    (or requeued) the job: stop, then confirm with ``/v1/leases/stopped``."""

    job_id: str
    expires_at_unix_micros: int | None
    cancel_requested: bool
    stop: Literal["cancelled", "requeued"] | None = None


class LogRecorded(Document):
    job_id: str
    attempt: int


class Completion(Document):
    """What a completion report committed: the job's state after it (``succeeded``, or
    ``failed`` / ``requested`` for a failure with attempts left and ``retry``), and the output
    representation and activity a success recorded."""

    report_id: str
    outcome: Literal["succeeded", "failed"]
    job_id: str
    state: State
    representation_id: str | None
    activity_id: str | None


class Released(Document):
    job: JobView


class Stopped(Document):
    job_id: str
    outcome: Literal["succeeded", "failed", "released", "lost", "cancelled"]


class Health(Document):
    status: Literal["ok"]
    version: str


class Ready(Document):
    status: Literal["ready"]
    production_id: str
    latest_sequence: int


class ProblemView(BaseModel):
    """An RFC 9457 problem (``application/problem+json``)."""

    model_config = ConfigDict(extra="allow")
    type: str
    title: str
    status: int
    detail: str
    instance: str
    code: str
    reason: str | None = None
