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

``code`` is one of :class:`ErrorCode` and never changes for a class; ``reason`` (one of
:class:`Reason`, a string enum, so ``error.reason == "lease_lost"`` holds) refines a case
without changing the code. Messages name the offending field and value and never contain a
lease token or a password.

Reasons::

    conflict    lease_lost          the claim is no longer this lease's (released, superseded, cancelled, expired)
                lease_expired       a lease expired before the edit committed
                lease_not_active    a pending lease used outside its edit, or a closed lease
                job_finished        the job already succeeded, failed or was cancelled
                input_changed       an input changed after the claim (leases.InputChangedError: input_id, superseding_revision)
                clock_regressed     the clock is behind the durable high-water mark
                read_only           the production was opened read-only
                closed              the production is closed
                nested_edit         another edit is open on this production handle
                transaction_closed  the edit already committed, rolled back or failed
                idempotency_key_conflict  a different request reused an idempotency key
                worker_session_replaced   the worker registered again; this session is fenced
                worker_offline      the worker's last heartbeat is too old to claim
                worker_at_capacity  the worker already holds as many claims as its capacity
                stop_not_requested  a stop confirmation for an attempt nobody asked to stop (still running)
                not_empty           a copy's destination already holds a production's facts
                report_conflict     a different completion report for an attempt that already has one
    storage     busy                another process held the write lock too long
                corrupt             the file is not a readable production
                not_a_production    the file is something else
                read_only           the storage refuses writes here
                unreachable         the database server cannot be reached
                auth_failed         the server refused the credentials
                database_missing    the URI names a database that does not exist
                connection_lost     the server closed the connection
                permission_denied   the role may not do that
                server_failed       a local test server could not start
                no_server_binaries  no PostgreSQL server programs are installed
    invalid_argument  malformed_uri   a production URI that libpq cannot parse
                invalid_production_name   an unknown or unsafe production= name
    unsupported driver_missing      the PostgreSQL driver (the postgresql extra) is not installed
                not_a_file          the production is in a database: it has a location, not a path
    not_found   not_a_demo          the production has no demo media (demo run)
    conflict    producing_activity_ambiguous   a plan: the artifact has several producing activities
                producing_activity_missing     a plan: the artifact has no producing activity
                dependency_failed   a dependency (after, or JobOutput) is failed or cancelled
                waiting_on_dependencies   the job waits on jobs that have not succeeded yet
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


class Reason(enum.StrEnum):
    """Stable, append-only refinements of an error code (see the module docstring)."""

    LEASE_LOST = "lease_lost"
    LEASE_EXPIRED = "lease_expired"
    LEASE_NOT_ACTIVE = "lease_not_active"
    JOB_FINISHED = "job_finished"
    INPUT_CHANGED = "input_changed"
    CLOCK_REGRESSED = "clock_regressed"
    READ_ONLY = "read_only"
    CLOSED = "closed"
    NESTED_EDIT = "nested_edit"
    TRANSACTION_CLOSED = "transaction_closed"
    BUSY = "busy"
    CORRUPT = "corrupt"
    NOT_A_PRODUCTION = "not_a_production"
    NOT_A_DEMO = "not_a_demo"
    PRODUCING_ACTIVITY_AMBIGUOUS = "producing_activity_ambiguous"
    PRODUCING_ACTIVITY_MISSING = "producing_activity_missing"
    IDEMPOTENCY_KEY_CONFLICT = "idempotency_key_conflict"
    WORKER_SESSION_REPLACED = "worker_session_replaced"
    WORKER_OFFLINE = "worker_offline"
    WORKER_AT_CAPACITY = "worker_at_capacity"
    NOT_EMPTY = "not_empty"
    AUTH_FAILED = "auth_failed"
    CONNECTION_LOST = "connection_lost"
    DATABASE_MISSING = "database_missing"
    DRIVER_MISSING = "driver_missing"
    NOT_A_FILE = "not_a_file"
    INVALID_PRODUCTION_NAME = "invalid_production_name"
    MALFORMED_URI = "malformed_uri"
    NO_SERVER_BINARIES = "no_server_binaries"
    PERMISSION_DENIED = "permission_denied"
    SERVER_FAILED = "server_failed"
    UNREACHABLE = "unreachable"
    DEPENDENCY_FAILED = "dependency_failed"
    WAITING_ON_DEPENDENCIES = "waiting_on_dependencies"
    STOP_NOT_REQUESTED = "stop_not_requested"
    REPORT_CONFLICT = "report_conflict"


# The production's server is away: it cannot be reached now (stopped, restarting, refusing
# connections) or the connection to it dropped. Trying again later may succeed; the executor
# retries these (with BUSY), the monitor shows them as its feed's "Not live".
SERVER_AWAY = frozenset({Reason.UNREACHABLE, Reason.CONNECTION_LOST})


class PostProjectError(Exception):
    """A PostProject operation failed."""

    code: ClassVar[ErrorCode] = ErrorCode.INTERNAL

    def __init__(self, message: str | None = None, *, reason: Reason | None = None) -> None:
        self.message = message or (type(self).__doc__ or "error").strip()
        self.reason = Reason(reason) if reason is not None else None
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
