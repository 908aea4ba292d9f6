"""Job and lease statements of an edit, as SQLite's (:mod:`postproject.storage.sqlite.job_writes`).

Each transition is one guarded statement whose allowed source states come from the lifecycle
table. Claims take their job with ``FOR UPDATE SKIP LOCKED``: a claim never waits for another
claim's job row. ``lease_row`` reads and locks a job's row (until the edit ends), so the lease
transition that follows it is known to succeed and is sent ahead without waiting (with the row
count it must have); it also fetches, in the same round trip, the first input fingerprint
recorded after the claim (what a completion asks next).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from postproject.engine import ChangedInput, LeaseRow, LostClaim, WorkerFacts
from postproject.engine.claims import WorkerGate
from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.model.ids import JobId
from postproject.model.jobs import AttemptOutcome, JobRequest
from postproject.model.lifecycle import Action, JobState, sources
from postproject.storage.postgresql import rows
from postproject.storage.postgresql.claims import CLAIMABLE, RETURNING, SET_CLAIM, claim_next_sql, gate_holds
from postproject.storage.postgresql.pipeline import PROVISIONAL, Pipeline
from postproject.storage.postgresql.types import Id, ids

CLAIMED = JobState.CLAIMED.code
REQUESTED = JobState.REQUESTED.code
CHUNK = 500


def _codes(action: Action) -> str:
    """The SQL list of stored state codes an action may start from (from the lifecycle table)."""
    return ",".join(str(state.code) for state in sorted(sources(action), key=lambda s: s.code))


def _allowed(action: Action) -> frozenset[int]:
    return frozenset(state.code for state in sources(action))


_CLEAR_CLAIM = """claim_secret_hash = NULL, claim_tool_name = NULL, claim_tool_version = NULL,
    claim_tool_uri = NULL, claim_agent_name = NULL, claim_worker_id = NULL, claim_session = NULL,
    claimed_at = NULL, claim_expires_at = NULL, claim_sequence = NULL, claim_attempt = NULL"""
_HELD = "state = 2 AND claim_secret_hash = %(secret)s AND claim_expires_at > %(now)s"


class JobWrites(Pipeline):
    """The job statements of :class:`postproject.storage.postgresql.writes.WriteSession`."""

    def forget_leases(self) -> None:
        """Drop every lease row read so far (the rows may differ now)."""
        self.leases.clear()

    def touched(self, job_id: bytes) -> None:
        """This edit changes ``job_id``: renumber it at commit; its lease row is stale."""
        self.remember("jobs", job_id)
        self.leases.pop(job_id, None)

    # --- requests -----------------------------------------------------------------------

    def insert_job(
        self,
        job_id: bytes,
        request: JobRequest,
        now: int,
        not_before: int | None,
        digest: bytes | None,
        waiting: int = 0,
    ) -> bool:
        """Insert a requested job and its dependency rows in one statement; False (nothing
        written) when an input, the output asset, the target root or the regenerated artifact
        is absent."""
        inputs = [rep.bytes for rep in request.representation_inputs]
        dependencies = [upstream.bytes for upstream in request.dependencies]
        bound = {b.job_id.bytes for b in request.bound_outputs}
        count = self.one(
            "WITH w AS (INSERT INTO jobs (id, kind, inputs, output_asset_id, output_kind, target_root, state, "
            "requested_at, requested_sequence, updated_sequence, priority, not_before, available_at, "
            "max_attempts, idempotency_key, request_digest, dependencies, waiting, regenerates) "
            "SELECT %(id)s, %(kind)s, %(inputs)s, %(asset)s, %(output_kind)s, %(root)s, 1, %(now)s, %(seq)s, "
            "%(seq)s, %(priority)s, %(not_before)s, %(available)s, %(max_attempts)s, %(key)s, %(digest)s, "
            "%(dependencies)s, %(waiting)s, %(regenerates)s "
            "WHERE (SELECT count(*) FROM representations WHERE id = ANY(%(reps)s::uuid[])) = %(count)s "
            "AND EXISTS (SELECT 1 FROM assets WHERE id = %(asset)s) "
            "AND (%(root)s::text IS NULL OR EXISTS (SELECT 1 FROM media_roots WHERE name = %(root)s)) "
            "AND (%(regenerates)s::uuid IS NULL OR EXISTS (SELECT 1 FROM representations WHERE id = %(regenerates)s)) "
            "RETURNING id), d AS (INSERT INTO job_dependencies (job_id, upstream_id, binds_output) "
            "SELECT w.id, u.upstream, u.binds FROM w, unnest(%(upstreams)s::uuid[], %(binds)s::smallint[]) "
            "AS u (upstream, binds)) SELECT count(*) FROM w",
            {
                "id": Id(job_id),
                "kind": request.kind,
                "inputs": b"".join(inputs),
                "asset": Id(request.output_asset_id.bytes),
                "output_kind": request.output_representation_kind.code,
                "root": request.target_root,
                "now": now,
                "seq": PROVISIONAL,
                "priority": request.priority,
                "not_before": not_before,
                "available": max(now, not_before) if not_before is not None else now,
                "max_attempts": request.max_attempts,
                "key": request.idempotency_key,
                "digest": digest,
                "dependencies": len(dependencies),
                "waiting": waiting,
                "regenerates": Id(request.regenerates.bytes) if request.regenerates is not None else None,
                "reps": ids(inputs),
                "count": len(inputs),
                "upstreams": ids(dependencies),
                "binds": [int(upstream in bound) for upstream in dependencies],
            },
        )[0]
        if count != 1:
            return False
        self.touched(job_id)
        return True

    def job_states(self, job_ids: Sequence[bytes]) -> dict[bytes, int]:
        """The stored state code of each of ``job_ids`` that exists."""
        found: dict[bytes, int] = {}
        for start in range(0, len(job_ids), CHUNK):
            part = job_ids[start : start + CHUNK]
            found.update(
                (i, s) for i, s in self.all("SELECT id, state FROM jobs WHERE id = ANY(%s)", (ids(part),))
            )
        return found

    def dependency_rows(self, job_id: bytes) -> list[Any]:
        """The dependency rows (``rows.DEPENDENCY_COLUMNS``) of one job, by upstream id."""
        return self.all(
            f"SELECT {rows.DEPENDENCY_COLUMNS} FROM job_dependencies d JOIN jobs u ON u.id = d.upstream_id "
            "WHERE d.job_id = %s ORDER BY d.upstream_id",
            (Id(job_id),),
        )

    def move_dependents(self, old: bytes, new: bytes) -> int:
        """Make every job that depends on ``old`` depend on ``new`` instead (its output binding
        too); how many moved. Waiting counts do not change: neither job has succeeded."""
        return self.rowcount(
            "UPDATE job_dependencies SET upstream_id = %s WHERE upstream_id = %s", (Id(new), Id(old))
        )

    def supersede(self, rep_id: bytes, replacement: bytes) -> bytes | None:
        """Record that ``replacement`` supersedes ``rep_id`` or, when that was superseded
        already, the newest representation of its chain; the id superseded (None when
        ``rep_id`` does not exist)."""
        row = self.one(
            "WITH RECURSIVE chain (id, successor, depth) AS (SELECT id, superseded_by, 0 FROM representations "
            "WHERE id = %(rep)s UNION ALL SELECT r.id, r.superseded_by, c.depth + 1 FROM chain c "
            "JOIN representations r ON r.id = c.successor WHERE c.depth < 10000) "
            "UPDATE representations SET superseded_by = %(replacement)s WHERE id = "
            "(SELECT id FROM chain WHERE successor IS NULL) AND id <> %(replacement)s RETURNING id",
            {"rep": Id(rep_id), "replacement": Id(replacement)},
        )
        return bytes(row[0]) if row is not None else None

    def idempotent_job(self, key: str) -> tuple[bytes, bytes] | None:
        """(job id, request digest) of the job requested with ``key``, if any. Requests with one
        key queue up on an advisory lock until the first one's edit ends, so they see its job."""
        self.queue("SELECT pg_advisory_xact_lock(1347441203, hashtext(%s))", (key,))
        row = self.one("SELECT id, request_digest FROM jobs WHERE idempotency_key = %s", (key,))
        return (row[0], row[1]) if row is not None else None

    # --- leases -------------------------------------------------------------------------

    def lease_row(self, job_id: bytes) -> LeaseRow | None:
        """The stored claim of a job (its row locked until the edit ends), or None when absent."""
        row = self.one(
            "SELECT j.state, j.claim_secret_hash, j.claim_expires_at, j.claim_sequence, j.output_asset_id, "
            "j.output_kind, j.inputs, j.attempts, j.max_attempts, j.claim_attempt, c.representation_id, "
            "c.recorded_sequence, c.id, j.regenerates, CASE WHEN j.dependencies > 0 THEN ARRAY(SELECT "
            "resolved_id FROM job_dependencies WHERE job_id = j.id AND resolved_id IS NOT NULL) END "
            # each input's fingerprints probed by key (never a scan of every fingerprint)
            "FROM jobs j LEFT JOIN LATERAL (SELECT f.representation_id, f.recorded_sequence, "
            "(SELECT r.id FROM revisions r WHERE r.sequence = f.recorded_sequence) "
            "FROM (SELECT encode(substring(j.inputs FROM g * 16 + 1 FOR 16), 'hex')::uuid AS rep "
            "FROM generate_series(0, length(j.inputs) / 16 - 1) g UNION SELECT resolved_id FROM "
            "job_dependencies WHERE job_id = j.id AND resolved_id IS NOT NULL) i CROSS JOIN LATERAL "
            "(SELECT f.representation_id, f.recorded_sequence FROM representation_fingerprints f "
            "WHERE f.representation_id = i.rep AND f.recorded_sequence > j.claim_sequence "
            "ORDER BY f.recorded_sequence LIMIT 1) f "
            "ORDER BY f.recorded_sequence LIMIT 1) c ON true "
            "WHERE j.id = %s FOR NO KEY UPDATE OF j",
            (Id(job_id),),
        )
        if row is None:
            return None
        state, secret, expires, claim_sequence, asset, kind, blob, attempts, max_attempts, attempt = row[:10]
        inputs = rows.split_ids(blob)
        if row[14]:  # the inputs its bindings resolved to when it was claimed
            inputs = sorted(set(inputs).union(row[14]))
        lease = LeaseRow(
            state,
            secret,
            expires,
            claim_sequence,
            asset,
            kind,
            inputs,
            attempts,
            max_attempts,
            attempt,
            row[13],
        )
        changed = ChangedInput(row[10], row[11], row[12]) if row[10] is not None else None
        self.leases[job_id] = (lease, changed)
        self.learn("assets", [asset])
        self.learn("representations", lease.inputs)
        return lease

    def fingerprints_changed_after(self, rep_ids: Sequence[bytes], sequence: int) -> ChangedInput | None:
        """The first input whose fingerprint was recorded after ``sequence``: (rep, seq, revision id)."""
        for lease, changed in self.leases.values():
            if lease.claim_sequence == sequence and lease.inputs == list(rep_ids):
                return changed  # read with the lease row, and no fingerprint was recorded since
        for start in range(0, len(rep_ids), CHUNK):
            row = self.one(
                "SELECT f.representation_id, f.recorded_sequence, r.id FROM representation_fingerprints f "
                "JOIN revisions r ON r.sequence = f.recorded_sequence WHERE f.representation_id = ANY(%s) "
                "AND f.recorded_sequence > %s ORDER BY f.recorded_sequence LIMIT 1",
                (ids(rep_ids[start : start + CHUNK]), sequence),
            )
            if row is not None:
                return ChangedInput(*row)
        return None

    def _claim_params(
        self,
        secret: bytes,
        tool: ToolIdentity,
        agent: AgentIdentity | None,
        worker: tuple[bytes, bytes] | None,
        now: int,
        expires: int,
    ) -> dict[str, Any]:
        return {
            "secret": secret,
            "tool_name": tool.name,
            "tool_version": tool.version,
            "tool_uri": tool.uri,
            "agent": agent.name if agent else None,
            "worker": Id(worker[0]) if worker else None,
            "session": Id(worker[1]) if worker else None,
            "now": now,
            "expires": expires,
            "seq": PROVISIONAL,
        }

    def _claimed(self, row: Any) -> tuple[bytes, int] | None:
        if row is None:
            return None
        job_id, attempt, asset, inputs = row
        self.touched(job_id)
        self.learn("assets", [asset])
        self.learn("representations", rows.split_ids(inputs))
        return job_id, int(attempt)

    def claim(
        self,
        job_id: bytes,
        secret: bytes,
        tool: ToolIdentity,
        agent: AgentIdentity | None,
        worker: tuple[bytes, bytes] | None,
        now: int,
        expires: int,
    ) -> int | None:
        """One guarded UPDATE (its trigger starts the attempt); the attempt number, or None."""
        params = self._claim_params(secret, tool, agent, worker, now, expires) | {"id": Id(job_id)}
        claimed = self._claimed(
            self.one(f"UPDATE jobs j SET {SET_CLAIM} WHERE id = %(id)s AND {CLAIMABLE} {RETURNING}", params)
        )
        return claimed[1] if claimed else None

    def claim_next(
        self,
        kinds: Sequence[str] | None,
        secret: bytes,
        tool: ToolIdentity,
        agent: AgentIdentity | None,
        worker: tuple[bytes, bytes] | None,
        now: int,
        expires: int,
    ) -> tuple[bytes, int] | None:
        """Claim the first claimable job of ``kinds`` (priority, then availability, then id) in one
        statement; (job id, attempt number) or None.

        Each candidate is one index probe that skips rows other edits hold (``SKIP LOCKED``): the
        best ready job (of each kind) and the claim that expired first. Only when every claimable
        job is held by another edit (which may be a sweep or a release about to make it claimable,
        as SQLite's single writer would have waited for) does the claim wait for them and look
        again, so None means what it means on SQLite: nothing is claimable."""
        params = self._claim_params(secret, tool, agent, worker, now, expires)
        if kinds is not None:
            params["kinds"] = list(kinds)
        row = self.one(claim_next_sql(kinds is not None, wait=False), params)
        if row[0] is None and row[4]:  # claimable jobs exist, all held: wait for their holders
            row = self.one(claim_next_sql(kinds is not None, wait=True), params)
            if row[0] is None:  # they changed them: look again with what they committed
                row = self.one(claim_next_sql(kinds is not None, wait=False), params)
        return self._claimed(row[:4] if row[0] is not None else None)

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
        """A registered worker's check and claim in one round trip (:class:`postproject.engine.claims.GatedClaims`):
        the worker's row is locked first (a statement of its own, so the claim statement's
        snapshot counts the claims committed while it waited), then one statement reads its
        facts and claims only when they allow it."""
        worker = (gate.worker_id, gate.session)
        params = self._claim_params(secret, tool, agent, worker, now, expires) | {
            "worker": Id(gate.worker_id),
            "offline": gate.offline_after,
            "asked": list(gate.asked) if gate.asked is not None else None,
        }
        if kinds is not None:
            params["kinds"] = list(kinds)
        self.queue("SELECT 1 FROM workers WHERE id = %s FOR NO KEY UPDATE", (Id(gate.worker_id),))
        row = self.one(claim_next_sql(kinds is not None, wait=False, gated=True), params)
        if row[5] is None:
            return None, None
        session, last_seen, capacity, stored_kinds, active = row[5:]
        facts = WorkerFacts(
            session, last_seen, capacity, tuple(json.loads(stored_kinds)) if stored_kinds else None, active
        )
        if row[0] is None and row[4] and gate_holds(gate, facts, now):
            claimed = self.claim_next(kinds, secret, tool, agent, worker, now, expires)  # wait for holders
            return facts, claimed
        return facts, self._claimed(row[:4] if row[0] is not None else None)

    def _predicted(self, job_id: bytes, secret: bytes, now: int, action: Action) -> bool | None:
        """Whether a guarded transition of a job whose row this edit read and locked will match
        (None when the row was not read, or changed since)."""
        cached = self.leases.get(job_id)
        if cached is None:
            return None
        lease = cached[0]
        return (
            lease.state == CLAIMED
            and lease.secret_hash == secret
            and lease.expires is not None
            and lease.expires > now
            and lease.state in _allowed(action)
        )

    def renew(self, job_id: bytes, secret: bytes, now: int, expires: int) -> bool:
        params = {"id": Id(job_id), "secret": secret, "now": now, "expires": expires, "seq": PROVISIONAL}
        update = (
            f"UPDATE jobs SET claim_expires_at = %(expires)s, updated_sequence = %(seq)s WHERE id = %(id)s "
            f"AND {_HELD} AND %(expires)s > claim_expires_at"
        )
        predicted = self._predicted(job_id, secret, now, Action.RENEW)
        if predicted is not None:
            lease = self.leases[job_id][0]
            if not predicted or lease.expires is None or expires <= lease.expires:
                return False
            self.queue_expecting(f"WITH w AS ({update} RETURNING 1)", params, 1, "PPL01", _lost(job_id))
        elif self.rowcount(update, params) != 1:
            return False
        self.touched(job_id)
        return True

    def _end_claim(
        self,
        job_id: bytes,
        set_job: str,
        where: str,
        params: dict[str, Any],
        outcome: AttemptOutcome,
        diagnostic: str | None = None,
        *,
        predicted: bool | None = None,
        also: str = "",
        by_holder: bool = True,
    ) -> bool:
        """One guarded UPDATE of the job that clears its claim, the end of its attempt
        (``stopped_at`` set when the holder ended it itself) and ``also`` (more statements on
        the updated job ``w``), as one statement."""
        sql = (
            f"WITH w AS (UPDATE jobs SET {set_job}, {_CLEAR_CLAIM}, updated_sequence = %(seq)s "
            f"WHERE id = %(id)s AND {where} RETURNING id), a AS (UPDATE job_attempts SET outcome = %(outcome)s, "
            "ended_at = %(now)s, diagnostic = %(diagnostic)s, stopped_at = %(stopped_at)s::bigint "
            f"WHERE job_id IN (SELECT id FROM w) AND outcome IS NULL){also}"
        )
        params = params | {
            "id": Id(job_id),
            "seq": PROVISIONAL,
            "outcome": outcome.code,
            "diagnostic": diagnostic,
            "stopped_at": params["now"] if by_holder else None,
        }
        if predicted is False:
            return False
        if predicted:
            self.queue_expecting(sql, params, 1, "PPL01", _lost(job_id))
        elif self.one(sql + " SELECT count(*) FROM w", params)[0] != 1:
            return False
        self.touched(job_id)
        return True

    def release(self, job_id: bytes, secret: bytes, now: int) -> bool:
        return self._end_claim(
            job_id,
            f"state = {REQUESTED}",
            f"{_HELD} AND state IN ({_codes(Action.RELEASE)})",
            {"secret": secret, "now": now},
            AttemptOutcome.RELEASED,
            predicted=self._predicted(job_id, secret, now, Action.RELEASE),
        )

    def fail(self, job_id: bytes, secret: bytes, now: int, diagnostic: str, *, retry: bool) -> bool:
        """Fail the job, or (``retry``) return it to requested; the attempt ends failed either way."""
        set_job = (
            f"state = {REQUESTED}, available_at = %(now)s"
            if retry
            else f"state = {JobState.FAILED.code}, failure_diagnostic = %(diagnostic)s, finished_at = %(now)s"
        )
        action = Action.RETRY if retry else Action.FAIL
        return self._end_claim(
            job_id,
            set_job,
            f"{_HELD} AND state IN ({_codes(action)})",
            {"secret": secret, "now": now},
            AttemptOutcome.FAILED,
            diagnostic,
            predicted=self._predicted(job_id, secret, now, action),
        )

    def succeed(self, job_id: bytes, secret: bytes, now: int, activity_id: bytes, rep_id: bytes) -> bool:
        return self._end_claim(
            job_id,
            f"state = {JobState.SUCCEEDED.code}, completion_activity_id = %(activity)s, "
            "completion_representation_id = %(rep)s, finished_at = %(now)s",
            f"{_HELD} AND state IN ({_codes(Action.COMPLETE)})",
            {"secret": secret, "now": now, "activity": Id(activity_id), "rep": Id(rep_id)},
            AttemptOutcome.SUCCEEDED,
            predicted=self._predicted(job_id, secret, now, Action.COMPLETE),
            also=", x AS (UPDATE jobs SET waiting = waiting - 1 WHERE id IN "
            "(SELECT job_id FROM job_dependencies WHERE upstream_id IN (SELECT id FROM w)))",
        )

    def _stop_claim(self, job_id: bytes, set_job: str, where: str, now: int, outcome: AttemptOutcome) -> bool:
        """End a job's claim without its holder, as one statement: a running attempt ends
        ``outcome`` with ``stop_by`` = the lease's expiry (its holder confirms the stop before
        then), or ``lost`` when the lease already expired. The job's row is locked first, so
        the attempt ends by the claim the update replaced."""
        sql = (
            "WITH o AS (SELECT id, state AS old_state, claim_expires_at AS old_expires FROM jobs "
            "WHERE id = %(id)s FOR UPDATE), "
            f"w AS (UPDATE jobs j SET {set_job}, {_CLEAR_CLAIM}, updated_sequence = %(seq)s FROM o "
            f"WHERE j.id = o.id AND j.{where} RETURNING j.id, o.old_state, o.old_expires), "
            "a AS (UPDATE job_attempts t SET ended_at = %(now)s, diagnostic = NULL, "
            "stop_by = CASE WHEN w.old_state = 2 AND w.old_expires > %(now)s THEN w.old_expires END, "
            "outcome = CASE WHEN w.old_state = 2 AND w.old_expires > %(now)s THEN %(outcome)s::smallint "
            f"ELSE {AttemptOutcome.LOST.code} END FROM w WHERE t.job_id = w.id AND t.outcome IS NULL) "
            "SELECT count(*) FROM w"
        )
        params = {"id": Id(job_id), "seq": PROVISIONAL, "now": now, "outcome": outcome.code}
        if self.one(sql, params)[0] != 1:
            return False
        self.touched(job_id)
        return True

    def cancel(self, job_id: bytes, now: int) -> bool:
        """Cancel a requested or claimed job; a running attempt ends ``cancelled`` and waits
        for its holder to confirm the stop (``lost`` when its lease already expired)."""
        return self._stop_claim(
            job_id,
            f"state = {JobState.CANCELLED.code}, finished_at = %(now)s",
            f"state IN ({_codes(Action.CANCEL)})",
            now,
            AttemptOutcome.CANCELLED,
        )

    def requeue(self, job_id: bytes, now: int) -> bool:
        """Return a claimed job (expired or not) to requested, fencing its lease; its attempt
        ends ``released`` and waits for its holder to confirm the stop (``lost`` if expired)."""
        return self._stop_claim(
            job_id,
            f"state = {REQUESTED}, available_at = %(now)s",
            f"state IN ({_codes(Action.REQUEUE)})",
            now,
            AttemptOutcome.RELEASED,
        )

    def set_priority(self, job_id: bytes, priority: int) -> bool:
        count = self.rowcount(
            "UPDATE jobs SET priority = %s, updated_sequence = %s WHERE id = %s AND state IN "
            f"({_codes(Action.PRIORITIZE)})",
            (priority, PROVISIONAL, Id(job_id)),
        )
        if count != 1:
            return False
        self.touched(job_id)
        return True

    def lost_claims(self, now: int, limit: int) -> list[LostClaim]:
        """Expired claims, soonest-expired first, with what finalising them needs."""
        return [
            LostClaim(job, attempt, attempts, max_attempts, worker, agent, expires)
            for job, attempt, attempts, max_attempts, worker, agent, expires in self.all(
                "SELECT j.id, j.claim_attempt, j.attempts, j.max_attempts, "
                "(SELECT w.name FROM workers w WHERE w.id = j.claim_worker_id), j.claim_agent_name, "
                "j.claim_expires_at FROM jobs j WHERE j.state = 2 AND j.claim_expires_at <= %s "
                "ORDER BY j.claim_expires_at, j.id LIMIT %s",
                (now, limit),
            )
        ]

    def finalize_lost(self, job_id: bytes, attempt: int, now: int, diagnostic: str | None) -> bool:
        """End an expired claim's attempt as lost: back to requested, or failed with ``diagnostic``.

        Guarded by the attempt and the expiry, so a re-claim committed first wins."""
        set_job = (
            f"state = {REQUESTED}, available_at = %(now)s"
            if diagnostic is None
            else f"state = {JobState.FAILED.code}, failure_diagnostic = %(failure)s, finished_at = %(now)s"
        )
        return self._end_claim(
            job_id,
            set_job,
            "state = 2 AND claim_attempt = %(attempt)s AND claim_expires_at <= %(now)s",
            {"now": now, "attempt": attempt, "failure": diagnostic},
            AttemptOutcome.LOST,
            by_holder=False,
        )

    def link_retry(self, original: bytes, retry: bytes) -> None:
        self.queue("UPDATE jobs SET retried_as = %s WHERE id = %s", (Id(retry), Id(original)))
        self.queue("UPDATE jobs SET retry_of = %s WHERE id = %s", (Id(original), Id(retry)))
        self.leases.pop(original, None)
        self.leases.pop(retry, None)

    def completed_by(self, job_id: bytes) -> tuple[int, bytes | None, bytes | None] | None:
        """(state, completion representation, completing attempt's secret hash) of a job."""
        row = self.one(
            "SELECT j.state, j.completion_representation_id, (SELECT a.secret_hash FROM job_attempts a "
            "WHERE a.job_id = j.id AND a.outcome = 1) FROM jobs j WHERE j.id = %s",
            (Id(job_id),),
        )
        return (row[0], row[1], row[2]) if row is not None else None


def _lost(job_id: bytes) -> str:
    return f"job {JobId(job_id)} changed under this lease"
