"""What an engine learns between queries: commits (LISTEN/NOTIFY), the server's clock, known rows.

:class:`Listener` holds one connection that ``LISTEN``s on the ``postproject`` channel
(``pp_publish`` notifies it at every commit: schema, sequence and clock mark; a progress
report that signals notifies ``schema progress``; never a secret)
in a thread that sleeps in ``select`` until the server or the engine speaks: no table is
polled. A notification for this production wakes the process's waiters at once
(:mod:`postproject.storage.signals`). When the connection drops, the thread reconnects with backoff and
catches up: waiters wake when it drops (and read the feed themselves until it is back: see
``PostgresEngine.change_token``) and again if the newest sequence moved while it was away. While idle it
samples the server's clock every :data:`PROBE_EVERY` seconds (which also notices a silently
dead connection).

:class:`ServerClock` is the production's clock when the caller injected none: the server's
time, estimated from round trips (the server's ``clock_timestamp()`` against this host's
monotonic clock, keeping the sample with the tightest bound), so hosts whose own clocks
differ agree, and reading it costs no round trip.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

import psycopg

from postproject.model import clock
from postproject.model.errors import PostProjectError
from postproject.storage import signals
from postproject.storage.postgresql import connection
from postproject.storage.postgresql.errors import translated
from postproject.storage.postgresql.uri import PostgresUri

CHANNEL = "postproject"
PROGRESS = "progress"  # the payload's rest when a progress report signalled (see writes.WriteSession.PROGRESS_NOTICE)
PROBE_EVERY = 30.0  # seconds between idle clock samples on the listening connection
SERVER_NOW = "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint"
DRIFT = 100e-6  # how fast a clock sample's bound widens (100 ppm, far above real oscillators)
TOLERANCE = 0.005  # seconds: a known clock mark this close ahead is the server's present


class ServerClock:
    """The database server's time, from round trips (see the module docstring)."""

    def __init__(self, high_water: Callable[[], int | None]) -> None:
        self._high_water = high_water
        self._lock = threading.Lock()
        self._offset: float | None = None  # server micros - local monotonic micros
        self._bound = float("inf")  # micros the offset may be off by, when it was taken
        self._taken = 0.0
        self._last = 0

    def observe(self, server_micros: int, started: float, elapsed: float) -> None:
        """A server time read during the round trip that began at monotonic ``started``."""
        middle = (started + elapsed / 2) * 1e6
        bound = elapsed / 2 * 1e6
        with self._lock:
            aged = self._bound + DRIFT * (started - self._taken) * 1e6
            if bound <= aged:
                self._offset, self._bound, self._taken = server_micros - middle, bound, started

    def probe(self, conn: Any, count: int = 3) -> None:
        """Sample the server's time on an idle autocommit connection (``count`` round trips)."""
        for _ in range(count):
            started = clock.monotonic()
            row = conn.execute(SERVER_NOW).fetchone()
            self.observe(int(row[0]), started, clock.monotonic() - started)

    def estimate(self) -> int | None:
        """The server's time in micros from the best sample (None before the first)."""
        offset = self._offset
        return None if offset is None else int(clock.monotonic() * 1e6 + offset)

    def now(self) -> datetime:
        with self._lock:
            if self._offset is None:
                raise RuntimeError("the server clock has not been sampled")
            micros = int(clock.monotonic() * 1e6 + self._offset)
            # A clock mark another host wrote from its own estimate of this same clock, a few
            # milliseconds ahead of ours, is the present as far as anyone can tell.
            mark = self._high_water()
            if mark is not None and micros < mark <= micros + TOLERANCE * 1e6 + self._bound:
                micros = mark
            micros = max(micros, self._last)
            self._last = micros
        return clock.from_micros(micros)

    def __repr__(self) -> str:
        return f"ServerClock(±{self._bound:.0f} µs)"


class KnownIds:
    """Ids (and root names) this engine has seen in committed state; rows are never deleted,
    so a write referring only to known rows cannot miss one and need not wait for an answer."""

    LIMIT = 200_000

    def __init__(self) -> None:
        self._sets: dict[str, set[bytes | str]] = {}

    def has(self, table: str, key: bytes | str) -> bool:
        found = self._sets.get(table)
        return found is not None and key in found

    def add(self, table: str, keys: Iterable[bytes | str]) -> None:
        found = self._sets.setdefault(table, set())
        if len(found) > self.LIMIT:
            found.clear()
        found.update(keys)


class Listener:
    """A thread listening for this production's commits (see the module docstring)."""

    def __init__(
        self,
        uri: PostgresUri,
        key: str,
        on_change: Callable[[int, int | None], None],
        latest: Callable[[Any], int],
        server_clock: ServerClock,
    ) -> None:
        self.uri = uri
        self.key = key
        self._on_change = on_change
        self._latest = latest
        self._clock = server_clock
        self.seen = 0  # the newest sequence this process knows of
        self._wake_r, self._wake_w = os.pipe()
        self._stopping = threading.Event()
        self._conn: Any = None
        self._thread: threading.Thread | None = None
        self.connected = threading.Event()

    def start(self) -> None:
        """Connect and LISTEN now (so commits from here on are heard), then listen in a thread."""
        self._conn = self._connect()
        self._thread = threading.Thread(target=self._run, name=f"postproject-listen:{self.uri.production}")
        self._thread.daemon = True
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        with contextlib.suppress(Exception):
            if self._conn is not None:
                self._conn.close()
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)

    def _connect(self) -> Any:
        conn = connection.connect(self.uri, application_name="postproject-listen", autocommit=True)
        # Notifications that arrive while a query runs on this connection reach this handler.
        conn.add_notify_handler(lambda note: self._heard(note.channel, note.payload))
        try:
            with translated(self.uri):  # (a server gone since the connect is an outage, as there)
                conn.execute(f"LISTEN {CHANNEL}")
                self._clock.probe(conn, 1)
                self._catch_up(conn)
        except BaseException:
            conn.close()
            raise
        self.connected.set()
        return conn

    def _catch_up(self, conn: Any) -> None:
        latest = self._latest(conn)
        if latest > self.seen:
            self.seen = latest
            self._on_change(latest, None)

    def _run(self) -> None:
        delay = 0.05
        while not self._stopping.is_set():
            if self._conn is None:
                try:
                    self._conn = self._connect()
                    delay = 0.05
                except (psycopg.Error, PostProjectError, OSError):
                    self._stopping.wait(delay)
                    delay = min(delay * 2, 2.0)
                    continue
            try:
                self._listen(self._conn)
            except (psycopg.Error, OSError, ValueError):
                self.connected.clear()
                with contextlib.suppress(Exception):
                    self._conn.close()
                self._conn = None
                wake(self.key)  # waiters read the feed themselves until notifications are heard again

    def _listen(self, conn: Any) -> None:
        """Wait for notifications until the connection breaks or the engine stops."""
        pgconn = conn.pgconn
        while not self._stopping.is_set():
            readable, _, _ = select.select([pgconn.socket, self._wake_r], [], [], PROBE_EVERY)
            if self._stopping.is_set():
                return
            if not readable:
                self._clock.probe(conn, 1)
                continue
            pgconn.consume_input()
            if pgconn.status != psycopg.pq.ConnStatus.OK:
                raise psycopg.OperationalError("the listening connection broke")
            while (note := pgconn.notifies()) is not None:
                self._heard(note.relname.decode(), note.extra.decode())
            if pgconn.status != psycopg.pq.ConnStatus.OK:
                raise psycopg.OperationalError("the listening connection broke")

    def _heard(self, channel: str, payload: str) -> None:
        schema, _, rest = payload.partition(" ")
        if channel != CHANNEL or schema != self.uri.production:
            return
        if rest == PROGRESS:  # a progress report signalled: stored state, not a revision
            wake(self.key)
            return
        sequence, _, mark = rest.partition(" ")
        try:
            number = int(sequence)
            clock_mark = int(mark) if mark else None
        except ValueError:
            return
        self.seen = max(self.seen, number)
        self._on_change(number, clock_mark)


def wake(key: str) -> None:
    """Wake this process's waiters on ``key``."""
    signals.notify(key)
