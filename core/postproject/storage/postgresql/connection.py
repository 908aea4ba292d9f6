"""Connections to a production's database, bound to its schema.

Every connection (single or pooled) has ``search_path`` set to the production's schema only
(quoted with ``psycopg.sql.Identifier``), an ``application_name`` unless the URI names one,
and a connect timeout unless the URI sets ``connect_timeout``. Failures to connect are
translated once, here: ``storage`` with reason ``unreachable``, ``auth_failed`` or
``database_missing`` (see :mod:`postproject.storage.postgresql.errors`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool, PoolTimeout

from postproject.model.errors import Reason, StorageError
from postproject.storage.postgresql.errors import translated
from postproject.storage.postgresql.uri import PostgresUri

APPLICATION_NAME = "postproject"
CONNECT_TIMEOUT = 10  # seconds, per host, when the URI does not say

Connection = psycopg.Connection[Any]
Pool = ConnectionPool[Connection]


def connect(
    uri: PostgresUri,
    *,
    application_name: str = APPLICATION_NAME,
    autocommit: bool = False,
    configure: Callable[[Connection], None] | None = None,
) -> Connection:
    """One connection to ``uri``'s database with ``search_path`` = the production's schema
    (then ``configure``, for an engine's type adaptations)."""
    with translated(uri, connecting=True):
        conn = psycopg.connect(uri.conninfo, autocommit=autocommit, **_defaults(uri, application_name))
    try:
        with translated(uri):
            set_search_path(conn, uri.production)
            if configure is not None:
                configure(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def open_pool(
    uri: PostgresUri,
    *,
    application_name: str = APPLICATION_NAME,
    min_size: int = 1,
    max_size: int = 8,
    timeout: float = 30.0,
    autocommit: bool = False,
    configure: Callable[[Connection], None] | None = None,
    check: bool = True,
    first: Connection | None = None,
) -> Pool:
    """An open pool of connections to ``uri``, each with ``search_path`` = the production's schema
    (then ``configure``).

    Unless ``check`` is false (the caller has just connected), one direct connection is made
    first, so a bad URI, password or server fails here with a clear error instead of a pool
    timeout. ``timeout`` bounds ``pool.connection()`` waits. ``first``: a connection the caller
    made to ``uri`` with these settings (``autocommit``, ``configure``; idle) and hands over, as
    the pool's first connection: the pool then opens without connecting again (a connection
    costs the server a process and both sides a handshake).
    """
    if check:
        connect(uri, application_name=application_name).close()
    production = uri.production
    extra = configure
    handed = [first] if first is not None else []

    def configure_one(conn: Connection) -> None:
        if conn is first:
            return  # (configured when it was made)
        set_search_path(conn, production)
        if extra is not None:
            extra(conn)

    class PoolConnection(psycopg.Connection[Any]):
        @classmethod
        def connect(cls, conninfo: str = "", **kwargs: Any) -> Any:
            """The handed-over connection the first time, a new one after."""
            if handed:
                return handed.pop()
            return super().connect(conninfo, **kwargs)

    pool: Pool = ConnectionPool(
        uri.conninfo,
        connection_class=PoolConnection,
        kwargs={"autocommit": autocommit, **_defaults(uri, application_name)},
        min_size=min_size,
        max_size=max_size,
        open=False,
        configure=configure_one,
        timeout=timeout,
        num_workers=1,  # connections are made rarely; a production open in tests makes one pool
        name=f"postproject:{production}",
    )
    try:
        pool.open(wait=True, timeout=timeout)
    except PoolTimeout as exc:
        pool.close()
        raise StorageError(
            f"cannot open connections to {uri.display} within {timeout:g} s", reason=Reason.UNREACHABLE
        ) from exc
    return pool


def set_search_path(conn: Connection, production: str) -> None:
    """Make ``production``'s schema the only one searched (pg_catalog stays implicit); leaves ``conn`` idle."""
    conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(production)))
    if not conn.autocommit:
        conn.commit()


def _defaults(uri: PostgresUri, application_name: str) -> dict[str, Any]:
    """Connection parameters the URI does not set itself."""
    given = conninfo_to_dict(uri.conninfo)
    defaults: dict[str, Any] = {}
    if "application_name" not in given:
        defaults["application_name"] = application_name
    if "connect_timeout" not in given:
        defaults["connect_timeout"] = CONNECT_TIMEOUT
    return defaults
