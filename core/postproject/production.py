"""Productions: assets, representations, provenance, metadata and jobs in one store.

A :class:`Production` reads committed state through its engine (a ``*.pproj`` SQLite file or
a PostgreSQL schema), writes only through :meth:`Production.edit`; many processes may open one.

:class:`Production` is a facade over its handle (:class:`postproject.base.handle.ProductionHandle`:
engine, clock, cursors, roots, write lock): every read goes to one object per area of
:mod:`postproject.areas` (setup, provenance, metadata, job_reads, workers, pending, attempts,
feed, knowledge; ``production.access``: API tokens, recorded replies). The reads that go
straight to one area are in :mod:`postproject.reading`, which it builds on; here are
its lifecycle, its writing (edits, a worker's one-call claim) and its knowledge.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path

from postproject import locations
from postproject.areas.access import AccessReads
from postproject.areas.knowledge import KnowledgeReads
from postproject.areas.metadata import MetadataView
from postproject.base.handle import ProductionHandle, sample
from postproject.base.leases import ClaimedWork, JobLease
from postproject.completion import complete_work
from postproject.engine import Engine
from postproject.knowledge.evaluation import ArtifactKnowledge, StalePage
from postproject.knowledge.provenance import ProvenanceGraph
from postproject.knowledge.regeneration import DownstreamRegeneration, RegenerationPlan, Reproducibility
from postproject.model import clock as clocks
from postproject.model import names
from postproject.model.assets import RepresentationKind
from postproject.model.errors import ConflictError, InvalidArgumentError, Reason, UnsupportedError
from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.model.ids import ProductionId, RepresentationId
from postproject.model.jobs import JobCompletion
from postproject.model.metadata import Property
from postproject.model.workers import WorkerSession
from postproject.reading import ProductionReads
from postproject.transaction import Transaction, claim_next_committed, claim_next_work

DEFAULT_BUSY_TIMEOUT = 10.0


class Production(ProductionReads):
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
        super().__init__(handle)
        self._knowledge = KnowledgeReads(handle)

    # --- lifecycle ---------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        path: str | os.PathLike[str],
        *,
        clock: clocks.Clock | None = None,
        root_map: Mapping[str, str | os.PathLike[str]] | None = None,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
        allow_injected_clock: bool = False,
    ) -> Production:
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
        cls,
        path: str | os.PathLike[str],
        *,
        clock: clocks.Clock | None = None,
        read_only: bool = False,
        root_map: Mapping[str, str | os.PathLike[str]] | None = None,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
        allow_injected_clock: bool = False,
    ) -> Production:
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
        self,
        *,
        origin: str | None = None,
        message: str | None = None,
        principal: str | None = None,
        defer_lease_checks: bool = False,
    ) -> Transaction:
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
            self,
            self._handle,
            origin=origin,
            message=message,
            principal=principal,
            defer_lease_checks=defer_lease_checks,
        )

    def claim_next_job_lease(
        self,
        tool: ToolIdentity,
        duration: object,
        *,
        kinds: Sequence[str] | None = None,
        agent: AgentIdentity | None = None,
        worker: WorkerSession | None = None,
        origin: str | None = None,
        message: str | None = None,
        principal: str | None = None,
    ) -> JobLease | None:
        """``Transaction.claim_next_job_lease`` in an edit of its own, committed on return (a
        worker's claim: same arguments, rules and errors, the revision's ``origin``, ``message``
        and ``principal``, as :meth:`edit` takes them). On PostgreSQL it is one server call, claim and commit (else the claim
        and its commit are two round trips), and this process keeps the claim's lease row for
        a completion in an edit opened with ``defer_lease_checks``; on SQLite, an edit."""
        with self.edit(origin=origin, message=message, principal=principal) as tx:
            lease = claim_next_committed(tx, tool, duration, kinds, agent, worker)
            tx.commit()
        return lease

    def claim_next_job(
        self,
        tool: ToolIdentity,
        duration: object,
        *,
        kinds: Sequence[str] | None = None,
        agent: AgentIdentity | None = None,
        worker: WorkerSession | None = None,
        origin: str | None = None,
        message: str | None = None,
        principal: str | None = None,
    ) -> ClaimedWork | None:
        """:meth:`claim_next_job_lease` with the job and its parameters as the claim left them
        (what a worker reads next: on PostgreSQL read in the claim's one round trip)."""
        return claim_next_work(self, tool, duration, kinds, agent, worker, origin, message, principal)

    def complete_job(
        self,
        lease: JobLease,
        output: str | os.PathLike[str],
        *,
        tool: ToolIdentity | None = None,
        agent: AgentIdentity | None = None,
        root: str | None = None,
        kind: RepresentationKind | None = None,
        started_at: datetime | None = None,
        finished_at: datetime | None = None,
        parameters: Iterable[tuple[Property, object]] | None = None,
        tail: str | bytes | None = None,
        origin: str | None = None,
        message: str | None = None,
        principal: str | None = None,
    ) -> JobCompletion:
        """The spec's completion edit in one call, committed on return: ``output`` (under media
        ``root``, or absolute) added as the job's requested representation (``kind``: another,
        refused as ``complete_job_lease`` refuses it), an activity of the job's kind from its
        inputs to it (``tool``, ``agent``, times), ``parameters`` ((Property, value) pairs; None:
        the job's own, copied) on it, the attempt's log ``tail``, and the lease completed; same
        rules, errors and events as that edit. On PostgreSQL, for a claim made in this process,
        one server call; else the edit (its lease check sent with the commit)."""
        return complete_work(self, lease, output, tool=tool, agent=agent, root=root, kind=kind,
                             started_at=started_at, finished_at=finished_at, parameters=parameters,
                             tail=tail, origin=origin, message=message, principal=principal)  # fmt: skip

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
        self,
        limit: int = 100,
        cursor: str | None = None,
        source: RepresentationId | None = None,
        *,
        include_superseded: bool = False,
    ) -> StalePage:
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
