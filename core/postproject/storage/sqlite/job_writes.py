"""Job and lease statements of an edit: requests, guarded claims and every lease transition.

Each transition is one guarded ``UPDATE`` whose allowed source states come from the
lifecycle table (:mod:`postproject.lifecycle`), so storage and the rules cannot disagree.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from postproject.engine import ActivityFacts, ChangedInput, LeaseRow, OutputFacts
from postproject.lifecycle import Action, JobState, sources
from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.model.jobs import JobRequest
from postproject.storage.sqlite import rows
from postproject.storage.sqlite.errors import translate

CHUNK = 500  # ids per IN (...) list
CLAIMED = JobState.CLAIMED.code


def _codes(action: Action) -> str:
    """The SQL list of stored state codes an action may start from (from the lifecycle table)."""
    return ",".join(str(state.code) for state in sorted(sources(action), key=lambda s: s.code))


_CLEAR_CLAIM = """claim_secret = NULL, claim_tool_name = NULL, claim_tool_version = NULL,
    claim_tool_uri = NULL, claim_agent_name = NULL, claimed_at = NULL, claim_expires_at = NULL,
    claim_sequence = NULL"""
_SET_CLAIM = """state = 2, claim_secret = :secret, claim_tool_name = :tool_name,
    claim_tool_version = :tool_version, claim_tool_uri = :tool_uri, claim_agent_name = :agent,
    claimed_at = :now, claim_expires_at = :expires, claim_sequence = :seq, updated_sequence = :seq"""
# Claimable: requested, or claimed with a lease that expired at or before now.
_CLAIMABLE = f"(state IN ({_codes(Action.CLAIM)}) AND (state <> {CLAIMED} OR claim_expires_at <= :now))"
# Held by a lease: claimed by this secret and not expired.
_HELD = "state = 2 AND claim_secret = :secret AND claim_expires_at > :now"


class JobWrites:
    """The job statements of :class:`postproject.storage.sqlite.writes.WriteSession`."""

    conn: sqlite3.Connection
    path: Path
    sequence: int

    def _exec(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Cursor:
        raise NotImplementedError

    def _one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        raise NotImplementedError

    def _all(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        raise NotImplementedError

    def missing(self, table: str, ids: Sequence[bytes]) -> list[bytes]:
        raise NotImplementedError

    def insert_job(self, job_id: bytes, request: JobRequest, now: int) -> bool:
        """Insert a requested job; False when an input, the output asset or the target root is absent."""
        inputs = [rep.bytes for rep in request.inputs]
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
        )
        columns = (
            "INSERT INTO jobs (id, kind, inputs, output_asset_id, output_kind, target_root, state, "
            "requested_at, requested_sequence, updated_sequence) "
        )
        if len(inputs) > CHUNK:
            if self.missing("representations", inputs):
                return False
            sql, params = columns + "VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?, ?)", values
        else:  # the input check rides on the insert: one statement
            marks = ",".join("?" * len(inputs))
            check = f"(SELECT count(*) FROM representations WHERE id IN ({marks})) = ?" if inputs else "1"
            sql = columns + f"SELECT ?, ?, ?, ?, ?, ?, 1, ?, ?, ? WHERE {check}"
            params = (*values, *inputs, len(inputs)) if inputs else values
        try:
            cursor = self.conn.execute(sql, params)
        except sqlite3.IntegrityError as exc:
            if "FOREIGN KEY" in str(exc):
                return False
            raise translate(exc, self.path) from exc
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from exc
        return cursor.rowcount == 1

    def lease_row(self, job_id: bytes) -> LeaseRow | None:
        """The stored claim of a job, or None when the job does not exist."""
        row = self._one(
            "SELECT state, claim_secret, claim_expires_at, claim_sequence, output_asset_id, output_kind, inputs "
            "FROM jobs WHERE id = ?",
            (job_id,),
        )
        if row is None:
            return None
        state, secret, expires, claim_sequence, asset, kind, inputs = row
        return LeaseRow(state, secret, expires, claim_sequence, asset, kind, rows.split_ids(inputs))

    def output_facts(self, rep_id: bytes) -> OutputFacts | None:
        row = self._one(
            "SELECT asset_id, kind, created_sequence FROM representations WHERE id = ?", (rep_id,)
        )
        return OutputFacts(*row) if row is not None else None

    def activity_facts(self, activity_id: bytes) -> ActivityFacts | None:
        """The creating revision and sorted edge ids of an activity as this edit sees it."""
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
        now: int,
        expires: int,
    ) -> dict[str, Any]:
        return {
            "secret": secret,
            "tool_name": tool.name,
            "tool_version": tool.version,
            "tool_uri": tool.uri,
            "agent": agent.name if agent else None,
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
        now: int,
        expires: int,
    ) -> bool:
        """One guarded UPDATE; True when the job was claimable and is now ours."""
        params = self._claim_params(secret, tool, agent, now, expires) | {"id": job_id}
        cursor = self._exec(f"UPDATE jobs SET {_SET_CLAIM} WHERE id = :id AND {_CLAIMABLE}", params)
        return cursor.rowcount == 1

    def claim_next(
        self,
        kinds: Sequence[str] | None,
        secret: bytes,
        tool: ToolIdentity,
        agent: AgentIdentity | None,
        now: int,
        expires: int,
    ) -> bytes | None:
        """Claim the oldest claimable job of ``kinds`` in one guarded statement."""
        params = self._claim_params(secret, tool, agent, now, expires)
        # Oldest = smallest id (UUIDv7). Each candidate is one index probe; the plan is
        # pinned with INDEXED BY so the planner can never fall back to sorting ready rows.
        if kinds is None:
            candidates = [
                "SELECT id FROM (SELECT id FROM jobs INDEXED BY jobs_by_state WHERE state = 1 ORDER BY id LIMIT 1)",
                "SELECT min(id) FROM jobs INDEXED BY jobs_claimed_expiry WHERE state = 2 AND claim_expires_at <= :now",
            ]
        else:
            candidates = []
            for index, kind in enumerate(kinds):
                params[f"k{index}"] = kind
                candidates.append(
                    f"SELECT id FROM (SELECT id FROM jobs INDEXED BY jobs_by_state_kind "
                    f"WHERE state = 1 AND kind = :k{index} ORDER BY id LIMIT 1)"
                )
            marks = ",".join(f":k{i}" for i in range(len(kinds)))
            candidates.append(
                "SELECT min(id) FROM jobs INDEXED BY jobs_claimed_expiry "
                f"WHERE state = 2 AND claim_expires_at <= :now AND kind IN ({marks})"
            )
        pick = " UNION ALL ".join(candidates)
        row = self._one(
            f"UPDATE jobs SET {_SET_CLAIM} WHERE id = (SELECT min(id) FROM ({pick})) AND {_CLAIMABLE} RETURNING id",
            params,
        )
        return row[0] if row else None

    def renew(self, job_id: bytes, secret: bytes, now: int, expires: int) -> bool:
        cursor = self._exec(
            f"UPDATE jobs SET claim_expires_at = :expires, updated_sequence = :seq WHERE id = :id AND {_HELD} "
            "AND :expires > claim_expires_at",
            {
                "id": job_id,
                "secret": secret,
                "now": now,
                "expires": expires,
                "seq": self.sequence,
            },
        )
        return cursor.rowcount == 1

    def release(self, job_id: bytes, secret: bytes, now: int) -> bool:
        cursor = self._exec(
            f"UPDATE jobs SET state = {JobState.REQUESTED.code}, {_CLEAR_CLAIM}, updated_sequence = :seq "
            f"WHERE id = :id AND {_HELD} AND state IN ({_codes(Action.RELEASE)})",
            {"id": job_id, "secret": secret, "now": now, "seq": self.sequence},
        )
        return cursor.rowcount == 1

    def fail(self, job_id: bytes, secret: bytes, now: int, diagnostic: str) -> bool:
        cursor = self._exec(
            f"UPDATE jobs SET state = {JobState.FAILED.code}, {_CLEAR_CLAIM}, failure_diagnostic = :diagnostic, "
            f"updated_sequence = :seq WHERE id = :id AND {_HELD} AND state IN ({_codes(Action.FAIL)})",
            {
                "id": job_id,
                "secret": secret,
                "now": now,
                "diagnostic": diagnostic,
                "seq": self.sequence,
            },
        )
        return cursor.rowcount == 1

    def succeed(self, job_id: bytes, secret: bytes, now: int, activity_id: bytes, rep_id: bytes) -> bool:
        cursor = self._exec(
            f"UPDATE jobs SET state = {JobState.SUCCEEDED.code}, {_CLEAR_CLAIM}, completion_activity_id = :activity, "
            f"completion_representation_id = :rep, updated_sequence = :seq "
            f"WHERE id = :id AND {_HELD} AND state IN ({_codes(Action.COMPLETE)})",
            {
                "id": job_id,
                "secret": secret,
                "now": now,
                "activity": activity_id,
                "rep": rep_id,
                "seq": self.sequence,
            },
        )
        return cursor.rowcount == 1

    def cancel(self, job_id: bytes) -> bool:
        cursor = self._exec(
            f"UPDATE jobs SET state = {JobState.CANCELLED.code}, {_CLEAR_CLAIM}, updated_sequence = ? "
            f"WHERE id = ? AND state IN ({_codes(Action.CANCEL)})",
            (self.sequence, job_id),
        )
        return cursor.rowcount == 1

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
