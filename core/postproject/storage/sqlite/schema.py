"""Numbered schema migrations (``migrations/NNNN_name.sql``), tracked in ``user_version``."""

from __future__ import annotations

import hashlib
import sqlite3
from importlib import resources

from postproject.model.errors import MigrationError

_MIGRATIONS = sorted(
    (
        entry.name
        for entry in resources.files("postproject.storage.sqlite.migrations").iterdir()
        if entry.name.endswith(".sql")
    ),
)
LATEST = len(_MIGRATIONS)


def migrate(conn: sqlite3.Connection, current: int) -> None:
    """Apply the migrations after ``current`` inside the caller's write transaction."""
    assert conn.in_transaction, "migrations run inside the caller's BEGIN IMMEDIATE"
    conn.create_function("pp_sha256", 1, _sha256, deterministic=True)
    try:
        for number, name in enumerate(_MIGRATIONS, start=1):
            if number <= current:
                continue
            if not name.startswith(f"{number:04d}_"):
                raise MigrationError(f"migration files are not numbered consecutively: {name}")
            script = (
                resources.files("postproject.storage.sqlite.migrations").joinpath(name).read_text("utf-8")
            )
            for statement in _statements(script):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number}")
    except sqlite3.Error as exc:
        raise MigrationError(f"schema migration to version {LATEST} failed: {exc}") from exc


def _sha256(value: bytes | None) -> bytes | None:
    return hashlib.sha256(value).digest() if value is not None else None


def _statements(script: str) -> list[str]:
    """Split a script on statement boundaries (``executescript`` would commit)."""
    statements: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        if not buffer and line.strip().startswith("--"):
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements
