"""The PostgreSQL adapter: a production in one schema of a database, shared by many hosts.

Reads go through a pool (:mod:`.reads`, :mod:`.graph`); edits run on the engine's own write
connection, concurrently with other processes' edits, and are numbered at commit
(:mod:`.writes`). Wake-ups come from LISTEN/NOTIFY (:mod:`.changes`); with no injected
clock a production takes its time from the server (:class:`.changes.ServerClock`).
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Iterable, Iterator
from typing import Any

from postproject.engine import LeaseRow, TableDump
from postproject.model import clock as clocks
from postproject.model.errors import NotFoundError
from postproject.storage import signals
from postproject.storage.postgresql import connection, copying, packing, roles, schema, types
from postproject.storage.postgresql.changes import KnownIds, Listener, ServerClock
from postproject.storage.postgresql.connection import Connection, Connections, Pool
from postproject.storage.postgresql.errors import translated
from postproject.storage.postgresql.reads import Reader
from postproject.storage.postgresql.uri import PostgresUri, parse
from postproject.storage.postgresql.writes import WriteSession
from postproject.storage.sql.graph import Graph

POOL_SIZE = 8  # read connections per open production, at most


class PostgresEngine:
    """The engine interface (:class:`postproject.engine.Engine`) over one production schema."""

    write_sessions = WriteSession  # (postproject.engine.claims.completes_in_one_call)

    def __init__(self, uri: PostgresUri, conn: Connection, *, read_only: bool) -> None:
        self.uri = uri
        self.location = uri.display
        self.possibly_stale = False  # a server has no unreadable log
        self.read_only = read_only
        self.known = KnownIds()
        self.lock_timeouts: dict[int, int] = {}
        self.call_cursors: dict[tuple[int, str], Any] = {}  # (.pipeline.Pipeline.call)
        self.claims: dict[bytes, LeaseRow] = {}  # lease rows of claims made or read here (.calls)
        self._key = f"postgresql:{uri.display}"  # this process's wake-up channel for the production
        self._lock = threading.Lock()
        self._high_water: int | None = None
        self._clock = ServerClock(lambda: self._high_water)
        self._write_conn: Connection | None = None
        self._listener: Listener | None = None
        self._unheard = itertools.count()
        self._closed = False
        self.last_locked_at: int | None = None  # server time the last commit here took the numbering lock
        self.commits_rows = False
        try:
            with translated(uri):
                self._clock.probe(conn)
                if not read_only:
                    self.commits_rows = (schema.read_version(conn, uri.production) or 0) >= packing.VERSION
            self._pool: Pool | Connections
            if read_only:  # the connection that checked the schema serves the reads first
                # (the pool keeps none idle: the first is kept, as a pool would keep one)
                self._pool = Connections(conn, lambda: _pool(uri, POOL_SIZE - 1, min_size=0))
            else:
                self._write_conn = conn
                self._pool = _pool(uri, POOL_SIZE)
        except BaseException:
            conn.close()
            raise
        self._reader = Reader(self._pool, uri)
        self._graph = Graph(self._reader)
        self._high_water = self._reader.high_water()

    @classmethod
    def create(cls, location: str, production_id: bytes, created_at: int | None) -> PostgresEngine:
        uri = parse(location)
        conn = _connect(uri)

        def initialise(c: Connection) -> None:
            c.execute(
                "INSERT INTO production (singleton, id, created_at, cursor_key) VALUES (1, %s, "
                "coalesce(%s, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint), %s)",
                (types.Id(production_id), created_at, os.urandom(32)),
            )

        try:
            with translated(uri):
                schema.create(conn, uri.production, initialise)
        except BaseException:
            conn.close()
            raise
        return cls(uri, conn, read_only=False)

    @classmethod
    def open(cls, location: str, *, read_only: bool) -> PostgresEngine:
        uri = parse(location)
        conn = _connect(uri)
        try:
            with translated(uri):
                schema.upgrade(conn, uri.production, read_only=read_only)
        except BaseException:
            conn.close()
            raise
        return cls(uri, conn, read_only=read_only)

    # --- the interface ---------------------------------------------------------------------

    @property
    def reads(self) -> Reader:
        return self._reader

    @property
    def graph(self) -> Graph:
        return self._graph

    @property
    def high_water(self) -> int | None:
        """The durable clock high-water mark as this process last saw it."""
        return self._high_water

    def server_now(self) -> int | None:
        """The server's time as estimated here (micros), without a round trip."""
        return self._clock.estimate()

    def clock(self) -> ServerClock:
        """The server's clock, for a production opened without one."""
        return self._clock

    def begin_write(self, busy_timeout: float) -> WriteSession:
        with self._lock:
            conn = self._write_conn
            if conn is None or conn.closed or conn.broken:
                if conn is not None:
                    conn.close()
                conn = self._write_conn = _connect(self.uri)
                self.lock_timeouts.clear()
                self.call_cursors.clear()
        return WriteSession(self, conn, busy_timeout=busy_timeout)

    def committed(
        self,
        sequence: int | None,
        mark: int | None,
        server_now: int | None,
        rtt: float,
        *,
        reset: bool = False,
    ) -> None:
        """A commit (or a raised clock mark) through this engine; ``reset``: ``mark`` is the durable
        mark as read now (lowered by ``reset_clock``), not only a lower bound of it."""
        if mark is not None and (reset or self._high_water is None or mark > self._high_water):
            self._high_water = mark
        if server_now is not None:
            self.last_locked_at = server_now
            self._clock.observe(server_now, clocks.monotonic() - rtt, rtt)
        if sequence is not None:
            listener = self._listener
            if listener is not None:
                listener.seen = max(listener.seen, sequence)
            self.notify_committed()

    def change_token(self) -> object:
        """This process's count of commits heard (NOTIFY, or its own). While the listening
        connection is down (reconnecting), a new value every time: waiters then read the
        feed at each of their short waits, catching up until notifications are heard again."""
        self._listen()
        listener = self._listener
        if listener is not None and not listener.connected.is_set():
            return ("unheard", next(self._unheard))
        return signals.generation(self._key)

    def wait_for_change(self, token: object, timeout: float) -> None:
        """Sleep until a commit is heard (NOTIFY, or this process's own) or ``timeout`` passes."""
        self._listen()
        seen = token if isinstance(token, int) else signals.generation(self._key)
        signals.wait(self._key, seen, timeout)

    def notify_committed(self) -> None:
        signals.notify(self._key)

    # --- moving a production between engines -------------------------------------------------

    def schema_version(self) -> int:
        return int(self._reader.one("SELECT version FROM schema_version")[0])

    def export_tables(self, *, derived: bool = False) -> Iterator[TableDump]:
        with self._reader.snapshot() as conn, translated(self.uri):
            yield from copying.export(conn, derived=derived)

    def import_tables(self, tables: Iterable[TableDump]) -> None:
        with self._lock:
            conn = self._write_conn
            if conn is None or conn.closed or conn.broken:
                conn = self._write_conn = _connect(self.uri)
                self.lock_timeouts.clear()
                self.call_cursors.clear()
        with translated(self.uri), conn.transaction():
            copying.load(conn, self.location, tables)
        self._high_water = self._reader.high_water()
        self.notify_committed()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            listener, self._listener = self._listener, None
            conn, self._write_conn = self._write_conn, None
        if listener is not None:
            listener.stop()
        if conn is not None:
            conn.close()
        self._pool.close()

    # --- internals ---------------------------------------------------------------------

    def _listen(self) -> None:
        """Start listening for commits (once, at the first token or wait)."""
        if self._listener is not None:
            return
        with self._lock:
            if self._listener is None and not self._closed:
                listener = Listener(self.uri, self._key, self._heard, _latest, self._clock)
                listener.start()
                self._listener = listener

    def _heard(self, sequence: int, mark: int | None) -> None:
        if mark is not None and (self._high_water is None or mark > self._high_water):
            self._high_water = mark
        signals.notify(self._key)


def remove(location: str) -> None:
    """Drop the production (its schema) that a failed operation just created."""
    from psycopg import sql

    uri = parse(location)
    with _connect(uri) as conn, translated(uri), conn.transaction():
        schema.lock(conn, uri.production)
        if schema.read_version(conn, uri.production) is None:
            raise NotFoundError(f"no production {uri.production!r} in this database")
        conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(uri.production)))


def database_roles(location: str, *, apply: bool) -> str:
    """The SQL that creates pp_owner, pp_writer and pp_reader and gives them the production at
    ``location`` (:mod:`postproject.storage.postgresql.roles`); run there too when ``apply``."""
    uri = parse(location)
    with _connect(uri) as conn, translated(uri):
        database = conn.info.dbname
        text = roles.script(conn, uri.production, database)
        if apply:
            roles.create(conn, uri.production, database)
    return text


def _pool(uri: PostgresUri, size: int, min_size: int = 1) -> Pool:
    return connection.open_pool(
        uri, autocommit=True, configure=types.configure, check=False, min_size=min_size, max_size=size
    )


def _connect(uri: PostgresUri) -> Connection:
    return connection.connect(uri, autocommit=True, configure=types.configure)


def _latest(conn: Any) -> int:
    return int(conn.execute("SELECT coalesce(max(sequence), 0) FROM revisions").fetchone()[0])
