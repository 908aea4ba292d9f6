"""Optional parts of the engine interface: a registered worker's check and claim at once, and
a worker's operations as one server call each.

A claim by a registered worker first checks the worker's stored row (its session, heartbeat,
capacity and kinds, :class:`postproject.engine.WorkerFacts`), then claims. An engine whose
statements cost a round trip each (PostgreSQL) may implement :class:`GatedClaims`: the check
and the claim in one round trip, the claim made only when the stored row allows it by the
same rules :meth:`postproject.areas.jobs.JobOperations.claim_next_job_lease` applies
to the facts returned. An engine without it (SQLite: statements cost no round trip) answers
:meth:`~postproject.engine.WriteSession.worker_facts` and
:meth:`~postproject.engine.WriteSession.claim_next` one after the other.

A worker's path needs no answer between its calls and the commit, so an engine whose
statements cost round trips may also implement :class:`CommittedClaims` (a claim, its event
and its commit in one call: ``Production.claim_next_job_lease``) and :class:`DeferredLeaseChecks`
(an edit opened with ``defer_lease_checks=True``: a completion's lease check sent with the
commit instead of read first), and :class:`CommittedCompletions` (a completion's rows, its
events and its commit in one call: ``Production.complete_job``). An engine without them
(SQLite) runs the same rules as an edit.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeGuard, cast, runtime_checkable

from postproject.engine import ChangedInput, LeaseRow, WorkerFacts
from postproject.model.assets import Fingerprint
from postproject.model.errors import ConflictError, Reason
from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.model.jobs import Job


@dataclass(frozen=True, slots=True)
class WorkerGate:
    """What a worker's stored row must allow for its claim to be made.

    The row's session is ``session``, its last heartbeat is at most ``offline_after``
    microseconds before the claim's time, its unexpired claims are fewer than its capacity,
    and, when both ``asked`` (the kinds the caller asked for) and its stored kinds are set,
    they share a kind. The worker's row stays locked until the edit ends (as
    ``worker_facts`` locks it), so two claims by one worker count each other's claims.
    """

    worker_id: bytes
    session: bytes
    offline_after: int
    asked: tuple[str, ...] | None


@runtime_checkable
class GatedClaims(Protocol):
    """A write session that checks a worker and claims for it in one round trip."""

    def claim_next_gated(
        self,
        gate: WorkerGate,
        kinds: Sequence[str] | None,
        secret: bytes,
        tool: ToolIdentity,
        agent: AgentIdentity | None,
        now: int,
        expires: int,
    ) -> tuple[WorkerFacts | None, tuple[bytes, int] | None]:
        """(the worker's facts as of the claim or None when it is not registered, the claim as
        :meth:`postproject.engine.WriteSession.claim_next` returns it): the claim is None
        whenever the gate does not hold."""
        ...


@dataclass(frozen=True, slots=True)
class CommittedClaim:
    """A claim made and committed in one call (:class:`CommittedClaims`): the worker's facts
    (a gate was given and the worker is registered), the claim ((job id, attempt), committed as
    revision ``sequence``) or None, and ``held``: nothing was claimed while claimable jobs
    exist, all held by other edits (the caller claims through its edit, which waits for them)."""

    facts: WorkerFacts | None
    claimed: tuple[bytes, int] | None
    held: bool
    sequence: int | None
    job: Job | None = None  # with_job: the claimed job as committed, and its metadata rows (as
    parameters: list[tuple[str, str, str]] | None = None  # Reads.metadata returns them)


@runtime_checkable
class CommittedClaims(Protocol):
    """A write session that claims, stages the claim's event and commits it in one call."""

    def claim_next_committed(
        self,
        gate: WorkerGate | None,
        kinds: Sequence[str] | None,
        secret: bytes,
        tool: ToolIdentity,
        agent: AgentIdentity | None,
        now: int,
        expires: int,
        worker_name: str | None,
        revision: tuple[bytes, int, str | None, str | None, int | None],
        with_job: bool = False,
        *,
        principal: str | None = None,
    ) -> CommittedClaim:
        """Claim as :meth:`GatedClaims.claim_next_gated` (``gate`` None: no registered worker),
        stage ``job_claimed`` exactly as the edit does (``worker_name`` in its payload when
        given) and commit it as revision (id, committed at, origin, message, clock mark), all
        before returning, with ``principal`` (who it acts for, as an edit's); nothing is
        committed unless something was claimed. The edit is then
        over: its ``commit`` publishes nothing more. ``with_job``: the claimed job and its
        metadata come back with it (read after the commit, in the same round trip)."""
        ...


class InputChangedAtCommit(ConflictError):
    """A completion whose lease check was deferred to the commit found an input fingerprint
    recorded after the claim (the facade raises it as ``InputChangedError``)."""

    def __init__(self, message: str, changed: ChangedInput) -> None:
        super().__init__(message, reason=Reason.INPUT_CHANGED)
        self.changed = changed


@runtime_checkable
class DeferredLeaseChecks(Protocol):
    """A write session whose lease checks may travel with the commit (``defer_lease_checks``)."""

    def defer_lease_checks(self) -> None:
        """The edit asked for it (``defer_lease_checks``)."""
        ...

    def held_lease_row(self, job_id: bytes, secret: bytes, now: int) -> LeaseRow | None:
        """The job's claim by ``secret`` as this process last saw it (its claim, or a lease row
        it read), unexpired at ``now``, with a check sent at commit that the stored claim is
        still that one (raising what a failed check at the call raises, or
        :class:`InputChangedAtCommit`); None when unknown here (read it now)."""
        ...


@dataclass(frozen=True, slots=True)
class CompletionRows:
    """What a worker's completion writes (``Production.complete_job``), as the edit would: the
    output (``path`` stored under media root ``root``, or absolute) of the job's asset and of
    representation kind ``kind`` (None: the job's), the activity (the job's kind, its inputs to
    the output), ``parameters`` on it (vocabulary, property, encoded value; None: the job's own,
    copied), the attempt's log ``tail`` (None: none) and the job's success, at guarded ``now``."""

    job_id: bytes
    secret: bytes  # the lease secret's hash
    now: int
    representation_id: bytes
    kind: int | None
    path: str
    root: str | None
    size: int
    mtime: int
    created_at: int
    fingerprint: Fingerprint
    activity_id: bytes
    tool: ToolIdentity | None
    agent: AgentIdentity | None
    started: int | None
    finished: int | None
    parameters: list[tuple[str, str, str]] | None
    tail: str | None


@runtime_checkable
class CommittedCompletions(Protocol):
    """A write session that completes a job it claimed in this process in one call."""

    def complete_committed(
        self,
        rows: CompletionRows,
        revision: tuple[bytes, int, str | None, str | None, int | None],
        *,
        principal: str | None = None,
    ) -> int | None:
        """Write ``rows`` and the events the completion edit stages, in the same order, and commit
        them as revision (id, committed at, origin, message, clock mark) with ``principal``:
        the revision's number. The lease is checked as :class:`DeferredLeaseChecks` checks it at
        commit (its errors raised, nothing committed). None, nothing sent, when this process
        does not know the claim or cannot complete it in one call (the caller runs the edit)."""
        ...


def commits_claims(session: object) -> TypeGuard[CommittedClaims]:
    """``isinstance(session, CommittedClaims)``, decided once per class (below)."""
    return _implements(cast(Hashable, type(session)), CommittedClaims)


def defers_lease_checks(session: object) -> TypeGuard[DeferredLeaseChecks]:
    """``isinstance(session, DeferredLeaseChecks)``, decided once per class (below)."""
    return _implements(cast(Hashable, type(session)), DeferredLeaseChecks)


def commits_completions(session: object) -> TypeGuard[CommittedCompletions]:
    """``isinstance(session, CommittedCompletions)``, decided once per class (below)."""
    return _implements(cast(Hashable, type(session)), CommittedCompletions)


def completes_in_one_call(engine: object) -> bool:
    """Whether ``engine``'s write sessions are :class:`CommittedCompletions` (its class names
    their class as ``write_sessions``), decided before any session opens: a completion hashes its
    output first, then takes the write session (SQLite's would hold the write lock meanwhile)."""
    sessions = getattr(type(engine), "write_sessions", None)
    return sessions is not None and _implements(sessions, CommittedCompletions)


@functools.cache
def _implements(cls: Hashable, protocol: Any) -> bool:
    """Whether ``cls`` has a protocol's methods: on the worker's path every operation asks, and
    ``isinstance`` against a runtime-checkable protocol walks its members at every call
    (Python 3.11: ~20-50 us each, several per job)."""
    return issubclass(cast(type, cls), protocol)
