"""An optional part of the engine interface: a registered worker's check and claim at once.

A claim by a registered worker first checks the worker's stored row (its session, heartbeat,
capacity and kinds, :class:`postproject.engine.WorkerFacts`), then claims. An engine whose
statements cost a round trip each (PostgreSQL) may implement :class:`GatedClaims`: the check
and the claim in one round trip, the claim made only when the stored row allows it by the
same rules :meth:`postproject.areas.jobs.JobOperations.claim_next_job_lease` applies
to the facts returned. An engine without it (SQLite: statements cost no round trip) answers
:meth:`~postproject.engine.WriteSession.worker_facts` and
:meth:`~postproject.engine.WriteSession.claim_next` one after the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from postproject.engine import WorkerFacts
from postproject.model.identity import AgentIdentity, ToolIdentity


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
