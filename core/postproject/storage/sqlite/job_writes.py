"""Job and lease statements of an edit: requests, guarded claims and every lease transition.

Each transition is one guarded ``UPDATE`` whose allowed source states come from the
lifecycle table (:mod:`postproject.model.lifecycle`), so storage and the rules cannot disagree.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from postproject.engine import ActivityFacts, ChangedInput, LeaseRow, LostClaim, OutputFacts
from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.model.jobs import AttemptOutcome, JobRequest
from postproject.model.lifecycle import Action, JobState, sources
from postproject.storage import rows
from postproject.storage.sqlite.errors import translate

CHUNK = 500  # ids per IN (...) list
CLAIMED = JobState.CLAIMED.code
REQUESTED = JobState.REQUESTED.code


class _Unchanged(Exception):
    """A guarded statement matched no row: undo the operation's earlier statements."""


def _codes(action: Action) -> str:
    """The SQL list of stored state codes an action may start from (from the lifecycle table)."""
    return ",".join(str(state.code) for state in sorted(sources(action), key=lambda s: s.code))


_CLEAR_CLAIM = """claim_secret_hash = NULL, claim_tool_name = NULL, claim_tool_version = NULL,
    claim_tool_uri = NULL, claim_agent_name = NULL, claim_worker_id = NULL, claim_session = NULL,
    claimed_at = NULL, claim_expires_at = NULL, claim_sequence = NULL, claim_attempt = NULL"""
_SET_CLAIM = """state = 2, claim_secret_hash = :secret, claim_tool_name = :tool_name,
    claim_tool_version = :tool_version, claim_tool_uri = :tool_uri, claim_agent_name = :agent,
    claim_worker_id = :worker, claim_session = :session, claimed_at = :now, claim_expires_at = :expires,
    claim_sequence = :seq, claim_attempt = attempts + 1, attempts = attempts + 1, updated_sequence = :seq"""
# Claimable: requested and not held back by not_before, or claimed with a lease that expired
# at or before now. (available_at only orders the queue: a request from a host whose clock runs
# ahead is claimable at once.)
# A requested job that waits on a dependency (waiting > 0) is not claimable.
_READY = "(not_before IS NULL OR not_before <= :now)"
_CLAIMABLE = f"((state = {REQUESTED} AND waiting = 0 AND {_READY}) OR (state = {CLAIMED} AND claim_expires_at <= :now))"
# Held by a lease: claimed by this secret and not expired.
_HELD = "state = 2 AND claim_secret_hash = :secret AND claim_expires_at > :now"
_END_ATTEMPT = (
    "UPDATE job_attempts SET outcome = :outcome, ended_at = :now, diagnostic = :diagnostic, "
    "stopped_at = CASE WHEN :stopped THEN :now END WHERE job_id = :id AND outcome IS NULL"
)
# A cancel or requeue ends the running attempt at once and asks its holder to stop: with a
# live lease the holder has until the lease's expiry (stop_by) to confirm; an expired
# claim's attempt is lost. Runs before the job's update, which clears the claim.
_STOP_ATTEMPT = (
    "UPDATE job_attempts SET ended_at = :now, diagnostic = NULL, "
    "stop_by = (SELECT claim_expires_at FROM jobs WHERE id = :id AND state = 2 AND claim_expires_at > :now), "
    "outcome = CASE WHEN (SELECT claim_expires_at FROM jobs WHERE id = :id AND state = 2) > :now "
    f"THEN :outcome ELSE {AttemptOutcome.LOST.code} END WHERE job_id = :id AND outcome IS NULL"
)


@functools.lru_cache(maxsize=64)
def _insert_job_sql(checked_inputs: int | None) -> str:
    """The job insert; with ``checked_inputs`` it writes only when that many inputs exist."""
    columns = (
        "INSERT INTO jobs (id, kind, inputs, output_asset_id, output_kind, target_root, state, "
        "requested_at, requested_sequence, updated_sequence, priority, not_before, available_at, "
        "max_attempts, idempotency_key, request_digest, dependencies, waiting, regenerates) "
    )
    marks = "?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?"
    if checked_inputs is None:
        return columns + f"VALUES ({marks})"
    check = (
        f"(SELECT count(*) FROM representations WHERE id IN ({','.join('?' * checked_inputs)})) = ?"
        if checked_inputs
        else "1"
    )
    return columns + f"SELECT {marks} WHERE {check}"


def _claim_first(candidates: Sequence[str]) -> str:
    """The guarded claim of the best of ``candidates`` (priority, then availability, then id)."""
    return (
        f"UPDATE jobs SET {_SET_CLAIM} WHERE id = (SELECT id FROM ({' UNION ALL '.join(candidates)}) "
        f"ORDER BY p DESC, a, id LIMIT 1) AND {_CLAIMABLE} RETURNING id, claim_attempt"
    )


# Any kind: each candidate is one index probe, pinned with INDEXED BY so the planner can never
# fall back to sorting ready rows: the best ready job and the claim that expired first.
_CLAIM_ANY = _claim_first(
    (
        "SELECT * FROM (SELECT priority AS p, available_at AS a, id FROM jobs INDEXED BY jobs_ready "
        f"WHERE state = 1 AND waiting = 0 AND {_READY} ORDER BY priority DESC, available_at, id LIMIT 1)",
        "SELECT * FROM (SELECT priority AS p, claim_expires_at AS a, id FROM jobs INDEXED BY jobs_claimed_expiry "
        "WHERE state = 2 AND claim_expires_at <= :now ORDER BY claim_expires_at LIMIT 1)",
    )
)


class JobWrites:
    """The job statements of :class:`postproject.storage.sqlite.writes.WriteSession`."""

    conn: sqlite3.Connection
    path: Path
    sequence: int
    created_outputs: dict[bytes, OutputFacts]
    created_edges: dict[bytes, tuple[list[bytes], list[bytes]]]

    def _exec(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Cursor:
        raise NotImplementedError

    def _one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        raise NotImplementedError

    def _all(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        raise NotImplementedError

    def missing(self, table: str, ids: Sequence[bytes]) -> list[bytes]:
        raise NotImplementedError

    def _atomic(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    def insert_job(
        self,
        job_id: bytes,
        request: JobRequest,
        now: int,
        not_before: int | None,
        digest: bytes | None,
        waiting: int = 0,
    ) -> bool:
        """Insert a requested job (with its dependencies); False when an input, the output asset
        or the target root is absent."""
        inputs = [rep.bytes for rep in request.representation_inputs]
        dependencies = request.dependencies
        values: tuple[Any, ...] = (
            job_id,
            request.kind,
            b"".join(inputs),
            request.output_asset_id.bytes,
            request.output_representation_kind.code,
            request.target_root,
            now,
            self.sequence,
            self.sequence,
            request.priority,
            not_before,
            max(now, not_before) if not_before is not None else now,
            request.max_attempts,
            request.idempotency_key,
            digest,
            len(dependencies),
            waiting,
            request.regenerates.bytes if request.regenerates is not None else None,
        )
        if len(inputs) > CHUNK:
            if self.missing("representations", inputs):
                return False
            sql, params = _insert_job_sql(None), values
        else:  # the input check rides on the insert: one statement
            sql = _insert_job_sql(len(inputs))
            params = (*values, *inputs, len(inputs)) if inputs else values
        if not dependencies:
            return self._insert(sql, params)
        bound = {b.job_id for b in request.bound_outputs}
        with self._atomic():
            if not self._insert(sql, params):
                return False
            try:
                self.conn.executemany(
                    "INSERT INTO job_dependencies (job_id, upstream_id, binds_output) VALUES (?, ?, ?)",
                    [(job_id, upstream.bytes, int(upstream in bound)) for upstream in dependencies],
                )
            except sqlite3.Error as exc:
                raise translate(exc, self.path) from exc
        return True

    def _insert(self, sql: str, params: Sequence[Any]) -> bool:
        try:
            cursor = self.conn.execute(sql, params)
        except sqlite3.IntegrityError as exc:
            if "FOREIGN KEY" in str(exc):
                return False
            raise translate(exc, self.path) from exc
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from exc
        return cursor.rowcount == 1

    def job_states(self, job_ids: Sequence[bytes]) -> dict[bytes, int]:
        """The stored state code of each of ``job_ids`` that exists."""
        found: dict[bytes, int] = {}
        for start in range(0, len(job_ids), CHUNK):
            part = job_ids[start : start + CHUNK]
            found.update(
                self._all(f"SELECT id, state FROM jobs WHERE id IN ({','.join('?' * len(part))})", part)
            )
        return found

    def dependency_rows(self, job_id: bytes) -> list[Any]:
        """The dependency rows (``rows.DEPENDENCY_COLUMNS``) of one job, by upstream id."""
        return self._all(
            f"SELECT {rows.DEPENDENCY_COLUMNS} FROM job_dependencies d JOIN jobs u ON u.id = d.upstream_id "
            "WHERE d.job_id = ? ORDER BY d.upstream_id",
            (job_id,),
        )

    def move_dependents(self, old: bytes, new: bytes) -> int:
        """Make every job that depends on ``old`` depend on ``new`` instead (its output binding
        too); how many moved. Waiting counts do not change: neither job has succeeded."""
        return self._exec(
            "UPDATE job_dependencies SET upstream_id = ? WHERE upstream_id = ?", (new, old)
        ).rowcount

    def supersede(self, rep_id: bytes, replacement: bytes) -> bytes | None:
        """Record that ``replacement`` supersedes ``rep_id`` or, when that was superseded
        already, the newest representation of its chain; the id superseded (None when
        ``rep_id`` does not exist)."""
        row = self._one(
            "WITH RECURSIVE chain(id, next, depth) AS (SELECT id, superseded_by, 0 FROM representations "
            "WHERE id = :rep UNION ALL SELECT r.id, r.superseded_by, c.depth + 1 FROM chain c "
            "JOIN representations r ON r.id = c.next WHERE c.depth < 10000) "
            "UPDATE representations SET superseded_by = :replacement WHERE id = "
            "(SELECT id FROM chain WHERE next IS NULL) AND id <> :replacement RETURNING id",
            {"rep": rep_id, "replacement": replacement},
        )
        return bytes(row[0]) if row is not None else None

    def idempotent_job(self, key: str) -> tuple[bytes, bytes] | None:
        """(job id, request digest) of the job requested with ``key``, if any."""
        return self._one(  # type: ignore[no-any-return]
            "SELECT id, request_digest FROM jobs WHERE idempotency_key = ?", (key,)
        )

    def lease_row(self, job_id: bytes) -> LeaseRow | None:
        """The stored claim of a job, or None when the job does not exist."""
        row = self._one(
            "SELECT state, claim_secret_hash, claim_expires_at, claim_sequence, output_asset_id, output_kind, inputs, "
            "attempts, max_attempts, claim_attempt, regenerates, dependencies "
            "FROM jobs WHERE id = ?",
            (job_id,),
        )
        if row is None:
            return None
        (state, secret, expires, claim_sequence, asset, kind, blob, attempts, max_attempts, attempt, regenerates,
         dependencies) = row  # fmt: skip
        inputs = rows.split_ids(blob)
        if dependencies:  # the inputs its bindings resolved to when it was claimed
            resolved = [r[0] for r in self._all(
                "SELECT resolved_id FROM job_dependencies WHERE job_id = ? AND resolved_id IS NOT NULL", (job_id,)
            )]  # fmt: skip
            inputs = sorted(set(inputs).union(resolved))
        return LeaseRow(
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
            regenerates,
        )

    def output_facts(self, rep_id: bytes) -> OutputFacts | None:
        known = self.created_outputs.get(rep_id)  # created in this edit: no need to read it back
        if known is not None:
            return known
        row = self._one(
            "SELECT asset_id, kind, created_sequence FROM representations WHERE id = ?", (rep_id,)
        )
        return OutputFacts(*row) if row is not None else None

    def activity_facts(self, activity_id: bytes) -> ActivityFacts | None:
        """The creating revision and sorted edge ids of an activity as this edit sees it."""
        known = self.created_edges.get(activity_id)  # created in this edit: no need to read it back
        if known is not None:
            return ActivityFacts(self.sequence, list(known[0]), list(known[1]))
        found = self._all(
            "SELECT a.created_sequence, e.direction, e.representation_id FROM activities a "
            "LEFT JOIN activity_edges e ON e.activity_id = a.id WHERE a.id = ? "
            "ORDER BY e.direction, e.representation_id",
            (activity_id,),
        )
        if not found:
            return None
        sides: tuple[list[bytes], list[bytes]] = ([], [])
        for _, direction, rep in found:
            if rep is not None:
                sides[direction].append(rep)
        return ActivityFacts(found[0][0], sides[0], sides[1])

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
            "worker": worker[0] if worker else None,
            "session": worker[1] if worker else None,
            "now": now,
            "expires": expires,
            "seq": self.sequence,
        }

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
        params = self._claim_params(secret, tool, agent, worker, now, expires) | {"id": job_id}
        row = self._one(
            f"UPDATE jobs SET {_SET_CLAIM} WHERE id = :id AND {_CLAIMABLE} RETURNING claim_attempt", params
        )
        return int(row[0]) if row else None

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
        guarded statement; (job id, attempt number) or None."""
        params = self._claim_params(secret, tool, agent, worker, now, expires)
        if kinds is None:
            row = self._one(_CLAIM_ANY, params)
            return (row[0], int(row[1])) if row else None
        # As _CLAIM_ANY: the best ready job of each kind and the claim of these kinds that
        # expired first, each one pinned index probe.
        candidates: list[str] = []
        for index, kind in enumerate(kinds):
            params[f"k{index}"] = kind
            candidates.append(
                "SELECT * FROM (SELECT priority AS p, available_at AS a, id FROM jobs INDEXED BY jobs_ready_kind "
                f"WHERE state = 1 AND waiting = 0 AND kind = :k{index} AND {_READY} "
                "ORDER BY priority DESC, available_at, id LIMIT 1)"
            )
        marks = ",".join(f":k{i}" for i in range(len(kinds)))
        candidates.append(
            "SELECT * FROM (SELECT priority AS p, claim_expires_at AS a, id FROM jobs INDEXED BY jobs_claimed_expiry "
            f"WHERE state = 2 AND claim_expires_at <= :now AND kind IN ({marks}) "
            "ORDER BY claim_expires_at LIMIT 1)"
        )
        row = self._one(_claim_first(candidates), params)
        return (row[0], int(row[1])) if row else None

    def renew(self, job_id: bytes, secret: bytes, now: int, expires: int) -> bool:
        cursor = self._exec(
            f"UPDATE jobs SET claim_expires_at = :expires, updated_sequence = :seq WHERE id = :id AND {_HELD} "
            "AND :expires > claim_expires_at",
            {"id": job_id, "secret": secret, "now": now, "expires": expires, "seq": self.sequence},
        )
        return cursor.rowcount == 1

    def _end_claim(
        self,
        job_id: bytes,
        set_job: str,
        where: str,
        params: dict[str, Any],
        outcome: AttemptOutcome,
        diagnostic: str | None = None,
        also: str | None = None,
        *,
        by_holder: bool = True,
    ) -> bool:
        """One guarded UPDATE of the job that clears its claim, the end of its attempt
        (``stopped_at`` set when the holder ended it itself) and ``also`` (a statement on
        ``:id``), as one step."""
        with self._atomic():
            cursor = self._exec(
                f"UPDATE jobs SET {set_job}, {_CLEAR_CLAIM}, updated_sequence = :seq WHERE id = :id AND {where}",
                params | {"id": job_id, "seq": self.sequence},
            )
            if cursor.rowcount != 1:
                return False
            self._exec(
                _END_ATTEMPT,
                {
                    "id": job_id,
                    "now": params["now"],
                    "outcome": outcome.code,
                    "diagnostic": diagnostic,
                    "stopped": by_holder,
                },
            )
            if also is not None:
                self._exec(also, {"id": job_id})
        return True

    def _stop_claim(self, job_id: bytes, set_job: str, where: str, now: int, outcome: AttemptOutcome) -> bool:
        """End a job's claim without its holder: its attempt ends ``outcome`` and waits for the
        holder's confirmation (or ``lost`` when the lease already expired)."""
        with self._atomic():
            self._exec(_STOP_ATTEMPT, {"id": job_id, "now": now, "outcome": outcome.code})
            cursor = self._exec(
                f"UPDATE jobs SET {set_job}, {_CLEAR_CLAIM}, updated_sequence = :seq WHERE id = :id AND {where}",
                {"id": job_id, "seq": self.sequence, "now": now},
            )
            if cursor.rowcount != 1:
                raise _Unchanged
        return True

    def release(self, job_id: bytes, secret: bytes, now: int) -> bool:
        return self._end_claim(
            job_id,
            f"state = {REQUESTED}",
            f"{_HELD} AND state IN ({_codes(Action.RELEASE)})",
            {"secret": secret, "now": now},
            AttemptOutcome.RELEASED,
        )

    def fail(self, job_id: bytes, secret: bytes, now: int, diagnostic: str, *, retry: bool) -> bool:
        """Fail the job, or (``retry``) return it to requested; the attempt ends failed either way."""
        set_job = (
            f"state = {REQUESTED}, available_at = :now"
            if retry
            else f"state = {JobState.FAILED.code}, failure_diagnostic = :diagnostic, finished_at = :now"
        )
        action = Action.RETRY if retry else Action.FAIL
        return self._end_claim(
            job_id,
            set_job,
            f"{_HELD} AND state IN ({_codes(action)})",
            {"secret": secret, "now": now, "diagnostic": diagnostic},
            AttemptOutcome.FAILED,
            diagnostic,
        )

    def succeed(self, job_id: bytes, secret: bytes, now: int, activity_id: bytes, rep_id: bytes) -> bool:
        """Mark the held job succeeded; every job that depends on it waits on one job fewer."""
        return self._end_claim(
            job_id,
            f"state = {JobState.SUCCEEDED.code}, completion_activity_id = :activity, "
            "completion_representation_id = :rep, finished_at = :now",
            f"{_HELD} AND state IN ({_codes(Action.COMPLETE)})",
            {"secret": secret, "now": now, "activity": activity_id, "rep": rep_id},
            AttemptOutcome.SUCCEEDED,
            also="UPDATE jobs SET waiting = waiting - 1 WHERE id IN "
            "(SELECT job_id FROM job_dependencies WHERE upstream_id = :id)",
        )

    def cancel(self, job_id: bytes, now: int) -> bool:
        """Cancel a requested or claimed job; a running attempt ends ``cancelled`` and waits
        for its holder to confirm the stop (``lost`` when its lease already expired)."""
        try:
            return self._stop_claim(
                job_id,
                f"state = {JobState.CANCELLED.code}, finished_at = :now",
                f"state IN ({_codes(Action.CANCEL)})",
                now,
                AttemptOutcome.CANCELLED,
            )
        except _Unchanged:
            return False

    def requeue(self, job_id: bytes, now: int) -> bool:
        """Return a claimed job (expired or not) to requested, fencing its lease; its attempt
        ends ``released`` and waits for its holder to confirm the stop (``lost`` if expired)."""
        try:
            return self._stop_claim(
                job_id,
                f"state = {REQUESTED}, available_at = :now",
                f"state IN ({_codes(Action.REQUEUE)})",
                now,
                AttemptOutcome.RELEASED,
            )
        except _Unchanged:
            return False

    def set_priority(self, job_id: bytes, priority: int) -> bool:
        cursor = self._exec(
            f"UPDATE jobs SET priority = ?, updated_sequence = ? WHERE id = ? AND state IN "
            f"({_codes(Action.PRIORITIZE)})",
            (priority, self.sequence, job_id),
        )
        return cursor.rowcount == 1

    def lost_claims(self, now: int, limit: int) -> list[LostClaim]:
        """Expired claims, soonest-expired first, with what finalising them needs."""
        return [
            LostClaim(job, attempt, attempts, max_attempts, worker, agent, expires)
            for job, attempt, attempts, max_attempts, worker, agent, expires in self._all(
                "SELECT j.id, j.claim_attempt, j.attempts, j.max_attempts, "
                "(SELECT w.name FROM workers w WHERE w.id = j.claim_worker_id), j.claim_agent_name, "
                "j.claim_expires_at FROM jobs j INDEXED BY jobs_claimed_expiry "
                "WHERE j.state = 2 AND j.claim_expires_at <= ? ORDER BY j.claim_expires_at, j.id LIMIT ?",
                (now, limit),
            )
        ]

    def finalize_lost(self, job_id: bytes, attempt: int, now: int, diagnostic: str | None) -> bool:
        """End an expired claim's attempt as lost: back to requested, or failed with ``diagnostic``.

        Guarded by the attempt and the expiry, so a re-claim committed first wins."""
        set_job = (
            f"state = {REQUESTED}, available_at = :now"
            if diagnostic is None
            else f"state = {JobState.FAILED.code}, failure_diagnostic = :diagnostic, finished_at = :now"
        )
        return self._end_claim(
            job_id,
            set_job,
            "state = 2 AND claim_attempt = :attempt AND claim_expires_at <= :now",
            {"now": now, "attempt": attempt, "diagnostic": diagnostic},
            AttemptOutcome.LOST,
            by_holder=False,
        )

    def link_retry(self, original: bytes, retry: bytes) -> None:
        with self._atomic():
            self._exec("UPDATE jobs SET retried_as = ? WHERE id = ?", (retry, original))
            self._exec("UPDATE jobs SET retry_of = ? WHERE id = ?", (original, retry))

    def completed_by(self, job_id: bytes) -> tuple[int, bytes | None, bytes | None] | None:
        """(state, completion representation, completing attempt's secret hash) of a job."""
        return self._one(  # type: ignore[no-any-return]
            "SELECT j.state, j.completion_representation_id, (SELECT a.secret_hash FROM job_attempts a "
            "WHERE a.job_id = j.id AND a.outcome = 1) FROM jobs j WHERE j.id = ?",
            (job_id,),
        )

    def fingerprints_changed_after(self, rep_ids: Sequence[bytes], sequence: int) -> ChangedInput | None:
        """The first input whose fingerprint was recorded after ``sequence``: (rep, seq, revision id)."""
        for chunk_start in range(0, len(rep_ids), 500):
            chunk = rep_ids[chunk_start : chunk_start + 500]
            marks = ",".join("?" * len(chunk))
            row = self._one(
                "SELECT f.representation_id, f.recorded_sequence, r.id FROM representation_fingerprints f "
                f"JOIN revisions r ON r.sequence = f.recorded_sequence WHERE f.representation_id IN ({marks}) "
                "AND f.recorded_sequence > ? ORDER BY f.recorded_sequence LIMIT 1",
                [*chunk, sequence],
            )
            if row is not None:
                return ChangedInput(*row)
        return None
