"""Connections to a production's database, bound to its schema.

Every connection (single or pooled) has ``search_path`` set to the production's schema only
(quoted with ``psycopg.sql.Identifier``), an ``application_name`` unless the URI names one,
and a connect timeout unless the URI sets ``connect_timeout``. Failures to connect are
translated once, here: ``storage`` with reason ``unreachable``, ``auth_failed`` or
``database_missing`` (see :mod:`postproject.storage.postgresql.errors`).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict
from psycopg.pq import TransactionStatus
from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout

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
) -> Pool:
    """An open pool of connections to ``uri``, each with ``search_path`` = the production's schema
    (then ``configure``).

    Unless ``check`` is false (the caller has just connected), one direct connection is made
    first, so a bad URI, password or server fails here with a clear error instead of a pool
    timeout. ``timeout`` bounds ``pool.connection()`` waits.
    """
    if check:
        connect(uri, application_name=application_name).close()
    production = uri.production
    extra = configure

    def configure_one(conn: Connection) -> None:
        set_search_path(conn, production)
        if extra is not None:
            extra(conn)

    pool: Pool = ConnectionPool(
        uri.conninfo,
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


class Connections:
    """Connections for reads that start from one the caller made (``first``: autocommit, idle,
    bound to the schema like a pooled one): it serves one thread at a time, and a pool
    (``make_pool``, up to ``max_size - 1`` more) opens only when another thread reads while it is
    in use, or once it was lost. Used like a pool: :meth:`connection`, :meth:`check`, :meth:`close`.

    A read-only open needs one connection to check the schema; this one then serves its reads,
    so the open makes one connection, not two, and starts no pool threads: a reader used by one
    thread at a time (each of the monitor's) never opens the pool. (A pool's opening starts two
    threads and waits for them and for its first connection: 1-9 ms on a loaded machine beside
    the connection itself, more while another thread keeps the interpreter busy.)
    """

    def __init__(self, first: Connection, make_pool: Callable[[], Pool]) -> None:
        self._first: Connection | None = first
        self._in_use = threading.Lock()
        self._make_pool = make_pool
        self._pool: Pool | None = None
        self._opening = threading.Lock()
        self._closed = False

    @contextmanager
    def connection(self) -> Iterator[Connection]:
        """The first connection when it is free, else one of the pool (opened now if need be)."""
        first = self._take_first()
        if first is None:
            with self._opened_pool().connection() as conn:
                yield conn
            return
        try:
            yield first
        finally:
            self._give_back(first)

    def check(self) -> None:
        """Drop the first connection if it is broken (when free), and check the pool's."""
        if self._in_use.acquire(blocking=False):
            try:
                first = self._first
                if first is not None:
                    try:
                        ConnectionPool.check_connection(first)
                    except psycopg.Error:
                        self._drop(first)
            finally:
                self._in_use.release()
        if self._pool is not None:
            self._pool.check()

    def close(self) -> None:
        """Close the first connection (when in use: as its reader gives it back) and the pool."""
        self._closed = True
        if self._in_use.acquire(blocking=False):
            try:
                if self._first is not None:
                    self._drop(self._first)
            finally:
                self._in_use.release()
        with self._opening:
            pool = self._pool
        if pool is not None:
            pool.close()

    def _take_first(self) -> Connection | None:
        if self._first is None or not self._in_use.acquire(blocking=False):
            return None
        first = self._first
        if first is not None and not (first.closed or first.broken):
            return first
        if first is not None:
            self._drop(first)
        self._in_use.release()
        return None

    def _give_back(self, conn: Connection) -> None:
        """As a pool takes a connection back: idle it stays; in a transaction it is rolled back;
        lost, busy or unknown it is closed (and the pool serves from then on)."""
        try:
            status = conn.info.transaction_status
            if self._closed or conn.closed or conn.broken or status not in _REUSABLE:
                self._drop(conn)
            elif status != TransactionStatus.IDLE:
                conn.rollback()
        except psycopg.Error:
            self._drop(conn)
        finally:
            self._in_use.release()

    def _drop(self, conn: Connection) -> None:
        if self._first is conn:
            self._first = None
        conn.close()

    def _opened_pool(self) -> Pool:
        pool = self._pool
        if pool is None:
            with self._opening:
                if self._closed:
                    raise PoolClosed("these connections are closed")
                if self._pool is None:
                    self._pool = self._make_pool()
                pool = self._pool
        return pool


_REUSABLE = (TransactionStatus.IDLE, TransactionStatus.INTRANS, TransactionStatus.INERROR)


def set_search_path(conn: Connection, production: str) -> None:
    """Make ``production``'s schema the only one searched (pg_catalog stays implicit); leaves ``conn`` idle."""
    conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(production)))
    if not conn.autocommit:
        conn.commit()


@functools.lru_cache(maxsize=64)
def _named(conninfo: str) -> frozenset[str]:
    """The parameters ``conninfo`` names (libpq's reading, remembered: one per opening)."""
    return frozenset(conninfo_to_dict(conninfo))


def _defaults(uri: PostgresUri, application_name: str) -> dict[str, Any]:
    """Connection parameters the URI does not set itself."""
    given = _named(uri.conninfo)
    defaults: dict[str, Any] = {}
    if "application_name" not in given:
        defaults["application_name"] = application_name
    if "connect_timeout" not in given:
        defaults["connect_timeout"] = CONNECT_TIMEOUT
    return defaults
