"""Productions: assets, representations, provenance, metadata and jobs in one store.

A :class:`Production` reads committed state through its engine (a ``*.pproj`` SQLite file or
a PostgreSQL schema), writes only through :meth:`Production.edit`; many processes may open one.

:class:`Production` is a facade over its handle (:class:`postproject.base.handle.ProductionHandle`:
engine, clock, cursors, roots, write lock): every read goes to one object per area of
:mod:`postproject.areas` (setup, provenance, metadata, job_reads, workers, pending, attempts,
feed, knowledge; ``production.access``: API tokens, recorded replies), each built here.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path

from postproject import locations
from postproject.areas.access import AccessReads
from postproject.areas.attempts import AttemptReads
from postproject.areas.feed import FeedReads
from postproject.areas.job_reads import JobReads
from postproject.areas.knowledge import KnowledgeReads
from postproject.areas.metadata import MetadataView
from postproject.areas.pending import PendingReads
from postproject.areas.provenance import ProvenanceReads
from postproject.areas.search import FailureGroup
from postproject.areas.setup import SetupReads
from postproject.areas.workers import WorkerReads
from postproject.base.handle import ProductionHandle, sample
from postproject.base.leases import ClaimedWork, JobLease
from postproject.engine import Engine
from postproject.knowledge.evaluation import ArtifactKnowledge, StalePage
from postproject.knowledge.provenance import ProvenanceGraph
from postproject.knowledge.regeneration import DownstreamRegeneration, RegenerationPlan, Reproducibility
from postproject.model import clock as clocks
from postproject.model import names
from postproject.model.activities import Activity
from postproject.model.assets import Asset, Availability, MediaRoot, Representation, RepresentationKind
from postproject.model.errors import ConflictError, InvalidArgumentError, Reason, UnsupportedError
from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.model.ids import ActivityId, AssetId, JobId, ProductionId, RepresentationId
from postproject.model.jobs import Attempt, Job
from postproject.model.lifecycle import JobState
from postproject.model.pages import Page
from postproject.model.pending import PendingExplanation
from postproject.model.progress import AttemptLog
from postproject.model.revisions import Changes, JobHistoryEntry, Revision, RevisionSummary
from postproject.model.workers import Worker, WorkerSession
from postproject.transaction import Transaction, claim_next_committed, claim_next_work

DEFAULT_BUSY_TIMEOUT = 10.0


class Production:
    """An open production. Use :meth:`create` or :meth:`open`; close it (or use ``with``)."""

    def __init__(
        self,
        engine: Engine,
        *,
        clock: clocks.Clock | None,
        read_only: bool,
        root_map: Mapping[str, str | os.PathLike[str]] | None,
        busy_timeout: float,
    ) -> None:
        try:
            if clock is not None and not isinstance(clock, clocks.Clock):
                raise InvalidArgumentError("clock must have a now() method returning an aware datetime")
            roots = {names.root_name("root map name", k): Path(v) for k, v in (root_map or {}).items()}
            self._handle = ProductionHandle(
                engine,
                clock=clock or engine.clock() or clocks.SystemClock(),
                read_only=read_only,
                root_map=roots,
                busy_timeout=busy_timeout,
            )
        except BaseException:
            engine.close()
            raise
        self._location = engine.location
        self._file = not locations.is_location_uri(engine.location)
        handle = self._handle
        self.metadata = MetadataView(handle)
        self.access = AccessReads(handle)
        self._setup = SetupReads(handle)
        self._provenance = ProvenanceReads(handle)
        self._jobs = JobReads(handle)
        self._workers = WorkerReads(handle)
        self._pending = PendingReads(handle, self._workers)
        self._attempts = AttemptReads(handle)
        self._feed = FeedReads(handle)
        self._knowledge = KnowledgeReads(handle)

    # --- lifecycle ---------------------------------------------------------------------

    @classmethod
    def create(
        cls, path: str | os.PathLike[str], *, clock: clocks.Clock | None = None,
        root_map: Mapping[str, str | os.PathLike[str]] | None = None,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT, allow_injected_clock: bool = False,
    ) -> Production:  # fmt: skip
        """Create a new, empty production (no revision yet) and open it for writing.

        ``path`` is a ``*.pproj`` file path, or a ``postgresql://`` URI whose ``production=NAME``
        parameter names the schema (default ``postproject``) holding it.

        Raises:
            AlreadyExistsError: (already_exists) a file exists at ``path``.
            IoError: (io) the file cannot be created.
        """
        locations.check_injected_clock(path, clock, allowed=allow_injected_clock)
        now = clocks.to_micros(sample(clock)) if clock is not None else None  # None: the engine's clock
        engine = locations.create_engine(path, ProductionId.new().bytes, now)
        return cls(engine, clock=clock, read_only=False, root_map=root_map, busy_timeout=busy_timeout)

    @classmethod
    def open(
        cls, path: str | os.PathLike[str], *, clock: clocks.Clock | None = None, read_only: bool = False,
        root_map: Mapping[str, str | os.PathLike[str]] | None = None,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT, allow_injected_clock: bool = False,
    ) -> Production:  # fmt: skip
        """Open an existing production (migrating an older schema when writable; on PostgreSQL a
        ``clock`` needs ``allow_injected_clock``, for tests: time is the server's).

        Raises:
            NotFoundError: (not_found) nothing at ``path``.
            StorageError: (storage) the file is not a production or is corrupt.
            UnsupportedError: (unsupported) its schema is newer than this release.
        """
        locations.check_injected_clock(path, clock, allowed=allow_injected_clock)
        engine = locations.open_engine(path, read_only=read_only)
        return cls(engine, clock=clock, read_only=read_only, root_map=root_map, busy_timeout=busy_timeout)

    def close(self) -> None:
        """Close the production's connections (idempotent)."""
        self._handle.close()

    def __enter__(self) -> Production:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Production({self._handle.location!r}, id={self.id})"

    @property
    def id(self) -> ProductionId:
        return self._handle.production_id

    @property
    def location(self) -> str:
        """Where the production lives: its file path, or its URI without a password."""
        return self._location

    @property
    def path(self) -> Path:
        """The production file (``unsupported`` for a production in a database: see ``location``)."""
        if not self._file:
            raise UnsupportedError(
                f"production {self._location} is in a database, not a file; use its location",
                reason=Reason.NOT_A_FILE,
            )
        return Path(self._location)

    @property
    def read_only(self) -> bool:
        return self._handle.read_only

    @property
    def clock(self) -> clocks.Clock:
        return self._handle.clock

    @property
    def closed(self) -> bool:
        return self._handle.closed

    @property
    def possibly_stale(self) -> bool:
        """A read-only view that may miss committed revisions (a SQLite WAL it cannot read)."""
        return self._handle.engine.possibly_stale

    def __production_handle__(self) -> ProductionHandle:
        """The internal handle, for core code given a ``Production`` (``ProductionHandle.of``); not public."""
        return self._handle

    # --- writing -----------------------------------------------------------------------

    def edit(
        self, *, origin: str | None = None, message: str | None = None, principal: str | None = None,
        defer_lease_checks: bool = False,
    ) -> Transaction:  # fmt: skip
        """Start a transaction; use it as a context manager and call ``commit()``.

        Args:
            origin: the application making the change (e.g. ``postproject-cli 0.1.0``).
            message: a human note stored with the revision (1-4096 bytes).
            principal: who it acts for, authenticated (the service: the API token's name).
            defer_lease_checks: a worker's completion: where this process claimed the job (or
                read its claim) and nothing changed it since here, ``complete_job_lease`` checks
                the lease at ``commit()`` instead, sent with it (PostgreSQL: one round trip, not
                two): a lost lease or a changed input then raises the same error from ``commit()``,
                which publishes nothing. On SQLite the checks stay where they are.
        """
        self._handle.check_open()
        if self._handle.read_only:
            raise ConflictError(f"production {self._location} is open read-only", reason=Reason.READ_ONLY)
        for what, text, limit in (
            ("origin", origin, 512),
            ("message", message, 4096),
            ("principal", principal, 128),
        ):
            if text is not None:
                names.bounded_text(f"revision {what}", text, limit)
        return Transaction(
            self, self._handle, origin=origin, message=message, principal=principal,
            defer_lease_checks=defer_lease_checks,
        )  # fmt: skip

    def claim_next_job_lease(
        self, tool: ToolIdentity, duration: object, *, kinds: Sequence[str] | None = None,
        agent: AgentIdentity | None = None, worker: WorkerSession | None = None,
        origin: str | None = None, message: str | None = None,
    ) -> JobLease | None:  # fmt: skip
        """``Transaction.claim_next_job_lease`` in an edit of its own, committed on return (a
        worker's claim: same arguments, rules and errors, the revision's ``origin`` and
        ``message``). On PostgreSQL it is one server call, claim and commit (else the claim
        and its commit are two round trips), and this process keeps the claim's lease row for
        a completion in an edit opened with ``defer_lease_checks``; on SQLite, an edit."""
        with self.edit(origin=origin, message=message) as tx:
            lease = claim_next_committed(tx, tool, duration, kinds, agent, worker)
            tx.commit()
        return lease

    def claim_next_job(
        self, tool: ToolIdentity, duration: object, *, kinds: Sequence[str] | None = None,
        agent: AgentIdentity | None = None, worker: WorkerSession | None = None,
        origin: str | None = None, message: str | None = None,
    ) -> ClaimedWork | None:  # fmt: skip
        """:meth:`claim_next_job_lease` with the job and its parameters as the claim left them
        (what a worker reads next: on PostgreSQL read in the claim's one round trip)."""
        return claim_next_work(self, tool, duration, kinds, agent, worker, origin, message)

    # --- paths -------------------------------------------------------------------------

    def root_path(self, name: str) -> Path | None:
        """This machine's directory for a media root (the root map wins over the stored path)."""
        return self._handle.root_path(name)

    def resolve(self, representation: Representation) -> Path | None:
        """The representation's file on this machine (None when its root is not mapped)."""
        return self._handle.resolve(representation)

    def availability(self, representation_id: RepresentationId) -> Availability:
        """Online when the representation's file exists here as a regular file."""
        return self._setup.availability(representation_id)

    # --- reads: assets, representations, media roots -----------------------------------

    def asset(self, asset_id: AssetId) -> Asset:
        return self._setup.asset(asset_id)

    def assets_by_id(self, asset_ids: Iterable[AssetId]) -> dict[AssetId, Asset]:
        """The assets among ``asset_ids`` that exist, by id, read together (an id that names no
        asset is left out): what a view naming many assets at once reads instead of one
        :meth:`asset` each."""
        return self._setup.assets_by_id(asset_ids)

    def assets(self, limit: int = 100, cursor: str | None = None) -> Page[Asset]:
        """Assets in id (creation) order."""
        return self._setup.assets(limit, cursor)

    def representation(self, representation_id: RepresentationId) -> Representation:
        return self._setup.representation(representation_id)

    def representations_by_id(
        self, representation_ids: Iterable[RepresentationId]
    ) -> dict[RepresentationId, Representation]:
        """The representations among ``representation_ids`` that exist, by id, read together
        (an id that names none is left out)."""
        return self._setup.representations_by_id(representation_ids)

    def representations(
        self,
        asset_id: AssetId | None = None,
        kind: RepresentationKind | None = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> Page[Representation]:
        """Representations (optionally of one asset and/or kind) in id order."""
        return self._setup.representations(asset_id, kind, limit, cursor)

    def media_roots(self) -> tuple[MediaRoot, ...]:
        return self._setup.media_roots()

    # --- reads: activities -------------------------------------------------------------

    def activity(self, activity_id: ActivityId) -> Activity:
        return self._provenance.activity(activity_id)

    def activities(
        self, limit: int = 100, cursor: str | None = None, kind: str | None = None
    ) -> Page[Activity]:
        """Activities (optionally of one kind) in id order."""
        return self._provenance.activities(limit, cursor, kind)

    def producing_activities(self, representation_id: RepresentationId) -> tuple[ActivityId, ...]:
        """Activities that output the representation (normally one)."""
        return self._provenance.producing_activities(representation_id)

    def consuming_activities(self, representation_id: RepresentationId) -> tuple[ActivityId, ...]:
        """Activities that used the representation as an input (up to 1000)."""
        return self._provenance.consuming_activities(representation_id)

    # --- reads: jobs -------------------------------------------------------------------

    def job(self, job_id: JobId) -> Job:
        """One job (not_found when absent)."""
        return self._jobs.job(job_id)

    def jobs(
        self, limit: int = 100, cursor: str | None = None, state: JobState | None = None, kind: str | None = None,
        *, newest_first: bool = False, search: str | None = None, requested_after: datetime | None = None,
        requested_before: datetime | None = None, finished_after: datetime | None = None,
        finished_before: datetime | None = None, sort: str = "requested", descending: bool | None = None,
    ) -> Page[Job]:  # fmt: skip
        """A keyset page of jobs, by default in id order (ids are time-ordered: request order).

        Filters are exact; ``state=CLAIMED`` includes claims whose lease expired. ``search``
        finds jobs over the whole store (indexed): each whitespace-separated term is a
        case-insensitive substring of the job's kind, output asset name, an agent or worker of
        its attempts, its failure diagnostic or a string value of its parameters (a ticket), or
        the tail (6+ hex digits) of its id. ``requested_*``/``finished_*`` bound when it was
        requested or reached a final state (``*_after`` inclusive, ``*_before`` exclusive).
        ``sort``: "requested", "kind", "state", "priority", "finished" (unfinished jobs first)
        or "worker" (the claim's worker by name, the rest last), ties by id; ``descending``
        (default ``newest_first``) reverses it. Cursors are bound to the production and options.
        """
        return self._jobs.jobs(
            limit, cursor, state, kind, search=search, requested_after=requested_after,
            requested_before=requested_before, finished_after=finished_after, finished_before=finished_before,
            sort=sort, descending=newest_first if descending is None else descending,
        )  # fmt: skip

    def failure_groups(self, kind: str | None = None, limit: int = 100) -> tuple[FailureGroup, ...]:
        """Failed jobs grouped by reason (a normalised first line of the diagnostic), largest
        first: ``group.summary()`` reads "37 failed: unsupported profile #". List a group's
        jobs with ``jobs(state=JobState.FAILED, search=group.search)``."""
        return self._jobs.failure_groups(kind, limit)

    def claims_expiring(
        self,
        before: datetime | None = None,
        limit: int = 100,
        cursor: str | None = None,
        *,
        kind: str | None = None,
    ) -> Page[Job]:
        """Claimed jobs whose lease expires at or before ``before``, soonest-expired first.

        The default bound is now: the stuck claims. A cursor keeps the bound of its first page,
        so paging with the default does not drift as time passes.
        """
        return self._jobs.claims_expiring(before, limit, cursor, kind=kind)

    def job_counts(self, kind: str | None = None) -> dict[JobState, int]:
        """How many jobs are in each state (maintained counts: constant time)."""
        return self._jobs.job_counts(kind)

    def job_kinds(self) -> tuple[str, ...]:
        """The kinds of the jobs in this production."""
        return self._jobs.job_kinds()

    def job_history(self, job_id: JobId) -> tuple[JobHistoryEntry, ...]:
        """Every lifecycle event of a job, oldest first, with its revision's time, origin and message."""
        return self._jobs.job_history(job_id)

    # --- reads: workers and why jobs wait ----------------------------------------------

    def workers(self) -> list[Worker]:
        """Every registered worker, by name, with liveness derived from its last heartbeat."""
        return self._workers.workers()

    def worker_attempts(self, name: str, limit: int = 100) -> tuple[tuple[JobId, Attempt], ...]:
        """The newest attempts of the worker ``name``: (job id, attempt), newest first."""
        return self._workers.worker_attempts(name, limit)

    def explain_pending(self, job_id: JobId) -> PendingExplanation:
        """Why a job is still requested, in plain words with ids (read-only).

        Reasons, in this order: each job it waits on (``waiting_on``), each failed or
        cancelled job that blocks it (``blocked_by``), its ``not_before`` when that is later
        than now, ``no_online_worker`` when no online registered worker takes its kind, and,
        when nothing else holds it back, how many claimable jobs of its kind come first
        (``jobs_ahead``, counted up to 10 000). A job in any other state gets one
        ``not_pending`` reason.

        Raises:
            NotFoundError: (not_found) no such job.
            InvalidArgumentError: (invalid_argument) not a JobId.
        """
        return self._pending.explain_pending(job_id)

    # --- reads: progress and attempt logs ----------------------------------------------

    def progress_token(self) -> int:
        """The progress signal's current value: it moves when a progress report signals (at
        most once per running attempt per second); compare it with an earlier value."""
        return self._attempts.progress_token()

    def wait_for_progress(
        self, after_token: int, timeout: float | timedelta, *, stop: threading.Event | None = None
    ) -> int:
        """Block until the progress signal differs from ``after_token`` (or ``timeout`` passes,
        or ``stop`` is set); returns the current token. Another process's report is noticed
        within a few tens of milliseconds (the engine's change notifications: on PostgreSQL a
        signalling report NOTIFYs, so nothing is polled)."""
        return self._attempts.wait_for_progress(after_token, timeout, stop=stop)

    def attempt_log(self, job_id: JobId, attempt: int | None = None) -> AttemptLog:
        """The log of a job's attempt ``attempt`` (its newest when None): where the full log
        lives and the stored tail (None while the attempt runs).

        Raises:
            NotFoundError: (not_found) no such job, or the job has no such attempt.
        """
        return self._attempts.attempt_log(job_id, attempt)

    def log_file(self, log: AttemptLog) -> Path | None:
        """The attempt's full log here, confined to its media root (None: no path, no root here, or
        a path leaving it). Read it with :func:`postproject.base.files.read_regular` (bounded)."""
        return self._attempts.log_file(log)

    # --- the revision feed -------------------------------------------------------------

    def latest_sequence(self) -> int:
        """The newest revision's sequence (0 when there is none); never loads events."""
        return self._feed.latest_sequence()

    def revisions(self, limit: int = 100, before: int | None = None) -> tuple[RevisionSummary, ...]:
        """Revision headers, newest first (those before sequence ``before``), with event counts
        per kind instead of the events themselves (a bulk edit may hold millions)."""
        return self._feed.revisions(limit, before)

    def commit_times(self, sequences: Iterable[int]) -> dict[int, datetime]:
        """When each revision numbered in ``sequences`` committed, read together (a number no
        revision has is left out)."""
        return self._feed.commit_times(sequences)

    def latest_revision(self) -> Revision | None:
        """The newest revision, or None for a production nobody has changed yet."""
        return self._feed.latest_revision()

    def changes_since(self, sequence: int, limit: int = 100, kinds: Iterable[str] | None = None) -> Changes:
        """Revisions after ``sequence``, oldest first, with their events.

        With ``kinds``, only revisions holding at least one event of those kinds are returned
        (with all their events); ``through_sequence`` tells how far the page covered.
        """
        return self._feed.changes_since(sequence, limit, kinds)

    def wait_for_changes(
        self, after_sequence: int, timeout: float | timedelta, *, limit: int = 100,
        kinds: Iterable[str] | None = None, stop: threading.Event | None = None,
    ) -> Changes:  # fmt: skip
        """Block until revisions after ``after_sequence`` exist (or ``timeout`` passes, or
        ``stop`` is set by another thread).

        Another process's commit is noticed within a few tens of milliseconds, and the feed is
        read again only when something committed: on SQLite the wait probes ``PRAGMA
        data_version`` (microseconds per probe) with a 5-50 ms backoff; on PostgreSQL it sleeps
        until a LISTEN/NOTIFY notification (no table is polled while the notifications are
        heard). Commits from this process wake it at once.

        Args:
            timeout: seconds (or a timedelta) from 0 to 60; 0 checks once.
        """
        return self._feed.wait_for_changes(after_sequence, timeout, limit=limit, kinds=kinds, stop=stop)

    def wait_for_activity(
        self, after_sequence: int, after_progress: int, timeout: float | timedelta, *, limit: int = 100,
        stop: threading.Event | None = None, heartbeat: Callable[[], object] | None = None,
    ) -> tuple[Changes, int]:  # fmt: skip
        """Block until revisions after ``after_sequence`` exist or the progress signal
        (:meth:`progress_token`) differs from ``after_progress`` (or ``timeout`` passes, or
        ``stop`` is set); (the changes, the current progress token). What a monitor follows:
        one wait for both, woken like :meth:`wait_for_changes`, reading nothing while nothing
        commits (on PostgreSQL) however long the timeout.

        Args:
            timeout: seconds (or a timedelta) from 0 to 60; 0 checks once.
            heartbeat: called every few tens of milliseconds while the wait is alive and
                nothing changed, so a caller can tell a quiet production from a hung one.
        """
        return self._feed.wait_for_activity(
            after_sequence, after_progress, timeout, limit=limit, stop=stop, heartbeat=heartbeat
        )

    # --- knowledge ---------------------------------------------------------------------

    def evaluate_artifact(
        self,
        representation_id: RepresentationId,
        *,
        max_depth: int = 64,
        max_representations: int = 1000,
    ) -> ArtifactKnowledge:
        """Whether an artifact still matches its recorded inputs: current, stale, indeterminate, diverged.

        Read-only (one snapshot, no file I/O, no revision); recurses upstream only through
        inputs that have a producer; truncation yields indeterminate, never current.

        Args:
            max_depth: upstream levels to follow (1-64).
            max_representations: representations to evaluate at most (1-1000).

        Raises:
            NotFoundError: (not_found) the representation does not exist.
            InvalidArgumentError: (invalid_argument) a bad id type or a bound out of range.
        """
        return self._knowledge.evaluate_artifact(
            representation_id, max_depth=max_depth, max_representations=max_representations
        )

    def stale_artifacts(
        self, limit: int = 100, cursor: str | None = None, source: RepresentationId | None = None,
        *, include_superseded: bool = False,
    ) -> StalePage:  # fmt: skip
        """A page of stale or diverged artifacts, examining ``limit`` candidates in id order.

        Candidates are activity outputs, or the provenance descendants of ``source``; a page
        may hold fewer items than ``limit`` (even none) and still have a ``next_cursor``.
        Superseded artifacts (replaced by a regeneration) are left out unless
        ``include_superseded``.

        Raises:
            NotFoundError: (not_found) ``source`` does not exist.
            InvalidArgumentError: (invalid_argument) bad limit, or a cursor from another query.
        """
        return self._knowledge.stale_artifacts(limit, cursor, source, include_superseded=include_superseded)

    def reproducibility(self, representation_id: RepresentationId) -> Reproducibility:
        """Every condition missing to reproduce an artifact (no producer, ambiguous producer,
        tool identity, parameters, an input).

        Raises:
            NotFoundError: (not_found) the representation does not exist.
        """
        return self._knowledge.reproducibility(representation_id)

    def plan_regeneration(
        self, artifact_ids: Iterable[RepresentationId], *, current_inputs: bool = False
    ) -> tuple[RegenerationPlan, ...]:
        """Propose one requested job per distinct artifact, ordered by artifact id (read-only).

        A plan repeats the producing activity's inputs and lists those that were superseded
        in ``plan.superseded_inputs``; with ``current_inputs`` it takes each superseded input's
        current replacement instead. Each plan's job records the artifact it regenerates.
        All or nothing: the first artifact that cannot be planned fails the call.

        Raises:
            InvalidArgumentError: (invalid_argument) more than 100 000 ids, or a non-id.
            NotFoundError: (not_found) an artifact does not exist.
            ConflictError: (conflict) an artifact has no or several producing activities
                (reason ``producing_activity_missing`` / ``producing_activity_ambiguous``).
        """
        return self._knowledge.plan_regeneration(artifact_ids, current_inputs=current_inputs)

    def plan_downstream_regeneration(
        self, representation_id: RepresentationId, *, current_inputs: bool = True
    ) -> DownstreamRegeneration:
        """Plans for every stale or diverged descendant of a changed representation, inputs first.

        Superseded descendants need no plan. Plans use the current replacement of every
        superseded input (``current_inputs=False`` repeats the recorded inputs instead);
        enqueue them with ``transaction.enqueue_plans`` so each plan's inputs that another
        plan regenerates are bound to that job's output. Descendants that cannot be planned
        are listed in ``unplannable`` instead of failing.

        Raises:
            NotFoundError: (not_found) the representation does not exist.
        """
        return self._knowledge.plan_downstream_regeneration(representation_id, current_inputs=current_inputs)

    def provenance(
        self,
        representation_id: RepresentationId,
        *,
        upstream: int = 3,
        downstream: int = 3,
        limit: int = 500,
        check_files: bool = True,
    ) -> ProvenanceGraph:
        """A bounded provenance graph around a representation, for drawing.

        Args:
            upstream: activity hops towards inputs (0-64).
            downstream: activity hops towards outputs (0-64).
            limit: nodes at most (1-5000); ``truncated`` tells when it cut the graph.
            check_files: fill each representation's availability (stats files) or leave it None.

        Raises:
            NotFoundError: (not_found) the representation does not exist.
            InvalidArgumentError: (invalid_argument) a bound out of range.
        """
        return self._knowledge.provenance(
            representation_id, upstream=upstream, downstream=downstream, limit=limit, check_files=check_files
        )
