"""How much a piece of code reads from the store, on either engine (for tests that pin that a
read does not grow with the number of jobs or attempts; never a timing).

``counting(location)`` counts, for every connection to that production opened (SQLite) or
used (PostgreSQL) inside the block, per thread (a monitor's reader threads apart from its
feed watcher, whose probes follow the clock):

- statements: the SQL statements sent (transaction control included), with their text;
- work: how much the engine worked to answer them. On SQLite the virtual machine's
  instructions (``sqlite3.Connection.set_progress_handler``, counted in steps of
  :data:`STEP`): a scan of N rows costs at least N of them. On PostgreSQL the rows its scans
  read, filtered rows included: each SELECT is run again afterwards under
  ``EXPLAIN (ANALYZE, FORMAT JSON)`` with sequential scans discouraged, as the planner does
  on big tables (reads only; the replay may see later commits, which the callers avoid by
  not writing meanwhile).
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import psycopg

STEP = 10  # SQLite VM instructions per progress callback
SCANS = ("Seq Scan", "Index Scan", "Index Only Scan", "Bitmap Heap Scan", "Tid Scan", "Function Scan")


_LITERALS = re.compile(r"[xX]'[0-9a-fA-F]*'|'(?:[^']|'')*'|(?<![\w.])-?\d+(?:\.\d+)?\b")


def _everyone(_thread: str) -> bool:
    return True


@dataclass
class Reads:
    """What was read, per thread (see the module docstring)."""

    texts: list[tuple[str, str]] = field(default_factory=list)  # (thread, statement) in order
    work_by_thread: Counter[str] = field(default_factory=Counter)
    queries: list[tuple[str, str, Any]] = field(default_factory=list)  # PostgreSQL: (thread, SELECT, params)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self) -> None:
        with self.lock:
            self.texts.clear()
            self.work_by_thread.clear()
            self.queries.clear()

    def sent(self, text: str) -> None:
        """A statement sent (SQLite's trace shows its bound values: they are left out)."""
        shape = _LITERALS.sub("?", " ".join(text.split()))
        with self.lock:
            self.texts.append((threading.current_thread().name, shape))

    def statements_of(self, thread: Callable[[str], bool] = _everyone) -> list[str]:
        with self.lock:
            return [text for name, text in self.texts if thread(name)]

    def work_of(self, thread: Callable[[str], bool] = _everyone) -> int:
        with self.lock:
            return sum(count for name, count in self.work_by_thread.items() if thread(name))

    @property
    def statements(self) -> int:
        return len(self.statements_of())

    @property
    def work(self) -> int:
        return self.work_of()


@contextmanager
def counting(location: str) -> Iterator[Reads]:
    """Count the reads of the production at ``location`` made inside the block (see the module);
    on PostgreSQL the work is known once the block has ended."""
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
        name = threading.current_thread().name
        with found.lock:
            found.work_by_thread[name] += STEP
        return 0

    def connect(path: Any, mode: str) -> sqlite3.Connection:
        conn = real(path, mode)
        conn.set_progress_handler(step, STEP)
        conn.set_trace_callback(found.sent)
        watched.append(conn)
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
        found.sent(text)
        if text.lstrip().upper().startswith(("SELECT", "WITH")):
            with found.lock:
                found.queries.append((threading.current_thread().name, text, params))
        return real_execute(self, query, params, **kwargs)

    psycopg.Cursor.execute = execute  # type: ignore[method-assign]
    try:
        yield
    finally:
        psycopg.Cursor.execute = real_execute  # type: ignore[method-assign]
        with found.lock:
            queries = list(found.queries)
        found.work_by_thread.update(_rows_read(location, queries))


def _rows_read(location: str, queries: list[tuple[str, str, Any]]) -> Counter[str]:
    from postproject.storage.postgresql import connection, types, uri

    rows: Counter[str] = Counter()
    with connection.connect(uri.parse(location), autocommit=True, configure=types.configure) as conn:
        # The plans of a big production: on a test's small tables the planner prefers to read
        # a whole table, which reads more rows at every size than its indexes would.
        conn.execute("SET enable_seqscan = off")
        for thread, text, params in queries:
            (plan,) = conn.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {text}", params).fetchone()
            plan = json.loads(plan) if isinstance(plan, str) else plan
            rows[thread] += _scanned(plan[0]["Plan"])
    return rows


def _scanned(node: dict[str, Any]) -> int:
    rows = 0
    if node.get("Node Type") in SCANS:
        loops = node.get("Actual Loops", 1)
        read = node.get("Actual Rows", 0) + node.get("Rows Removed by Filter", 0)
        rows += read * loops + node.get("Rows Removed by Index Recheck", 0)
    return rows + sum(_scanned(child) for child in node.get("Plans", ()))
