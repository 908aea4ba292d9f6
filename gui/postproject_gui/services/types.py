"""Plain values the service hands to models and views (Qt-free, immutable).

They carry everything a view shows, so no view or model ever needs to ask the core.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from postproject import (
    ArtifactKnowledge,
    Assertion,
    AssetId,
    Job,
    JobId,
    JobState,
    MetadataValue,
    PendingExplanation,
    ProductionId,
    Property,
    ProvenanceGraph,
    RegenerationPlan,
    RepresentationId,
    RepresentationKind,
    Unplannable,
)
from postproject.model.jobs import Attempt
from postproject.model.workers import OFFLINE_AFTER, Worker, WorkerState
from postproject_gui.look.states import ClaimHealth, claim_health, state_text
from postproject_gui.services.artifact_rows import ArtifactRow


@dataclass(frozen=True, slots=True)
class ProductionInfo:
    """What the window shows about the open production."""

    id: ProductionId
    location: str  # a .pproj path or a URI (may hold a password: never shown; see ``shown``)
    head: int
    shown: str  # the location as the window shows it (a URI without its password)
    possibly_stale: bool = False  # read where its WAL cannot be read: the view may be behind


@dataclass(frozen=True, slots=True)
class JobRow:
    """A job plus the names a table row shows for it."""

    job: Job
    output_name: str | None = None  # the output asset's name
    first_input: str | None = None  # file name of the first input representation
    lease_start: datetime | None = None  # a claimed job: when its lease's current term began
    parameters: str | None = (
        None  # its parameters' texts, lower-cased (read for a live change under a search)
    )

    @property
    def id(self) -> JobId:
        return self.job.id

    def health(self, now: datetime) -> ClaimHealth | None:
        """The claim health at ``now``, measured against this lease's own duration."""
        return claim_health(self.job, now, self.lease_start)

    def state_text(self, now: datetime) -> str:
        return state_text(self.job, now, self.lease_start)


@dataclass(frozen=True, slots=True)
class StoreQuery:
    """A query the store can answer with keyset pages.

    With ``claims_before`` set it lists claims (of ``kind``, if set) expiring at or before
    that instant, soonest first (the stuck-claims list keeps those that are stuck or expiring).
    """

    state: JobState | None = None
    kind: str | None = None
    newest_first: bool = True
    claims_before: datetime | None = None
    search: str = ""  # the store's text search (every term, anywhere in the job)
    sort: str = "requested"
    requested_after: datetime | None = None
    finished_after: datetime | None = None


@dataclass(frozen=True, slots=True)
class JobPage:
    """One keyset page of rows, exactly as the store returned them."""

    rows: tuple[JobRow, ...]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class JobCounts:
    """Jobs per state (for one kind, or all kinds when ``kind`` is None)."""

    by_state: dict[JobState, int]
    kind: str | None = None

    @property
    def total(self) -> int:
        return sum(self.by_state.values())


@dataclass(frozen=True, slots=True)
class ClaimMark:
    """A claim, when its lease ends, and when it turns expiring (a third of its term before)."""

    job_id: JobId
    kind: str
    expires_at: datetime
    expiring_at: datetime


@dataclass(frozen=True, slots=True)
class ClaimOutlook:
    """The claims whose lease ends before ``horizon``, soonest first.

    Whether a claim is stuck or expiring changes with time alone (no revision marks it), so
    the window re-evaluates this at :meth:`next_boundary` instead of polling the store.
    """

    claims: tuple[ClaimMark, ...]
    horizon: datetime
    capped: bool = False  # more claims end before the horizon than were read

    def stuck(self, now: datetime, kind: str | None = None) -> tuple[ClaimMark, ...]:
        return tuple(c for c in self._of(kind) if c.expires_at <= now)

    def expiring(self, now: datetime, kind: str | None = None) -> tuple[ClaimMark, ...]:
        return tuple(c for c in self._of(kind) if c.expiring_at < now < c.expires_at)

    def due(self, now: datetime) -> tuple[ClaimMark, ...]:
        """Claims that are stuck or expiring at ``now`` (what the stuck-claims list shows)."""
        return tuple(c for c in self.claims if c.expiring_at < now)

    def next_boundary(self, now: datetime) -> datetime:
        """The next instant a claim turns expiring or stuck (or the horizon, to re-read)."""
        moments = [m for c in self.claims for m in (c.expiring_at, c.expires_at) if m > now]
        return min([*moments, self.horizon])

    def _of(self, kind: str | None) -> tuple[ClaimMark, ...]:
        return self.claims if kind is None else tuple(c for c in self.claims if c.kind == kind)


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One revision event about a job, and who made it (``origin``) and why (``message``)."""

    sequence: int
    committed_at: datetime
    event: str
    origin: str | None = None
    message: str | None = None


@dataclass(frozen=True, slots=True)
class InputInfo:
    """An input representation as the detail panel lists it."""

    id: RepresentationId
    kind: RepresentationKind | None  # None: the representation could not be read
    path: str
    asset_name: str | None


@dataclass(frozen=True, slots=True)
class CompletionInfo:
    """What a succeeded job produced."""

    representation_id: RepresentationId
    path: str
    activity_kind: str | None
    tool: str | None


@dataclass(frozen=True, slots=True)
class JobDetail:
    """Every fact the detail panel shows about one job, read in one go."""

    row: JobRow
    history: tuple[HistoryEntry, ...]
    parameters: tuple[Assertion, ...]
    inputs: tuple[InputInfo, ...]
    target_root_path: str | None
    completion: CompletionInfo | None
    pending: PendingExplanation | None = None  # why it is still requested (requested jobs only)
    log: AttemptLogText | None = None  # its newest attempt's log

    @property
    def job(self) -> Job:
        return self.row.job


@dataclass(frozen=True, slots=True)
class AttemptLogText:
    """The newest attempt's log as read: the full log file's last part while the attempt runs
    (or when the file is here), else the tail stored when it ended."""

    attempt: int
    text: str
    source: str  # the file read, or "stored tail"
    live: bool  # the attempt is still running (the log grows)


@dataclass(frozen=True, slots=True)
class RepresentationChoice:
    """A representation offered as a job input in the request dialog."""

    id: RepresentationId
    asset_id: AssetId
    asset_name: str | None
    kind: RepresentationKind
    path: str


@dataclass(frozen=True, slots=True)
class RequestChoices:
    """What the request dialog offers: known kinds, assets, inputs and media roots."""

    kinds: tuple[str, ...]
    assets: tuple[tuple[AssetId, str | None], ...]
    representations: tuple[RepresentationChoice, ...]
    roots: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RequestSpec:
    """A job request plus its typed parameters, as the request dialog returns it."""

    kind: str
    inputs: tuple[RepresentationId, ...]
    output_asset_id: AssetId
    output_kind: RepresentationKind
    target_root: str | None = None
    parameters: tuple[tuple[Property, MetadataValue], ...] = ()
    priority: int = 0
    not_before: datetime | None = None
    max_attempts: int | None = None
    idempotency_key: str | None = None


@dataclass(frozen=True, slots=True)
class CancelOutcome:
    """Result of one bulk-cancel transaction."""

    cancelled: tuple[JobId, ...]
    skipped: tuple[tuple[JobId, str], ...] = field(default_factory=tuple)  # already finished
    revision: int | None = None


@dataclass(frozen=True, slots=True)
class WorkerList:
    """Every registered worker as read at ``read_at`` (liveness is derived from each last
    heartbeat, so it changes with time alone: the views derive it again as time passes)."""

    workers: tuple[Worker, ...]
    read_at: datetime
    jobs: Mapping[JobId, Job] = field(default_factory=dict)  # the jobs they run, as read then

    def worker(self, name: str) -> Worker | None:
        return next((w for w in self.workers if w.name == name), None)


def liveness(worker: Worker, now: datetime) -> WorkerState:
    """A worker's liveness at ``now``, derived from its last heartbeat."""
    return WorkerState.ONLINE if now - worker.last_seen <= OFFLINE_AFTER else WorkerState.OFFLINE


def used(worker: Worker) -> int:
    """How much of its capacity a worker uses: the unexpired claims it holds (at most its capacity)."""
    return min(len(worker.running), worker.capacity)


@dataclass(frozen=True, slots=True)
class WorkerAttempt:
    """One attempt of a worker, with the job it was of."""

    job_id: JobId
    kind: str | None  # None: the job could not be read
    attempt: Attempt
    lease_expires: datetime | None = None  # a running attempt's lease (it may have expired)


@dataclass(frozen=True, slots=True)
class FarmOutcome:
    """What one farm action did (retry, requeue, finalise lost work, change priority)."""

    jobs: tuple[JobId, ...]  # the jobs it touched (for a retry: the new jobs)
    revision: int | None
    count: int = 0  # finalize_lost: how many claims it finalised


# --- artifacts and provenance ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GraphRead:
    """A provenance neighbourhood, what is known about each of its representations, and the
    revision the read started at (the graph reflects at least that revision)."""

    graph: ProvenanceGraph
    knowledge: Mapping[RepresentationId, ArtifactKnowledge]
    revision: int


@dataclass(frozen=True, slots=True)
class ArtifactPage:
    """One page of artifact rows in representation id order."""

    rows: tuple[ArtifactRow, ...]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class StaleCount:
    """Stale or diverged artifacts among the first ``examined`` candidates; ``complete`` when
    every candidate of the production was examined (else the count is a lower bound)."""

    count: int
    examined: int
    complete: bool

    @property
    def text(self) -> str:
        return f"{self.count:,}" if self.complete else f"{self.count:,}+"


@dataclass(frozen=True, slots=True)
class KnowledgeChange:
    """Representations whose knowledge may have changed; ``complete`` False when the walk
    was cut off (then every loaded row should be read again)."""

    representations: frozenset[RepresentationId]
    complete: bool = True


@dataclass(frozen=True, slots=True)
class RegenerationPreview:
    """What the regeneration preview shows: plans, what cannot be planned and why, rows naming
    the artifacts and inputs involved, and whether a downstream walk was cut off."""

    plans: tuple[RegenerationPlan, ...]
    unplannable: tuple[Unplannable, ...] = ()
    rows: Mapping[RepresentationId, ArtifactRow] = field(default_factory=dict)
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class EnqueueOutcome:
    """The jobs one enqueue transaction requested, in plan order, and its revision."""

    job_ids: tuple[JobId, ...]
    revision: int | None


@dataclass(frozen=True, slots=True)
class ObserveOutcome:
    """What re-reading representations' files found: those whose content changed (a new
    fingerprint recorded), those unchanged, and the revision (None when nothing changed)."""

    changed: tuple[RepresentationId, ...]
    unchanged: tuple[RepresentationId, ...]
    revision: int | None
