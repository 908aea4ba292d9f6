"""A worker's operations as one server call each (migration 0013; :mod:`.writes` runs them).

``pp_claim_next`` claims (the claim of :mod:`.claims`, with a registered worker's gate),
stages the claim's ``job_claimed`` event exactly as an edit stages it and publishes it
(``pp_publish``'s steps, inline since migration 0015), as one autocommit statement: :class:`postproject.engine.claims.CommittedClaims`.
It answers the claimed job's lease row, which this process keeps
(:attr:`.pipeline.Host.claims`) until an edit of its own changes the job, so that a
completion in an edit opened with ``defer_lease_checks`` needs no read first: its lease check
(``pp_lease_check``) is queued ahead of the transition and goes with the commit's pipeline,
raising what the read's check would have raised (:class:`postproject.engine.claims.DeferredLeaseChecks`).
The attempt's log recorded in such an edit is queued too, expecting its row. ``pp_complete``
(migration 0014; its lease check, numbering and publish inline since 0015) completes such a
claim in one autocommit call: the lease check, the rows and events of the completion edit, and
the commit (:class:`postproject.engine.claims.CommittedCompletions`).
The functions here are :class:`.writes.WriteSession`'s methods (their ``session``).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from typing import Any

from postproject.engine import LeaseRow, WorkerFacts
from postproject.engine.claims import CommittedClaim, CompletionRows, WorkerGate
from postproject.model import clock
from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.storage import rows
from postproject.storage.postgresql.pipeline import EARLY, PROVISIONAL
from postproject.storage.postgresql.types import DIALECT, Id
from postproject.storage.sql import statements as q

CLAIMED = 2
_CLAIM_COLUMNS = (
    "o_job, o_attempt, o_held, o_session, o_last_seen, o_capacity, o_kinds, o_active, o_asset, o_output_kind, "
    "o_inputs, o_attempts, o_max_attempts, o_regenerates, o_resolved, o_published, o_mark, o_server_now"
)
_CALL = "FROM pp_claim_next(" + ", ".join(["%s"] * 21) + ") c"
CLAIM_NEXT = f"SELECT {_CLAIM_COLUMNS} {_CALL}"
LEASE_CHECK = "SELECT pp_lease_check(%s, %s, %s, %s)"
COMPLETE = "SELECT * FROM pp_complete(" + ", ".join(["%s"] * 31) + ")"
# The attempt's log, queued: its one row expected (as the call's "this lease claimed no attempt").
RECORD_LOG = "WITH w AS (" + DIALECT.sql(q.RECORD_ATTEMPT_LOG) + ")"
KEPT = 1024  # claims this process remembers, at most
# Production.claim_next_job in one statement (0014-0016): the call, and the job as the claim left
# it with its attempts, dependencies and parameters, which the call reads before it takes the
# numbering lock (0016; its row from the UPDATE that numbers the claim), the job's columns read
# from its row as every job read reads them.
_CLAIMED_COLUMNS = re.sub(r"\bj\.", "(c.o_row).", rows.JOB_COLUMNS)
CLAIM_NEXT_JOB = (
    f"SELECT {_CLAIM_COLUMNS}, {_CLAIMED_COLUMNS}, o_attempt_list, o_dependencies, o_parameters {_CALL}"
)


def claim_next_committed(
    session: Any,  # a .writes.WriteSession (whose methods these are)
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
    """One ``pp_claim_next`` call (see the module docstring); ``with_job``: the claimed job and
    its metadata read after it, in the same round trip; ``principal``: the revision's (the
    call then goes in a transaction of its own that sets it first, still one round trip)."""
    revision_id, committed_at, origin, message, high_water = revision
    known = session.host.high_water  # as an edit's rollback keeps the sample: only when it is newer
    kept = high_water if high_water is not None and (known is None or high_water > known) else None
    params = (
        PROVISIONAL,
        secret,
        tool.name,
        tool.version,
        tool.uri,
        agent.name if agent else None,
        Id(gate.worker_id) if gate else None,
        Id(gate.session) if gate else None,
        now,
        expires,
        list(kinds) if kinds is not None else None,
        gate.offline_after if gate else None,
        list(gate.asked) if gate is not None and gate.asked is not None else None,
        json.dumps(worker_name) if worker_name is not None else None,
        Id(revision_id),
        committed_at,
        origin,
        message,
        high_water,
        kept,
        with_job,
    )
    started = clock.monotonic()
    row, _ = session.pipeline.call(CLAIM_NEXT_JOB if with_job else CLAIM_NEXT, params, principal=principal)
    elapsed = clock.monotonic() - started
    job, attempt, held, worker_session, last_seen, capacity, stored_kinds, active = row[:8]
    facts = None
    if worker_session is not None:
        kinds_ = tuple(json.loads(stored_kinds)) if stored_kinds else None
        facts = WorkerFacts(worker_session, last_seen, capacity, kinds_, active)
    if job is None:  # the call kept the clock sample (as the edit's rollback would)
        session.host.committed(None, kept, None, 0.0)
        if not held:
            session.called = 0  # the edit is over: nothing to publish or roll back
        return CommittedClaim(facts, None, bool(held), None)
    asset, output_kind, blob, attempts, max_attempts, regenerates, resolved = row[8:15]
    published, mark, server_now = row[15:18]
    inputs = rows.split_ids(blob)
    if resolved:
        inputs = sorted(set(inputs).union(resolved))
    host = session.host
    session.called = published
    host.committed(published, mark, server_now, elapsed)
    host.known.add("assets", [asset])
    host.known.add("representations", inputs)
    keep(
        session,
        job,
        LeaseRow(
            CLAIMED,
            secret,
            expires,
            published,
            asset,
            output_kind,
            inputs,
            attempts,
            max_attempts,
            attempt,
            regenerates,
        ),
    )
    if not with_job:
        return CommittedClaim(facts, (job, int(attempt)), False, published)
    found = host.reads.with_attempts([row[18:-1]])[0]
    parameters = [(vocabulary, name, value) for vocabulary, name, value in json.loads(row[-1] or "[]")]
    return CommittedClaim(facts, (job, int(attempt)), False, published, found, parameters)


def keep(session: Any, job_id: bytes, lease: LeaseRow) -> None:
    """Remember a claimed job's lease row in this process (a bounded map)."""
    claims = session.host.claims
    if len(claims) >= KEPT:
        claims.clear()
    claims[job_id] = lease


def held_lease_row(session: Any, job_id: bytes, secret: bytes, now: int) -> LeaseRow | None:
    """The remembered lease row of ``job_id`` claimed by ``secret`` and unexpired at ``now``, its
    check queued for the commit (before the transition); None when not known here."""
    lease: LeaseRow | None = session.host.claims.get(job_id)
    if (
        lease is None
        or lease.secret_hash != secret
        or lease.expires is None
        or lease.expires <= now
        or job_id in session.written["jobs"]
    ):
        return None
    session.pipeline.queue(LEASE_CHECK, (Id(job_id), secret, now, lease.claim_sequence), flags=EARLY)
    session.leases[job_id] = (lease, None)  # the transition is then predicted, and sent ahead
    session.learn("assets", [lease.output_asset_id])
    session.learn("representations", lease.inputs)
    return lease


def record_log_later(session: Any, job_id: bytes, secret: bytes, params: dict[str, Any]) -> int | None:
    """The attempt's log queued (its row expected) when this edit defers its lease checks and the
    claim is known here; its attempt number, or None (record it now)."""
    lease: LeaseRow | None = session.host.claims.get(job_id)
    if not session.deferring or lease is None or lease.secret_hash != secret or lease.attempt is None:
        return None
    message = f"this lease claimed no attempt of job {uuid.UUID(bytes=job_id)}"
    session.pipeline.queue_expecting(RECORD_LOG, params, 1, "PPL01", message, flags=EARLY)
    session.state_written = True
    return lease.attempt


def complete_committed(
    session: Any,
    rows: CompletionRows,
    revision: tuple[bytes, int, str | None, str | None, int | None],
    *,
    principal: str | None = None,
) -> int | None:
    """One ``pp_complete`` call (see the module docstring): the revision's number, or None when
    the claim is not known here as live (or asks for another output kind): the edit then reads
    the lease row and raises what it raises."""
    job_id, now = rows.job_id, rows.now
    lease: LeaseRow | None = session.host.claims.get(job_id)
    if (
        lease is None
        or lease.secret_hash != rows.secret
        or lease.expires is None
        or lease.expires <= now
        or (rows.kind is not None and rows.kind != lease.output_kind)
    ):
        return None
    revision_id, committed_at, origin, message, high_water = revision
    tool, agent, fingerprint, parameters = rows.tool, rows.agent, rows.fingerprint, rows.parameters
    params = (
        Id(job_id),
        rows.secret,
        now,
        lease.claim_sequence,
        Id(rows.representation_id),
        rows.path,
        rows.root,
        rows.size,
        rows.mtime,
        rows.created_at,
        fingerprint.algorithm,
        fingerprint.version,
        fingerprint.value,
        Id(rows.activity_id),
        tool.name if tool else None,
        tool.version if tool else None,
        tool.uri if tool else None,
        agent.name if agent else None,
        rows.started,
        rows.finished,
        parameters is None,
        [v for v, _, _ in parameters] if parameters else None,
        [p for _, p, _ in parameters] if parameters else None,
        [value for _, _, value in parameters] if parameters else None,
        rows.tail,
        rows.created_at,
        Id(revision_id),
        committed_at,
        origin,
        message,
        high_water,
    )
    started = clock.monotonic()
    row, _ = session.pipeline.call(COMPLETE, params, principal=principal)
    elapsed = clock.monotonic() - started
    published, mark, server_now, locked_at = row[:4]
    host = session.host
    host.claims.pop(job_id, None)
    session.called = published
    host.committed(published, mark, server_now, elapsed)
    host.last_locked_at = locked_at
    host.known.add("representations", [rows.representation_id])
    host.known.add("activities", [rows.activity_id])
    return int(published)
