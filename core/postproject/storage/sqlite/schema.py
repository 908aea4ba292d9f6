"""A production file's schema: the baseline and the numbered migrations after it
(``migrations/NNNN_name.sql``, :mod:`postproject.storage.sql.versions`), tracked in
``PRAGMA user_version``."""

from __future__ import annotations

import sqlite3

from postproject.model.errors import MigrationError
from postproject.storage.sql import versions

MIGRATIONS = versions.numbered("postproject.storage.sqlite.migrations")
LATEST = MIGRATIONS.latest


def migrate(conn: sqlite3.Connection, current: int) -> None:
    """Bring the schema from version ``current`` (0: an empty file) to the latest, inside the
    caller's write transaction. ``current`` is 0 or at least the baseline (:func:`versions.check`)."""
    assert conn.in_transaction, "migrations run inside the caller's BEGIN IMMEDIATE"
    try:
        for number, script in MIGRATIONS.after(current):
            for statement in _statements(script.decode("utf-8")):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number}")
    except sqlite3.Error as exc:
        raise MigrationError(f"schema migration to version {MIGRATIONS.latest} failed: {exc}") from exc


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
