"""Test helpers that reach past the engine interface into either engine's storage."""

from __future__ import annotations

import sqlite3
import uuid

from postproject import Production


def is_postgresql(production: Production) -> bool:
    return production.location.startswith(("postgresql://", "postgres://"))


def set_schema_version(location: str, version: int) -> None:
    """Pretend the production at ``location`` has schema ``version`` (a newer release made it)."""
    if location.startswith(("postgresql://", "postgres://")):
        from postproject.storage.postgresql import connection, uri

        with connection.connect(uri.parse(location), autocommit=True) as conn:
            conn.execute("UPDATE schema_version SET version = %s", (version,))
        return
    with sqlite3.connect(location) as conn:
        conn.execute(f"PRAGMA user_version = {int(version)}")
    conn.close()


def execute_raw(production: Production, sql: str, params: tuple[object, ...] = ()) -> None:
    """Run one SQLite-dialect statement (``?`` marks, 16-byte ids) on the production's own
    storage, outside the library: rows the public API cannot make (migrated, damaged)."""
    if not is_postgresql(production):
        with sqlite3.connect(production.path) as conn:
            conn.execute(sql, params)
        conn.close()
        return
    from postproject.storage.postgresql import connection, uri

    values = tuple(uuid.UUID(bytes=p) if isinstance(p, bytes) and len(p) == 16 else p for p in params)
    with connection.connect(uri.parse(production.location), autocommit=True) as conn:
        conn.execute(sql.replace("?", "%s"), values)
