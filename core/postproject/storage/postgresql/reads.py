"""The reader of a production in a database: a pool of connections, every multi-statement read
in one snapshot. The reads themselves are shared (:mod:`postproject.storage.sql.reads`); here
are the connections, a job's attempts and dependencies (aggregated as JSON in the job's row:
one statement reads a page) and job search.

A snapshot is a ``REPEATABLE READ, READ ONLY`` transaction on one pooled connection, shared by
nested uses in the same thread; a single statement outside a snapshot is its own consistent
read on any pooled connection (retried once, after the pool has replaced its broken
connections, when the pooled one was broken, say by a server restart). Opened read-only, the
connection that opened the production serves first, and the pool opens only when two threads
read at once or that connection was lost (:class:`~.connection.Connections`).
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from postproject.engine import JobKey, JobQuery
from postproject.model.errors import NotFoundError, Reason, StorageError
from postproject.model.ids import JobId
from postproject.model.jobs import Job
from postproject.storage.postgresql import rows, search
from postproject.storage.postgresql.connection import Connection, Connections, Pool
from postproject.storage.postgresql.errors import translated
from postproject.storage.postgresql.types import DIALECT, Id
from postproject.storage.postgresql.uri import PostgresUri
from postproject.storage.sql.dialect import Params
from postproject.storage.sql.reads import SqlReads

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


class Reader(SqlReads):
    """Committed state through a pool (connections are per thread while a snapshot is open)."""

    dialect = DIALECT

    def __init__(self, pool: Pool | Connections, uri: PostgresUri) -> None:
        self.pool = pool
        self.uri = uri
        self.location = uri.display
        self._local = threading.local()

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

    def all(self, sql: str, params: Params = ()) -> list[Any]:
        return self._run(sql, params, one=False)  # type: ignore[no-any-return]

    def one(self, sql: str, params: Params = ()) -> Any:
        return self._run(sql, params, one=True)

    def _run(self, sql: str, params: Params, *, one: bool) -> Any:
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

    # --- jobs --------------------------------------------------------------------------

    def job(self, job_id: JobId) -> Job:
        row = self.one(f"SELECT {JOBS_WITH_ATTEMPTS} FROM jobs j WHERE j.id = %s", (Id(job_id.bytes),))
        if row is None:
            raise NotFoundError(f"job {job_id} does not exist")
        return self.with_attempts([row])[0]

    def job_page(self, tail: str, params: Params) -> list[Job]:
        return self.with_attempts(
            self.all(f"SELECT {JOBS_WITH_ATTEMPTS} FROM jobs j{DIALECT.sql(tail)}", params)
        )

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

    def search_jobs(
        self, query: JobQuery, after: JobKey | None, limit: int, window: int | None = None
    ) -> list[Job]:
        statements = search.job_search(query, after, limit, JOBS_WITH_ATTEMPTS, window)
        if window is not None and query.terms:
            guard, values = search.may_be_common(query.terms)
            if not self.one(guard, values)[0]:
                return []  # no term can be common: the walk would only cost its planning
        found: list[Any] = []
        with self.snapshot():
            # A search's row estimates (ILIKE, IN lists) can be far too high, and the JIT
            # compilation they trigger costs up to a second for a page read in milliseconds.
            self.all("SELECT set_config('jit', 'off', true)")  # for this transaction
            for sql, params, walked in statements:
                params[-1] = limit - len(found)  # each phase fills what the ones before it left
                found += self.all(sql, params)
                if len(found) >= limit or (walked is not None and self.one(*walked)[0] > window):
                    break  # full, or a walk that did not cover this phase (a gather follows)
            return self.with_attempts(found)

    def failure_diagnostics(self, kind: str | None, limit: int) -> list[tuple[str, int, bytes, int]]:
        sql, params = search.failure_diagnostics(kind, limit)
        return [(text, count, bytes(job), finished) for text, count, job, finished in self.all(sql, params)]


def _uuid(text: str | None) -> bytes | None:
    """An id that came as JSON text."""
    return uuid.UUID(text).bytes if text is not None else None
