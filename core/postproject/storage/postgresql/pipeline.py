"""An edit's transaction on the write connection: queued statements sent in pipelines.

A statement whose result the edit needs is sent with every statement queued before it in one
pipeline (one round trip); the first statement sent opens the transaction (``READ
COMMITTED``, job counts deferred to the commit, the lock wait bounded by the busy timeout).
A queued statement that must touch a given number of rows says so (``pp_expect``): any other
count aborts the transaction, so a ``COMMIT`` in the same pipeline cannot publish it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

import psycopg

from postproject.engine import ChangedInput, LeaseRow
from postproject.model.errors import (
    ConflictError,
    InvalidArgumentError,
    NotFoundError,
    PostProjectError,
    Reason,
)
from postproject.model.revisions import RevisionEvent
from postproject.storage.postgresql.connection import Connection
from postproject.storage.postgresql.errors import translate
from postproject.storage.postgresql.uri import PostgresUri

# The sequence of the rows an open edit wrote (larger than any revision number); pp_publish
# gives them the edit's revision number at commit.
PROVISIONAL = 1 << 62
# The durable clock high-water mark: the newest revision's mark, or job_clock's when higher.
DURABLE_MARK = "SELECT greatest((SELECT clock_mark FROM revisions ORDER BY sequence DESC LIMIT 1), high_water) FROM job_clock"
Params = Sequence[Any] | dict[str, Any]
# Edits run the same few statements (and pp_publish's) over and over with different values:
# generic plans (planned once per connection) cost less server CPU than custom plans per
# execution, and every statement's plan is fixed by indexes, not by its values (measured in
# back-to-back one-worker drains: 7-15 % less server CPU per job). Write connection only.
GENERIC_PLANS = "SET plan_cache_mode = force_generic_plan"
# ... and a generic plan is made once, from the tables' sizes at that moment: one made while a
# table was small (a new production, a fresh queue) scans it whole, and keeps doing so as it
# grows to millions of rows (measured: a completion's input check, an activity's, and
# pp_publish's renumbering read every row). Every statement of an edit reaches its rows through
# an index, so the write connection never plans a sequential scan where an index serves (and
# never compiles a statement with JIT, which that setting's cost penalty would otherwise start:
# tens of milliseconds to compile statements that run in microseconds).
INDEX_PLANS = ("SET enable_seqscan = off", "SET jit = off")


class Known(Protocol):
    """What the engine knows exists in committed state (rows are never deleted)."""

    def has(self, table: str, key: bytes | str) -> bool: ...
    def add(self, table: str, keys: Iterable[bytes | str]) -> None: ...


class Host(Protocol):
    """What a write session needs of its engine."""

    uri: PostgresUri
    last_locked_at: int | None  # server time the last commit here took the numbering lock

    lock_timeouts: dict[int, int]  # the lock_timeout set on each write connection (by id)

    @property
    def known(self) -> Known: ...
    @property
    def high_water(self) -> int | None: ...

    def committed(
        self,
        sequence: int | None,
        mark: int | None,
        server_now: int | None,
        rtt: float,
        *,
        reset: bool = False,
    ) -> None: ...
    def server_now(self) -> int | None: ...


class Pipeline:
    """One edit's transaction: statements queued and sent in pipelines, savepoints, staged events,
    and what the edit wrote (see :mod:`postproject.storage.postgresql.writes`)."""

    def __init__(self, host: Host, conn: Connection, *, busy_timeout: float) -> None:
        self.host = host
        self.conn = conn
        self.uri = host.uri
        self.busy_timeout = busy_timeout
        self.sequence = PROVISIONAL
        self.positions = 0
        self.staged: list[RevisionEvent] = []
        self.state_written = False  # stored state that is not a revision (heartbeats, registrations)
        self._subjects: list[bytes | None] = []
        self._queue: list[tuple[str, Params | None]] = []
        self._keep: set[int] = set()  # positions in _queue whose cursors the next send keeps
        self.kept: list[psycopg.Cursor[Any]] = []  # their cursors, after that send
        self._begun = False
        self._failed: PostProjectError | None = None  # the transaction is aborted
        self._savepoints = 0
        self._unsent: dict[str, int] = {}  # savepoints not yet sent -> their place in _queue
        self._mark_read = False
        self.reset_mark: int | None = None  # reset_clock's new mark
        # What this edit wrote, by table (renumbered at commit) and what it knows of it.
        self.written: dict[str, dict[Any, Any]] = {
            name: {}
            for name in (
                "assets",
                "media_roots",
                "representations",
                "fingerprints",
                "activities",
                "metadata",
                "jobs",
            )
        }
        self.consumed: dict[bytes, None] = {}  # inputs of this edit's activities
        # job id -> (lease row, changed input) read and locked by this edit
        self.leases: dict[bytes, tuple[LeaseRow, ChangedInput | None]] = {}
        self._journal: list[tuple[dict[Any, Any], Any]] = []  # additions, undone by a savepoint rollback

    @property
    def stored_high_water(self) -> int | None:
        """The durable clock mark: as this process last saw it (its commits, notifications), read
        again in the edit when that is ahead of the server's time (a clock that ran ahead, or a
        mark lowered by ``reset_clock`` since), so a stale mark can never wedge a process."""
        if self.reset_mark is not None:
            return self.reset_mark
        known = self.host.high_water
        server = self.host.server_now()
        if known is not None and not self._mark_read and (server is None or known > server):
            self._mark_read = True
            known = self.one(DURABLE_MARK)[0]
            self.host.committed(None, known, None, 0.0, reset=True)
        return known

    @stored_high_water.setter
    def stored_high_water(self, value: int | None) -> None:
        raise AttributeError("the stored high-water mark is the engine's")

    # --- sending -----------------------------------------------------------------------

    def remember(self, table: str, key: Any, value: Any = None) -> None:
        """Record that this edit wrote ``key`` in ``table`` (undone with its savepoint)."""
        target = self.consumed if table == "consumed" else self.written[table]
        if key not in target:
            target[key] = value
            self._journal.append((target, key))
        elif value is not None:
            target[key] = value

    def learn(self, table: str, keys: Iterable[bytes]) -> None:
        """Rows seen to exist (rows are never deleted); those this edit wrote become known only
        when it commits."""
        written = self.written.get(table, {})
        self.host.known.add(table, [k for k in keys if k not in written])

    def created(self, table: str, key: Any) -> bool:
        return key in self.written[table]

    def exists(self, table: str, key: bytes | str) -> bool:
        """Known to exist for this edit: written by it, or seen committed by this engine."""
        return key in self.written[table] or self.host.known.has(table, key)

    def queue(self, sql: str, params: Params | None = None, *, keep: bool = False) -> None:
        """Send a statement with the next round trip (its errors surface there); ``keep``: its
        cursor is in :attr:`kept` after that round trip."""
        self._check()
        if keep:
            self._keep.add(len(self._queue))
        self._queue.append((sql, params))

    def queue_expecting(self, sql: str, params: dict[str, Any], count: int, state: str, message: str) -> None:
        """Queue a data-modifying statement (``sql`` is ``WITH w AS (...) ``) that must touch ``count`` rows."""
        self.queue(sql + " SELECT pp_expect(count(*), %(expected)s, %(state)s, %(message)s) FROM w",
                   {**params, "expected": count, "state": state, "message": message})  # fmt: skip

    def send(
        self, sql: str | None = None, params: Params | None = None, *, then: str | None = None
    ) -> psycopg.Cursor[Any] | None:
        """Send the queued statements, ``sql`` and ``then`` in one round trip; ``sql``'s cursor."""
        self._check()
        statements, keep = self._queue, self._keep
        self._queue, self._keep, self.kept = [], set(), []
        for inserted, (name, place) in enumerate(self._unsent.items()):  # outermost first
            at = place + inserted  # the open savepoints reach the server, each where it was taken
            statements.insert(at, (f"SAVEPOINT {name}", None))
            keep = {position + (position >= at) for position in keep}
        self._unsent.clear()
        if not self._begun:
            begin = [("BEGIN ISOLATION LEVEL READ COMMITTED", None)]
            timeout = max(1, int(self.busy_timeout * 1000))
            if self.host.lock_timeouts.get(id(self.conn)) != timeout:  # a session setting: once per value
                settings = (*INDEX_PLANS, GENERIC_PLANS, f"SET lock_timeout = {timeout}")
                begin[:0] = [(setting, None) for setting in settings]
                self.host.lock_timeouts[id(self.conn)] = timeout
            statements[:0] = begin
            keep = {position + len(begin) for position in keep}
            self._begun = True
        cursor = None
        try:
            with self.conn.pipeline():
                for position, (statement, values) in enumerate(statements):
                    sent = self.conn.execute(statement, values, binary=True)
                    if position in keep:
                        self.kept.append(sent)
                if sql is not None:
                    cursor = self.conn.execute(sql, params, binary=True)
                if then is not None:
                    self.conn.execute(then)
        except psycopg.Error as exc:
            self._failed = self._translate(exc)
            raise self._failed from exc
        return cursor

    def one(self, sql: str, params: Params | None = None) -> Any:
        cursor = self.send(sql, params)
        assert cursor is not None
        return cursor.fetchone()

    def all(self, sql: str, params: Params | None = None) -> list[Any]:
        cursor = self.send(sql, params)
        assert cursor is not None
        return cursor.fetchall()

    def rowcount(self, sql: str, params: Params | None = None) -> int:
        cursor = self.send(sql, params)
        assert cursor is not None
        return cursor.rowcount

    def _translate(self, exc: psycopg.Error) -> PostProjectError:
        state = getattr(exc, "sqlstate", None)
        message = getattr(getattr(exc, "diag", None), "message_primary", None) or str(exc)
        if state == "PPL01":
            return ConflictError(message, reason=Reason.LEASE_LOST)
        if state == "PPN01":
            return NotFoundError(message)
        if state == "PPC01":  # a provenance cycle closed by an edit that committed concurrently
            return InvalidArgumentError(message)
        return translate(exc, self.uri)

    def _check(self) -> None:
        if self._failed is not None:
            raise self._failed

    # --- events and savepoints ---------------------------------------------------------

    def event(self, kind: str, subject: bytes | None, payload: dict[str, Any]) -> None:
        """Stage an event; staged events are written with the revision at commit."""
        self.staged.append(RevisionEvent(self.positions, kind, payload))
        self._subjects.append(subject)
        self.positions += 1

    def mark(self) -> int:
        return self.positions

    def rewind(self, mark: object) -> None:
        assert isinstance(mark, int)
        self.positions = mark
        del self.staged[mark:], self._subjects[mark:]

    # A savepoint is sent only when a round trip happens inside its operation: until then the
    # operation's statements are still queued here, and undoing them is forgetting them (most
    # operations queue their writes and end without a round trip: no SAVEPOINT, no RELEASE, no
    # subtransaction on the server).

    def savepoint(self) -> tuple[str, int, int]:
        self._check()
        name = f"op{self._savepoints}"
        self._savepoints += 1
        self._unsent[name] = len(self._queue)
        return name, self.positions, len(self._journal)

    def release_savepoint(self, token: object) -> None:
        name, _, _ = _savepoint(token)
        self._savepoints -= 1
        if self._unsent.pop(name, None) is None:
            self.queue(f"RELEASE {name}")

    def rollback_savepoint(self, token: object) -> None:
        """Undo everything since the savepoint: rows, staged events and what the edit remembers."""
        name, positions, journal = _savepoint(token)
        self._savepoints -= 1
        self.positions = positions
        del self.staged[positions:], self._subjects[positions:]
        while len(self._journal) > journal:
            target, key = self._journal.pop()
            target.pop(key, None)
        self.leases.clear()
        place = self._unsent.pop(name, None)
        if place is not None:  # never sent: nothing since it reached the server either
            del self._queue[place:]
            self._keep = {position for position in self._keep if position < place}
            return
        if self._failed is None:
            self.queue(f"ROLLBACK TO {name}")
            self.queue(f"RELEASE {name}")
            return
        failed, self._failed = self._failed, None
        try:  # the transaction is aborted: only rolling back to the savepoint can revive it
            self._queue, self._keep = [(f"ROLLBACK TO {name}", None), (f"RELEASE {name}", None)], set()
            self.send()
        except PostProjectError:
            self._failed = failed


def _savepoint(token: object) -> tuple[str, int, int]:
    assert isinstance(token, tuple), "a savepoint token from this session"
    name, positions, journal = token
    return str(name), int(positions), int(journal)
