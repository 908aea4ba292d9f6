"""Whole-production export and import for ``postproject copy`` and ``verify`` (PostgreSQL side).

Rows cross in the neutral form SQLite's side uses (:mod:`postproject.storage.sqlite.copying`):
ids as 16-byte ``bytes`` (``uuid`` columns), JSON as its text, times and numbers as ``int``.
Tables come in an order that satisfies their references; columns in SQLite's order (the
schemas match, ``tests/postgresql/test_schema.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from psycopg import sql

from postproject.engine import TableDump
from postproject.model.errors import ConflictError, Reason, UnsupportedError
from postproject.storage.postgresql.connection import Connection
from postproject.storage.postgresql.types import Id

# Maintained by triggers from the jobs, attempts and metadata rows (rebuilt as those are imported).
DERIVED = frozenset({"job_counts", "job_agents", "worker_outcomes", "job_parameters"})
# Search indexes (and SQLite's FTS5 shadow tables): never copied, rebuilt from the rows
# (asset_search by its trigger on assets, job_diagnostics after the import).
SEARCH_INDEXES = ("asset_search", "job_diagnostics")


def _search_index(table: str) -> bool:
    return any(table == name or table.startswith(f"{name}_") for name in SEARCH_INDEXES)


TABLES = (
    "production",
    "job_clock",
    "progress_signal",
    "revisions",
    "revision_events",
    "media_roots",
    "assets",
    "representations",
    "representation_fingerprints",
    "activities",
    "activity_edges",
    "metadata",
    "job_counts",
    "workers",
    "jobs",
    "job_dependencies",
    "job_attempts",
    "job_attempt_logs",
    "job_agents",
    "api_tokens",
    "recorded_replies",
    "worker_outcomes",
    "job_parameters",
)
BATCH = 1000


def columns(conn: Connection, table: str) -> list[tuple[str, str]]:
    """(name, type) of a table's columns in order."""
    return [
        (name, kind)
        for name, kind in conn.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = %s ORDER BY ordinal_position",
            (table,),
        ).fetchall()
    ]


def export(conn: Connection, *, derived: bool) -> Iterator[TableDump]:
    """Every table as neutral rows (the caller holds one snapshot)."""
    present = {r[0] for r in conn.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
    ).fetchall()}  # fmt: skip
    for table in TABLES:
        if table not in present or (table in DERIVED and not derived):
            continue
        found = columns(conn, table)
        selected = sql.SQL(", ").join(
            sql.SQL("{}::text").format(sql.Identifier(name)) if kind == "json" else sql.Identifier(name)
            for name, kind in found
        )
        order = sql.SQL(", ").join(
            sql.SQL('{}::text COLLATE "C"').format(sql.Identifier(name))
            if kind in ("text", "json")
            else sql.Identifier(name)
            for name, kind in found
        )
        rows = conn.execute(
            sql.SQL("SELECT {} FROM {} ORDER BY {}").format(selected, sql.Identifier(table), order),
            binary=True,
        ).fetchall()
        yield TableDump(table, tuple(name for name, _ in found), [tuple(r) for r in rows])


def load(conn: Connection, where: str, dumps: Iterable[TableDump]) -> None:
    """Import into an empty production inside the caller's transaction."""
    for table in ("revisions", "assets", "jobs", "workers", "media_roots"):
        if conn.execute(sql.SQL("SELECT 1 FROM {} LIMIT 1").format(sql.Identifier(table))).fetchone():
            raise ConflictError(
                f"the destination {where} already holds a production's facts ({table}); copy into a new one",
                reason=Reason.NOT_EMPTY,
            )
    conn.execute("SET CONSTRAINTS ALL DEFERRED")  # representations may supersede later ones
    conn.execute("DELETE FROM production")
    conn.execute("DELETE FROM job_clock")
    conn.execute(
        "DELETE FROM progress_signal"
    )  # a one-row counter, like job_clock: the copy brings its value
    for dump in dumps:
        if dump.name in DERIVED or _search_index(dump.name):
            continue
        if dump.name not in TABLES:
            raise UnsupportedError(f"the destination's schema has no table {dump.name!r}; upgrade it first")
        kinds = dict(columns(conn, dump.name))
        missing = [c for c in dump.columns if c not in kinds]
        if missing:
            raise UnsupportedError(f"the destination's table {dump.name} has no column {missing[0]!r}")
        ids = [kinds[c] == "uuid" for c in dump.columns]
        statement = sql.SQL("INSERT INTO {} ({}) VALUES ({})").format(
            sql.Identifier(dump.name),
            sql.SQL(", ").join(map(sql.Identifier, dump.columns)),
            sql.SQL(", ").join(sql.Placeholder() * len(dump.columns)),
        )
        batch: list[tuple[Any, ...]] = []
        with conn.cursor() as cursor:
            for row in dump.rows:
                batch.append(
                    tuple(Id(v) if is_id and v is not None else v for v, is_id in zip(row, ids, strict=True))
                )
                if len(batch) >= BATCH:
                    cursor.executemany(statement, batch)
                    batch = []
            if batch:
                cursor.executemany(statement, batch)
    conn.execute(  # its trigger fires on a failure, not on an insert
        "INSERT INTO job_diagnostics (job, body) SELECT id, failure_diagnostic FROM jobs WHERE failure_diagnostic IS NOT NULL"
    )
    # A source older than schema 4 has no progress signal: it starts at 0.
    conn.execute("INSERT INTO progress_signal (id, token) VALUES (1, 0) ON CONFLICT (id) DO NOTHING")
    # Identities continue after the copied ids, as SQLite's rowids do.
    conn.execute(
        "SELECT setval(pg_get_serial_sequence('metadata', 'id'), coalesce(max(id), 0) + 1, false) FROM metadata"
    )
    conn.execute(
        "SELECT pg_notify('postproject', current_schema() || ' ' || coalesce(max(sequence), 0) || ' ') "
        "FROM revisions"
    )
