"""Translate driver exceptions into the PostProject error tree, in one place."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from types import TracebackType

from postproject.model.errors import IoError, PostProjectError, Reason, StorageError, UnsupportedError

_BUSY = {
    "SQLITE_BUSY",
    "SQLITE_LOCKED",
    "SQLITE_BUSY_SNAPSHOT",
    "SQLITE_BUSY_RECOVERY",
    "SQLITE_BUSY_TIMEOUT",
}


def error_name(exc: sqlite3.Error) -> str:
    return str(getattr(exc, "sqlite_errorname", "") or "")


def is_busy(exc: sqlite3.Error) -> bool:
    return error_name(exc) in _BUSY or "database is locked" in str(exc)


def translate(exc: sqlite3.Error, path: Path | str) -> PostProjectError:
    """The library error for a driver error on the production at ``path``."""
    name = error_name(exc)
    detail = str(exc)
    if is_busy(exc):
        return StorageError(
            f"production {path} is busy (another process holds its write lock): {detail}",
            reason=Reason.BUSY,
        )
    if name in ("SQLITE_NOTADB", "SQLITE_CORRUPT") or "not a database" in detail or "malformed" in detail:
        return StorageError(
            f"{path} is not a readable PostProject production: {detail}",
            reason=Reason.CORRUPT,
        )
    if name.startswith("SQLITE_READONLY"):
        return StorageError(f"production {path} is read-only here: {detail}", reason=Reason.READ_ONLY)
    if name.startswith("SQLITE_IOERR") or name in ("SQLITE_FULL", "SQLITE_CANTOPEN"):
        return IoError(f"cannot read or write production {path}: {detail}")
    if name == "SQLITE_TOOBIG":
        return UnsupportedError(f"value too large for production {path}: {detail}")
    return StorageError(f"storage error on production {path}: {detail}")


class translated:  # used like a function: ``with translated(path):``
    """Re-raise driver errors as library errors (``raise … from``).

    A plain class rather than ``@contextmanager``: it wraps every statement of the hot job
    path, and a generator-based context manager costs several times more per use."""

    __slots__ = ("path",)

    def __init__(self, path: Path | str) -> None:
        self.path = path

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if isinstance(exc, sqlite3.Error):
            raise translate(exc, self.path) from exc
