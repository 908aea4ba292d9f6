"""Whole-production export and import for ``postproject copy`` and ``verify`` (SQLite side)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path

from postproject.engine import TableDump
from postproject.model.errors import ConflictError, Reason, UnsupportedError
from postproject.storage.sqlite import connection
from postproject.storage.sqlite.errors import translated

# Maintained by triggers from the jobs, attempts and metadata rows (rebuilt as those are imported).
DERIVED = frozenset({"job_counts", "job_agents", "worker_outcomes", "job_parameters"})
# Full-text indexes (virtual tables and their shadow tables): never copied, rebuilt from the
# rows (asset_search and job_parameter_search by their triggers, job_diagnostics after the import).
SEARCH_INDEXES = ("asset_search", "job_diagnostics", "job_parameter_search")


def _search_index(table: str) -> bool:
    return any(table == name or table.startswith(f"{name}_") for name in SEARCH_INDEXES)


BATCH = 1000


def tables(conn: sqlite3.Connection) -> list[str]:
    """The production's tables in creation order (every table after those it references)."""
    return [
        name
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
        )
    ]


def export(conn: sqlite3.Connection, path: Path, *, derived: bool) -> Iterator[TableDump]:
    """Every table as neutral rows, read in one snapshot by the caller."""
    with translated(path):
        for table in tables(conn):
            if (table in DERIVED and not derived) or _search_index(table):
                continue
            columns = tuple(row[1] for row in conn.execute(f'PRAGMA table_info("{table}")'))
            order = ", ".join(f'"{c}"' for c in columns)
            rows = conn.execute(f'SELECT {order} FROM "{table}" ORDER BY {order}').fetchall()
            yield TableDump(table, columns, rows)


def load(conn: sqlite3.Connection, path: Path, dumps: Iterable[TableDump]) -> None:
    """Import into an empty production in one write transaction (the caller's BEGIN IMMEDIATE)."""
    known = set(tables(conn))
    with translated(path):
        for table in ("revisions", "assets", "jobs", "workers", "media_roots"):
            if conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone():
                raise ConflictError(
                    f"the destination {path} already holds a production's facts ({table}); copy into a new one",
                    reason=Reason.NOT_EMPTY,
                )
        conn.execute("DELETE FROM production")
        conn.execute("DELETE FROM job_clock")
        if "progress_signal" in known:  # a one-row counter, like job_clock: the copy brings its value
            conn.execute("DELETE FROM progress_signal")
        for dump in dumps:
            if dump.name in DERIVED or _search_index(dump.name):
                continue
            if dump.name not in known:
                raise UnsupportedError(
                    f"the destination's schema has no table {dump.name!r}; upgrade it first"
                )
            columns = {row[1] for row in conn.execute(f'PRAGMA table_info("{dump.name}")')}
            missing = [c for c in dump.columns if c not in columns]
            if missing:
                raise UnsupportedError(f"the destination's table {dump.name} has no column {missing[0]!r}")
            names = ", ".join(f'"{c}"' for c in dump.columns)
            marks = ", ".join("?" * len(dump.columns))
            batch: list[tuple[object, ...]] = []
            for row in dump.rows:
                batch.append(tuple(row))
                if len(batch) >= BATCH:
                    conn.executemany(f'INSERT INTO "{dump.name}" ({names}) VALUES ({marks})', batch)
                    batch = []
            if batch:
                conn.executemany(f'INSERT INTO "{dump.name}" ({names}) VALUES ({marks})', batch)
        if "job_diagnostics" in known:  # its trigger fires on a failure, not on an insert
            conn.execute(
                "INSERT INTO job_diagnostics (job, body) "
                "SELECT id, failure_diagnostic FROM jobs WHERE failure_diagnostic IS NOT NULL"
            )


def begin(conn: sqlite3.Connection, path: Path) -> None:
    connection.begin_immediate(conn, path, timeout=30.0)
