"""The claim statements of PostgreSQL's write session (:mod:`.writes`).

A claim takes its job with ``FOR UPDATE SKIP LOCKED`` in one statement: a claim never waits
for another claim's job row. A registered worker's claim
(:class:`postproject.engine.claims.GatedClaims`) reads the worker's facts and claims in the
same statement, only when those facts allow it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from postproject.engine import WorkerFacts
from postproject.engine.claims import WorkerGate
from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.storage.postgresql.pipeline import PROVISIONAL
from postproject.storage.postgresql.types import DIALECT, Id
from postproject.storage.sql import leases

CLAIMED = leases.CLAIMED
REQUESTED = leases.REQUESTED
# The shared claim (postproject.storage.sql.leases) in psycopg's placeholders.
SET_CLAIM = DIALECT.sql(leases.SET_CLAIM)
_READY = DIALECT.sql(leases.READY)
CLAIMABLE = DIALECT.sql(leases.CLAIMABLE)
_EXPIRED = DIALECT.sql(leases.EXPIRED)
RETURNING = "RETURNING j.id, j.claim_attempt, j.output_asset_id, j.inputs"
# A worker's row, held until the edit ends: two claims by one worker count each other's.
WORKER_ROW_LOCK = "SELECT 1 FROM workers WHERE id = ? FOR NO KEY UPDATE"


# A registered worker's facts (WorkerFacts' columns) and whether its row allows a claim (WorkerGate).
_GATE = (
    "f AS (SELECT w.session, w.last_seen, w.capacity, w.kinds, (SELECT count(*) FROM jobs "
    "WHERE claim_worker_id = w.id AND claim_expires_at > %(now)s) AS active FROM workers w WHERE w.id = %(worker)s), "
    "ok AS (SELECT 1 FROM f WHERE f.session = %(session)s AND %(now)s - f.last_seen <= %(offline)s "
    "AND f.active < f.capacity AND (%(asked)s::text[] IS NULL OR f.kinds IS NULL "
    "OR f.kinds::jsonb ?| %(asked)s::text[])), "
)


def claim_next_sql(by_kind: bool, *, wait: bool, gated: bool = False) -> str:
    """claim_next's statement: (id, attempt, output asset, inputs, held), one row; ``held`` when
    nothing was claimed while claimable jobs exist (held by other edits). ``wait``: lock the
    candidates waiting for their holders (then rows no longer claimable are passed over).
    ``gated``: a registered worker's claim, made only when its row allows it (:data:`_GATE`);
    the row then ends with the worker's facts (all NULL when it is not registered)."""
    lock = "FOR UPDATE" if wait else "FOR UPDATE SKIP LOCKED"
    ready_order = "ORDER BY priority DESC, available_at, id LIMIT 1"
    kind = " AND kind = ANY(%(kinds)s::text[])" if by_kind else ""
    allowed = " AND EXISTS (SELECT 1 FROM ok)" if gated else ""
    if by_kind:
        ready = (
            "SELECT r.* FROM unnest(%(kinds)s::text[]) AS k (kind) CROSS JOIN LATERAL "
            "(SELECT id, priority AS p, available_at AS a FROM jobs "
            f"WHERE state = {REQUESTED} AND waiting = 0 AND kind = k.kind AND {_READY}{allowed} {ready_order} {lock}) r"
        )
    else:
        ready = (
            "SELECT id, priority AS p, available_at AS a FROM jobs "
            f"WHERE state = {REQUESTED} AND waiting = 0 AND {_READY}{allowed} {ready_order} {lock}"
        )
    expired = (
        "SELECT id, priority AS p, claim_expires_at AS a FROM jobs "
        f"WHERE {_EXPIRED}{kind}{allowed} ORDER BY claim_expires_at, id LIMIT 1"
    )
    held = (
        f"EXISTS (SELECT 1 FROM jobs WHERE state = {REQUESTED} AND waiting = 0{kind} AND {_READY}) "
        f"OR EXISTS (SELECT 1 FROM jobs WHERE {_EXPIRED}{kind})"
    )
    facts = ", f.session, f.last_seen, f.capacity, f.kinds, f.active" if gated else ""
    return (
        f"WITH {_GATE if gated else ''}ready AS ({ready}), expired AS ({expired} {lock}), "
        "pick AS (SELECT id FROM (SELECT * FROM ready UNION ALL SELECT * FROM expired) c ORDER BY p DESC, a, id LIMIT 1), "
        # the picked row by its key (a join with pick may scan every claimable job instead)
        f"claimed AS (UPDATE jobs j SET {SET_CLAIM} WHERE j.id = (SELECT id FROM pick) AND {CLAIMABLE} {RETURNING}) "
        f"SELECT c.id, c.claim_attempt, c.output_asset_id, c.inputs, c.id IS NULL AND ({held}){facts} "
        f"FROM (VALUES (1)) AS one LEFT JOIN claimed c ON true{' LEFT JOIN f ON true' if gated else ''}"
    )


def gate_holds(gate: WorkerGate, facts: WorkerFacts, now: int) -> bool:
    """The gate's rule (as :data:`_GATE` applies it) on facts read in the edit."""
    return (
        facts.session == gate.session
        and now - facts.last_seen <= gate.offline_after
        and facts.active < facts.capacity
        and (gate.asked is None or facts.kinds is None or bool(set(gate.asked) & set(facts.kinds)))
    )


def claim_next_gated(
    session: Any,  # a .writes.WriteSession (whose methods these are)
    gate: WorkerGate,
    kinds: Sequence[str] | None,
    secret: bytes,
    tool: ToolIdentity,
    agent: AgentIdentity | None,
    now: int,
    expires: int,
) -> tuple[WorkerFacts | None, tuple[bytes, int] | None]:
    """A registered worker's check and claim in one round trip (:class:`postproject.engine.claims.GatedClaims`):
    the worker's row is locked first (a statement of its own, so the claim statement's
    snapshot counts the claims committed while it waited), then one statement reads its
    facts and claims only when they allow it."""
    worker = (gate.worker_id, gate.session)
    params = leases.claim_params(Id, PROVISIONAL, secret, tool, agent, worker, now, expires) | {
        "offline": gate.offline_after,
        "asked": list(gate.asked) if gate.asked is not None else None,
    }
    if kinds is not None:
        params["kinds"] = list(kinds)
    session.later(DIALECT.sql(WORKER_ROW_LOCK), (Id(gate.worker_id),))
    row = session.one(claim_next_sql(kinds is not None, wait=False, gated=True), params)
    if row[5] is None:
        return None, None
    stored_session, last_seen, capacity, stored_kinds, active = row[5:]
    facts = WorkerFacts(
        stored_session, last_seen, capacity, tuple(json.loads(stored_kinds)) if stored_kinds else None, active
    )
    if row[0] is None and row[4] and gate_holds(gate, facts, now):
        claimed = session.claim_next(kinds, secret, tool, agent, worker, now, expires)  # wait for holders
        return facts, claimed
    return facts, session.claimed(row[:4] if row[0] is not None else None)
