"""Translate psycopg's exceptions into the PostProject error tree, in one place.

Reasons of ``storage`` errors on this engine::

    unreachable        no connection to the server (refused, unknown host, timeout, starting up)
    auth_failed        the server refused the credentials (wrong or missing password, no such role)
    database_missing   the URI's database does not exist on the server
    connection_lost    an open connection broke (server restart, terminated backend, network)
    busy               a lock, serialization or connection limit, or no pooled connection free in
                       time: the same request may succeed later
    read_only          the server or transaction is read-only (a standby, default_transaction_read_only)
    permission_denied  the role may not do this (grants on the database or schema)

A connection option libpq refuses (``sslmode=bogus``) is ``invalid_argument`` with reason
``malformed_uri``, like a malformed URI. Connection failures carry no SQLSTATE, so they are told apart by libpq's and the server's
English messages (the local server runs with ``lc_messages = C``); anything unrecognised
while connecting is ``unreachable``. Messages name the URI by its display form and never
contain a password.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg_pool import PoolTimeout

from postproject.model.errors import (
    InvalidArgumentError,
    IoError,
    PostProjectError,
    Reason,
    StorageError,
    UnsupportedError,
)
from postproject.storage.postgresql.uri import PostgresUri

_AUTH_MESSAGES = (
    "password authentication failed",
    "no password supplied",
    "authentication failed",
    'role "',  # FATAL: role "x" does not exist
    "no pg_hba.conf entry",
    "scram",
)
_BAD_OPTION = re.compile(r'invalid (integer )?(\w+ )?value:? "')  # libpq: invalid sslmode value: "x"
# serialization failure, deadlock, lock not available (lock_timeout), too many connections
_BUSY_STATES = {"40001", "40P01", "55P03", "53300"}
_LOST_STATES = {"57P01", "57P02", "57P03"}  # admin/crash shutdown, cannot connect now
_IO_STATES = {"53100", "53200", "58030"}  # disk full, out of memory, I/O error


def sqlstate(exc: BaseException) -> str | None:
    """The SQLSTATE of a server error, or ``None`` (client-side and connection errors)."""
    return getattr(exc, "sqlstate", None)


def translate(exc: psycopg.Error, uri: PostgresUri, *, connecting: bool = False) -> PostProjectError:
    """The library error for a driver error on the production at ``uri``.

    ``connecting``: the error came from opening a connection (no SQLSTATE there).
    """
    where = uri.display
    detail = uri.scrub(
        str(exc).strip().removeprefix("connection failed: ").removeprefix("connection is bad: ")
    )
    state = sqlstate(exc)
    lowered = detail.lower()
    if connecting and state is None:
        if _BAD_OPTION.search(detail):
            return InvalidArgumentError(
                f"bad connection option in {where}: {detail}", reason=Reason.MALFORMED_URI
            )
        if any(text in lowered for text in _AUTH_MESSAGES):
            return StorageError(
                f"the PostgreSQL server refused the login for {where}: {detail}", reason=Reason.AUTH_FAILED
            )
        if "database" in lowered and "does not exist" in lowered:
            return StorageError(f"no such database for {where}: {detail}", reason=Reason.DATABASE_MISSING)
        if "too many" in lowered and "connections" in lowered:
            return StorageError(f"the PostgreSQL server for {where} is busy: {detail}", reason=Reason.BUSY)
        return StorageError(
            f"cannot reach the PostgreSQL server for {where}: {detail}", reason=Reason.UNREACHABLE
        )
    if isinstance(exc, PoolTimeout) and (down := _server_down(uri)) is not None:
        return down  # no connection for the pool because the server is gone, not because all are in use
    if state in _BUSY_STATES or isinstance(exc, PoolTimeout):
        return StorageError(f"production {where} is busy: {detail}", reason=Reason.BUSY)
    if state in _LOST_STATES or (state or "").startswith("08") or _is_lost(exc):
        return StorageError(f"the connection to {where} was lost: {detail}", reason=Reason.CONNECTION_LOST)
    if state == "25006":
        return StorageError(f"production {where} is read-only here: {detail}", reason=Reason.READ_ONLY)
    if state == "42501":
        return StorageError(f"permission denied on {where}: {detail}", reason=Reason.PERMISSION_DENIED)
    if state == "3D000":
        return StorageError(f"no such database for {where}: {detail}", reason=Reason.DATABASE_MISSING)
    if state in _IO_STATES:
        return IoError(f"the PostgreSQL server for {where} could not read or write: {detail}")
    if state is not None and state.startswith("54"):
        return UnsupportedError(f"value or statement too large for {where}: {detail}")
    if isinstance(exc, psycopg.DataError) and state is None:
        return InvalidArgumentError(f"a value cannot be stored in {where}: {detail}")
    return StorageError(f"storage error on production {where}: {detail}")


@contextmanager
def translated(uri: PostgresUri, *, connecting: bool = False) -> Iterator[None]:
    """Re-raise driver errors as library errors (``raise ... from``, the cause's text scrubbed)."""
    try:
        yield
    except psycopg.Error as exc:
        error = translate(exc, uri, connecting=connecting)
        _scrub_cause(exc, uri)
        raise error from exc


def _server_down(uri: PostgresUri) -> PostProjectError | None:
    """After a pool waited in vain for a connection: the error of one direct connection attempt
    when it fails (the server stopped, refuses or is unreachable: a worker's recovery must say
    "unreachable", not "busy"), or None when the server answers (the pool is exhausted)."""
    try:
        psycopg.connect(uri.conninfo, application_name="postproject-probe", connect_timeout=5).close()
    except psycopg.Error as probe:
        return translate(probe, uri, connecting=True)
    return None


def _is_lost(exc: psycopg.Error) -> bool:
    """A client-side error on a connection that broke (no SQLSTATE: the server never answered)."""
    text = str(exc).lower()
    return isinstance(exc, psycopg.OperationalError) and (
        "server closed the connection" in text
        or "connection is lost" in text
        or "consuming input failed" in text
        or text == "the connection is closed"  # psycopg's word for a connection it found broken before
    )


def _scrub_cause(exc: BaseException, uri: PostgresUri) -> None:
    """Remove secrets from the driver's exception too: it travels along as ``__cause__``."""
    if uri.secrets and any(secret in str(exc) for secret in uri.secrets):
        exc.args = tuple(uri.scrub(a) if isinstance(a, str) else a for a in exc.args)
