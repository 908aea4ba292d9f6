"""Read queries. Every multi-statement read runs in one read transaction (one snapshot)."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from postproject.engine import JobKey, JobQuery, WorkerRow
from postproject.model.activities import Activity
from postproject.model.assets import Asset, MediaRoot, Representation
from postproject.model.errors import NotFoundError, UnsupportedError
from postproject.model.ids import ActivityId, AssetId, JobId, ProductionId, RepresentationId
from postproject.model.jobs import Attempt, Job
from postproject.model.lifecycle import HISTORY_EVENT_KINDS, JobState
from postproject.model.revisions import Revision
from postproject.storage import rows
from postproject.storage.sqlite import search
from postproject.storage.sqlite.errors import translated
from postproject.storage.sqlite.service import ServiceReader

MAX_LIST = 100_000
_JOB_WIDTH = rows.JOB_COLUMNS.count(",") + 1  # columns of a job row (none has a comma inside)
_JOB_WITH_ATTEMPTS = (
    f"SELECT {rows.JOB_COLUMNS}, {rows.ATTEMPT_COLUMNS} FROM jobs j "
    "LEFT JOIN job_attempts a ON a.job_id = j.id WHERE j.id = ? ORDER BY a.number"
)
FILTER_WINDOW = 10_000  # revisions examined by one filtered feed read


class Reader:
    """Queries over one connection (guarded by a lock: connections are not thread-safe)."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self._lock = threading.RLock()
        self._depth = 0
        self._production: ProductionId | None = None

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """One read transaction; nested uses share it."""
        with self._lock, translated(self.path):
            outer = self._depth == 0 and not self.conn.in_transaction
            if outer:
                self.conn.execute("BEGIN")
            self._depth += 1
            try:
                yield self.conn
            finally:
                self._depth -= 1
                if outer and self.conn.in_transaction:
                    self.conn.execute("COMMIT")

    @property
    def service(self) -> ServiceReader:
        return ServiceReader(self)

    # One statement is its own consistent read: no BEGIN/COMMIT around it (inside an
    # outer snapshot it still runs in that transaction).
    def _all(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        with self._lock, translated(self.path):
            return self.conn.execute(sql, params).fetchall()

    def _one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        with self._lock, translated(self.path):
            cursor = self.conn.execute(sql, params)
            row = cursor.fetchone()
            cursor.close()
            return row

    # --- production --------------------------------------------------------------------

    def production_row(self) -> tuple[bytes, int, bytes]:
        row = self._one("SELECT id, created_at, cursor_key FROM production")
        if row is None:
            raise NotFoundError(f"{self.path} has no production record")
        return row  # type: ignore[no-any-return]

    def data_version(self) -> int:
        return int(self._one("PRAGMA data_version")[0])

    def high_water(self) -> int | None:
        """The durable clock high-water mark (see the schema's note on job_clock)."""
        mark, stored = self._one(
            "SELECT (SELECT clock_mark FROM revisions ORDER BY sequence DESC LIMIT 1), high_water FROM job_clock"
        )
        return max((m for m in (mark, stored) if m is not None), default=None)

    # --- assets, representations, roots ------------------------------------------------

    def asset(self, asset_id: AssetId) -> Asset:
        row = self._one(f"SELECT {rows.ASSET_COLUMNS} FROM assets WHERE id = ?", (asset_id.bytes,))
        if row is None:
            raise NotFoundError(f"asset {asset_id} does not exist")
        return rows.asset(row)

    def assets(self, after: bytes | None, limit: int) -> list[Asset]:
        sql = f"SELECT {rows.ASSET_COLUMNS} FROM assets WHERE id > ? ORDER BY id LIMIT ?"
        return [rows.asset(r) for r in self._all(sql, (after or b"", limit))]

    def exists(self, table: str, id_: bytes) -> bool:
        assert table in ("assets", "representations", "activities", "jobs")
        return self._one(f"SELECT 1 FROM {table} WHERE id = ?", (id_,)) is not None

    def representation(self, rep_id: RepresentationId) -> Representation:
        row = self._one(
            f"SELECT {rows.REPRESENTATION_COLUMNS} FROM representations r WHERE r.id = ?",
            (rep_id.bytes,),
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
        where: list[str] = ["r.id > ?"]
        params: list[Any] = [after or b""]
        if asset_id is not None:
            where.append("r.asset_id = ?")
            params.append(asset_id.bytes)
        if kind is not None:
            where.append("r.kind = ?")
            params.append(kind)
        sql = (
            f"SELECT {rows.REPRESENTATION_COLUMNS} FROM representations r "
            f"WHERE {' AND '.join(where)} ORDER BY r.id LIMIT ?"
        )
        return [rows.representation(r) for r in self._all(sql, [*params, limit])]

    def media_roots(self) -> list[MediaRoot]:
        return [rows.media_root(r) for r in self._all("SELECT name, path FROM media_roots ORDER BY name")]

    def media_root(self, name: str) -> MediaRoot | None:
        row = self._one("SELECT name, path FROM media_roots WHERE name = ?", (name,))
        return rows.media_root(row) if row else None

    # --- activities --------------------------------------------------------------------

    def activity(self, activity_id: ActivityId) -> Activity:
        with self.snapshot() as conn:
            row = conn.execute(
                f"SELECT {rows.ACTIVITY_COLUMNS} FROM activities WHERE id = ?",
                (activity_id.bytes,),
            ).fetchone()
            if row is None:
                raise NotFoundError(f"activity {activity_id} does not exist")
            edges = conn.execute(
                f"SELECT {rows.EDGE_COLUMNS} FROM activity_edges WHERE activity_id = ? "
                "ORDER BY direction, representation_id, role",
                (activity_id.bytes,),
            ).fetchall()
        return rows.activity(row, edges)

    def activity_ids(self, kind: str | None, after: bytes | None, limit: int) -> list[ActivityId]:
        sql = (
            "SELECT id FROM activities WHERE id > ?"
            + (" AND kind = ?" if kind else "")
            + " ORDER BY id LIMIT ?"
        )
        params: list[Any] = [after or b"", *([kind] if kind else []), limit]
        return [ActivityId(r[0]) for r in self._all(sql, params)]

    def edge_activities(self, rep_id: RepresentationId, direction: int) -> list[ActivityId]:
        """Activities with ``rep_id`` as an output (direction 1) or input (0), by id."""
        found = self._all(
            "SELECT DISTINCT activity_id FROM activity_edges WHERE representation_id = ? AND direction = ? "
            "ORDER BY activity_id LIMIT ?",
            (rep_id.bytes, direction, 1001),
        )
        if len(found) > 1000:
            raise UnsupportedError(
                f"representation {rep_id} has more than 1000 related activities; page them"
            )
        return [ActivityId(r[0]) for r in found]

    # --- metadata ----------------------------------------------------------------------

    def metadata(self, target_kind: int, target_id: bytes) -> list[tuple[str, str, str]]:
        found = self._all(
            "SELECT vocabulary, property, value FROM metadata WHERE target_kind = ? AND target_id = ? "
            "ORDER BY id LIMIT ?",
            (target_kind, target_id, MAX_LIST + 1),
        )
        if len(found) > MAX_LIST:
            raise UnsupportedError(f"object has more than {MAX_LIST} metadata assertions")
        return found

    # --- jobs --------------------------------------------------------------------------

    def job(self, job_id: JobId) -> Job:
        # The job and its attempts in one statement (one consistent read, no BEGIN/COMMIT);
        # a job with dependencies reads them in a snapshot with its row.
        found = self._all(_JOB_WITH_ATTEMPTS, (job_id.bytes,))
        if not found:
            raise NotFoundError(f"job {job_id} does not exist")
        row = found[0][:_JOB_WIDTH]
        if row[rows.DEPENDENCY_COUNT]:
            with self.snapshot():
                row = self._one(f"SELECT {rows.JOB_COLUMNS} FROM jobs j WHERE j.id = ?", (job_id.bytes,))
                if row is None:
                    raise NotFoundError(f"job {job_id} does not exist")
                return self._with_attempts([row])[0]
        attempts = [rows.attempt(r[_JOB_WIDTH:]) for r in found if r[_JOB_WIDTH] is not None]
        return rows.job(row, attempts, (), self.production_id)

    @property
    def production_id(self) -> ProductionId:
        if self._production is None:
            self._production = ProductionId(self.production_row()[0])
        return self._production

    def _with_attempts(self, found: Sequence[Any]) -> list[Job]:
        """Jobs from rows, each with its attempts and dependencies (one query each for the page)."""
        attempted = [r[0] for r in found if r[rows.ATTEMPT_COUNT]]
        by_job: dict[bytes, list[Attempt]] = {}
        for start in range(0, len(attempted), 500):
            part = attempted[start : start + 500]
            for row in self._all(
                f"SELECT {rows.ATTEMPT_COLUMNS} FROM job_attempts a WHERE a.job_id IN ({','.join('?' * len(part))}) "
                "ORDER BY a.job_id, a.number",
                part,
            ):
                by_job.setdefault(row[0], []).append(rows.attempt(row))
        dependent = [r[0] for r in found if r[rows.DEPENDENCY_COUNT]]
        deps = self.dependencies(dependent) if dependent else {}
        production = self.production_id if found else None
        return [rows.job(r, by_job.get(r[0], ()), deps.get(r[0], ()), production) for r in found]

    def dependencies(self, job_ids: Sequence[bytes]) -> dict[bytes, list[Any]]:
        """The dependency rows (``rows.DEPENDENCY_COLUMNS``) of jobs, by upstream id."""
        found: dict[bytes, list[Any]] = {}
        for start in range(0, len(job_ids), 500):
            part = job_ids[start : start + 500]
            for row in self._all(
                f"SELECT {rows.DEPENDENCY_COLUMNS} FROM job_dependencies d JOIN jobs u ON u.id = d.upstream_id "
                f"WHERE d.job_id IN ({','.join('?' * len(part))}) ORDER BY d.job_id, d.upstream_id",
                part,
            ):
                found.setdefault(row[0], []).append(row)
        return found

    def jobs_ahead(self, job_id: JobId, now: int, cap: int) -> int | None:
        """How many claimable jobs of the same kind a claim takes before this requested one
        (claim order: priority desc, availability, id), counting at most ``cap``; None when
        the job is not requested, waits on a dependency or is not claimable before ``now``."""
        with self.snapshot():
            row = self._one(
                "SELECT kind, priority, available_at FROM jobs WHERE id = ? AND state = 1 AND waiting = 0 "
                "AND (not_before IS NULL OR not_before <= ?)",
                (job_id.bytes, now),
            )
            if row is None:
                return None
            kind, priority, available = row
            # Three range seeks on the claim index (each bounded by the cap): higher priority;
            # the same priority, available earlier; the same priority and time, a lower id.
            probe = (
                "SELECT count(*) FROM (SELECT 1 FROM jobs INDEXED BY jobs_ready_kind WHERE state = 1 AND "
                "waiting = 0 AND kind = :kind AND {} AND (not_before IS NULL OR not_before <= :now) LIMIT :cap)"
            )
            terms = (
                "priority > :priority",
                "priority = :priority AND available_at < :available",
                "priority = :priority AND available_at = :available AND id < :id",
            )
            params = {
                "kind": kind,
                "priority": priority,
                "available": available,
                "id": job_id.bytes,
                "now": now,
                "cap": cap,
            }
            found = self._one(f"SELECT ({'), ('.join(probe.format(t) for t in terms)})", params)
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
            where.append("j.state = ?")
            params.append(state.code)
        if kind is not None:
            where.append("j.kind = ?")
            params.append(kind)
        if after is not None:
            where.append("j.id < ?" if descending else "j.id > ?")
            params.append(after)
        sql = (
            f"SELECT {rows.JOB_COLUMNS} FROM jobs j"
            + (f" WHERE {' AND '.join(where)}" if where else "")
            + f" ORDER BY j.id {'DESC' if descending else 'ASC'} LIMIT ?"
        )
        with self.snapshot():
            return self._with_attempts(self._all(sql, [*params, limit]))

    def search_jobs(
        self, query: JobQuery, after: JobKey | None, limit: int, window: int | None = None
    ) -> list[Job]:
        sql, params = search.job_search(query, after, limit, window)
        with self.snapshot():
            return self._with_attempts(self._all(sql, params))

    def failure_diagnostics(self, kind: str | None, limit: int) -> list[tuple[str, int, bytes, int]]:
        sql, params = search.failure_diagnostics(kind, limit)
        return [(text, count, job, finished) for text, count, job, finished in self._all(sql, params)]

    def claims_expiring(
        self, before: int, kind: str | None, after: tuple[int, bytes] | None, limit: int
    ) -> list[Job]:
        """Claimed jobs (of ``kind``) whose lease expires at or before ``before``, by expiry then id."""
        sql = (
            f"SELECT {rows.JOB_COLUMNS} FROM jobs j WHERE j.state = 2 AND j.claim_expires_at <= ?"
            + (" AND j.kind = ?" if kind else "")
            + (" AND (j.claim_expires_at, j.id) > (?, ?)" if after else "")
            + " ORDER BY j.claim_expires_at, j.id LIMIT ?"
        )
        with self.snapshot():
            return self._with_attempts(
                self._all(sql, (before, *([kind] if kind else []), *(after or ()), limit))
            )

    def job_counts(self, kind: str | None) -> dict[int, int]:
        sql = (
            "SELECT state, sum(count) FROM job_counts"
            + (" WHERE kind = ?" if kind else "")
            + " GROUP BY state"
        )
        return dict(self._all(sql, [kind] if kind else []))

    def job_kinds(self) -> list[str]:
        return [r[0] for r in self._all("SELECT DISTINCT kind FROM job_counts WHERE count > 0 ORDER BY kind")]

    def job_secret(self, job_id: JobId) -> tuple[int, bytes | None, int | None] | None:
        """State, current secret hash and expiry of a job (for lease import)."""
        return self._one(  # type: ignore[no-any-return]
            "SELECT state, claim_secret_hash, claim_expires_at FROM jobs WHERE id = ?",
            (job_id.bytes,),
        )

    def completed_by(self, job_id: JobId) -> tuple[bytes, bytes] | None:
        """(completion representation, completing attempt's secret hash) of a succeeded job."""
        return self._one(  # type: ignore[no-any-return]
            "SELECT j.completion_representation_id, a.secret_hash FROM jobs j JOIN job_attempts a "
            "ON a.job_id = j.id AND a.outcome = 1 WHERE j.id = ? AND j.state = 3",
            (job_id.bytes,),
        )

    # --- workers -----------------------------------------------------------------------

    def workers(self, now: int) -> list[WorkerRow]:
        with self.snapshot():
            heads = self._all(
                "SELECT id, name, host, registered_at, last_seen, capacity, kinds FROM workers ORDER BY name"
            )
            running: dict[bytes, list[bytes]] = {}
            for worker, job in self._all(
                "SELECT claim_worker_id, id FROM jobs INDEXED BY jobs_by_worker "
                "WHERE claim_worker_id IS NOT NULL AND claim_expires_at > ? ORDER BY claim_worker_id, id",
                (now,),
            ):
                running.setdefault(worker, []).append(job)
            outcomes: dict[bytes, dict[int, int]] = {}
            for worker, outcome, count in self._all(
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
        found = self._all(
            f"SELECT {rows.ATTEMPT_COLUMNS} FROM job_attempts a INDEXED BY job_attempts_by_worker "
            "WHERE a.worker_id = (SELECT id FROM workers WHERE name = ?) ORDER BY a.claimed_at DESC, a.job_id, a.number DESC LIMIT ?",
            (name, limit),
        )
        return [(row[0], rows.attempt(row)) for row in found]

    # --- progress and attempt logs -------------------------------------------------------

    def progress_token(self) -> int:
        """The progress signal: moves (at most once per attempt per second) when progress is reported."""
        return int(self._one("SELECT token FROM progress_signal WHERE id = 1")[0])

    def attempt_log(
        self, job_id: JobId, number: int | None
    ) -> tuple[int, str | None, str | None, str | None, int | None] | None:
        """(attempt number, log root, log path, tail, tail recorded at) of an attempt (the
        newest with ``number`` None), or None when the job has no such attempt."""
        if number is None:
            sql = "SELECT max(number) FROM job_attempts WHERE job_id = ?"
            found = self._one(sql, (job_id.bytes,))
            if found is None or found[0] is None:
                return None
            number = int(found[0])
        return self._one(  # type: ignore[no-any-return]
            "SELECT a.number, l.root_name, l.path, l.tail, l.tail_at FROM job_attempts a "
            "LEFT JOIN job_attempt_logs l ON l.job_id = a.job_id AND l.number = a.number "
            "WHERE a.job_id = ? AND a.number = ?",
            (job_id.bytes, number),
        )

    def job_history(self, job_id: JobId) -> list[tuple[int, int, str, str | None, str | None, str | None]]:
        """(sequence, committed_at, event kind, origin, message, principal) of a job's lifecycle events."""
        kinds = ",".join(f"'{kind}'" for kind in sorted(HISTORY_EVENT_KINDS))
        return self._all(
            "SELECT e.sequence, r.committed_at, e.kind, r.origin, r.message, r.principal FROM revision_events e "
            f"JOIN revisions r ON r.sequence = e.sequence WHERE e.subject = ? AND e.kind IN ({kinds}) "
            "ORDER BY e.sequence, e.position LIMIT 1000",
            (job_id.bytes,),
        )

    # --- revisions ---------------------------------------------------------------------

    def revision_summaries(
        self, limit: int, before: int | None
    ) -> list[tuple[int, bytes, int, str | None, str | None, dict[str, int], bytes | None, str | None]]:
        """Newest-first revision headers with per-kind event counts and their one subject (if any)."""
        with self.snapshot() as conn:
            heads = conn.execute(
                "SELECT sequence, id, committed_at, origin, message, principal FROM revisions"
                + (" WHERE sequence < ?" if before is not None else "")
                + " ORDER BY sequence DESC LIMIT ?",
                (*([before] if before is not None else []), limit),
            ).fetchall()
            if not heads:
                return []
            counts: dict[int, dict[str, int]] = {}
            subjects: dict[int, bytes | None] = {}
            window = (heads[-1][0], heads[0][0])
            for seq, kind, count in conn.execute(
                "SELECT sequence, kind, count(*) FROM revision_events WHERE sequence BETWEEN ? AND ? "
                "GROUP BY sequence, kind",
                window,
            ):
                counts.setdefault(seq, {})[kind] = count
            for seq, distinct, first, unnamed in conn.execute(
                "SELECT sequence, count(DISTINCT subject), min(subject), sum(subject IS NULL) "
                "FROM revision_events WHERE sequence BETWEEN ? AND ? GROUP BY sequence",
                window,
            ):
                subjects[seq] = first if distinct == 1 and not unnamed else None
        return [(*head[:5], counts.get(head[0], {}), subjects.get(head[0]), head[5]) for head in heads]

    def latest_revision(self) -> Revision | None:
        found = self.revisions("SELECT max(sequence) FROM revisions", ())
        return found[0] if found else None

    def latest_sequence(self) -> int:
        return int(self._one("SELECT coalesce(max(sequence), 0) FROM revisions")[0])

    def revisions(self, sequences_sql: str, params: Sequence[Any]) -> list[Revision]:
        """Revisions (with their events) whose sequence the given subquery selects."""
        with self.snapshot() as conn:
            heads = conn.execute(
                f"SELECT {rows.REVISION_COLUMNS} FROM revisions WHERE sequence IN ({sequences_sql}) "
                "ORDER BY sequence",
                params,
            ).fetchall()
            if not heads:
                return []
            events: dict[int, list[Any]] = {}
            for seq, position, kind, payload in conn.execute(
                "SELECT sequence, position, kind, payload FROM revision_events "
                "WHERE sequence BETWEEN ? AND ? ORDER BY sequence, position",
                (heads[0][0], heads[-1][0]),
            ):
                events.setdefault(seq, []).append((position, kind, payload))
        return [rows.revision(head, events.get(head[0], ())) for head in heads]

    def changes_since(
        self, sequence: int, limit: int, kinds: Sequence[str] | None
    ) -> tuple[list[Revision], int]:
        with self.snapshot() as conn:
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
                marks = ",".join("?" * len(kinds))
                found = self.revisions(
                    "SELECT DISTINCT sequence FROM revision_events WHERE sequence > ? AND sequence <= ? "
                    f"AND kind IN ({marks}) ORDER BY sequence LIMIT ?",
                    (sequence, window, *kinds, limit),
                )
            if len(found) == limit:
                through = found[-1].sequence
            else:
                newest = conn.execute("SELECT coalesce(max(sequence), 0) FROM revisions").fetchone()[0]
                through = max(min(newest, window) if window is not None else newest, sequence)
        return found, through
