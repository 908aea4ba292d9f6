"""The SQLite adapter: one ``*.pproj`` file, WAL, one writer at a time, any number of readers."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

from postproject.engine import TableDump
from postproject.model import clock
from postproject.storage import signals
from postproject.storage.sql.graph import Graph
from postproject.storage.sqlite import connection, copying
from postproject.storage.sqlite.errors import translated
from postproject.storage.sqlite.reads import Reader
from postproject.storage.sqlite.writes import Head, WriteSession


class SqliteEngine:
    """The engine interface (:class:`postproject.engine.Engine`) over one production file."""

    def __init__(self, path: Path, reader: Reader, *, possibly_stale: bool = False) -> None:
        self.path = path
        self.location = str(path)
        self.possibly_stale = possibly_stale
        self._key = str(path.resolve())  # one wake-up channel per file, however it was named
        self._reader = reader
        self._graph = Graph(reader)
        self._write_conn: connection.Connection | None = None
        self._lock = threading.Lock()
        self._commits = 0
        self._head = Head()  # the write connection's view of the newest revision

    @classmethod
    def create(cls, path: Path, production_id: bytes, created_at: int) -> SqliteEngine:
        return cls(path, Reader(connection.create_file(path, production_id, created_at), path))

    @classmethod
    def open(cls, path: Path, *, read_only: bool) -> SqliteEngine:
        conn, stale = connection.open_checked(path, read_only=read_only)
        return cls(path, Reader(conn, path), possibly_stale=stale)

    @property
    def reads(self) -> Reader:
        return self._reader

    @property
    def graph(self) -> Graph:
        return self._graph

    def begin_write(self, busy_timeout: float) -> WriteSession:
        with self._lock:
            if self._write_conn is None:
                self._write_conn = connection.open_file(self.path, read_only=False)
                connection.set_writer_mode(self._write_conn)
            conn = self._write_conn
        session = WriteSession(
            conn, self.path, busy_timeout=busy_timeout, on_commit=self.notify_committed, head=self._head
        )
        session.begin()
        return session

    def change_token(self) -> object:
        return (signals.generation(self._key), self._reader.data_version())

    def wait_for_change(self, token: object, timeout: float) -> None:
        """Same-process commits wake at once; others are seen by polling ``PRAGMA data_version``
        (microseconds per probe) with a 5-50 ms backoff."""
        generation = token[0] if isinstance(token, tuple) else -1
        deadline = clock.monotonic() + timeout
        delay = 0.005
        while True:
            remaining = deadline - clock.monotonic()
            if remaining <= 0:
                return
            signals.wait(self._key, generation, min(delay, remaining))
            if self.change_token() != token:
                return
            delay = min(delay * 2, 0.05)

    def notify_committed(self) -> None:
        signals.notify(self._key)
        self._commits += 1
        if self._write_conn is None:
            return
        if (
            self._commits % connection.WAL_CHECK_EVERY == 0
            and connection.wal_size(self.path) > connection.WAL_BOUND
        ):
            connection.truncate_wal(
                self._write_conn, wait_ms=connection.CHECKPOINT_WAIT_MS
            )  # the WAL's bound
        elif self._commits % connection.TRUNCATE_EVERY == 0:
            connection.truncate_wal(self._write_conn)  # keep the WAL small under sustained writes

    # --- moving a production between engines -------------------------------------------------

    def schema_version(self) -> int:
        with translated(self.path):
            return int(self._reader.conn.execute("PRAGMA user_version").fetchone()[0])

    def export_tables(self, *, derived: bool = False) -> Iterator[TableDump]:
        with self._reader.snapshot() as conn:
            yield from copying.export(conn, self.path, derived=derived)

    def import_tables(self, tables: Iterable[TableDump]) -> None:
        with self._lock:
            if self._write_conn is None:
                self._write_conn = connection.open_file(self.path, read_only=False)
                connection.set_writer_mode(self._write_conn)
            conn = self._write_conn
        self._head.version = None  # the import replaces every table
        copying.begin(conn, self.path)
        try:
            copying.load(conn, self.path, tables)
            with translated(self.path):
                conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        self.notify_committed()

    def clock(self) -> None:
        """No server: a production file takes the local wall clock."""
        return

    def close(self) -> None:
        with translated(self.path):
            self._reader.conn.close()
            with self._lock:
                if self._write_conn is not None:
                    self._write_conn.close()
                    self._write_conn = None
                    self._head.version = None
