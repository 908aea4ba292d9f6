"""Productions as the development builds before the baseline schema made them (versions 1-6).

The six migrations each engine applied then (``sqlite/`` and ``postgresql/``, kept here
unchanged from the last build that used them) rebuild such a production: the baseline's
equivalence test applies all six and compares the result with the baseline, and the refusal
tests open productions left at each of those versions. Each builder runs the migrations the
way that build's runner did (one transaction; SQLite: ``user_version`` and the
``pp_sha256`` function; PostgreSQL: ``schema_version``).
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
VERSIONS = range(1, 7)
APPLICATION_ID = 0x50505231  # "PPR1"


def scripts(engine: str, version: int = 6) -> list[str]:
    """The migration scripts of ``engine`` ("sqlite" or "postgresql") up to ``version``."""
    found = sorted((HERE / engine).glob("*.sql"))
    assert [int(p.name[:4]) for p in found] == list(VERSIONS)
    return [p.read_text("utf-8") for p in found[:version]]


def statements(script: str) -> list[str]:
    """A SQLite script split on statement boundaries (as the old runner split it)."""
    found: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        if not buffer and line.strip().startswith("--"):
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            found.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        found.append(buffer.strip())
    return found


def sqlite_file(path: Path, version: int = 6, *, jobs: int = 1) -> Path:
    """A production file at schema ``version`` as an old build created it (WAL, application id,
    the production row) holding an asset, an original and ``jobs`` requested jobs."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.create_function(
        "pp_sha256", 1, lambda v: hashlib.sha256(v).digest() if v is not None else None, deterministic=True
    )
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute("BEGIN IMMEDIATE")
    for number, script in enumerate(scripts("sqlite", version), start=1):
        for statement in statements(script):
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {number}")
    now = 1_767_225_600_000_000
    conn.execute("INSERT INTO production VALUES (1, ?, ?, ?)", (os.urandom(16), now, os.urandom(32)))
    asset, rep = os.urandom(16), os.urandom(16)
    conn.execute("INSERT INTO revisions (sequence, id, committed_at) VALUES (1, ?, ?)", (os.urandom(16), now))
    conn.execute("INSERT INTO assets VALUES (?, 'A001', ?, 1)", (asset, now))
    conn.execute(
        "INSERT INTO representations (id, asset_id, kind, path, size, mtime, created_at, created_sequence) "
        "VALUES (?, ?, 0, '/media/a.mov', 1, ?, ?, 1)",
        (rep, asset, now, now),
    )
    columns = "id, kind, inputs, output_asset_id, output_kind, state, requested_at, requested_sequence, updated_sequence"
    values = "?, 'org.example:render', ?, ?, 1, 1, ?, 1, 1"
    if version >= 2:
        columns, values = columns + ", available_at", values + ", ?"
    for _ in range(jobs):
        params: tuple[Any, ...] = (os.urandom(16), rep, asset, now) + ((now,) if version >= 2 else ())
        conn.execute(f"INSERT INTO jobs ({columns}) VALUES ({values})", params)
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path


def postgresql_schema(conn: Any, production: str, version: int = 6) -> None:
    """Create schema ``production`` at ``version`` as an old build did (``conn``: a psycopg
    connection in autocommit mode), holding its production row."""
    assert re.fullmatch(r"[a-z_][a-z0-9_]*", production), production
    with conn.transaction():
        conn.execute(f"CREATE SCHEMA {production}")
        conn.execute(
            f"CREATE TABLE {production}.schema_version (singleton smallint PRIMARY KEY CHECK (singleton = 1),"
            " version integer NOT NULL CHECK (version >= 0))"
        )
        conn.execute(f"INSERT INTO {production}.schema_version VALUES (1, 0)")
        conn.execute(f"SET LOCAL search_path TO {production}")
        for number, script in enumerate(scripts("postgresql", version), start=1):
            conn.execute(script.encode("utf-8"))
            conn.execute(f"UPDATE {production}.schema_version SET version = %s", (number,))
        conn.execute(
            f"INSERT INTO {production}.production VALUES (1, %s, 0, %s)", (uuid.uuid4(), os.urandom(32))
        )


def canonical_sql(text: str | None) -> str | None:
    """A statement's text without comments, quoting of plain names or layout: two statements
    that differ only there create the same object."""
    if text is None:
        return None
    text = re.sub(r"--[^\n]*", " ", text)
    text = re.sub(r'"([A-Za-z_][A-Za-z0-9_]*)"', r"\1", text)
    text = re.sub(r"\s+", " ", text)
    return re.sub(r"\s*([(),])\s*", r"\1", text).strip()


def sqlite_schema(conn: sqlite3.Connection) -> dict[str, Any]:
    """Everything the schema of an open SQLite production consists of: each object's type,
    table and (canonical) statement, each table's columns, indexes and foreign keys, each
    index's columns, the rows the schema seeds and the file's identifying pragmas."""
    found: dict[str, Any] = {}
    for kind, name, table, text in conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"):
        found[f"{kind} {name}"] = (table, canonical_sql(text))
        if kind == "table":
            found[f"columns {name}"] = conn.execute(f"PRAGMA table_xinfo('{name}')").fetchall()
            found[f"indexes {name}"] = sorted(conn.execute(f"PRAGMA index_list('{name}')").fetchall())
            found[f"foreign keys {name}"] = conn.execute(f"PRAGMA foreign_key_list('{name}')").fetchall()
        elif kind == "index":
            found[f"index columns {name}"] = conn.execute(f"PRAGMA index_xinfo('{name}')").fetchall()
    for table in ("job_clock", "progress_signal", "job_counts", "job_agents", "workers"):
        found[f"rows {table}"] = conn.execute(f"SELECT * FROM {table}").fetchall()
    for pragma in ("application_id", "user_version", "journal_mode", "auto_vacuum", "page_size", "encoding"):
        found[f"pragma {pragma}"] = conn.execute(f"PRAGMA {pragma}").fetchone()[0]
    return found
