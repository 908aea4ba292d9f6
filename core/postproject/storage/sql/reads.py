"""Committed-state reads both engines answer with the same statements
(:class:`postproject.engine.Reads`).

:class:`SqlReads` is each adapter's reader's base: the adapter gives it its connections
(:meth:`SqlReads.snapshot`, :meth:`SqlReads.all`, :meth:`SqlReads.one`, in the adapter's own
placeholders), its dialect, and what it reads its own way: a job with its attempts and
dependencies (SQLite joins and follows up; PostgreSQL aggregates them as JSON in the job's
row) and job search (SQLite's FTS5 tables; PostgreSQL's trigram indexes). Every other read is
here once, in one order. A multi-statement read runs in one snapshot.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from postproject.engine import JobKey, JobQuery, RegisteredWorker
from postproject.model.activities import Activity
from postproject.model.assets import Asset, MediaRoot, Representation
from postproject.model.clock import MarkSource
from postproject.model.errors import NotFoundError, UnsupportedError
from postproject.model.ids import ActivityId, AssetId, JobId, ProductionId, RepresentationId, iter_chunks
from postproject.model.jobs import Attempt, AttemptOutcome, Job
from postproject.model.lifecycle import HISTORY_EVENT_KINDS, JobState
from postproject.model.revisions import Revision
from postproject.storage import rows
from postproject.storage.sql.dialect import Dialect, Params
from postproject.storage.sql.service import ServiceReader

MAX_LIST = 100_000
FILTER_WINDOW = 10_000  # revisions examined by one filtered feed read
REQUESTED = JobState.REQUESTED.code
CLAIMED = JobState.CLAIMED.code
SUCCEEDED = JobState.SUCCEEDED.code
_HISTORY_KINDS = ",".join(f"'{kind}'" for kind in sorted(HISTORY_EVENT_KINDS))
# Three range seeks on the claim index (each bounded by the cap) count the jobs a claim takes
# before a requested one: higher priority; the same priority, available earlier; the same
# priority and time, a lower id.
_AHEAD = (
    "SELECT count(*) FROM (SELECT 1 FROM jobs{hint} WHERE state = {requested} AND waiting = 0 "
    "AND kind = :kind AND {term} AND (not_before IS NULL OR not_before <= :now) LIMIT :cap) c"
)
_AHEAD_TERMS = (
    "priority > :priority",
    "priority = :priority AND available_at < :available",
    "priority = :priority AND available_at = :available AND id < :id",
)

CHUNK = 500  # ids per IN (...) list of a read by ids


class SqlReads(ABC):
    """The reads both engines share, over the adapter's connections (see the module docstring)."""

    dialect: Dialect
    location: str  # what messages name: a file path, or a URI without its password
    _production: ProductionId | None = None

    # --- what the adapter provides ---------------------------------------------------------

    @abstractmethod
    def snapshot(self) -> AbstractContextManager[Any]:
        """One read transaction; nested uses share it."""

    @abstractmethod
    def all(self, sql: str, params: Params = ()) -> list[Any]:
        """Every row of ``sql`` (the adapter's placeholders), in the current snapshot if any."""

    @abstractmethod
    def one(self, sql: str, params: Params = ()) -> Any:
        """The first row of ``sql`` or None, in the current snapshot if any."""

    @abstractmethod
    def job(self, job_id: JobId) -> Job: ...

    @abstractmethod
    def job_page(self, tail: str, params: Params) -> list[Job]:
        """Jobs with their attempts and dependencies, in order, from ``SELECT <job columns>
        FROM jobs j`` + ``tail`` (SQLite's placeholders; ``tail`` holds WHERE, ORDER BY, LIMIT)."""

    @abstractmethod
    def search_jobs(
        self, query: JobQuery, after: JobKey | None, limit: int, window: int | None = None
    ) -> list[Job]: ...

    @abstractmethod
    def failure_diagnostics(self, kind: str | None, limit: int) -> list[tuple[str, int, bytes, int]]: ...

    # --- statements in SQLite's placeholders -------------------------------------------------

    def rows(self, sql: str, params: Params = ()) -> list[Any]:
        return self.all(self.dialect.sql(sql), params)

    def row(self, sql: str, params: Params = ()) -> Any:
        return self.one(self.dialect.sql(sql), params)

    def rows_where_in(
        self, select: str, column: str, values: Sequence[Any], param: Callable[[Any], Any]
    ) -> list[Any]:
        """``select`` with ``WHERE column IN (values)``: each distinct value once, one statement
        per :data:`CHUNK` of them (``param`` binds a value)."""
        return [
            found
            for batch in iter_chunks(list(dict.fromkeys(values)), CHUNK)
            for found in self.rows(
                f"{select} WHERE {column} IN ({', '.join('?' * len(batch))})", [param(v) for v in batch]
            )
        ]

    @property
    def service(self) -> ServiceReader:
        """Tokens, replies and registrations by name (:mod:`postproject.storage.sql.service`)."""
        return ServiceReader(self)

    # --- production --------------------------------------------------------------------

    def production_row(self) -> tuple[bytes, int, bytes]:
        row = self.row("SELECT id, created_at, cursor_key FROM production")
        if row is None:
            raise NotFoundError(f"{self.location} has no production record")
        self._production = ProductionId(row[0])  # (never changes: the first page need not read it again)
        return (row[0], row[1], row[2])

    @property
    def production_id(self) -> ProductionId:
        if self._production is None:
            self._production = ProductionId(self.production_row()[0])
        return self._production

    def high_water(self) -> int | None:
        """The durable clock high-water mark: the newest revision's mark or job_clock's, the larger."""
        mark, stored = self.row(
            "SELECT (SELECT clock_mark FROM revisions ORDER BY sequence DESC LIMIT 1), high_water FROM job_clock"
        )
        return max((m for m in (mark, stored) if m is not None), default=None)

    def mark_source(self, mark: int) -> MarkSource | None:
        row = self.row(
            "SELECT sequence, committed_at, origin, principal FROM revisions WHERE clock_mark >= ? "
            "ORDER BY sequence LIMIT 1",
            (mark,),
        )
        if row is None:
            return None
        attempt = self.row(
            "SELECT a.agent_name, w.name FROM revision_events e JOIN job_attempts a ON a.job_id = e.subject "
            "LEFT JOIN workers w ON w.id = a.worker_id WHERE e.sequence = ? ORDER BY e.position, a.number DESC "
            "LIMIT 1",
            (row[0],),
        )
        agent, worker = attempt if attempt is not None else (None, None)
        return MarkSource(int(row[0]), int(row[1]), row[2], row[3], agent, worker)

    # --- assets, representations, roots ------------------------------------------------

    def asset(self, asset_id: AssetId) -> Asset:
        row = self.row(
            f"SELECT {rows.ASSET_COLUMNS} FROM assets WHERE id = ?", (self.dialect.id(asset_id.bytes),)
        )
        if row is None:
            raise NotFoundError(f"asset {asset_id} does not exist")
        return rows.asset(row)

    def assets_by_id(self, ids: Sequence[bytes]) -> list[Asset]:
        """The assets among ``ids`` that exist (any order): one statement per :data:`CHUNK` ids."""
        found = self.rows_where_in(f"SELECT {rows.ASSET_COLUMNS} FROM assets", "id", ids, self.dialect.id)
        return [rows.asset(r) for r in found]

    def assets(self, after: bytes | None, limit: int) -> list[Asset]:
        where, params = self._after("id", after)
        found = self.rows(
            f"SELECT {rows.ASSET_COLUMNS} FROM assets{where} ORDER BY id LIMIT ?", [*params, limit]
        )
        return [rows.asset(r) for r in found]

    def _after(self, column: str, after: bytes | None) -> tuple[str, list[Any]]:
        """A keyset condition ``column > after`` (none for the first page)."""
        return ("", []) if after is None else (f" WHERE {column} > ?", [self.dialect.id(after)])

    def representation(self, rep_id: RepresentationId) -> Representation:
        row = self.row(
            f"SELECT {self.dialect.representation_columns} FROM representations r WHERE r.id = ?",
            (self.dialect.id(rep_id.bytes),),
        )
        if row is None:
            raise NotFoundError(f"representation {rep_id} does not exist")
        return rows.representation(row)

    def representations_by_id(self, ids: Sequence[bytes]) -> list[Representation]:
        """The representations among ``ids`` that exist (any order): one statement per
        :data:`CHUNK` ids."""
        select = f"SELECT {self.dialect.representation_columns} FROM representations r"
        return [rows.representation(r) for r in self.rows_where_in(select, "r.id", ids, self.dialect.id)]

    def representations(
        self, asset_id: AssetId | None, kind: int | None, after: bytes | None, limit: int
    ) -> list[Representation]:
        where: list[str] = []
        params: list[Any] = []
        if after is not None:
            where.append("r.id > ?")
            params.append(self.dialect.id(after))
        if asset_id is not None:
            where.append("r.asset_id = ?")
            params.append(self.dialect.id(asset_id.bytes))
        if kind is not None:
            where.append("r.kind = ?")
            params.append(kind)
        sql = (
            f"SELECT {self.dialect.representation_columns} FROM representations r"
            + (f" WHERE {' AND '.join(where)}" if where else "")
            + " ORDER BY r.id LIMIT ?"
        )
        return [rows.representation(r) for r in self.rows(sql, [*params, limit])]

    def media_roots(self) -> list[MediaRoot]:
        return [rows.media_root(r) for r in self.rows("SELECT name, path FROM media_roots ORDER BY name")]

    def media_root(self, name: str) -> MediaRoot | None:
        row = self.row("SELECT name, path FROM media_roots WHERE name = ?", (name,))
        return rows.media_root(row) if row else None

    # --- activities and metadata ---------------------------------------------------------

    def activity(self, activity_id: ActivityId) -> Activity:
        key = (self.dialect.id(activity_id.bytes),)
        with self.snapshot():
            row = self.row(f"SELECT {rows.ACTIVITY_COLUMNS} FROM activities WHERE id = ?", key)
            if row is None:
                raise NotFoundError(f"activity {activity_id} does not exist")
            edges = self.rows(
                f"SELECT {rows.EDGE_COLUMNS} FROM activity_edges WHERE activity_id = ? "
                "ORDER BY direction, representation_id, role",
                key,
            )
        return rows.activity(row, edges)

    def activity_ids(self, kind: str | None, after: bytes | None, limit: int) -> list[ActivityId]:
        where, params = self._after("id", after)
        if kind:
            where += (" AND" if where else " WHERE") + " kind = ?"
            params.append(kind)
        found = self.rows(f"SELECT id FROM activities{where} ORDER BY id LIMIT ?", [*params, limit])
        return [ActivityId(r[0]) for r in found]

    def edge_activities(self, rep_id: RepresentationId, direction: int) -> list[ActivityId]:
        """Activities with ``rep_id`` as an output (direction 1) or input (0), by id."""
        found = self.rows(
            "SELECT DISTINCT activity_id FROM activity_edges WHERE representation_id = ? AND direction = ? "
            "ORDER BY activity_id LIMIT ?",
            (self.dialect.id(rep_id.bytes), direction, 1001),
        )
        if len(found) > 1000:
            raise UnsupportedError(
                f"representation {rep_id} has more than 1000 related activities; page them"
            )
        return [ActivityId(r[0]) for r in found]

    def metadata(self, target_kind: int, target_id: bytes) -> list[tuple[str, str, str]]:
        found = self.rows(
            "SELECT vocabulary, property, value FROM metadata WHERE target_kind = ? AND target_id = ? "
            "ORDER BY id LIMIT ?",
            (target_kind, self.dialect.id(target_id), MAX_LIST + 1),
        )
        if len(found) > MAX_LIST:
            raise UnsupportedError(f"object has more than {MAX_LIST} metadata assertions")
        return [(vocabulary, name, value) for vocabulary, name, value in found]

    # --- jobs --------------------------------------------------------------------------

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
            where.append("j.state = ?")
            params.append(state.code)
        if kind is not None:
            where.append("j.kind = ?")
            params.append(kind)
        if after is not None:
            where.append("j.id < ?" if descending else "j.id > ?")
            params.append(self.dialect.id(after))
        return self.job_page(
            (f" WHERE {' AND '.join(where)}" if where else "")
            + f" ORDER BY j.id {'DESC' if descending else 'ASC'} LIMIT ?",
            [*params, limit],
        )

    def claims_expiring(
        self, before: int, kind: str | None, after: tuple[int, bytes] | None, limit: int
    ) -> list[Job]:
        """Claimed jobs (of ``kind``) whose lease expires at or before ``before``, by expiry then id."""
        keyset = (after[0], self.dialect.id(after[1])) if after else ()
        return self.job_page(
            f" WHERE j.state = {CLAIMED} AND j.claim_expires_at <= ?"
            + (" AND j.kind = ?" if kind else "")
            + (" AND (j.claim_expires_at, j.id) > (?, ?)" if after else "")
            + " ORDER BY j.claim_expires_at, j.id LIMIT ?",
            (before, *([kind] if kind else []), *keyset, limit),
        )

    def jobs_ahead(self, job_id: JobId, now: int, cap: int) -> int | None:
        """How many claimable jobs of the same kind a claim takes before this requested one
        (claim order: priority desc, availability, id), counting at most ``cap``; None when
        the job is not requested, waits on a dependency or is not claimable before ``now``."""
        key = self.dialect.id(job_id.bytes)
        with self.snapshot():
            row = self.row(
                f"SELECT kind, priority, available_at FROM jobs WHERE id = ? AND state = {REQUESTED} "
                "AND waiting = 0 AND (not_before IS NULL OR not_before <= ?)",
                (key, now),
            )
            if row is None:
                return None
            kind, priority, available = row
            hint = self.dialect.indexed_by("jobs_ready_kind")
            probes = [_AHEAD.format(hint=hint, requested=REQUESTED, term=term) for term in _AHEAD_TERMS]
            params = {
                "kind": kind,
                "priority": priority,
                "available": available,
                "id": key,
                "now": now,
                "cap": cap,
            }
            found = self.row(f"SELECT ({'), ('.join(probes)})", params)
            return min(cap, sum(int(n) for n in found))

    def job_counts(self, kind: str | None) -> dict[int, int]:
        found = self.rows(
            "SELECT state, CAST(sum(count) AS BIGINT) FROM job_counts"
            + (" WHERE kind = ?" if kind else "")
            + " GROUP BY state",
            [kind] if kind else [],
        )
        return dict(found)

    def job_kinds(self) -> list[str]:
        return [r[0] for r in self.rows("SELECT DISTINCT kind FROM job_counts WHERE count > 0 ORDER BY kind")]

    def job_secret(self, job_id: JobId) -> tuple[int, bytes | None, int | None] | None:
        """State, current secret hash and expiry of a job (for lease import)."""
        row = self.row(
            "SELECT state, claim_secret_hash, claim_expires_at FROM jobs WHERE id = ?",
            (self.dialect.id(job_id.bytes),),
        )
        return (row[0], row[1], row[2]) if row is not None else None

    def completed_by(self, job_id: JobId) -> tuple[bytes, bytes] | None:
        """(completion representation, completing attempt's secret hash) of a succeeded job."""
        row = self.row(
            "SELECT j.completion_representation_id, a.secret_hash FROM jobs j JOIN job_attempts a "
            f"ON a.job_id = j.id AND a.outcome = {AttemptOutcome.SUCCEEDED.code} "
            f"WHERE j.id = ? AND j.state = {SUCCEEDED}",
            (self.dialect.id(job_id.bytes),),
        )
        return (row[0], row[1]) if row is not None else None

    # --- workers -----------------------------------------------------------------------

    def registered_workers(self) -> list[RegisteredWorker]:
        """(id, name, host, registered_at, last_seen, capacity, kinds) of every worker, by name."""
        found = self.rows(
            "SELECT id, name, host, registered_at, last_seen, capacity, kinds FROM workers ORDER BY name"
        )
        return [
            (id_, name, host, registered, last_seen, capacity, tuple(json.loads(kinds)) if kinds else None)
            for id_, name, host, registered, last_seen, capacity, kinds in found
        ]

    def running_claims(self, now: int) -> list[tuple[bytes, bytes]]:
        """(worker id, job id) of the claims registered workers hold unexpired at ``now``, by worker and job."""
        found = self.rows(
            f"SELECT claim_worker_id, id FROM jobs{self.dialect.indexed_by('jobs_by_worker')} "
            "WHERE claim_worker_id IS NOT NULL AND claim_expires_at > ? ORDER BY claim_worker_id, id",
            (now,),
        )
        return [(worker, job) for worker, job in found]

    def attempt_outcomes(self) -> list[tuple[bytes, int, int]]:
        """(worker id, outcome code, attempts) of the ended attempts of registered workers: the
        counts the store maintains as attempts end (``worker_outcomes``), never a count of attempts."""
        found = self.rows("SELECT worker_id, outcome, count FROM worker_outcomes WHERE count > 0")
        return [(worker, outcome, count) for worker, outcome, count in found]

    def worker_attempts(self, name: str, limit: int) -> list[tuple[bytes, Attempt]]:
        found = self.rows(
            f"SELECT {rows.ATTEMPT_COLUMNS} FROM job_attempts a{self.dialect.indexed_by('job_attempts_by_worker')} "
            "WHERE a.worker_id = (SELECT id FROM workers WHERE name = ?) "
            "ORDER BY a.claimed_at DESC, a.job_id, a.number DESC LIMIT ?",
            (name, limit),
        )
        return [(row[0], rows.attempt(row)) for row in found]

    # --- progress and attempt logs -------------------------------------------------------

    def progress_token(self) -> int:
        """The progress signal: moves (at most once per attempt per second) when progress is reported."""
        return int(self.row("SELECT token FROM progress_signal WHERE id = 1")[0])

    def attempt_log(
        self, job_id: JobId, number: int | None
    ) -> tuple[int, str | None, str | None, str | None, int | None] | None:
        """(attempt number, log root, log path, tail, tail recorded at) of an attempt (the
        newest with ``number`` None), or None when the job has no such attempt."""
        row = self.row(
            "SELECT a.number, l.root_name, l.path, l.tail, l.tail_at FROM job_attempts a "
            "LEFT JOIN job_attempt_logs l ON l.job_id = a.job_id AND l.number = a.number "
            "WHERE a.job_id = :id AND a.number = coalesce(CAST(:number AS INTEGER), "
            "(SELECT max(number) FROM job_attempts WHERE job_id = :id))",
            {"id": self.dialect.id(job_id.bytes), "number": number},
        )
        return (row[0], row[1], row[2], row[3], row[4]) if row is not None else None

    def job_history(self, job_id: JobId) -> list[tuple[int, int, str, str | None, str | None, str | None]]:
        """(sequence, committed_at, event kind, origin, message, principal) of a job's lifecycle events."""
        found = self.rows(
            "SELECT e.sequence, r.committed_at, e.kind, r.origin, r.message, r.principal FROM revision_events e "
            f"JOIN revisions r ON r.sequence = e.sequence WHERE e.subject = ? AND e.kind IN ({_HISTORY_KINDS}) "
            "ORDER BY e.sequence, e.position LIMIT 1000",
            (self.dialect.id(job_id.bytes),),
        )
        return [
            (s, at, kind, origin, message, principal) for s, at, kind, origin, message, principal in found
        ]

    # --- revisions ---------------------------------------------------------------------

    def revision_summaries(
        self, limit: int, before: int | None
    ) -> list[tuple[int, bytes, int, str | None, str | None, dict[str, int], bytes | None, str | None]]:
        """Newest-first revision headers with per-kind event counts, their one subject (if any)
        and their principal."""
        with self.snapshot():
            heads = self.rows(
                "SELECT sequence, id, committed_at, origin, message, principal FROM revisions"
                + (" WHERE sequence < ?" if before is not None else "")
                + " ORDER BY sequence DESC LIMIT ?",
                (*([before] if before is not None else []), limit),
            )
            if not heads:
                return []
            counts: dict[int, dict[str, int]] = {}
            subjects: dict[int, bytes | None] = {}
            window = (heads[-1][0], heads[0][0])
            for seq, kind, count in self.rows(
                "SELECT sequence, kind, count(*) FROM revision_events WHERE sequence BETWEEN ? AND ? "
                "GROUP BY sequence, kind",
                window,
            ):
                counts.setdefault(seq, {})[kind] = count
            for seq, distinct, first, unnamed in self.rows(
                f"SELECT sequence, count(DISTINCT subject), {self.dialect.any_id.format('subject')}, "
                "count(*) - count(subject) FROM revision_events WHERE sequence BETWEEN ? AND ? GROUP BY sequence",
                window,
            ):
                subjects[seq] = first if distinct == 1 and not unnamed else None
        return [(*head[:5], counts.get(head[0], {}), subjects.get(head[0]), head[5]) for head in heads]

    def commit_times(self, sequences: Sequence[int]) -> list[tuple[int, int]]:
        """(sequence, committed_at) of the revisions among ``sequences`` that exist."""
        found = self.rows_where_in("SELECT sequence, committed_at FROM revisions", "sequence", sequences, int)
        return [(int(seq), int(at)) for seq, at in found]

    def latest_revision(self) -> Revision | None:
        found = self.revisions("SELECT max(sequence) FROM revisions", ())
        return found[0] if found else None

    def latest_sequence(self) -> int:
        return int(self.row("SELECT coalesce(max(sequence), 0) FROM revisions")[0])

    def revisions(self, sequences_sql: str, params: Params) -> list[Revision]:
        """Revisions (with their events) whose sequence the given subquery selects."""
        with self.snapshot():
            heads = self.rows(
                f"SELECT {rows.REVISION_COLUMNS} FROM revisions WHERE sequence IN ({sequences_sql}) "
                "ORDER BY sequence",
                params,
            )
            if not heads:
                return []
            events: dict[int, list[Any]] = {}
            for seq, position, kind, payload in self.rows(
                "SELECT sequence, position, kind, payload FROM revision_events "
                "WHERE sequence BETWEEN ? AND ? ORDER BY sequence, position",
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
                    "SELECT sequence FROM revisions WHERE sequence > ? ORDER BY sequence LIMIT ?",
                    (sequence, limit),
                )
            else:
                # Scan a bounded window of revisions: a rare kind never makes one call read
                # the whole journal; through_sequence tells the caller where to continue.
                window = sequence + FILTER_WINDOW
                match, values = self.dialect.in_values("kind", kinds)
                found = self.revisions(
                    "SELECT DISTINCT sequence FROM revision_events WHERE sequence > ? AND sequence <= ? "
                    f"AND {match} ORDER BY sequence LIMIT ?",
                    (sequence, window, *values, limit),
                )
            if len(found) == limit:
                through = found[-1].sequence
            else:
                newest = self.latest_sequence()
                through = max(min(newest, window) if window is not None else newest, sequence)
        return found, through
