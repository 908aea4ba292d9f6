"""Productions: one SQLite file of assets, representations, provenance, metadata and jobs.

A :class:`Production` reads committed state through its own read connection and writes
only through :meth:`Production.edit`. Several processes may open the same file.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, TypeVar

from postproject import clock as clocks
from postproject import feed
from postproject import values as metadata_values
from postproject.errors import (
    ConflictError,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
)
from postproject.ids import ActivityId, AssetId, JobId, ProductionId, RepresentationId, RevisionId
from postproject.lifecycle import JobState
from postproject.model import names
from postproject.model.activities import Activity
from postproject.model.assets import (
    Asset,
    Availability,
    MediaRoot,
    Representation,
    RepresentationKind,
)
from postproject.model.jobs import Job
from postproject.model.metadata import Assertion, Property
from postproject.model.refs import ObjectRef, check_ref
from postproject.model.revisions import Changes, JobHistoryEntry, Revision, RevisionSummary, event_kind
from postproject.pages import CursorCodec, Page, check_limit
from postproject.storage import connection
from postproject.storage.errors import translated
from postproject.storage.reads import Reader
from postproject.storage.writes import WriteSession

if TYPE_CHECKING:
    from postproject.knowledge import ArtifactKnowledge, StalePage
    from postproject.provenance import ProvenanceGraph
    from postproject.regeneration import DownstreamRegeneration, RegenerationPlan, Reproducibility
    from postproject.transaction import Transaction

T = TypeVar("T")
MAX_WAIT = timedelta(seconds=60)
DEFAULT_BUSY_TIMEOUT = 10.0


class Production:
    """An open production. Use :meth:`create` or :meth:`open`; close it (or use ``with``)."""

    def __init__(
        self,
        path: Path,
        reader: Reader,
        *,
        clock: clocks.Clock | None,
        read_only: bool,
        root_map: Mapping[str, str | os.PathLike[str]] | None,
        busy_timeout: float,
    ) -> None:
        if clock is not None and not isinstance(clock, clocks.Clock):
            raise InvalidArgumentError("clock must have a now() method returning an aware datetime")
        self._path = path
        self._clock: clocks.Clock = clock or clocks.SystemClock()
        self._read_only = read_only
        self._busy_timeout = busy_timeout
        self._root_map = {names.root_name("root map name", k): Path(v) for k, v in (root_map or {}).items()}
        self._stored_roots: dict[str, Path | None] = {}
        self._reader = reader
        try:
            raw_id, _, cursor_key = self._reader.production_row()
        except BaseException:
            reader.conn.close()
            raise
        self._id = ProductionId(raw_id)
        self._cursors = CursorCodec(str(self._id), cursor_key)
        self._write_conn: connection.Connection | None = None
        self._write_lock = threading.Lock()
        self._closed = False
        self.metadata = MetadataView(self)

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
        """Create a new, empty production file (no revision yet) and open it for writing.

        Raises:
            AlreadyExistsError: (already_exists) a file exists at ``path``.
            IoError: (io) the file cannot be created.
        """
        target = Path(path)
        now = clocks.to_micros(_sample(clock or clocks.SystemClock()))
        reader = Reader(connection.create_file(target, ProductionId.new().bytes, now), target)
        return cls(
            target,
            reader,
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
        target = Path(path)
        reader = Reader(connection.open_file(target, read_only=read_only), target)
        return cls(
            target,
            reader,
            clock=clock,
            read_only=read_only,
            root_map=root_map,
            busy_timeout=busy_timeout,
        )

    def close(self) -> None:
        """Close the production's connections (idempotent)."""
        if self._closed:
            return
        self._closed = True
        with translated(self._path):
            self._reader.conn.close()
            if self._write_conn is not None:
                self._write_conn.close()

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
        return f"Production({str(self._path)!r}, id={self._id})"

    @property
    def id(self) -> ProductionId:
        return self._id

    @property
    def path(self) -> Path:
        return self._path

    @property
    def read_only(self) -> bool:
        return self._read_only

    @property
    def clock(self) -> clocks.Clock:
        return self._clock

    @property
    def closed(self) -> bool:
        return self._closed

    # --- writing -----------------------------------------------------------------------

    def edit(self, *, origin: str | None = None, message: str | None = None) -> Transaction:
        """Start a transaction; use it as a context manager and call ``commit()``.

        Args:
            origin: the application making the change (e.g. ``postproject-cli 0.1.0``).
            message: a human note stored with the revision (1-4096 bytes).
        """
        from postproject.transaction import Transaction

        self._check_open()
        if self._read_only:
            raise ConflictError(f"production {self._path} is open read-only", reason="read_only")
        if origin is not None:
            names.bounded_text("revision origin", origin, 512)
        if message is not None:
            names.bounded_text("revision message", message, 4096)
        return Transaction(self, origin=origin, message=message)

    def _begin_write(self) -> WriteSession:
        self._check_open()
        if not self._write_lock.acquire(blocking=False):
            raise ConflictError(
                "another transaction is open on this production handle",
                reason="nested_edit",
            )
        try:
            if self._write_conn is None:
                self._write_conn = connection.open_file(self._path, read_only=False)
                connection.set_writer_mode(self._write_conn)
            session = WriteSession(self._write_conn, self._path, busy_timeout=self._busy_timeout)
            session.begin()
        except BaseException:
            self._write_lock.release()
            raise
        return session

    def _end_write(self) -> None:
        self._write_lock.release()

    # --- time --------------------------------------------------------------------------

    def _now_micros(self) -> int:
        """An unguarded timestamp (requests, creation times, commit times)."""
        return clocks.to_micros(_sample(self._clock))

    def _sample_clock(self, high_water: int | None) -> int:
        """A guarded sample: conflict when the clock is behind the durable high-water mark."""
        now = self._now_micros()
        if high_water is not None and now < high_water:
            raise ConflictError(
                f"job authority clock moved backward: {clocks.from_micros(now).isoformat()} is before "
                f"{clocks.from_micros(high_water).isoformat()}; retry when time catches up",
                reason="clock_regressed",
            )
        return now

    def _guarded_now(self) -> int:
        return self._sample_clock(self._reader.high_water())

    # --- paths -------------------------------------------------------------------------

    def root_path(self, name: str) -> Path | None:
        """This machine's directory for a media root (the root map wins over the stored path)."""
        if name in self._root_map:
            return self._root_map[name]
        if name not in self._stored_roots:  # a root, once added, never changes: read it once
            root = self._reader.media_root(name)
            if root is None:
                raise NotFoundError(f"media root {name!r} does not exist")
            self._stored_roots[name] = Path(root.path) if root.path is not None else None
        return self._stored_roots[name]

    def _locate(
        self,
        path: str | os.PathLike[str],
        root: str | None,
        root_path: Callable[[str], Path | None] | None = None,
    ) -> tuple[str, Path]:
        """(stored text, absolute path) of a representation file; ``root_path`` resolves roots
        (default: this production's committed roots and root map)."""
        if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
            raise InvalidArgumentError(f"representation path must be a non-empty path; got {path!r}")
        given = Path(path).expanduser()
        if root is None:
            # abspath, not resolve(): no filesystem walk, and the path stays the one given.
            absolute = Path(os.path.abspath(given))
            return str(absolute), absolute
        names.root_name("media root", root)
        base = (root_path or self.root_path)(root)
        if base is None:
            raise InvalidArgumentError(f"media root {root!r} has no directory on this machine; map it first")
        absolute = Path(os.path.abspath(base / given))
        try:
            relative = absolute.relative_to(os.path.abspath(base))
        except ValueError:
            raise InvalidArgumentError(
                f"representation path {given} is outside media root {root!r} ({base})"
            ) from None
        return relative.as_posix(), absolute

    def resolve(self, representation: Representation) -> Path | None:
        """The representation's file on this machine (None when its root is not mapped)."""
        if representation.root is None:
            return Path(representation.path)
        base = self.root_path(representation.root)
        return base / representation.path if base is not None else None

    def availability(self, representation_id: RepresentationId) -> Availability:
        """Online when the representation's file exists here as a regular file."""
        path = self.resolve(self.representation(representation_id))
        return Availability.ONLINE if path is not None and path.is_file() else Availability.OFFLINE

    # --- reads: assets, representations, activities, metadata --------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise ConflictError(f"production {self._path} is closed", reason="closed")

    def asset(self, asset_id: AssetId) -> Asset:
        self._check_open()
        _typed("asset_id", asset_id, AssetId)
        return self._reader.asset(asset_id)

    def assets(self, limit: int = 100, cursor: str | None = None) -> Page[Asset]:
        """Assets in id (creation) order."""
        self._check_open()
        check_limit(limit)
        after = self._after("assets", (), cursor)
        items = self._reader.assets(after, limit + 1)
        return self._page("assets", (), items, limit, lambda a: a.id.bytes)

    def representation(self, representation_id: RepresentationId) -> Representation:
        self._check_open()
        _typed("representation_id", representation_id, RepresentationId)
        return self._reader.representation(representation_id)

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
        after = self._after("representations", params, cursor)
        items = self._reader.representations(asset_id, kind.code if kind else None, after, limit + 1)
        return self._page("representations", params, items, limit, lambda r: r.id.bytes)

    def media_roots(self) -> tuple[MediaRoot, ...]:
        self._check_open()
        return tuple(self._reader.media_roots())

    def activity(self, activity_id: ActivityId) -> Activity:
        self._check_open()
        _typed("activity_id", activity_id, ActivityId)
        return self._reader.activity(activity_id)

    def activities(
        self, limit: int = 100, cursor: str | None = None, kind: str | None = None
    ) -> Page[Activity]:
        """Activities (optionally of one kind) in id order."""
        self._check_open()
        check_limit(limit)
        if kind is not None:
            names.namespaced("activity kind", kind)
        params = (kind or "*",)
        after = self._after("activities", params, cursor)
        with self._reader.snapshot():
            ids = self._reader.activity_ids(kind, after, limit + 1)
            items = [self._reader.activity(i) for i in ids]
        return self._page("activities", params, items, limit, lambda a: a.id.bytes)

    def producing_activities(self, representation_id: RepresentationId) -> tuple[ActivityId, ...]:
        """Activities that output the representation (normally one)."""
        self._check_open()
        _typed("representation_id", representation_id, RepresentationId)
        return tuple(self._reader.edge_activities(representation_id, 1))

    def consuming_activities(self, representation_id: RepresentationId) -> tuple[ActivityId, ...]:
        """Activities that used the representation as an input (up to 1000)."""
        self._check_open()
        _typed("representation_id", representation_id, RepresentationId)
        return tuple(self._reader.edge_activities(representation_id, 0))

    def _metadata(self, ref: ObjectRef) -> tuple[Assertion, ...]:
        self._check_open()
        check_ref(ref)
        rows = self._reader.metadata(ref.code, ref.id.bytes)
        return tuple(
            Assertion(Property(vocabulary, name), metadata_values.from_json(_loads(value)))
            for vocabulary, name, value in rows
        )

    # --- reads: jobs -------------------------------------------------------------------

    def job(self, job_id: JobId) -> Job:
        """One job (not_found when absent)."""
        self._check_open()
        _typed("job_id", job_id, JobId)
        return self._reader.job(job_id)

    def jobs(
        self,
        limit: int = 100,
        cursor: str | None = None,
        state: JobState | None = None,
        kind: str | None = None,
        *,
        newest_first: bool = False,
    ) -> Page[Job]:
        """A keyset page of jobs in id order (ids are time-ordered, so this is request order).

        Filters are exact; ``state=CLAIMED`` includes claims whose lease expired. Cursors are
        bound to this production and these filters.
        """
        self._check_open()
        check_limit(limit)
        if state is not None and not isinstance(state, JobState):
            raise InvalidArgumentError(f"state must be a JobState; got {state!r}")
        if kind is not None:
            names.namespaced("job kind", kind)
        params = (
            str(state.code) if state else "0",
            kind or "*",
            "desc" if newest_first else "asc",
        )
        after = self._after("jobs", params, cursor)
        items = self._reader.jobs(state, kind, after, limit + 1, descending=newest_first)
        return self._page("jobs", params, items, limit, lambda j: j.id.bytes)

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
            bound_text, expiry, last = self._cursors.decode(cursor, "claims", params, 3)
            bound = int(bound_text)
            if before is not None and clocks.to_micros(before) != bound:
                raise InvalidArgumentError("query cursor does not match this query and its parameters")
            position = (int(expiry), JobId.parse(last).bytes)
        else:
            bound = clocks.to_micros(before) if before is not None else self._now_micros()
        items = self._reader.claims_expiring(bound, kind, position, limit + 1)
        more = len(items) > limit
        items = items[:limit]
        next_cursor = None
        if more:
            last_job = items[-1]
            assert last_job.claim is not None
            expires = clocks.to_micros(last_job.claim.expires_at)
            next_cursor = self._cursors.encode("claims", params, (str(bound), str(expires), str(last_job.id)))
        return Page(tuple(items), next_cursor)

    def job_counts(self, kind: str | None = None) -> dict[JobState, int]:
        """How many jobs are in each state (maintained counts: constant time)."""
        self._check_open()
        if kind is not None:
            names.namespaced("job kind", kind)
        counts = self._reader.job_counts(kind)
        return {state: counts.get(state.code, 0) for state in JobState}

    def job_kinds(self) -> tuple[str, ...]:
        """The kinds of the jobs in this production."""
        self._check_open()
        return tuple(self._reader.job_kinds())

    def job_history(self, job_id: JobId) -> tuple[JobHistoryEntry, ...]:
        """Every lifecycle event of a job, oldest first, with its revision's time, origin and message."""
        self._check_open()
        _typed("job_id", job_id, JobId)
        return tuple(
            JobHistoryEntry(seq, clocks.from_micros(at), kind, origin, message)
            for seq, at, kind, origin, message in self._reader.job_history(job_id)
        )

    # --- revision feed -----------------------------------------------------------------

    def latest_sequence(self) -> int:
        """The newest revision's sequence (0 when there is none); never loads events."""
        self._check_open()
        return self._reader.latest_sequence()

    def revisions(self, limit: int = 100, before: int | None = None) -> tuple[RevisionSummary, ...]:
        """Revision headers, newest first (those before sequence ``before``), with event counts
        per kind instead of the events themselves (a bulk edit may hold millions)."""
        self._check_open()
        check_limit(limit)
        if before is not None and (isinstance(before, bool) or not isinstance(before, int) or before < 1):
            raise InvalidArgumentError(f"before must be a positive sequence; got {before!r}")
        return tuple(
            RevisionSummary(
                RevisionId(id_),
                seq,
                clocks.from_micros(at),
                origin,
                message,
                counts,
                str(uuid.UUID(bytes=subject)) if subject is not None else None,
            )
            for seq, id_, at, origin, message, counts, subject in self._reader.revision_summaries(
                limit, before
            )
        )

    def latest_revision(self) -> Revision | None:
        """The newest revision, or None for a production nobody has changed yet."""
        self._check_open()
        found = self._reader.revisions("SELECT max(sequence) FROM revisions", ())
        return found[0] if found else None

    def changes_since(self, sequence: int, limit: int = 100, kinds: Iterable[str] | None = None) -> Changes:
        """Revisions after ``sequence``, oldest first, with their events.

        With ``kinds``, only revisions holding at least one event of those kinds are returned
        (with all their events); ``through_sequence`` tells how far the page covered.
        """
        self._check_open()
        if isinstance(sequence, bool) or not isinstance(sequence, int) or sequence < 0:
            raise InvalidArgumentError(f"sequence must be a non-negative int; got {sequence!r}")
        check_limit(limit)
        kind_list: list[str] | None = None
        if kinds is not None:
            kind_list = sorted({event_kind(k) for k in kinds})
            if not kind_list:
                raise InvalidArgumentError("kinds must name at least one event kind (or be None)")
        found, through = self._reader.changes_since(sequence, limit, kind_list)
        return Changes(tuple(found), through)

    def wait_for_changes(
        self,
        after_sequence: int,
        timeout: float | timedelta,
        *,
        limit: int = 100,
        kinds: Iterable[str] | None = None,
        stop: threading.Event | None = None,
    ) -> Changes:
        """Block until revisions after ``after_sequence`` exist (or ``timeout`` passes, or
        ``stop`` is set by another thread).

        Another process's commit is noticed within a few tens of milliseconds: the wait polls
        ``PRAGMA data_version`` (microseconds per probe) with a 5-50 ms backoff; commits from
        this process wake it at once.

        Args:
            timeout: seconds (or a timedelta) from 0 to 60; 0 checks once.
        """
        seconds = _seconds(timeout)
        deadline = clocks.monotonic() + seconds
        delay = 0.005
        while True:
            seen = feed.generation(self._path)
            version = self._reader.data_version()
            changes = self.changes_since(after_sequence, limit, kinds)
            remaining = deadline - clocks.monotonic()
            if changes or remaining <= 0 or (stop is not None and stop.is_set()):
                return changes
            while remaining > 0 and not (stop is not None and stop.is_set()):
                feed.wait(self._path, seen, min(delay, remaining))
                if feed.generation(self._path) != seen or self._reader.data_version() != version:
                    delay = 0.005
                    break
                delay = min(delay * 2, 0.05)
                remaining = deadline - clocks.monotonic()

    # --- cursors -----------------------------------------------------------------------

    def _after(self, family: str, params: Sequence[str], cursor: str | None) -> bytes | None:
        if cursor is None:
            return None
        (last,) = self._cursors.decode(cursor, family, params, 1)
        try:
            return bytes.fromhex(last)
        except ValueError:
            raise InvalidArgumentError("query cursor does not match this query and its parameters") from None

    def _page(
        self,
        family: str,
        params: Sequence[str],
        items: Sequence[T],
        limit: int,
        key: Callable[[T], bytes],
    ) -> Page[T]:
        more = len(items) > limit
        items = items[:limit]
        next_cursor = self._cursors.encode(family, params, (key(items[-1]).hex(),)) if more else None
        return Page(tuple(items), next_cursor)

    # --- artifact knowledge (issue 4) ---------------------------------------------------

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
        from postproject import knowledge

        return knowledge.evaluate(
            self, representation_id, max_depth=max_depth, max_representations=max_representations
        )

    def stale_artifacts(
        self,
        limit: int = 100,
        cursor: str | None = None,
        source: RepresentationId | None = None,
    ) -> StalePage:
        """A page of stale or diverged artifacts, examining ``limit`` candidates in id order.

        Candidates are activity outputs, or the provenance descendants of ``source``; a page
        may hold fewer items than ``limit`` (even none) and still have a ``next_cursor``.

        Raises:
            NotFoundError: (not_found) ``source`` does not exist.
            InvalidArgumentError: (invalid_argument) bad limit, or a cursor from another query.
        """
        from postproject import knowledge

        return knowledge.stale_artifacts(self, limit, cursor, source)

    def reproducibility(self, representation_id: RepresentationId) -> Reproducibility:
        """Every condition missing to reproduce an artifact (no producer, ambiguous producer,
        tool identity, parameters, an input).

        Raises:
            NotFoundError: (not_found) the representation does not exist.
        """
        from postproject import regeneration

        return regeneration.reproducibility(self, representation_id)

    def plan_regeneration(self, artifact_ids: Iterable[RepresentationId]) -> tuple[RegenerationPlan, ...]:
        """Propose one requested job per distinct artifact, ordered by artifact id (read-only).

        All or nothing: the first artifact that cannot be planned fails the call.

        Raises:
            InvalidArgumentError: (invalid_argument) more than 100 000 ids, or a non-id.
            NotFoundError: (not_found) an artifact does not exist.
            ConflictError: (conflict) an artifact has no or several producing activities.
        """
        from postproject import regeneration

        return regeneration.plan_regeneration(self, artifact_ids)

    def plan_downstream_regeneration(self, representation_id: RepresentationId) -> DownstreamRegeneration:
        """Plans for every stale or diverged descendant of a changed representation, inputs first.

        Descendants that cannot be planned are listed in ``unplannable`` instead of failing.

        Raises:
            NotFoundError: (not_found) the representation does not exist.
        """
        from postproject import regeneration

        return regeneration.plan_downstream_regeneration(self, representation_id)

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
        from postproject import provenance

        return provenance.provenance(
            self,
            representation_id,
            upstream=upstream,
            downstream=downstream,
            limit=limit,
            check_files=check_files,
        )

    # --- end artifact knowledge (issue 4) -----------------------------------------------


class MetadataView:
    """``production.metadata[ref]`` -> the assertions on that object, in order."""

    def __init__(self, production: Production) -> None:
        self._production = production

    def __getitem__(self, ref: ObjectRef) -> tuple[Assertion, ...]:
        return self._production._metadata(ref)


def _sample(clock: clocks.Clock) -> datetime:
    now = clock.now()
    if not isinstance(now, datetime) or now.tzinfo is None:
        raise InternalError(f"the clock returned {now!r}; it must return a timezone-aware datetime")
    return now


def _typed(field: str, value: object, kind: type) -> None:
    if type(value) is not kind:
        raise InvalidArgumentError(f"{field} must be a {kind.__name__}; got {type(value).__name__}")


def _seconds(timeout: float | timedelta) -> float:
    if isinstance(timeout, timedelta):
        seconds = timeout.total_seconds()
    elif isinstance(timeout, (int, float)) and not isinstance(timeout, bool):
        seconds = float(timeout)
    else:
        raise TypeError(f"timeout must be seconds or a timedelta; got {type(timeout).__name__}")
    if not 0 <= seconds <= MAX_WAIT.total_seconds():
        raise InvalidArgumentError(f"timeout must be between 0 and 60 seconds; got {seconds:g}")
    return seconds


def _loads(text: str) -> object:
    import json

    return json.loads(text)
