"""One error tree with stable codes.

::

    PostProjectError                 code
      InvalidArgumentError           invalid_argument   (also ValueError)
      NotFoundError                  not_found
      AlreadyExistsError             already_exists
      ConflictError                  conflict           (reason: lease_lost, clock_regressed, ...)
      IoError                        io                 (also OSError)
      StorageError                   storage            (reason: busy, corrupt, not_a_production, ...)
      MigrationError                 migration
      UnsupportedError               unsupported
      InternalError                  internal

``code`` is one of :class:`ErrorCode` and never changes for a class; ``reason`` refines a
case without changing the code. Messages name the offending field and value and never
contain a lease token.
"""

from __future__ import annotations

import enum
from typing import ClassVar


class ErrorCode(enum.Enum):
    """Stable, append-only error codes shared by the API, the CLI and the GUI."""

    INVALID_ARGUMENT = "invalid_argument"
    NOT_FOUND = "not_found"
    ALREADY_EXISTS = "already_exists"
    CONFLICT = "conflict"
    IO = "io"
    STORAGE = "storage"
    MIGRATION = "migration"
    UNSUPPORTED = "unsupported"
    INTERNAL = "internal"


class PostProjectError(Exception):
    """A PostProject operation failed."""

    code: ClassVar[ErrorCode] = ErrorCode.INTERNAL

    def __init__(self, message: str | None = None, *, reason: str | None = None) -> None:
        self.message = message or (type(self).__doc__ or "error").strip()
        self.reason = reason
        super().__init__(self.message)


class InvalidArgumentError(PostProjectError, ValueError):
    """An argument is malformed or out of range."""

    code = ErrorCode.INVALID_ARGUMENT


class NotFoundError(PostProjectError):
    """A referenced object does not exist."""

    code = ErrorCode.NOT_FOUND


class AlreadyExistsError(PostProjectError):
    """The object to be created already exists."""

    code = ErrorCode.ALREADY_EXISTS


class ConflictError(PostProjectError):
    """The operation conflicts with the current state of the production."""

    code = ErrorCode.CONFLICT


class IoError(PostProjectError, OSError):
    """A file could not be read or written."""

    code = ErrorCode.IO


class StorageError(PostProjectError):
    """The production's storage failed or is not usable."""

    code = ErrorCode.STORAGE


class MigrationError(PostProjectError):
    """The production's schema could not be migrated."""

    code = ErrorCode.MIGRATION


class UnsupportedError(PostProjectError):
    """The request is valid but not supported (too large, newer schema, ...)."""

    code = ErrorCode.UNSUPPORTED


class InternalError(PostProjectError):
    """An internal invariant was violated."""

    code = ErrorCode.INTERNAL


ERROR_CLASSES: dict[ErrorCode, type[PostProjectError]] = {
    cls.code: cls
    for cls in (
        InvalidArgumentError,
        NotFoundError,
        AlreadyExistsError,
        ConflictError,
        IoError,
        StorageError,
        MigrationError,
        UnsupportedError,
        InternalError,
    )
}
