"""The state of one edit and its atomic operations: what every area of a transaction is given.

``Transaction`` (:mod:`postproject.transaction`) builds one :class:`EditState` per edit and
hands it to each of its areas (:mod:`postproject.areas`); an area runs each of its methods as
one :class:`Operation` (``with edit.operation() as session:``) and stages its events with
:func:`event`. The state is shared with the edit's finalizer and its pending leases, never the
``Transaction`` itself, so dropping the ``Transaction`` ends the edit.
"""

from __future__ import annotations

from typing import Literal

from postproject.base import leases
from postproject.base.handle import ProductionHandle
from postproject.base.leases import JobLease
from postproject.engine import WriteSession
from postproject.engine.claims import defers_lease_checks
from postproject.model.errors import ConflictError, PostProjectError, Reason
from postproject.model.ids import RevisionId, _Id

Status = Literal["open", "committed", "rolled back", "failed"]
Effect = tuple[JobLease, Literal["activate", "extend", "end"], int]


class EditState:
    """What one edit holds; shared with its finalizer and its pending leases (never the
    Transaction itself, so dropping the Transaction ends the edit)."""

    __slots__ = (
        "__weakref__",
        "call_revision",
        "called",
        "defer_lease_checks",
        "effects",
        "guarded",
        "guards",
        "handle",
        "observed_high",
        "poison",
        "session",
        "status",
    )

    def __init__(self, handle: ProductionHandle, *, defer_lease_checks: bool = False) -> None:
        self.handle = handle
        self.defer_lease_checks = defer_lease_checks  # checks of claims known here go with the commit
        self.called = False  # one call committed the edit (or found nothing to commit): commit() ends it
        self.call_revision: tuple[RevisionId, int] | None = None  # the revision that call published, its time
        self.session: WriteSession | None = None
        self.status: Status = "open"
        self.guards: list[int] = []  # lease expiries the commit must precede
        self.effects: list[Effect] = []  # lease state changes applied when the commit lands
        self.observed_high: int | None = None  # highest guarded clock sample seen
        self.guarded = False
        self.poison: PostProjectError | None = None  # a failed completion: the edit cannot commit

    def check_usable(self) -> None:
        if self.status != "open":
            raise ConflictError(
                f"this transaction is already {self.status}", reason=Reason.TRANSACTION_CLOSED
            )
        if self.poison is not None:
            raise self.poison

    def operation(self, *, savepoint: bool = True) -> Operation:
        """One atomic operation; use as ``with edit.operation() as session:`` (see :class:`Operation`)."""
        return Operation(self, savepoint)

    def now_guarded(self) -> int:
        """Sample the library clock for a guarded lease operation (notes §2.2)."""
        stored = self.session.stored_high_water if self.session else None
        now = self.handle.sample_clock(max(filter(None, (stored, self.observed_high)), default=None))
        self.observed_high = max(now, self.observed_high or now)
        self.guarded = True
        return now

    def write_session(self) -> WriteSession:
        """The edit's write session, taking the write lock at the first operation."""
        if self.session is None:
            session = self.session = self.handle.begin_write(self.abandon)
            if self.defer_lease_checks and defers_lease_checks(session):
                session.defer_lease_checks()
        return self.session

    def end_pending(self) -> None:
        for lease, effect, _ in self.effects:
            if effect == "activate":
                leases.end_if_pending(lease)

    def abandon(self) -> None:
        """Roll back (dropped, closed or explicit): publish nothing and release the lock."""
        if self.status != "open":
            return
        self.status = "rolled back"
        self.end_pending()
        session, self.session = self.session, None
        if session is not None:
            try:
                session.rollback(self.observed_high)
            finally:
                self.handle.end_write()


class Operation:
    """One atomic transaction method: on failure the database, the staged events, the commit
    guards and the lease effects all return to where they were. An operation that writes at
    most one row (a failed statement writes nothing) needs no savepoint: ``savepoint=False``
    then only rewinds the staged events."""

    __slots__ = ("_edit", "_effects", "_guards", "_savepoint", "_session", "_token")

    def __init__(self, edit: EditState, savepoint: bool) -> None:
        self._edit = edit
        self._savepoint = savepoint

    def __enter__(self) -> WriteSession:
        edit = self._edit
        edit.check_usable()
        session = self._session = edit.write_session()
        self._guards, self._effects = len(edit.guards), len(edit.effects)
        self._token = session.savepoint() if self._savepoint else session.mark()
        return session

    def __exit__(self, kind: type[BaseException] | None, exc: object, tb: object) -> None:
        if kind is None:
            if self._savepoint:
                self._session.release_savepoint(self._token)
            return
        if self._savepoint:
            self._session.rollback_savepoint(self._token)
        else:
            self._session.rewind(self._token)
        del self._edit.guards[self._guards :], self._edit.effects[self._effects :]


def event(session: WriteSession, kind: str, subject: _Id | None, **payload: object) -> None:
    """Stage one event about ``subject`` (payload values as text)."""
    session.event(
        kind,
        subject.bytes if subject is not None else None,
        {k: str(v) for k, v in payload.items()},
    )
