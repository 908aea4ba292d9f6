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

Rows written with their final number: when inserts of new rows are still queued at commit
(they cannot wait for a row lock another edit holds, so they may run under the
revision-numbering lock), the commit sends the other queued statements first (each may go
ahead of them: a lease transition refers to them only through foreign keys checked at commit),
then ``pp_number`` (the lock and the next number), then the inserts, writing the revision's
number through ``pp_sequence()`` instead of the provisional one (:func:`finalised`): nothing
of theirs is left for ``pp_publish`` to renumber. A read that does not see the queued inserts
(a lease row) is sent ahead of them, so they stay queued for the commit (``overtake``). The
write session may take those inserts out of the queue at commit and send them as one
``pp_commit`` call instead (:meth:`Pipeline.packable_at_commit`, :meth:`Pipeline.take`).
"""

from __future__ import annotations

import functools
import itertools
import re
import uuid
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import psycopg
from psycopg.pq import TransactionStatus

from postproject.engine import ChangedInput, LeaseRow
from postproject.engine.claims import InputChangedAtCommit
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
from postproject.storage.sql.service import PRINCIPAL

if TYPE_CHECKING:
    from postproject.storage.postgresql.reads import Reader

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


# How a statement sent after pp_number writes the revision's number (0009_job_path.sql).
SEQUENCE = "pp_sequence()"
# A statement's flags: its cursor is kept (``KEEP``); it inserts new rows only, so a read that
# does not look at them may be sent ahead of it, and at commit it follows pp_number
# (``INDEPENDENT``: it cannot wait for a row lock another edit holds); it may be sent ahead of
# the inserts queued before it, at commit before pp_number (``EARLY``: it refers to them only
# through foreign keys checked at commit); it follows pp_number at commit (``LATE``).
KEEP, INDEPENDENT, EARLY, LATE = 1, 2, 4, 8
_PLACEHOLDER = re.compile(r"%%|%(?:\((\w+)\))?[sbt]")


def finalised(sql: str, params: Params | None) -> tuple[str, Params | None]:
    """``sql`` and ``params`` writing the revision's number where they wrote the provisional one:
    each placeholder bound to :data:`PROVISIONAL` becomes ``pp_sequence()``."""
    if params is None:
        return sql, params
    if isinstance(params, dict):
        names = tuple(sorted(k for k, v in params.items() if type(v) is int and v == PROVISIONAL))
        return (_named(sql, names), params) if names else (sql, params)
    slots = tuple(i for i, v in enumerate(params) if type(v) is int and v == PROVISIONAL)
    if not slots:
        return sql, params
    return _positional(sql, slots), [v for i, v in enumerate(params) if i not in slots]


@functools.lru_cache(maxsize=256)
def _named(sql: str, names: tuple[str, ...]) -> str:
    return _PLACEHOLDER.sub(lambda m: SEQUENCE if m.group(1) in names else m.group(0), sql)


@functools.lru_cache(maxsize=256)
def _positional(sql: str, slots: tuple[int, ...]) -> str:
    counted = itertools.count()

    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "%%":
            return match.group(0)
        return SEQUENCE if next(counted) in slots else match.group(0)

    return _PLACEHOLDER.sub(replace, sql)


class Entry:
    """A queued statement: its SQL and parameters, flags, the SQL to send after ``pp_number``
    when not derived by :func:`finalised`, the rows it writes (``(table, key)``), and, for an
    insert of new rows that ``pp_commit`` can write instead, the kind of row it is (``pack``)."""

    __slots__ = ("flags", "keys", "late", "pack", "params", "sql")

    def __init__(
        self, sql: str, params: Params | None, flags: int, late: str | None, pack: str | None = None
    ) -> None:
        self.sql, self.params, self.flags, self.late, self.pack = sql, params, flags, late, pack
        self.keys: list[tuple[str, Any]] = []


class Known(Protocol):
    """What the engine knows exists in committed state (rows are never deleted)."""

    def has(self, table: str, key: bytes | str) -> bool: ...
    def add(self, table: str, keys: Iterable[bytes | str]) -> None: ...


class Host(Protocol):
    """What a write session needs of its engine."""

    uri: PostgresUri
    last_locked_at: int | None  # server time the last commit here took the numbering lock

    lock_timeouts: dict[int, int]  # the lock_timeout set on each write connection (by id)
    # one-call operations' cursors, one per (write connection's id, statement): psycopg keeps a
    # cursor's adapters and parsed query only while it runs the same statement again
    call_cursors: dict[tuple[int, str], psycopg.Cursor[Any]]
    commits_rows: bool  # the schema has pp_commit (.packing.VERSION)
    claims: dict[bytes, LeaseRow]  # job id -> its lease row as claimed or read here (.calls)

    @property
    def known(self) -> Known: ...
    @property
    def reads(self) -> Reader: ...
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
        self._queue: list[Entry] = []
        self.kept: list[psycopg.Cursor[Any]] = []  # cursors of KEEP statements, after the last send
        self.failed: PostProjectError | None = None  # the transaction is aborted
        self._unsent: dict[str, int] = {}  # savepoints not yet sent -> their place in _queue
        self.last: Entry | None = None  # the statement just queued (nothing sent or taken since)
        self.early: set[tuple[str, Any]] = set()  # rows written with the provisional number

    def queue(
        self,
        sql: str,
        params: Params | None = None,
        *,
        keep: bool = False,
        flags: int = 0,
        late: str | None = None,
        pack: str | None = None,
    ) -> None:
        """Send a statement with the next round trip (its errors surface there); ``keep``: its
        cursor is in :attr:`kept` after that round trip; ``flags``, ``late``, ``pack``: see :class:`Entry`."""
        self.check()
        entry = Entry(sql, params, flags | (KEEP if keep else 0), late, pack)
        self._queue.append(entry)
        self.last = entry

    def queue_expecting(
        self,
        sql: str,
        params: dict[str, Any],
        count: int,
        state: str,
        message: str,
        *,
        flags: int = 0,
        late: str | None = None,
        pack: str | None = None,
    ) -> None:
        """Queue a data-modifying statement (``sql`` is ``WITH w AS (...) ``) that must touch ``count`` rows."""
        expect = " SELECT pp_expect(count(*), %(expected)s, %(state)s, %(message)s) FROM w"
        self.queue(sql + expect, {**params, "expected": count, "state": state, "message": message},
                   flags=flags, late=late + expect if late is not None else None, pack=pack)  # fmt: skip

    def wrote(self, table: str, key: Any) -> None:
        """The edit wrote ``key`` of ``table``: by the statement just queued (it writes the final
        number if sent after ``pp_number``), else by one already sent (the provisional number)."""
        if self.last is not None:
            self.last.keys.append((table, key))
        else:
            self.early.add((table, key))

    def early_at_commit(self) -> set[tuple[str, Any]]:
        """The rows written with the provisional number once a commit that numbers first is sent:
        those already sent, and those of the ``EARLY`` statements it sends before ``pp_number``."""
        return self.early.union(*(entry.keys for entry in self._queue if entry.flags & EARLY))

    def numbering_at_commit(self) -> bool:
        """Should the commit number first: are inserts of new rows queued, and may every other
        queued statement be sent before them (or after pp_number)?"""
        return (
            not self._unsent
            and any(entry.flags & INDEPENDENT for entry in self._queue)
            and all(entry.flags & (INDEPENDENT | EARLY | LATE) for entry in self._queue)
        )

    def packable_at_commit(self) -> list[Entry] | None:
        """The queued inserts a commit that numbers first would send after ``pp_number``, when
        ``pp_commit`` can write every one of them (each has a ``pack``); else None."""
        late = [entry for entry in self._queue if not entry.flags & EARLY]
        return late if all(entry.pack is not None for entry in late) else None

    def take(self, entries: list[Entry]) -> None:
        """Forget ``entries`` (queued): the caller sends what they write in another form."""
        taken = {id(entry) for entry in entries}
        self._queue = [entry for entry in self._queue if id(entry) not in taken]
        self.last = None

    def send(
        self,
        sql: str | None = None,
        params: Params | None = None,
        *,
        then: str | None = None,
        number: str | None = None,
        overtake: bool = False,
    ) -> psycopg.Cursor[Any] | None:
        """Send the queued statements, ``sql`` and ``then`` in one round trip; ``sql``'s cursor.

        ``number`` (:meth:`numbering_at_commit`): the ``EARLY`` statements go first, then
        ``number``, then the others, writing the revision's number (:func:`finalised`); its
        cursor is the first of :attr:`kept`. ``overtake``: ``sql`` does not
        read what the queued inserts of new rows write, so when every queued statement is one
        of those, they stay queued and ``sql`` goes alone."""
        self.check()
        self.last = None
        held = overtake and not self._unsent and all(entry.flags & INDEPENDENT for entry in self._queue)
        entries = [] if held else self._queue
        if not held:
            self._queue = []
        statements: list[tuple[str, Params | None, bool]] = []
        late: list[tuple[str, Params | None, bool]] = []
        for entry in entries:
            query, values = entry.sql, entry.params
            if number is not None and not entry.flags & EARLY:
                query, values = finalised(entry.late or query, values)
                late.append((query, values, bool(entry.flags & KEEP)))
                continue
            self.early.update(entry.keys)
            statements.append((query, values, bool(entry.flags & KEEP)))
        for inserted, (name, place) in enumerate(self._unsent.items()):  # outermost first
            statements.insert(place + inserted, (f"SAVEPOINT {name}", None, False))  # where it was taken
        self._unsent.clear()
        if number is not None:
            statements += [(number, None, True), *late]
        if not self.begun:
            begin = [("BEGIN ISOLATION LEVEL READ COMMITTED", None, False)]
            timeout = max(1, int(self.busy_timeout * 1000))
            if self.host.lock_timeouts.get(id(self.conn)) != timeout:  # a session setting: once per value
                settings = (*INDEX_PLANS, GENERIC_PLANS, f"SET lock_timeout = {timeout}")
                begin[:0] = [(setting, None, False) for setting in settings]
                self.host.lock_timeouts[id(self.conn)] = timeout
            statements[:0] = begin
            self.begun = True
        self.kept = []
        cursor = None
        try:
            with self.conn.pipeline():
                sink = self.conn.cursor(binary=True)  # one cursor for every result nobody reads
                for statement, values, keep in statements:
                    if keep:
                        self.kept.append(self.conn.execute(statement, values, binary=True))
                    else:
                        sink.execute(statement, values)
                if sql is not None:
                    cursor = self.conn.execute(sql, params, binary=True)
                if then is not None:
                    sink.execute(then)
        except psycopg.Error as exc:
            self.failed = self._translate(exc)
            raise self.failed from exc
        return cursor

    def call(
        self, sql: str, params: Params, reads: Sequence[str] = (), *, principal: str | None = None
    ) -> tuple[Any, list[list[Any]]]:
        """``sql``'s one row, sent outside a transaction (autocommit: its own commit), with the
        write connection's settings when they were not sent yet, and the rows of ``reads``
        (statements without parameters) sent after it in the same round trip (:mod:`.calls`).
        ``principal``: the revision's principal (migration 0008 reads it from a transaction's
        setting), so ``sql`` and ``reads`` go in a transaction that sets it first, committed
        in the same round trip."""
        self.check()
        assert not self.begun, "a call is the edit's only statement"
        assert not self._queue, "a call is the edit's only statement"
        timeout = max(1, int(self.busy_timeout * 1000))
        settings = self.host.lock_timeouts.get(id(self.conn)) != timeout
        try:
            if not settings and not reads and principal is None:  # one statement: its kept cursor sends it
                key = (id(self.conn), sql)
                cursor = self.host.call_cursors.get(key)
                if cursor is None or cursor.connection is not self.conn:
                    cursor = self.host.call_cursors[key] = self.conn.cursor(binary=True)
                return cursor.execute(sql, params).fetchone(), []
            with self.conn.pipeline():
                if settings:
                    for setting in (*INDEX_PLANS, GENERIC_PLANS, f"SET lock_timeout = {timeout}"):
                        self.conn.execute(setting)
                if principal is not None:
                    self.conn.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
                    self.conn.execute(PRINCIPAL, (principal,))
                cursor = self.conn.execute(sql, params, binary=True)
                after = [self.conn.execute(read, binary=True) for read in reads]
                if principal is not None:
                    self.conn.execute("COMMIT")
            self.host.lock_timeouts[id(self.conn)] = timeout
            return cursor.fetchone(), [read.fetchall() for read in after]
        except psycopg.Error as exc:
            if principal is not None:
                self._end_transaction()  # (the COMMIT after a failed statement was not sent)
            raise self._translate(exc) from exc

    def _end_transaction(self) -> None:
        """Roll back a transaction a failed call left open, if the connection still answers."""
        try:
            if self.conn.info.transaction_status != TransactionStatus.IDLE:
                self.conn.execute("ROLLBACK")
        except psycopg.Error:
            pass  # (a lost connection: the engine's recovery replaces it)

    def one(self, sql: str, params: Params | None = None, *, overtake: bool = False) -> Any:
        cursor = self.send(sql, params, overtake=overtake)
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
        if state == "PPI01":  # an input changed after the claim (a lease check deferred to commit: 0013)
            rep, sequence, revision = (exc.diag.message_detail or "").split()
            changed = ChangedInput(uuid.UUID(rep).bytes, int(sequence), uuid.UUID(revision).bytes)
            return InputChangedAtCommit(message, changed)
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
        self.last = None

    def release(self, name: str) -> None:
        if self._unsent.pop(name, None) is None:
            self.queue(f"RELEASE {name}")
        self.last = None

    def rollback_to(self, name: str) -> None:
        """Undo the statements since savepoint ``name`` (and release it)."""
        self.last = None
        place = self._unsent.pop(name, None)
        if place is not None:  # never sent: nothing since it reached the server either
            del self._queue[place:]
            return
        if self.failed is None:
            self.queue(f"ROLLBACK TO {name}")
            self.queue(f"RELEASE {name}")
            self.last = None
            return
        failed, self.failed = self.failed, None
        try:  # the transaction is aborted: only rolling back to the savepoint can revive it
            self._queue = [
                Entry(f"ROLLBACK TO {name}", None, 0, None),
                Entry(f"RELEASE {name}", None, 0, None),
            ]
            self.send()
        except PostProjectError:
            self.failed = failed

    def ended(self) -> None:
        """The transaction ended (committed or rolled back): nothing queued, nothing failed."""
        self._queue, self.failed, self.begun, self.last = [], None, False, None
        self._unsent.clear()
        self.early.clear()

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
