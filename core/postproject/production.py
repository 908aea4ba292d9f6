"""Productions: assets, representations, provenance, metadata and jobs in one store.

A :class:`Production` reads committed state through its engine (:mod:`postproject.engine`:
a ``*.pproj`` SQLite file or a PostgreSQL schema) and writes only through
:meth:`Production.edit`. Several processes may open the same production. Its feed reads live in :mod:`postproject.areas.feed`,
its knowledge reads in :mod:`postproject.areas.knowledge`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from types import TracebackType

from postproject import locations
from postproject.areas import search as job_search
from postproject.areas.attempts import AttemptReads
from postproject.areas.feed import FeedReads
from postproject.areas.knowledge import KnowledgeReads
from postproject.areas.pending import PendingReads
from postproject.areas.search import FailureGroup
from postproject.base.handle import ProductionHandle, register, sample
from postproject.engine import Engine
from postproject.model import clock as clocks
from postproject.model import names
from postproject.model import values as metadata_values
from postproject.model.activities import Activity
from postproject.model.assets import (
    Asset,
    Availability,
    MediaRoot,
    Representation,
    RepresentationKind,
)
from postproject.model.errors import ConflictError, InvalidArgumentError, Reason, UnsupportedError
from postproject.model.ids import ActivityId, AssetId, JobId, ProductionId, RepresentationId
from postproject.model.jobs import Job
from postproject.model.lifecycle import JobState
from postproject.model.metadata import Assertion, Property
from postproject.model.pages import Page, check_limit
from postproject.model.refs import ObjectRef, check_ref
from postproject.model.revisions import JobHistoryEntry
from postproject.transaction import Transaction

DEFAULT_BUSY_TIMEOUT = 10.0


class Production(FeedReads, KnowledgeReads, PendingReads, AttemptReads):
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
        register(self, self._handle)
        self.metadata = MetadataView(self._handle)

    # --- lifecycle ---------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        path: str | os.PathLike[str],
        *,
        clock: clocks.Clock | None = None,
        root_map: Mapping[str, str | os.PathLike[str]] | None = None,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
    ) -> Production:
        """Create a new, empty production (no revision yet) and open it for writing.

        ``path`` is a ``*.pproj`` file path, or a ``postgresql://`` URI whose ``production=NAME``
        parameter names the schema (default ``postproject``) holding it.

        Raises:
            AlreadyExistsError: (already_exists) a file exists at ``path``.
            IoError: (io) the file cannot be created.
        """
        now = clocks.to_micros(sample(clock)) if clock is not None else None  # None: the engine's clock
        engine = locations.create_engine(path, ProductionId.new().bytes, now)
        return cls(
            engine,
            clock=clock,
            read_only=False,
            root_map=root_map,
            busy_timeout=busy_timeout,
        )

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        clock: clocks.Clock | None = None,
        read_only: bool = False,
        root_map: Mapping[str, str | os.PathLike[str]] | None = None,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
    ) -> Production:
        """Open an existing production (migrating an older schema when writable).

        Raises:
            NotFoundError: (not_found) nothing at ``path``.
            StorageError: (storage) the file is not a production or is corrupt.
            UnsupportedError: (unsupported) its schema is newer than this release.
        """
        engine = locations.open_engine(path, read_only=read_only)
        return cls(
            engine,
            clock=clock,
            read_only=read_only,
            root_map=root_map,
            busy_timeout=busy_timeout,
        )

    def close(self) -> None:
        """Close the production's connections (idempotent)."""
        self._handle.close()

    def __enter__(self) -> Production:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
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

    # --- writing -----------------------------------------------------------------------

    def edit(self, *, origin: str | None = None, message: str | None = None) -> Transaction:
        """Start a transaction; use it as a context manager and call ``commit()``.

        Args:
            origin: the application making the change (e.g. ``postproject-cli 0.1.0``).
            message: a human note stored with the revision (1-4096 bytes).
        """
        self._check_open()
        if self._handle.read_only:
            raise ConflictError(f"production {self._location} is open read-only", reason=Reason.READ_ONLY)
        if origin is not None:
            names.bounded_text("revision origin", origin, 512)
        if message is not None:
            names.bounded_text("revision message", message, 4096)
        return Transaction(self, self._handle, origin=origin, message=message)

    # --- paths -------------------------------------------------------------------------

    def root_path(self, name: str) -> Path | None:
        """This machine's directory for a media root (the root map wins over the stored path)."""
        return self._handle.root_path(name)

    def resolve(self, representation: Representation) -> Path | None:
        """The representation's file on this machine (None when its root is not mapped)."""
        return self._handle.resolve(representation)

    def availability(self, representation_id: RepresentationId) -> Availability:
        """Online when the representation's file exists here as a regular file."""
        path = self.resolve(self.representation(representation_id))
        return Availability.ONLINE if path is not None and path.is_file() else Availability.OFFLINE

    # --- reads: assets, representations, activities, metadata --------------------------

    def _check_open(self) -> None:
        self._handle.check_open()

    def asset(self, asset_id: AssetId) -> Asset:
        self._check_open()
        _typed("asset_id", asset_id, AssetId)
        return self._handle.reads.asset(asset_id)

    def assets(self, limit: int = 100, cursor: str | None = None) -> Page[Asset]:
        """Assets in id (creation) order."""
        self._check_open()
        check_limit(limit)
        after = self._handle.after("assets", (), cursor)
        items = self._handle.reads.assets(after, limit + 1)
        return self._handle.page("assets", (), items, limit, lambda a: a.id.bytes)

    def representation(self, representation_id: RepresentationId) -> Representation:
        self._check_open()
        _typed("representation_id", representation_id, RepresentationId)
        return self._handle.reads.representation(representation_id)

    def representations(
        self,
        asset_id: AssetId | None = None,
        kind: RepresentationKind | None = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> Page[Representation]:
        """Representations (optionally of one asset and/or kind) in id order."""
        self._check_open()
        check_limit(limit)
        if asset_id is not None:
            _typed("asset_id", asset_id, AssetId)
        if kind is not None and not isinstance(kind, RepresentationKind):
            raise InvalidArgumentError(f"kind must be a RepresentationKind; got {kind!r}")
        params = (str(asset_id) if asset_id else "*", kind.value if kind else "*")
        after = self._handle.after("representations", params, cursor)
        items = self._handle.reads.representations(asset_id, kind.code if kind else None, after, limit + 1)
        return self._handle.page("representations", params, items, limit, lambda r: r.id.bytes)

    def media_roots(self) -> tuple[MediaRoot, ...]:
        self._check_open()
        return tuple(self._handle.reads.media_roots())

    def activity(self, activity_id: ActivityId) -> Activity:
        self._check_open()
        _typed("activity_id", activity_id, ActivityId)
        return self._handle.reads.activity(activity_id)

    def activities(
        self, limit: int = 100, cursor: str | None = None, kind: str | None = None
    ) -> Page[Activity]:
        """Activities (optionally of one kind) in id order."""
        self._check_open()
        check_limit(limit)
        if kind is not None:
            names.namespaced("activity kind", kind)
        params = (kind or "*",)
        after = self._handle.after("activities", params, cursor)
        with self._handle.reads.snapshot():
            ids = self._handle.reads.activity_ids(kind, after, limit + 1)
            items = [self._handle.reads.activity(i) for i in ids]
        return self._handle.page("activities", params, items, limit, lambda a: a.id.bytes)

    def producing_activities(self, representation_id: RepresentationId) -> tuple[ActivityId, ...]:
        """Activities that output the representation (normally one)."""
        self._check_open()
        _typed("representation_id", representation_id, RepresentationId)
        return tuple(self._handle.reads.edge_activities(representation_id, 1))

    def consuming_activities(self, representation_id: RepresentationId) -> tuple[ActivityId, ...]:
        """Activities that used the representation as an input (up to 1000)."""
        self._check_open()
        _typed("representation_id", representation_id, RepresentationId)
        return tuple(self._handle.reads.edge_activities(representation_id, 0))

    # --- reads: jobs -------------------------------------------------------------------

    def job(self, job_id: JobId) -> Job:
        """One job (not_found when absent)."""
        self._check_open()
        _typed("job_id", job_id, JobId)
        return self._handle.reads.job(job_id)

    def jobs(
        self,
        limit: int = 100,
        cursor: str | None = None,
        state: JobState | None = None,
        kind: str | None = None,
        *,
        newest_first: bool = False,
        search: str | None = None,
        requested_after: datetime | None = None,
        requested_before: datetime | None = None,
        finished_after: datetime | None = None,
        finished_before: datetime | None = None,
        sort: str = "requested",
        descending: bool | None = None,
    ) -> Page[Job]:
        """A keyset page of jobs, by default in id order (ids are time-ordered: request order).

        Filters are exact; ``state=CLAIMED`` includes claims whose lease expired. ``search``
        finds jobs over the whole store (indexed): each whitespace-separated term is a
        case-insensitive substring of the job's kind, output asset name, an agent or worker of
        its attempts, or its failure diagnostic, or the tail (6+ hex digits) of its id. ``requested_*``/``finished_*`` bound
        when it was requested or reached a final state (``*_after`` inclusive, ``*_before``
        exclusive). ``sort`` is "requested", "kind", "state" or "priority" (ties by id);
        ``descending`` (default ``newest_first``) reverses it. Cursors are bound to this
        production and these options.
        """
        self._check_open()
        check_limit(limit)
        if state is not None and not isinstance(state, JobState):
            raise InvalidArgumentError(f"state must be a JobState; got {state!r}")
        if kind is not None:
            names.namespaced("job kind", kind)
        reverse = newest_first if descending is None else descending
        plain = (
            sort == "requested"
            and not (search and search.strip())
            and not any(
                bound is not None
                for bound in (requested_after, requested_before, finished_after, finished_before)
            )
        )
        if not plain:
            q = job_search.query(
                state,
                kind,
                search=search,
                requested_after=requested_after,
                requested_before=requested_before,
                finished_after=finished_after,
                finished_before=finished_before,
                sort=sort,
                descending=reverse,
            )
            return job_search.page(self._handle, q, limit, cursor)
        if search is not None:
            job_search.terms(search)  # validated even when blank
        params = (
            str(state.code) if state else "0",
            kind or "*",
            "desc" if reverse else "asc",
        )
        after = self._handle.after("jobs", params, cursor)
        items = self._handle.reads.jobs(state, kind, after, limit + 1, descending=reverse)
        return self._handle.page("jobs", params, items, limit, lambda j: j.id.bytes)

    def failure_groups(self, kind: str | None = None, limit: int = 100) -> tuple[FailureGroup, ...]:
        """Failed jobs grouped by reason (a normalised first line of the diagnostic), largest
        first: ``group.summary()`` reads "37 failed: unsupported profile #". List a group's
        jobs with ``jobs(state=JobState.FAILED, search=group.search)``."""
        self._check_open()
        check_limit(limit)
        if kind is not None:
            names.namespaced("job kind", kind)
        return job_search.failure_groups(self._handle, kind, limit)

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
        self._check_open()
        check_limit(limit)
        if kind is not None:
            names.namespaced("job kind", kind)
        params = (kind or "*",)
        position = None
        if cursor is not None:
            bound_text, expiry, last = self._handle.cursors.decode(cursor, "claims", params, 3)
            bound = int(bound_text)
            if before is not None and clocks.to_micros(before) != bound:
                raise InvalidArgumentError("query cursor does not match this query and its parameters")
            position = (int(expiry), JobId.parse(last).bytes)
        else:
            bound = clocks.to_micros(before) if before is not None else self._handle.now_micros()
        items = self._handle.reads.claims_expiring(bound, kind, position, limit + 1)
        more = len(items) > limit
        items = items[:limit]
        next_cursor = None
        if more:
            last_job = items[-1]
            assert last_job.claim is not None
            expires = clocks.to_micros(last_job.claim.expires_at)
            next_cursor = self._handle.cursors.encode(
                "claims", params, (str(bound), str(expires), str(last_job.id))
            )
        return Page(tuple(items), next_cursor)

    def job_counts(self, kind: str | None = None) -> dict[JobState, int]:
        """How many jobs are in each state (maintained counts: constant time)."""
        self._check_open()
        if kind is not None:
            names.namespaced("job kind", kind)
        counts = self._handle.reads.job_counts(kind)
        return {state: counts.get(state.code, 0) for state in JobState}

    def job_kinds(self) -> tuple[str, ...]:
        """The kinds of the jobs in this production."""
        self._check_open()
        return tuple(self._handle.reads.job_kinds())

    def job_history(self, job_id: JobId) -> tuple[JobHistoryEntry, ...]:
        """Every lifecycle event of a job, oldest first, with its revision's time, origin and message."""
        self._check_open()
        _typed("job_id", job_id, JobId)
        return tuple(
            JobHistoryEntry(seq, clocks.from_micros(at), kind, origin, message)
            for seq, at, kind, origin, message in self._handle.reads.job_history(job_id)
        )


class MetadataView:
    """``production.metadata[ref]`` -> the assertions on that object, in order."""

    def __init__(self, handle: ProductionHandle) -> None:
        self._handle = handle

    def __getitem__(self, ref: ObjectRef) -> tuple[Assertion, ...]:
        self._handle.check_open()
        check_ref(ref)
        rows = self._handle.reads.metadata(ref.code, ref.id.bytes)
        return tuple(
            Assertion(Property(vocabulary, name), metadata_values.from_json(_loads(value)))
            for vocabulary, name, value in rows
        )


def _typed(field: str, value: object, kind: type) -> None:
    if type(value) is not kind:
        raise InvalidArgumentError(f"{field} must be a {kind.__name__}; got {type(value).__name__}")


def _loads(text: str) -> object:
    return json.loads(text)
