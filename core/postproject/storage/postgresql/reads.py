"""Read queries over a pool of connections. Multi-statement reads run in one snapshot.

A snapshot is a ``REPEATABLE READ, READ ONLY`` transaction on one pooled connection, shared by
nested uses in the same thread; a single statement outside a snapshot is its own consistent
read on any pooled connection (retried once, after the pool has replaced its broken
connections, when the pooled one was broken, say by a server restart). The queries and their
order are SQLite's (:mod:`postproject.storage.sqlite.reads`), in PostgreSQL's dialect.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from postproject.engine import JobKey, JobQuery, WorkerRow
from postproject.model.activities import Activity
from postproject.model.assets import Asset, MediaRoot, Representation
from postproject.model.errors import NotFoundError, Reason, StorageError, UnsupportedError
from postproject.model.ids import ActivityId, AssetId, JobId, ProductionId, RepresentationId
from postproject.model.jobs import Attempt, Job
from postproject.model.lifecycle import HISTORY_EVENT_KINDS, JobState
from postproject.model.revisions import Revision
from postproject.storage.postgresql import rows, search
from postproject.storage.postgresql.connection import Connection, Pool
from postproject.storage.postgresql.errors import translated
from postproject.storage.postgresql.service import ServiceReader
from postproject.storage.postgresql.types import Id
from postproject.storage.postgresql.uri import PostgresUri

# A job's columns and its attempts (as JSON, in attempt order): one statement reads a page.
JOBS_WITH_ATTEMPTS = (
    rows.JOB_COLUMNS
    + """, CASE WHEN j.attempts > 0 THEN (SELECT json_agg(json_build_array(a.number, a.outcome,
    a.agent_name, (SELECT w.name FROM workers w WHERE w.id = a.worker_id), a.tool_name, a.tool_version,
    a.tool_uri, a.claimed_at, a.ended_at, a.diagnostic, a.progress_fraction, a.progress_stage,
    a.progress_message, a.progress_at, a.stop_by, a.stopped_at) ORDER BY a.number) FROM job_attempts a
    WHERE a.job_id = j.id) END, CASE WHEN j.dependencies > 0 THEN (SELECT json_agg(json_build_array(
    d.upstream_id, u.state, d.binds_output, d.resolved_id) ORDER BY d.upstream_id) FROM job_dependencies d
    JOIN jobs u ON u.id = d.upstream_id WHERE d.job_id = j.id) END"""
)
MAX_LIST = 100_000
FILTER_WINDOW = 10_000  # revisions examined by one filtered feed read
_JOB_KINDS = ",".join(f"'{kind}'" for kind in sorted(HISTORY_EVENT_KINDS))


class Reader:
    """Committed state through a pool (connections are per thread while a snapshot is open)."""

    def __init__(self, pool: Pool, uri: PostgresUri) -> None:
        self.pool = pool
        self.uri = uri
        self._local = threading.local()
        self._production: ProductionId | None = None

    @contextmanager
    def snapshot(self) -> Iterator[Connection]:
        """One read-only transaction; nested uses in the same thread share it."""
        current: Connection | None = getattr(self._local, "conn", None)
        if current is not None:
            yield current
            return
        with translated(self.uri), self.pool.connection() as conn:
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            self._local.conn = conn
            try:
                yield conn
            finally:
                self._local.conn = None
                if not conn.closed:  # a broken connection ended its transaction (its error is raised)
                    conn.execute("COMMIT" if conn.info.transaction_status == 2 else "ROLLBACK")

    def all(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        return self._run(sql, params, one=False)  # type: ignore[no-any-return]

    def one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        return self._run(sql, params, one=True)

    def _run(self, sql: str, params: Sequence[Any] | dict[str, Any], *, one: bool) -> Any:
        current: Connection | None = getattr(self._local, "conn", None)
        if current is not None:
            with translated(self.uri):
                cursor = current.execute(sql, params, binary=True)
                return cursor.fetchone() if one else cursor.fetchall()
        for attempt in (1, 2):
            try:
                with translated(self.uri), self.pool.connection() as conn:
                    cursor = conn.execute(sql, params, binary=True)
                    return cursor.fetchone() if one else cursor.fetchall()
            except StorageError as error:
                if attempt == 2 or error.reason != Reason.CONNECTION_LOST:
                    raise
                self._lost()
        raise AssertionError("unreachable")

    def _lost(self) -> None:
        """A pooled connection was found broken (a server restart, a killed backend): the
        others likely are too, so every idle one is tested and replaced before the retry
        (otherwise the retry may draw another broken one and fail a read for nothing)."""
        self.pool.check()

    @property
    def service(self) -> ServiceReader:
        return ServiceReader(self)

    # --- production --------------------------------------------------------------------

    def production_row(self) -> tuple[bytes, int, bytes]:
        row = self.one("SELECT id, created_at, cursor_key FROM production")
        if row is None:
            raise NotFoundError(f"{self.uri.display} has no production record")
        return row  # type: ignore[no-any-return]

    def high_water(self) -> int | None:
        """The durable clock high-water mark (the newest revision's mark or job_clock's)."""
        row = self.one(
            "SELECT greatest((SELECT clock_mark FROM revisions ORDER BY sequence DESC LIMIT 1), high_water) "
            "FROM job_clock"
        )
        return row[0] if row is not None else None

    # --- assets, representations, roots ------------------------------------------------

    def asset(self, asset_id: AssetId) -> Asset:
        row = self.one(f"SELECT {rows.ASSET_COLUMNS} FROM assets WHERE id = %s", (Id(asset_id.bytes),))
        if row is None:
            raise NotFoundError(f"asset {asset_id} does not exist")
        return rows.asset(row)

    def assets(self, after: bytes | None, limit: int) -> list[Asset]:
        where, params = _after("id", after)
        sql = f"SELECT {rows.ASSET_COLUMNS} FROM assets{where} ORDER BY id LIMIT %s"
        return [rows.asset(r) for r in self.all(sql, (*params, limit))]

    def representation(self, rep_id: RepresentationId) -> Representation:
        row = self.one(
            f"SELECT {rows.REPRESENTATION_COLUMNS} FROM representations r WHERE r.id = %s",
            (Id(rep_id.bytes),),
        )
        if row is None:
            raise NotFoundError(f"representation {rep_id} does not exist")
        return rows.representation(row)

    def representations(
        self,
        asset_id: AssetId | None,
        kind: int | None,
        after: bytes | None,
        limit: int,
    ) -> list[Representation]:
        where: list[str] = []
        params: list[Any] = []
        if after is not None:
            where.append("r.id > %s")
            params.append(Id(after))
        if asset_id is not None:
            where.append("r.asset_id = %s")
            params.append(Id(asset_id.bytes))
        if kind is not None:
            where.append("r.kind = %s")
            params.append(kind)
        sql = (
            f"SELECT {rows.REPRESENTATION_COLUMNS} FROM representations r"
            + (f" WHERE {' AND '.join(where)}" if where else "")
            + " ORDER BY r.id LIMIT %s"
        )
        return [rows.representation(r) for r in self.all(sql, [*params, limit])]

    def media_roots(self) -> list[MediaRoot]:
        return [rows.media_root(r) for r in self.all("SELECT name, path FROM media_roots ORDER BY name")]

    def media_root(self, name: str) -> MediaRoot | None:
        row = self.one("SELECT name, path FROM media_roots WHERE name = %s", (name,))
        return rows.media_root(row) if row else None

    # --- activities --------------------------------------------------------------------

    def activity(self, activity_id: ActivityId) -> Activity:
        with self.snapshot():
            row = self.one(
                f"SELECT {rows.ACTIVITY_COLUMNS} FROM activities WHERE id = %s", (Id(activity_id.bytes),)
            )
            if row is None:
                raise NotFoundError(f"activity {activity_id} does not exist")
            edges = self.all(
                f"SELECT {rows.EDGE_COLUMNS} FROM activity_edges WHERE activity_id = %s "
                "ORDER BY direction, representation_id, role",
                (Id(activity_id.bytes),),
            )
        return rows.activity(row, edges)

    def activity_ids(self, kind: str | None, after: bytes | None, limit: int) -> list[ActivityId]:
        where, params = _after("id", after)
        if kind:
            where += (" AND" if where else " WHERE") + " kind = %s"
            params.append(kind)
        sql = f"SELECT id FROM activities{where} ORDER BY id LIMIT %s"
        return [ActivityId(r[0]) for r in self.all(sql, (*params, limit))]

    def edge_activities(self, rep_id: RepresentationId, direction: int) -> list[ActivityId]:
        """Activities with ``rep_id`` as an output (direction 1) or input (0), by id."""
        found = self.all(
            "SELECT DISTINCT activity_id FROM activity_edges WHERE representation_id = %s AND direction = %s "
            "ORDER BY activity_id LIMIT %s",
            (Id(rep_id.bytes), direction, 1001),
        )
        if len(found) > 1000:
            raise UnsupportedError(
                f"representation {rep_id} has more than 1000 related activities; page them"
            )
        return [ActivityId(r[0]) for r in found]

    # --- metadata ----------------------------------------------------------------------

    def metadata(self, target_kind: int, target_id: bytes) -> list[tuple[str, str, str]]:
        found = self.all(
            "SELECT vocabulary, property, value FROM metadata WHERE target_kind = %s AND target_id = %s "
            "ORDER BY id LIMIT %s",
            (target_kind, Id(target_id), MAX_LIST + 1),
        )
        if len(found) > MAX_LIST:
            raise UnsupportedError(f"object has more than {MAX_LIST} metadata assertions")
        return [tuple(r) for r in found]

    # --- jobs --------------------------------------------------------------------------

    def job(self, job_id: JobId) -> Job:
        row = self.one(f"SELECT {JOBS_WITH_ATTEMPTS} FROM jobs j WHERE j.id = %s", (Id(job_id.bytes),))
        if row is None:
            raise NotFoundError(f"job {job_id} does not exist")
        return self.with_attempts([row])[0]

    @property
    def production_id(self) -> ProductionId:
        if self._production is None:
            self._production = ProductionId(self.production_row()[0])
        return self._production

    def with_attempts(self, found: Sequence[Any]) -> list[Job]:
        """Jobs from rows of :data:`JOBS_WITH_ATTEMPTS` (attempts and dependencies as JSON, last)."""
        production = self.production_id if found else None
        return [
            rows.job(
                r[:-2],
                [rows.attempt((None, *a)) for a in json.loads(r[-2])] if r[-2] else (),
                [
                    (None, _uuid(u), state, binds, _uuid(resolved))
                    for u, state, binds, resolved in json.loads(r[-1])
                ]
                if r[-1]
                else (),
                production,
            )
            for r in found
        ]

    def jobs_ahead(self, job_id: JobId, now: int, cap: int) -> int | None:
        """How many claimable jobs of the same kind a claim takes before this requested one
        (claim order: priority desc, availability, id), counting at most ``cap``; None when
        the job is not requested, waits on a dependency or is not claimable before ``now``."""
        with self.snapshot():
            row = self.one(
                "SELECT kind, priority, available_at FROM jobs WHERE id = %s AND state = 1 AND waiting = 0 "
                "AND (not_before IS NULL OR not_before <= %s)",
                (Id(job_id.bytes), now),
            )
            if row is None:
                return None
            kind, priority, available = row
            probe = (
                "SELECT count(*) FROM (SELECT 1 FROM jobs WHERE state = 1 AND waiting = 0 AND kind = %(kind)s "
                "AND {} AND (not_before IS NULL OR not_before <= %(now)s) LIMIT %(cap)s) c"
            )
            terms = (
                "priority > %(priority)s",
                "priority = %(priority)s AND available_at < %(available)s",
                "priority = %(priority)s AND available_at = %(available)s AND id < %(id)s",
            )
            params = {
                "kind": kind,
                "priority": priority,
                "available": available,
                "id": Id(job_id.bytes),
                "now": now,
                "cap": cap,
            }
            found = self.one(f"SELECT ({'), ('.join(probe.format(t) for t in terms)})", params)
            return min(cap, sum(int(n) for n in found))

    def jobs(
        self,
        state: JobState | None,
        kind: str | None,
        after: bytes | None,
        limit: int,
        *,
        descending: bool = False,
    ) -> list[Job]:
        where: list[str] = []
        params: list[Any] = []
        if state is not None:
            where.append("j.state = %s")
            params.append(state.code)
        if kind is not None:
            where.append("j.kind = %s")
            params.append(kind)
        if after is not None:
            where.append("j.id < %s" if descending else "j.id > %s")
            params.append(Id(after))
        sql = (
            f"SELECT {JOBS_WITH_ATTEMPTS} FROM jobs j"
            + (f" WHERE {' AND '.join(where)}" if where else "")
            + f" ORDER BY j.id {'DESC' if descending else 'ASC'} LIMIT %s"
        )
        return self.with_attempts(self.all(sql, [*params, limit]))

    def search_jobs(
        self, query: JobQuery, after: JobKey | None, limit: int, window: int | None = None
    ) -> list[Job]:
        sql, params = search.job_search(query, after, limit, JOBS_WITH_ATTEMPTS, window)
        if window is not None and query.terms:
            guard, values = search.may_be_common(query.terms)
            if not self.one(guard, values)[0]:
                return []  # no term can be common: the walk would only cost its planning
        with self.snapshot():
            # A search's row estimates (ILIKE, IN lists) can be far too high, and the JIT
            # compilation they trigger costs up to a second for a page read in milliseconds.
            self.all("SELECT set_config('jit', 'off', true)")  # for this transaction
            return self.with_attempts(self.all(sql, params))

    def failure_diagnostics(self, kind: str | None, limit: int) -> list[tuple[str, int, bytes, int]]:
        sql, params = search.failure_diagnostics(kind, limit)
        return [(text, count, bytes(job), finished) for text, count, job, finished in self.all(sql, params)]

    def claims_expiring(
        self, before: int, kind: str | None, after: tuple[int, bytes] | None, limit: int
    ) -> list[Job]:
        """Claimed jobs (of ``kind``) whose lease expires at or before ``before``, by expiry then id."""
        sql = (
            f"SELECT {JOBS_WITH_ATTEMPTS} FROM jobs j WHERE j.state = 2 AND j.claim_expires_at <= %s"
            + (" AND j.kind = %s" if kind else "")
            + (" AND (j.claim_expires_at, j.id) > (%s, %s)" if after else "")
            + " ORDER BY j.claim_expires_at, j.id LIMIT %s"
        )
        keyset = (after[0], Id(after[1])) if after else ()
        return self.with_attempts(self.all(sql, (before, *([kind] if kind else []), *keyset, limit)))

    def job_counts(self, kind: str | None) -> dict[int, int]:
        sql = (
            "SELECT state, sum(count)::bigint FROM job_counts"
            + (" WHERE kind = %s" if kind else "")
            + " GROUP BY state"
        )
        return dict(self.all(sql, [kind] if kind else []))

    def job_kinds(self) -> list[str]:
        return [r[0] for r in self.all("SELECT DISTINCT kind FROM job_counts WHERE count > 0 ORDER BY kind")]

    def job_secret(self, job_id: JobId) -> tuple[int, bytes | None, int | None] | None:
        """State, current secret hash and expiry of a job (for lease import)."""
        row = self.one(
            "SELECT state, claim_secret_hash, claim_expires_at FROM jobs WHERE id = %s", (Id(job_id.bytes),)
        )
        return tuple(row) if row is not None else None

    def completed_by(self, job_id: JobId) -> tuple[bytes, bytes] | None:
        """(completion representation, completing attempt's secret hash) of a succeeded job."""
        row = self.one(
            "SELECT j.completion_representation_id, a.secret_hash FROM jobs j JOIN job_attempts a "
            "ON a.job_id = j.id AND a.outcome = 1 WHERE j.id = %s AND j.state = 3",
            (Id(job_id.bytes),),
        )
        return (row[0], row[1]) if row is not None else None

    # --- workers -----------------------------------------------------------------------

    def workers(self, now: int) -> list[WorkerRow]:
        with self.snapshot():
            heads = self.all(
                "SELECT id, name, host, registered_at, last_seen, capacity, kinds FROM workers ORDER BY name"
            )
            running: dict[bytes, list[bytes]] = {}
            for worker, job in self.all(
                "SELECT claim_worker_id, id FROM jobs WHERE claim_worker_id IS NOT NULL "
                "AND claim_expires_at > %s ORDER BY claim_worker_id, id",
                (now,),
            ):
                running.setdefault(worker, []).append(job)
            outcomes: dict[bytes, dict[int, int]] = {}
            for worker, outcome, count in self.all(
                "SELECT worker_id, outcome, count(*) FROM job_attempts WHERE worker_id IS NOT NULL "
                "AND outcome IS NOT NULL GROUP BY worker_id, outcome"
            ):
                outcomes.setdefault(worker, {})[outcome] = count
        return [
            (
                name,
                host,
                registered,
                last_seen,
                capacity,
                tuple(json.loads(kinds)) if kinds else None,
                running.get(id_, []),
                outcomes.get(id_, {}),
            )
            for id_, name, host, registered, last_seen, capacity, kinds in heads
        ]

    def worker_attempts(self, name: str, limit: int) -> list[tuple[bytes, Attempt]]:
        found = self.all(
            f"SELECT {rows.ATTEMPT_COLUMNS} FROM job_attempts a "
            "WHERE a.worker_id = (SELECT id FROM workers WHERE name = %s) "
            "ORDER BY a.claimed_at DESC, a.job_id, a.number DESC LIMIT %s",
            (name, limit),
        )
        return [(row[0], rows.attempt(row)) for row in found]

    # --- progress and attempt logs -------------------------------------------------------

    def progress_token(self) -> int:
        """The progress signal: moves (at most once per attempt per second) when progress is reported."""
        return int(self.one("SELECT token FROM progress_signal WHERE id = 1")[0])

    def attempt_log(
        self, job_id: JobId, number: int | None
    ) -> tuple[int, str | None, str | None, str | None, int | None] | None:
        """(attempt number, log root, log path, tail, tail recorded at) of an attempt (the
        newest with ``number`` None), or None when the job has no such attempt."""
        row = self.one(
            "SELECT a.number, l.root_name, l.path, l.tail, l.tail_at FROM job_attempts a "
            "LEFT JOIN job_attempt_logs l ON l.job_id = a.job_id AND l.number = a.number "
            "WHERE a.job_id = %(id)s AND a.number = coalesce(%(number)s::integer, "
            "(SELECT max(number) FROM job_attempts WHERE job_id = %(id)s))",
            {"id": Id(job_id.bytes), "number": number},
        )
        return tuple(row) if row is not None else None

    def job_history(self, job_id: JobId) -> list[tuple[int, int, str, str | None, str | None, str | None]]:
        """(sequence, committed_at, event kind, origin, message, principal) of a job's lifecycle events."""
        return [
            tuple(r)
            for r in self.all(
                "SELECT e.sequence, r.committed_at, e.kind, r.origin, r.message, r.principal FROM revision_events e "
                f"JOIN revisions r ON r.sequence = e.sequence WHERE e.subject = %s AND e.kind IN ({_JOB_KINDS}) "
                "ORDER BY e.sequence, e.position LIMIT 1000",
                (Id(job_id.bytes),),
            )
        ]

    # --- revisions ---------------------------------------------------------------------

    def revision_summaries(
        self, limit: int, before: int | None
    ) -> list[tuple[int, bytes, int, str | None, str | None, dict[str, int], bytes | None, str | None]]:
        """Newest-first revision headers with per-kind event counts and their one subject (if any)."""
        with self.snapshot():
            heads = self.all(
                "SELECT sequence, id, committed_at, origin, message, principal FROM revisions"
                + (" WHERE sequence < %s" if before is not None else "")
                + " ORDER BY sequence DESC LIMIT %s",
                (*([before] if before is not None else []), limit),
            )
            if not heads:
                return []
            counts: dict[int, dict[str, int]] = {}
            subjects: dict[int, bytes | None] = {}
            window = (heads[-1][0], heads[0][0])
            for seq, kind, count in self.all(
                "SELECT sequence, kind, count(*) FROM revision_events WHERE sequence BETWEEN %s AND %s "
                "GROUP BY sequence, kind",
                window,
            ):
                counts.setdefault(seq, {})[kind] = count
            for seq, distinct, first, unnamed in self.all(
                "SELECT sequence, count(DISTINCT subject), min(subject::text), count(*) - count(subject) "
                "FROM revision_events WHERE sequence BETWEEN %s AND %s GROUP BY sequence",
                window,
            ):
                subjects[seq] = (
                    bytes.fromhex(first.replace("-", "")) if distinct == 1 and not unnamed else None
                )
        return [(*head[:5], counts.get(head[0], {}), subjects.get(head[0]), head[5]) for head in heads]

    def latest_revision(self) -> Revision | None:
        found = self.revisions("SELECT max(sequence) FROM revisions", ())
        return found[0] if found else None

    def latest_sequence(self) -> int:
        return int(self.one("SELECT coalesce(max(sequence), 0) FROM revisions")[0])

    def revisions(self, sequences_sql: str, params: Sequence[Any]) -> list[Revision]:
        """Revisions (with their events) whose sequence the given subquery selects."""
        with self.snapshot():
            heads = self.all(
                f"SELECT {rows.REVISION_COLUMNS} FROM revisions WHERE sequence IN ({sequences_sql}) "
                "ORDER BY sequence",
                params,
            )
            if not heads:
                return []
            events: dict[int, list[Any]] = {}
            for seq, position, kind, payload in self.all(
                "SELECT sequence, position, kind, payload FROM revision_events "
                "WHERE sequence BETWEEN %s AND %s ORDER BY sequence, position",
                (heads[0][0], heads[-1][0]),
            ):
                events.setdefault(seq, []).append((position, kind, payload))
        return [rows.revision(head, events.get(head[0], ())) for head in heads]

    def changes_since(
        self, sequence: int, limit: int, kinds: Sequence[str] | None
    ) -> tuple[list[Revision], int]:
        with self.snapshot():
            window = None
            if kinds is None:
                found = self.revisions(
                    "SELECT sequence FROM revisions WHERE sequence > %s ORDER BY sequence LIMIT %s",
                    (sequence, limit),
                )
            else:
                # A bounded window of revisions per call, as on SQLite.
                window = sequence + FILTER_WINDOW
                found = self.revisions(
                    "SELECT DISTINCT sequence FROM revision_events WHERE sequence > %s AND sequence <= %s "
                    "AND kind = ANY(%s) ORDER BY sequence LIMIT %s",
                    (sequence, window, list(kinds), limit),
                )
            if len(found) == limit:
                through = found[-1].sequence
            else:
                newest = self.one("SELECT coalesce(max(sequence), 0) FROM revisions")[0]
                through = max(min(newest, window) if window is not None else newest, sequence)
        return found, through


def _uuid(text: str | None) -> bytes | None:
    """An id that came as JSON text."""
    return uuid.UUID(text).bytes if text is not None else None


def _after(column: str, after: bytes | None) -> tuple[str, list[Any]]:
    """A keyset condition ``column > after`` (none for the first page)."""
    if after is None:
        return "", []
    return f" WHERE {column} > %s", [Id(after)]
