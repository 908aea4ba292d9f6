"""The reader of a production file: one connection, every multi-statement read in one read
transaction (one snapshot). The reads themselves are shared (:mod:`postproject.storage.sql.reads`);
here are the connection, a job's attempts and dependencies, and job search."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from postproject.engine import JobKey, JobQuery
from postproject.model.errors import NotFoundError
from postproject.model.ids import JobId, iter_chunks
from postproject.model.jobs import Attempt, Job
from postproject.storage import rows
from postproject.storage.sql.dialect import Dialect, Params
from postproject.storage.sql.reads import SqlReads
from postproject.storage.sqlite import search
from postproject.storage.sqlite.errors import translated

DIALECT = Dialect(
    name="sqlite",
    pyformat=False,
    id=bytes,
    id_array=None,
    index_hints=True,
    representation_columns=rows.REPRESENTATION_COLUMNS,
    any_id="min({})",
    recursive_walk=True,
)
CHUNK = 500  # ids per IN (...) list
_JOB_WIDTH = rows.JOB_COLUMNS.count(",") + 1  # columns of a job row (none has a comma inside)
_JOB_WITH_ATTEMPTS = (
    f"SELECT {rows.JOB_COLUMNS}, {rows.ATTEMPT_COLUMNS} FROM jobs j "
    "LEFT JOIN job_attempts a ON a.job_id = j.id WHERE j.id = ? ORDER BY a.number"
)


class Reader(SqlReads):
    """Queries over one connection (guarded by a lock: connections are not thread-safe)."""

    dialect = DIALECT

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self.location = str(path)
        self._lock = threading.RLock()
        self._depth = 0

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

    # One statement is its own consistent read: no BEGIN/COMMIT around it (inside an
    # outer snapshot it still runs in that transaction).
    def all(self, sql: str, params: Params = ()) -> list[Any]:
        with self._lock, translated(self.path):
            return self.conn.execute(sql, params).fetchall()

    def one(self, sql: str, params: Params = ()) -> Any:
        with self._lock, translated(self.path):
            cursor = self.conn.execute(sql, params)
            row = cursor.fetchone()
            cursor.close()
            return row

    def data_version(self) -> int:
        return int(self.one("PRAGMA data_version")[0])

    # --- jobs --------------------------------------------------------------------------

    def job(self, job_id: JobId) -> Job:
        # The job and its attempts in one statement (one consistent read, no BEGIN/COMMIT);
        # a job with dependencies reads them in a snapshot with its row.
        found = self.all(_JOB_WITH_ATTEMPTS, (job_id.bytes,))
        if not found:
            raise NotFoundError(f"job {job_id} does not exist")
        row = found[0][:_JOB_WIDTH]
        if row[rows.DEPENDENCY_COUNT]:
            with self.snapshot():
                row = self.one(f"SELECT {rows.JOB_COLUMNS} FROM jobs j WHERE j.id = ?", (job_id.bytes,))
                if row is None:
                    raise NotFoundError(f"job {job_id} does not exist")
                return self._with_attempts([row])[0]
        attempts = [rows.attempt(r[_JOB_WIDTH:]) for r in found if r[_JOB_WIDTH] is not None]
        return rows.job(row, attempts, (), self.production_id)

    def job_page(self, tail: str, params: Params) -> list[Job]:
        with self.snapshot():
            return self._with_attempts(self.all(f"SELECT {rows.JOB_COLUMNS} FROM jobs j{tail}", params))

    def _with_attempts(self, found: Sequence[Any]) -> list[Job]:
        """Jobs from rows, each with its attempts and dependencies (one query each for the page)."""
        attempted = [r[0] for r in found if r[rows.ATTEMPT_COUNT]]
        by_job: dict[bytes, list[Attempt]] = {}
        for part in iter_chunks(attempted, CHUNK):
            for row in self.all(
                f"SELECT {rows.ATTEMPT_COLUMNS} FROM job_attempts a WHERE a.job_id IN ({','.join('?' * len(part))}) "
                "ORDER BY a.job_id, a.number",
                part,
            ):
                by_job.setdefault(row[0], []).append(rows.attempt(row))
        dependent = [r[0] for r in found if r[rows.DEPENDENCY_COUNT]]
        deps = self._dependencies(dependent) if dependent else {}
        production = self.production_id if found else None
        return [rows.job(r, by_job.get(r[0], ()), deps.get(r[0], ()), production) for r in found]

    def _dependencies(self, job_ids: Sequence[bytes]) -> dict[bytes, list[Any]]:
        """The dependency rows (``rows.DEPENDENCY_COLUMNS``) of jobs, by upstream id."""
        found: dict[bytes, list[Any]] = {}
        for part in iter_chunks(job_ids, CHUNK):
            for row in self.all(
                f"SELECT {rows.DEPENDENCY_COLUMNS} FROM job_dependencies d JOIN jobs u ON u.id = d.upstream_id "
                f"WHERE d.job_id IN ({','.join('?' * len(part))}) ORDER BY d.job_id, d.upstream_id",
                part,
            ):
                found.setdefault(row[0], []).append(row)
        return found

    def search_jobs(
        self, query: JobQuery, after: JobKey | None, limit: int, window: int | None = None
    ) -> list[Job]:
        found: list[Any] = []
        with self.snapshot():
            for sql, params, walked in search.job_search(query, after, limit, window):
                params[-1] = limit - len(found)  # each phase fills what the ones before it left
                found += self.all(sql, params)
                if len(found) >= limit or (walked is not None and self.one(*walked)[0] > window):
                    break  # full, or a walk that did not cover this phase (a gather follows)
            return self._with_attempts(found)

    def failure_diagnostics(self, kind: str | None, limit: int) -> list[tuple[str, int, bytes, int]]:
        sql, params = search.failure_diagnostics(kind, limit)
        return [(text, count, job, finished) for text, count, job, finished in self.all(sql, params)]
