"""Storage adapters: the only code that talks to a database driver or holds SQL.

:func:`create_engine` and :func:`open_engine` pick the adapter for a production location: a
``postgresql://`` or ``postgres://`` URI is a production in a PostgreSQL schema
(``storage/postgresql``, imported only then), any other URI is refused, and a path is a
SQLite production file (``storage/sqlite``).
"""

from __future__ import annotations

import os
from pathlib import Path

from postproject import clock
from postproject.engine import Engine
from postproject.storage.postgresql.uri import is_uri


def is_location_uri(location: str | os.PathLike[str]) -> bool:
    """Whether a production location is a URI (a database) rather than a file path."""
    return isinstance(location, str) and is_uri(location)


def display_location(location: str | os.PathLike[str]) -> str:
    """What titles, logs and JSON show for a production location: a path as given, a URI
    without any password (the same text as ``Production.location`` once it is open)."""
    if not is_location_uri(location):
        return os.fspath(location)
    from postproject.errors import PostProjectError
    from postproject.storage.postgresql.uri import parse, redact

    try:
        return parse(str(location)).display
    except PostProjectError:
        return redact(str(location))


def create_engine(location: str | os.PathLike[str], production_id: bytes, created_at: int | None) -> Engine:
    """Create a new, empty production at ``location`` and open it.

    ``created_at`` None: now, by the database server's clock where there is one.
    """
    if is_location_uri(location):
        from postproject.storage.postgresql.engine import PostgresEngine

        return PostgresEngine.create(str(location), production_id, created_at)
    from postproject.storage.sqlite.engine import SqliteEngine

    now = created_at if created_at is not None else clock.to_micros(clock.SystemClock().now())
    return SqliteEngine.create(Path(location), production_id, now)


def open_engine(location: str | os.PathLike[str], *, read_only: bool) -> Engine:
    """Open the existing production at ``location`` (migrating an older schema when writable)."""
    if is_location_uri(location):
        from postproject.storage.postgresql.engine import PostgresEngine

        return PostgresEngine.open(str(location), read_only=read_only)
    from postproject.storage.sqlite.engine import SqliteEngine

    return SqliteEngine.open(Path(location), read_only=read_only)


def remove(location: str | os.PathLike[str]) -> None:
    """Delete a production that a failed operation just created (a file and its side files)."""
    if is_location_uri(location):
        from postproject.storage.postgresql.engine import remove as remove_schema

        remove_schema(str(location))
        return
    path = Path(location)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
