"""The engine interface: everything the core asks of a database, and nothing more.

The core's rules (validation, lifecycle, leases, knowledge) talk only to these protocols;
adapters under :mod:`postproject.storage` implement them (SQLite and PostgreSQL) and are the
only code that holds SQL or imports a driver; ``tests/contract`` runs against every adapter.

Ids cross the interface as 16-byte ``bytes``, times as Unix microseconds, job states and
representation kinds as their stored codes. Reads see committed state; a write session is
one edit holding the production's write lock from ``begin_write`` to ``commit``/``rollback``.

::

    Engine                 one open production (connections, change wake-ups)
      .reads  -> Reads        committed state: production, assets, jobs, feed, counts, pages
      .graph  -> GraphFacts   provenance facts for knowledge, plans, graphs and PROV export
      .begin_write() -> WriteSession   one edit: setup, provenance, metadata, jobs, leases, commit
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from postproject.engine.progress import ProgressReads, ProgressSession
from postproject.engine.service import OffersServiceReads, OffersServiceSession
from postproject.model.activities import Activity, ActivitySpec
from postproject.model.assets import Asset, Fingerprint, MediaRoot, Representation
from postproject.model.clock import Clock, MarkSource
from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.model.ids import ActivityId, AssetId, JobId, RepresentationId
from postproject.model.jobs import Attempt, Job, JobRequest
from postproject.model.lifecycle import JobState
from postproject.model.revisions import Revision, RevisionEvent

Domain = tuple[str, int]  # (algorithm, version) of a fingerprint
Fingerprints = dict[Domain, bytes]


@dataclass(frozen=True, slots=True)
class LeaseRow:
    """The stored claim of a job (and what a completion checks) as a lease operation sees it."""

    state: int
    secret_hash: bytes | None  # SHA-256 of the lease secret (secrets are never stored)
    expires: int | None
    claim_sequence: int | None
    output_asset_id: bytes
    output_kind: int
    inputs: list[bytes]  # sorted input representation ids, with those its bindings resolved to
    attempts: int  # claims so far
    max_attempts: int | None
    attempt: int | None  # the running attempt's number
    regenerates: bytes | None = None  # the artifact a regeneration job makes again


@dataclass(frozen=True, slots=True)
class ExpiringClaim:
    """A claim by its lease's expiry, with what ending it needs (the loss sweep's facts)."""

    job_id: bytes
    attempt: int
    attempts: int
    max_attempts: int | None
    worker: str | None
    agent: str | None
    expires: int


@dataclass(frozen=True, slots=True)
class WorkerFacts:
    """A registered worker as a claim checks it."""

    session: bytes
    last_seen: int
    capacity: int
    kinds: tuple[str, ...] | None
    active: int  # unexpired claims it holds


@dataclass(frozen=True, slots=True)
class ActivityFacts:
    """An activity as a completion checks it: its creating revision and sorted edge ids."""

    created_sequence: int
    inputs: list[bytes]
    outputs: list[bytes]


@dataclass(frozen=True, slots=True)
class OutputFacts:
    """A representation as a completion checks it: its asset, kind and creating revision."""

    asset_id: bytes
    kind: int
    created_sequence: int


@dataclass(frozen=True, slots=True)
class ChangedInput:
    """An input whose fingerprint was recorded after a claim."""

    representation_id: bytes
    sequence: int
    revision_id: bytes


@dataclass(frozen=True, slots=True)
class EdgeFacts:
    """One activity edge as knowledge sees it: the representation and its commit snapshot."""

    representation_id: bytes
    snapshot: Fingerprints | None


@dataclass(frozen=True, slots=True)
class PlanFacts:
    """What regeneration planning reads about a batch of artifacts."""

    representations: dict[bytes, tuple[bytes, int]]  # id -> (asset id, kind code)
    producers: dict[bytes, list[bytes]]  # id -> producing activity ids
    activity_kinds: dict[bytes, str]
    completed_jobs: dict[bytes, tuple[str, str | None]]  # activity -> (job kind, target root)
    inputs: dict[bytes, list[bytes]]  # activity -> distinct input ids, sorted
    parameters: dict[bytes, list[tuple[str, str, str]]]  # activity -> (vocabulary, property, value json)


@dataclass(frozen=True, slots=True)
class JobQuery:
    """A search over every job (``Reads.search_jobs``): filters, text terms and one sort.

    Every filter narrows (AND). Times are Unix microseconds: ``*_after`` is inclusive,
    ``*_before`` exclusive. ``finished_*`` matches only jobs in a final state (their
    ``finished_at``, set by the transition that ended them). Every term must match (AND); a
    term matches a job when it is a case-insensitive substring (any length >= 1; ASCII case
    folding is enough) of the job's kind, its output asset's name, the agent name or the
    registered worker name of any of its attempts, its failure diagnostic, or a string value
    of its parameters (the first 256 characters); or when, without a leading "…" and dashes,
    it is 6+ hex digits that end the job id's hex (32: the whole id). Adapters index each of
    these (a job transition must not pay a full-text write: only failures, asset creation and
    a request's parameters do). ``sort`` is one of :data:`JOB_SORTS`; ties break by job id.
    """

    state: int | None = None
    kind: str | None = None
    terms: tuple[str, ...] = ()
    requested_after: int | None = None
    requested_before: int | None = None
    finished_after: int | None = None
    finished_before: int | None = None
    sort: str = "requested"
    descending: bool = False


# JobQuery's sorts and the column each orders by, then by id ("requested": id alone, UUIDv7 request
# order; "finished": unfinished jobs first; "worker": the claim's worker by name, the rest last).
JOB_SORTS: dict[str, str] = {"requested": "id", "kind": "kind", "state": "state", "priority": "priority"}
JOB_SORTS |= {"finished": "finished_at", "worker": "claim_worker_id"}  # two phases each (storage.job_pages)
JobKey = tuple[str | int | None, bytes]  # (sort value, job id); None: "requested", or a job without one

RegisteredWorker = tuple[bytes, str, str | None, int, int, int, tuple[str, ...] | None]
RevisionHead = tuple[int, bytes, int, str | None, str | None, dict[str, int], bytes | None, str | None]
HistoryRow = tuple[int, int, str, str | None, str | None, str | None]  # ... origin, message, principal


class Reads(ProgressReads, OffersServiceReads, Protocol):
    """Committed state. Multi-statement reads inside ``snapshot()`` see one consistent state."""

    def snapshot(self) -> AbstractContextManager[object]: ...

    # production and clock
    def production_row(self) -> tuple[bytes, int, bytes]: ...
    def high_water(self) -> int | None: ...
    def mark_source(self, mark: int) -> MarkSource | None: ...

    # assets, representations, roots
    def asset(self, asset_id: AssetId) -> Asset: ...
    def assets(self, after: bytes | None, limit: int) -> list[Asset]: ...
    def assets_by_id(self, ids: Sequence[bytes]) -> list[Asset]: ...
    def representation(self, rep_id: RepresentationId) -> Representation: ...
    def representations(
        self, asset_id: AssetId | None, kind: int | None, after: bytes | None, limit: int
    ) -> list[Representation]: ...
    def representations_by_id(self, ids: Sequence[bytes]) -> list[Representation]: ...
    def media_roots(self) -> list[MediaRoot]: ...
    def media_root(self, name: str) -> MediaRoot | None: ...

    # activities and metadata
    def activity(self, activity_id: ActivityId) -> Activity: ...
    def activity_ids(self, kind: str | None, after: bytes | None, limit: int) -> list[ActivityId]: ...
    def edge_activities(self, rep_id: RepresentationId, direction: int) -> list[ActivityId]: ...
    def metadata(self, target_kind: int, target_id: bytes) -> list[tuple[str, str, str]]: ...

    # jobs, counts, pages
    def job(self, job_id: JobId) -> Job:
        """One job with its attempts and dependencies (:class:`Job` ``depends_on``,
        ``waiting_on``, ``blocked_by``, ``bound_inputs``, ``regenerates``), carrying this
        production's id; its ``inputs`` are the stored inputs plus every resolved binding
        (sorted). ``jobs`` and ``claims_expiring`` return jobs the same way."""
        ...

    def jobs(
        self,
        state: JobState | None,
        kind: str | None,
        after: bytes | None,
        limit: int,
        *,
        descending: bool = False,
    ) -> list[Job]: ...
    def search_jobs(
        self, query: JobQuery, after: JobKey | None, limit: int, window: int | None = None
    ) -> list[Job]:
        """Up to ``limit`` jobs matching ``query``, ordered by (sort column, id), ascending or
        (``query.descending``) descending, strictly after the keyset position ``after`` (the
        last row of the previous page, ``(value, id)``; the value is ignored for "requested";
        see :data:`JOB_SORTS` for where jobs without a value go).
        Never capped: a page is found through indexes (trigram full-text for ``terms``), not
        by reading a bounded window of jobs. With ``window``, only the first ``window`` jobs
        in that order that pass the other filters are tested against the terms (a bounded
        walk of the sort index, cheap when a term matches many jobs): the matches among them,
        which are the page itself when there are ``limit`` of them."""
        ...

    def failure_diagnostics(self, kind: str | None, limit: int) -> list[tuple[str, int, bytes, int]]:
        """Failed jobs (of ``kind``) grouped by exact diagnostic: ``(diagnostic, count, newest
        job id, newest finished_at)``, most frequent first, at most ``limit`` groups."""
        ...

    def claims_expiring(
        self, before: int, kind: str | None, after: tuple[int, bytes] | None, limit: int
    ) -> list[Job]: ...
    def job_counts(self, kind: str | None) -> dict[int, int]: ...
    def job_kinds(self) -> list[str]: ...
    def job_secret(self, job_id: JobId) -> tuple[int, bytes | None, int | None] | None:
        """(state, lease secret hash, expiry) of a job."""
        ...

    def completed_by(self, job_id: JobId) -> tuple[bytes, bytes] | None:
        """(completion representation, completing attempt's secret hash) of a succeeded job."""
        ...

    def registered_workers(self) -> list[RegisteredWorker]:
        """(id, name, host, registered_at, last_seen, capacity, kinds) of every registered
        worker, by name."""
        ...

    def running_claims(self, now: int) -> list[tuple[bytes, bytes]]:
        """(worker id, job id) of every claim a registered worker holds unexpired at ``now``,
        by worker id and job id."""
        ...

    def attempt_outcomes(self) -> list[tuple[bytes, int, int]]:
        """(worker id, outcome code, number of attempts) of registered workers' ended attempts."""
        ...

    def worker_attempts(self, name: str, limit: int) -> list[tuple[bytes, Attempt]]:
        """The newest attempts of a worker: (job id, attempt)."""
        ...

    def job_history(self, job_id: JobId) -> list[HistoryRow]:
        """A job's history events (``lifecycle.HISTORY_EVENT_KINDS``), oldest first, at most 1000."""
        ...

    def jobs_ahead(self, job_id: JobId, now: int, cap: int) -> int | None:
        """How many jobs a claim of the same kind would take before this one, counting at most
        ``cap``: requested jobs of its kind that wait on nothing, are claimable at ``now``
        (``not_before`` unset or at most ``now``) and come first in claim order (priority
        descending, then availability, then id). None when the job itself is not requested,
        waits on a dependency or is not claimable before ``now``."""
        ...

    # the revision feed
    def latest_sequence(self) -> int: ...
    def latest_revision(self) -> Revision | None: ...
    def revision_summaries(self, limit: int, before: int | None) -> list[RevisionHead]: ...
    def commit_times(self, sequences: Sequence[int]) -> list[tuple[int, int]]: ...
    def changes_since(
        self, sequence: int, limit: int, kinds: Sequence[str] | None
    ) -> tuple[list[Revision], int]: ...


class GraphFacts(Protocol):
    """Provenance facts, read in one snapshot per operation (``with graph.snapshot():``)."""

    def snapshot(self) -> AbstractContextManager[GraphFacts]: ...
    def exists(self, rep: bytes) -> bool: ...
    def output_edges(self, reps: Sequence[bytes]) -> list[tuple[bytes, bytes, Fingerprints | None]]:
        """(representation, producing activity, output-edge snapshot), by representation, activity, role."""
        ...

    def input_edges(self, activities: Sequence[bytes]) -> list[tuple[bytes, bytes, Fingerprints | None]]:
        """(activity, input representation, input-edge snapshot), by activity, representation, role."""
        ...

    def fingerprints(self, reps: Sequence[bytes]) -> list[tuple[bytes, str, int, bytes]]: ...
    def output_candidates(self, after: bytes | None, limit: int) -> list[bytes]: ...
    def supersessions(self, reps: Sequence[bytes]) -> list[tuple[bytes, bytes]]:
        """(representation, its ``superseded_by``) for those of ``reps`` that were superseded."""
        ...

    def walk(self, seeds: Sequence[bytes], *, downstream: bool, cap: int) -> tuple[list[bytes], bool]: ...
    def derivations(self, reps: Sequence[bytes]) -> list[tuple[bytes, bytes]]: ...
    def activities_of(self, reps: Sequence[bytes], direction: int) -> list[bytes]: ...
    def activity_edges(self, activities: Sequence[bytes]) -> dict[bytes, list[tuple[int, bytes, str]]]: ...
    def plan_facts(self, ids: Sequence[bytes]) -> PlanFacts: ...
    def producing_activity(self, rep: bytes) -> list[tuple[bytes, str, str | None]]: ...
    def has_metadata(self, target_kind: int, target: bytes) -> bool: ...
    def missing_inputs(self, activity: bytes) -> list[bytes]: ...
    def completing_jobs(self, activities: Sequence[bytes]) -> list[Job]:
        """The jobs completed by any of ``activities`` (without attempts or dependencies): by
        id within each chunk of the sorted activity ids."""
        ...

    def representations(self, ids: Sequence[bytes]) -> list[tuple[Representation, str | None]]: ...
    def activities(self, ids: Sequence[bytes]) -> list[Activity]: ...
    def all_ids(self, table: str, after: bytes | None, limit: int) -> list[bytes]: ...


class WriteSession(ProgressSession, OffersServiceSession, Protocol):
    """One edit. ``sequence`` marks the rows this edit writes (``created_sequence`` and the like
    equal it exactly for rows of this edit, and every earlier revision's number is smaller);
    after ``commit`` returned True it is the published revision's number. An engine may number
    at commit (PostgreSQL: edits run concurrently) or when the write lock is taken (SQLite).

    Every method is atomic: it changes all it says or nothing (a failed statement leaves the
    edit as it was), so the core takes savepoints only around several calls.
    """

    sequence: int
    stored_high_water: int | None
    staged: list[RevisionEvent]

    # atomic operations
    def mark(self) -> object:
        """A position in the staged events, for an operation that writes at most one row."""
        ...

    def rewind(self, mark: object) -> None: ...
    def savepoint(self) -> object: ...
    def release_savepoint(self, token: object) -> None: ...
    def rollback_savepoint(self, token: object) -> None: ...
    def event(self, kind: str, subject: bytes | None, payload: dict[str, Any]) -> None:
        """Stage a revision event (written with the revision at commit)."""
        ...

    # setup and files
    def insert_asset(self, asset_id: bytes, name: str | None, now: int) -> None: ...
    def media_root_path(self, name: str) -> tuple[str | None] | None:
        """``(stored path,)`` of a root as this edit sees it, or None when it does not exist."""
        ...

    def insert_media_root(self, root_id: bytes, name: str, path: str | None) -> None: ...
    def insert_representation(
        self,
        rep_id: bytes,
        asset_id: bytes,
        kind: int,
        path: str,
        root: str | None,
        size: int,
        mtime: int,
        now: int,
        fingerprint: Fingerprint,
    ) -> bool:
        """Insert a representation and its first fingerprint; False when its asset or root is absent."""
        ...

    def location(self, rep_id: bytes) -> tuple[str, str | None] | None: ...
    def update_file_facts(self, rep_id: bytes, size: int, mtime: int) -> None: ...
    def set_fingerprint(self, rep_id: bytes, fingerprint: Fingerprint) -> bool: ...
    def missing(self, table: str, ids: Sequence[bytes]) -> list[bytes]: ...

    # provenance and metadata
    def outputs_consumed(self, outputs: Sequence[bytes]) -> bool: ...
    def creates_cycle(self, inputs: Sequence[bytes], outputs: Sequence[bytes]) -> bool: ...
    def insert_activity(
        self, activity_id: bytes, spec: ActivitySpec, started: int | None, finished: int | None
    ) -> bool:
        """Insert an activity and its edges; False when an edge's representation is absent."""
        ...

    def insert_metadata(
        self, target_kind: int, target_id: bytes, vocabulary: str, name: str, value: str
    ) -> None: ...
    def activity_facts(self, activity_id: bytes) -> ActivityFacts | None: ...

    def output_facts(self, rep_id: bytes) -> OutputFacts | None: ...

    # jobs and leases (``secret`` is always the SHA-256 hash of a lease secret)
    def insert_job(
        self,
        job_id: bytes,
        request: JobRequest,
        now: int,
        not_before: int | None,
        digest: bytes | None,
        waiting: int = 0,
    ) -> bool:
        """Insert a requested job; False (nothing written) when an input representation, the
        output asset or the target root is absent.

        The job stores ``request.representation_inputs`` as its inputs, ``request.regenerates``
        and one dependency row per ``request.dependencies`` (``binds_output`` for the jobs of
        ``request.bound_outputs``, unresolved); ``dependencies`` is their number and
        ``waiting`` (given by the caller, who checked every upstream exists) how many of them
        have not succeeded. A job with ``waiting > 0`` is not claimable.
        """
        ...

    def job_states(self, job_ids: Sequence[bytes]) -> dict[bytes, int]:
        """The state code of each of ``job_ids`` that exists (absent ids are left out)."""
        ...

    def move_dependents(self, old: bytes, new: bytes) -> int:
        """Point every dependency on job ``old`` (its output binding included) at job ``new``;
        how many moved. Waiting counts stay: neither job has succeeded."""
        ...

    def supersede(self, rep_id: bytes, replacement: bytes) -> bytes | None:
        """Set ``superseded_by = replacement`` on ``rep_id`` or, when it is superseded already,
        on the newest representation of its chain (follow ``superseded_by`` to the end); the
        id updated, or None when ``rep_id`` does not exist."""
        ...

    def idempotent_job(self, key: str) -> tuple[bytes, bytes] | None: ...
    def lease_row(self, job_id: bytes) -> LeaseRow | None:
        """The stored claim of a job (inputs include its resolved bindings), None when absent."""
        ...

    def claim(
        self,
        job_id: bytes,
        secret: bytes,
        tool: ToolIdentity,
        agent: AgentIdentity | None,
        worker: tuple[bytes, bytes] | None,
        now: int,
        expires: int,
    ) -> int | None:
        """Claim one job and start its attempt (ending a running one as lost); the attempt number.

        Claimable: requested, waiting on no dependency (``waiting = 0``) and not before its
        ``not_before``, or claimed with an expired lease. In the same atomic step each output
        binding of the job not resolved yet records its upstream job's completion
        representation as its resolution (every upstream has succeeded by then).
        """
        ...

    def claim_next(
        self,
        kinds: Sequence[str] | None,
        secret: bytes,
        tool: ToolIdentity,
        agent: AgentIdentity | None,
        worker: tuple[bytes, bytes] | None,
        now: int,
        expires: int,
    ) -> tuple[bytes, int] | None:
        """Claim the first claimable job (priority desc, availability, id): (job id, attempt).

        Claimability and binding resolution as :meth:`claim`; one index probe per kind.
        """
        ...

    def renew(self, job_id: bytes, secret: bytes, now: int, expires: int) -> bool: ...
    # release, fail and succeed end the attempt by its holder: ``stopped_at`` = ``ended_at``
    def release(self, job_id: bytes, secret: bytes, now: int) -> bool: ...
    def fail(self, job_id: bytes, secret: bytes, now: int, diagnostic: str, *, retry: bool) -> bool: ...
    def succeed(self, job_id: bytes, secret: bytes, now: int, activity_id: bytes, rep_id: bytes) -> bool:
        """Mark the held job succeeded with its completion; in the same atomic step every job
        that depends on it waits on one job fewer (``waiting - 1``)."""
        ...

    def cancel(self, job_id: bytes, now: int) -> bool:
        """Cancel a requested or claimed job (False in any other state). A running attempt ends
        at once: ``cancelled`` with ``stop_by`` = the lease's expiry when the lease is live (its
        holder is asked to stop and confirm), ``lost`` when the lease had expired."""
        ...

    def requeue(self, job_id: bytes, now: int) -> bool:
        """Return a claimed job to requested (False otherwise); its attempt ends like a cancel's
        but ``released`` instead of ``cancelled``."""
        ...

    def set_priority(self, job_id: bytes, priority: int) -> bool: ...
    def claims_expiring(self, before: int, limit: int) -> list[ExpiringClaim]:
        """Claims whose lease expires at or before ``before``, soonest first (then by job id)."""
        ...

    def finalize_lost(self, job_id: bytes, attempt: int, now: int, diagnostic: str | None) -> bool: ...
    def end_missed_stops(self, now: int, limit: int) -> list[tuple[bytes, int]]:
        """End as ``lost`` up to ``limit`` attempts a cancel or requeue asked to stop whose holder
        did not confirm before ``stop_by <= now`` (soonest first); (job id, attempt number) each."""
        ...

    def link_retry(self, original: bytes, retry: bytes) -> None: ...
    def completed_by(self, job_id: bytes) -> tuple[int, bytes | None, bytes | None] | None: ...

    # reads inside the edit
    def job(self, job_id: bytes) -> Job | None:
        """A job as this edit sees it, with its dependencies (no attempts, no production id)."""
        ...

    def metadata(self, target_kind: int, target_id: bytes) -> list[tuple[str, str, str]]: ...

    # the clock
    def reset_clock(self, now: int) -> tuple[int | None, list[bytes]]:
        """Lower the durable high-water mark to ``now`` (this revision carries it) and requeue
        every claim granted after ``now`` (ending its attempt ``released``); (old mark, requeued)."""
        ...

    # workers (stored state, not revisions)
    def register_worker(
        self,
        worker_id: bytes,
        name: str,
        session: bytes,
        capacity: int,
        kinds: Sequence[str] | None,
        host: str | None,
        now: int,
    ) -> bytes: ...
    def heartbeat(self, worker_id: bytes, session: bytes, now: int) -> bool: ...
    def worker_facts(self, worker_id: bytes, now: int) -> WorkerFacts | None: ...
    def fingerprints_changed_after(self, rep_ids: Sequence[bytes], sequence: int) -> ChangedInput | None: ...

    # ending
    def commit(
        self,
        committed_at: int,
        revision_id: bytes,
        origin: str | None,
        message: str | None,
        high_water: int | None,
        principal: str | None = None,
    ) -> bool: ...
    def rollback(self, high_water: int | None) -> None: ...


class Engine(Protocol):
    """One open production on one database."""

    location: str  # what errors and titles show: a file path, or a URI without its password
    possibly_stale: bool  # a read-only open that cannot read committed changes (SQLite's WAL)

    @property
    def reads(self) -> Reads: ...
    @property
    def graph(self) -> GraphFacts: ...
    def begin_write(self, busy_timeout: float) -> WriteSession: ...
    def change_token(self) -> object:
        """A cheap value that differs once anything new has committed (any process)."""
        ...

    def wait_for_change(self, token: object, timeout: float) -> None:
        """Sleep up to ``timeout`` seconds or until ``change_token()`` may differ from ``token``."""
        ...

    def notify_committed(self) -> None:
        """Wake this process's waiters after a commit through this engine."""
        ...

    def clock(self) -> Clock | None:
        """The production's clock when the caller injected none: a server's time (skewed hosts
        then agree); None for the local wall clock. Reading it must not cost a round trip."""
        ...

    def close(self) -> None: ...

    # moving a production between engines (``postproject copy`` / ``verify``)
    def schema_version(self) -> int: ...
    def export_tables(self, *, derived: bool = False) -> Iterator[TableDump]:
        """Every stored table in an order that satisfies its references, as neutral rows:
        ids as 16-byte ``bytes``, times and numbers as ``int``, text and JSON as ``str``.
        ``derived`` adds the tables the engine maintains itself (job counts)."""
        ...

    def import_tables(self, tables: Iterable[TableDump]) -> None:
        """Load another production's :meth:`export_tables` into this empty one, in one
        transaction (its production row is replaced by the source's: same id and cursors).

        Raises:
            ConflictError: (conflict, reason ``not_empty``) this production holds anything.
            UnsupportedError: (unsupported) a table or column this schema does not have.
        """
        ...


@dataclass(frozen=True, slots=True)
class TableDump:
    """One table of a production in neutral form (see :meth:`Engine.export_tables`)."""

    name: str
    columns: tuple[str, ...]
    rows: Iterable[tuple[Any, ...]]
