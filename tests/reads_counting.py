"""How much a piece of code reads from the store, on either engine (for tests that pin that a
read does not grow with the number of jobs or attempts; never a timing).

``counting(location)`` counts, for every connection to that production opened or used inside
the block (the library's own, a monitor's readers):

- ``statements``: the SQL statements sent (transaction control included);
- ``work``: how much the engine worked to answer them. On SQLite the virtual machine's
  instructions (``sqlite3.Connection.set_progress_handler``, counted in steps of
  :data:`STEP`): a scan of N rows costs at least N of them. On PostgreSQL the rows its scans
  read, filtered rows included: each SELECT is run again afterwards under
  ``EXPLAIN (ANALYZE, FORMAT JSON)`` with sequential scans discouraged, as the planner does
  on big tables (reads only; the replay may see later commits, which the callers avoid by
  not writing meanwhile).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import psycopg

STEP = 10  # SQLite VM instructions per progress callback
SCANS = ("Seq Scan", "Index Scan", "Index Only Scan", "Bitmap Heap Scan", "Tid Scan", "Function Scan")


@dataclass
class Reads:
    statements: int = 0
    work: int = 0
    queries: list[tuple[str, Any]] = field(default_factory=list)  # PostgreSQL's SELECTs, replayed at the end
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self) -> None:
        with self.lock:
            self.statements = self.work = 0
            self.queries.clear()


@contextmanager
def counting(location: str) -> Iterator[Reads]:
    """Count the reads of the production at ``location`` made inside the block (see the module)."""
    found = Reads()
    if location.startswith(("postgresql://", "postgres://")):
        with _postgresql(location, found):
            yield found
    else:
        with _sqlite(found):
            yield found


@contextmanager
def _sqlite(found: Reads) -> Iterator[None]:
    from postproject.storage.sqlite import connection

    real = connection._connect
    watched: list[sqlite3.Connection] = []

    def step() -> int:
        with found.lock:
            found.work += STEP
        return 0

    def statement(_sql: str) -> None:
        with found.lock:
            found.statements += 1

    def watch(conn: sqlite3.Connection) -> None:
        conn.set_progress_handler(step, STEP)
        conn.set_trace_callback(statement)
        watched.append(conn)

    def connect(path: Any, mode: str) -> sqlite3.Connection:
        conn = real(path, mode)
        watch(conn)
        return conn

    connection._connect = connect  # type: ignore[assignment]
    try:
        yield
    finally:
        connection._connect = real  # type: ignore[assignment]
        for conn in watched:
            try:
                conn.set_progress_handler(None, 0)
                conn.set_trace_callback(None)
            except sqlite3.ProgrammingError:
                pass  # closed meanwhile


@contextmanager
def _postgresql(location: str, found: Reads) -> Iterator[None]:
    real_execute = psycopg.Cursor.execute

    def execute(self: Any, query: Any, params: Any = None, **kwargs: Any) -> Any:
        text = query.as_string(self.connection) if hasattr(query, "as_string") else str(query)
        with found.lock:
            found.statements += 1
            if text.lstrip().upper().startswith(("SELECT", "WITH")):
                found.queries.append((text, params))
        return real_execute(self, query, params, **kwargs)

    psycopg.Cursor.execute = execute  # type: ignore[method-assign]
    try:
        yield
    finally:
        psycopg.Cursor.execute = real_execute  # type: ignore[method-assign]
        found.work += _rows_read(location, found.queries)


def _rows_read(location: str, queries: list[tuple[str, Any]]) -> int:
    from postproject.storage.postgresql import connection, uri

    total = 0
    with connection.connect(uri.parse(location), autocommit=True) as conn:
        # The plans of a big production: on a test's small tables the planner prefers to read
        # a whole table, which reads more rows at every size than its indexes would.
        conn.execute("SET enable_seqscan = off")
        for text, params in queries:
            (plan,) = conn.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {text}", params).fetchone()
            total += _scanned(plan[0]["Plan"])
    return total


def _scanned(node: dict[str, Any]) -> int:
    rows = 0
    if node.get("Node Type") in SCANS:
        loops = node.get("Actual Loops", 1)
        read = node.get("Actual Rows", 0) + node.get("Rows Removed by Filter", 0)
        rows += read * loops + node.get("Rows Removed by Index Recheck", 0)
    return rows + sum(_scanned(child) for child in node.get("Plans", ()))
