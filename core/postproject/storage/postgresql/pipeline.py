"""An edit's transaction on the write connection: queued statements sent in pipelines.

A statement whose result the edit needs is sent with every statement queued before it in one
pipeline (one round trip); the first statement sent opens the transaction (``READ
COMMITTED``, job counts deferred to the commit, the lock wait bounded by the busy timeout).
A queued statement that must touch a given number of rows says so (``pp_expect``): any other
count aborts the transaction, so a ``COMMIT`` in the same pipeline cannot publish it.

A savepoint is sent only when a round trip happens inside its operation: until then the
operation's statements are still queued here, and undoing them is forgetting them (most
operations queue their writes and end without a round trip: no SAVEPOINT, no RELEASE, no
subtransaction on the server).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

import psycopg

from postproject.model.errors import (
    ConflictError,
    InvalidArgumentError,
    NotFoundError,
    PostProjectError,
    Reason,
)
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
    """One edit's statements on the write connection: queued, then sent in one pipeline with
    the next statement whose answer the edit needs (see the module docstring)."""

    def __init__(self, host: Host, conn: Connection, *, busy_timeout: float) -> None:
        self.host = host
        self.conn = conn
        self.uri = host.uri
        self.busy_timeout = busy_timeout
        self.begun = False
        self._queue: list[tuple[str, Params | None]] = []
        self._keep: set[int] = set()  # positions in _queue whose cursors the next send keeps
        self.kept: list[psycopg.Cursor[Any]] = []  # their cursors, after that send
        self.failed: PostProjectError | None = None  # the transaction is aborted
        self._unsent: dict[str, int] = {}  # savepoints not yet sent -> their place in _queue

    def queue(self, sql: str, params: Params | None = None, *, keep: bool = False) -> None:
        """Send a statement with the next round trip (its errors surface there); ``keep``: its
        cursor is in :attr:`kept` after that round trip."""
        self.check()
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
        self.check()
        statements, keep = self._queue, self._keep
        self._queue, self._keep, self.kept = [], set(), []
        for inserted, (name, place) in enumerate(self._unsent.items()):  # outermost first
            at = place + inserted  # the open savepoints reach the server, each where it was taken
            statements.insert(at, (f"SAVEPOINT {name}", None))
            keep = {position + (position >= at) for position in keep}
        self._unsent.clear()
        if not self.begun:
            begin = [("BEGIN ISOLATION LEVEL READ COMMITTED", None)]
            timeout = max(1, int(self.busy_timeout * 1000))
            if self.host.lock_timeouts.get(id(self.conn)) != timeout:  # a session setting: once per value
                settings = (*INDEX_PLANS, GENERIC_PLANS, f"SET lock_timeout = {timeout}")
                begin[:0] = [(setting, None) for setting in settings]
                self.host.lock_timeouts[id(self.conn)] = timeout
            statements[:0] = begin
            keep = {position + len(begin) for position in keep}
            self.begun = True
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
            self.failed = self._translate(exc)
            raise self.failed from exc
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

    def check(self) -> None:
        """Raise the error that aborted the transaction, if one did."""
        if self.failed is not None:
            raise self.failed

    # --- savepoints ----------------------------------------------------------------------

    def savepoint(self, name: str) -> None:
        """Take savepoint ``name`` where the queue is now (sent with the next round trip)."""
        self.check()
        self._unsent[name] = len(self._queue)

    def release(self, name: str) -> None:
        if self._unsent.pop(name, None) is None:
            self.queue(f"RELEASE {name}")

    def rollback_to(self, name: str) -> None:
        """Undo the statements since savepoint ``name`` (and release it)."""
        place = self._unsent.pop(name, None)
        if place is not None:  # never sent: nothing since it reached the server either
            del self._queue[place:]
            self._keep = {position for position in self._keep if position < place}
            return
        if self.failed is None:
            self.queue(f"ROLLBACK TO {name}")
            self.queue(f"RELEASE {name}")
            return
        failed, self.failed = self.failed, None
        try:  # the transaction is aborted: only rolling back to the savepoint can revive it
            self._queue, self._keep = [(f"ROLLBACK TO {name}", None), (f"RELEASE {name}", None)], set()
            self.send()
        except PostProjectError:
            self.failed = failed

    def ended(self) -> None:
        """The transaction ended (committed or rolled back): nothing queued, nothing failed."""
        self._queue, self._keep, self.failed, self.begun = [], set(), None, False
        self._unsent.clear()

    def end(self, statements: list[tuple[str, Params | None]]) -> None:
        """Send ``statements`` (a rollback and what follows it) in one pipeline, outside the edit."""
        self.ended()
        if not statements:
            return
        try:
            with self.conn.pipeline():
                for statement, values in statements:
                    self.conn.execute(statement, values)
        except psycopg.Error as exc:
            raise translate(exc, self.uri) from exc
