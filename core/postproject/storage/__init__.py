"""Storage adapters: the only code that talks to a database driver or holds SQL.

:func:`create_engine` and :func:`open_engine` pick the adapter for a production location:
a file path is a SQLite production (``storage/sqlite``).
"""

from __future__ import annotations

import os
from pathlib import Path

from postproject.engine import Engine


def create_engine(location: str | os.PathLike[str], production_id: bytes, created_at: int) -> Engine:
    """Create a new, empty production at ``location`` and open it."""
    from postproject.storage.sqlite.engine import SqliteEngine

    return SqliteEngine.create(Path(location), production_id, created_at)


def open_engine(location: str | os.PathLike[str], *, read_only: bool) -> Engine:
    """Open the existing production at ``location`` (migrating an older schema when writable)."""
    from postproject.storage.sqlite.engine import SqliteEngine

    return SqliteEngine.open(Path(location), read_only=read_only)


def remove(location: str | os.PathLike[str]) -> None:
    """Delete a production that a failed operation just created (a file and its side files)."""
    if "://" in str(location):
        return  # an engine URI: its adapter owns clean-up
    path = Path(location)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
