"""Where productions live, and the one place that picks a storage adapter for a location.

A location is a ``*.pproj`` file path (SQLite, the embedded default) or a ``postgresql://``
(``postgres://``) URI naming a production in a PostgreSQL schema; any other URI is refused.
Front ends (the CLI, the executor, the service, the monitor) ask this package what a location
is and how to show it; only :func:`create_engine`, :func:`open_engine` and :func:`remove`
reach ``postproject.storage``, and they import an adapter only when a location needs it.
:class:`LocalServer` runs a throwaway PostgreSQL server (tests, the demo, benchmarks);
:mod:`.netfs` tells whether a production file is on a network filesystem.
"""

from __future__ import annotations

import os
from pathlib import Path

from postproject.engine import Engine
from postproject.model import clock
from postproject.model.errors import InvalidArgumentError, PostProjectError
from postproject.storage.postgresql import uri as postgres_uri
from postproject.storage.postgresql.localserver import ROLE as LOCAL_SERVER_ROLE
from postproject.storage.postgresql.localserver import LocalServer, interrupt_on_sigterm
from postproject.storage.postgresql.uri import PostgresUri

__all__ = [
    "LOCAL_SERVER_ROLE",
    "LocalServer",
    "PostgresUri",
    "check_location",
    "create_engine",
    "display_location",
    "for_child_process",
    "interrupt_on_sigterm",
    "is_conninfo",
    "is_location_uri",
    "open_engine",
    "parse_postgres_uri",
    "remove",
]


SERVICE_SCHEMES = ("http://", "https://")


def is_service_url(text: object) -> bool:
    """Whether a PRODUCTION argument names a service (``http://`` or ``https://``) rather than
    a production: the front ends then talk to it through its HTTP APIs."""
    return isinstance(text, str) and text.lower().startswith(SERVICE_SCHEMES)


def is_conninfo(location: object) -> bool:
    """Whether ``location`` is a libpq ``key=value`` connection string (refused as a location)."""
    return postgres_uri.is_conninfo(location)


def is_location_uri(location: str | os.PathLike[str]) -> bool:
    """Whether a production location is a URI (a database) rather than a file path."""
    return isinstance(location, str) and postgres_uri.is_uri(location)


def parse_postgres_uri(location: str) -> PostgresUri:
    """A ``postgresql://`` location parsed: its production (schema) name, its password-free
    ``display`` text and what libpq needs (invalid_argument when it is malformed)."""
    return postgres_uri.parse(location)


def check_location(location: str | os.PathLike[str]) -> None:
    """Refuse a location that is neither a path nor a URI: a libpq ``key=value`` connection
    string (``invalid_argument``, naming none of its values), which would otherwise be taken
    for a file name holding its password."""
    if postgres_uri.is_conninfo(location):
        raise postgres_uri.refuse_conninfo(str(location))


def display_location(location: str | os.PathLike[str]) -> str:
    """What titles, logs and JSON show for a production location: a path as given, a URI
    without any password (the same text as ``Production.location`` once it is open)."""
    if postgres_uri.is_conninfo(location):
        return postgres_uri.redact_conninfo(str(location))
    if not is_location_uri(location):
        return os.fspath(location)
    try:
        return postgres_uri.parse(str(location)).display
    except PostProjectError:
        return postgres_uri.redact(str(location))


def for_child_process(location: str | os.PathLike[str]) -> tuple[str, dict[str, str]]:
    """How a child process is given ``location``: (its command-line text, environment
    variables to add). A URI's password goes into ``PGPASSWORD``, never onto a command line
    that ``ps`` shows to every user of the host."""
    if not is_location_uri(location):
        return os.fspath(location), {}
    password = postgres_uri.password_of(str(location))
    return display_location(location), ({"PGPASSWORD": password} if password else {})


def create_engine(location: str | os.PathLike[str], production_id: bytes, created_at: int | None) -> Engine:
    """Create a new, empty production at ``location`` and open it.

    ``created_at`` None: now, by the database server's clock where there is one.
    """
    check_location(location)
    if is_location_uri(location):
        from postproject.storage.postgresql.engine import PostgresEngine

        return PostgresEngine.create(str(location), production_id, created_at)
    from postproject.storage.sqlite.engine import SqliteEngine

    now = created_at if created_at is not None else clock.to_micros(clock.SystemClock().now())
    return SqliteEngine.create(Path(location), production_id, now)


def open_engine(location: str | os.PathLike[str], *, read_only: bool) -> Engine:
    """Open the existing production at ``location`` (migrating an older schema when writable)."""
    check_location(location)
    if is_location_uri(location):
        from postproject.storage.postgresql.engine import PostgresEngine

        return PostgresEngine.open(str(location), read_only=read_only)
    from postproject.storage.sqlite.engine import SqliteEngine

    return SqliteEngine.open(Path(location), read_only=read_only)


def check_injected_clock(location: str | os.PathLike[str], clock: object, *, allowed: bool) -> None:
    """Refuse a caller's clock for a production in PostgreSQL unless ``allowed`` (tests): there
    the job clock is the server's, and a clock ahead of it would raise the shared high-water
    mark for every host (each then refused with ``clock_regressed`` until time catches up)."""
    if clock is not None and not allowed and is_location_uri(location):
        raise InvalidArgumentError(
            "a production in PostgreSQL takes its time from the database server: clock= is refused "
            "unless allow_injected_clock=True (tests)"
        )


def database_roles(location: str | os.PathLike[str], *, apply: bool) -> str:
    """The SQL that makes the database roles of the PostgreSQL production at ``location``
    (pp_owner, pp_writer, pp_reader), run there too when ``apply``; ``invalid_argument`` for a
    SQLite file (its access control is the file's permissions)."""
    check_location(location)
    if not is_location_uri(location):
        raise InvalidArgumentError(
            f"{display_location(location)} is a SQLite file: database roles are PostgreSQL's "
            "(a file's access is its permissions); give a postgresql:// URI"
        )
    from postproject.storage.postgresql.engine import database_roles as make

    return make(str(location), apply=apply)


def remove(location: str | os.PathLike[str]) -> None:
    """Delete a production that a failed operation just created (a file and its side files)."""
    if is_location_uri(location):
        from postproject.storage.postgresql.engine import remove as remove_schema

        remove_schema(str(location))
        return
    path = Path(location)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
