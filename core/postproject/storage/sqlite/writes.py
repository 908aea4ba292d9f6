"""Write statements, run inside one ``BEGIN IMMEDIATE`` transaction per edit.

The revision sequence is allocated when the write lock is taken: nobody else can commit
while we hold it, and a rollback writes nothing, so numbers stay gap-free. Rows written by
the edit carry that sequence; events are inserted as they are staged, inside the savepoint
of their operation, so a failed operation takes its events with it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from postproject.engine import ChangedInput, LeaseRow, OutputFacts
from postproject.lifecycle import Action, JobState, sources
from postproject.model.activities import ActivitySpec
from postproject.model.assets import Fingerprint
from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.model.jobs import JobRequest
from postproject.model.revisions import RevisionEvent
from postproject.storage.sqlite import connection, rows
from postproject.storage.sqlite.errors import translate, translated

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


class WriteSession:
    """The statements of one edit over the production's write connection."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        path: Path,
        *,
        busy_timeout: float,
        on_commit: Callable[[], None] | None = None,
    ) -> None:
        self.conn = conn
        self._on_commit = on_commit
        self.path = path
        self.busy_timeout = busy_timeout
        self.sequence = 0
        self.stored_high_water: int | None = None
        self.positions = 0
        self.staged: list[RevisionEvent] = []  # what the receipt reports, in staging order
        self._savepoints = 0
        self.created_activities: list[bytes] = []

    def begin(self) -> None:
        connection.begin_immediate(self.conn, self.path, timeout=self.busy_timeout)
        with translated(self.path):
            last, mark, high_water = self.conn.execute(
                "SELECT r.sequence, r.clock_mark, c.high_water FROM job_clock c LEFT JOIN "
                "(SELECT sequence, clock_mark FROM revisions ORDER BY sequence DESC LIMIT 1) r"
            ).fetchone()
        self.sequence = (last or 0) + 1
        self.stored_high_water = max((m for m in (mark, high_water) if m is not None), default=None)

    def savepoint(self) -> tuple[str, int]:
        """Open a savepoint; returns the token to release or roll back to."""
        name = f"op{self._savepoints}"
        self._savepoints += 1
        self._exec(f"SAVEPOINT {name}")
        return name, self.positions

    def release_savepoint(self, token: object) -> None:
        name, _ = _savepoint(token)
        self._savepoints -= 1
        self._exec(f"RELEASE {name}")

    def rollback_savepoint(self, token: object) -> None:
        """Undo everything since the savepoint, staged events included."""
        self._savepoints -= 1
        name, self.positions = _savepoint(token)
        del self.staged[self.positions :]
        self._exec(f"ROLLBACK TO {name}")
        self._exec(f"RELEASE {name}")

    def _exec(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Cursor:
        try:
            return self.conn.execute(sql, params)
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from exc

    def _one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        return self._exec(sql, params).fetchone()

    def _all(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        return self._exec(sql, params).fetchall()

    def event(self, kind: str, subject: bytes | None, payload: dict[str, Any]) -> None:
        self._exec(
            "INSERT INTO revision_events (sequence, position, kind, subject, payload) VALUES (?, ?, ?, ?, ?)",
            (
                self.sequence,
                self.positions,
                kind,
                subject,
                json.dumps(payload, separators=(",", ":")),
            ),
        )
        self.staged.append(RevisionEvent(self.positions, kind, payload))
        self.positions += 1

    # --- setup and provenance ----------------------------------------------------------

    def insert_asset(self, asset_id: bytes, name: str | None, now: int) -> None:
        self._exec(
            "INSERT INTO assets (id, name, created_at, created_sequence) VALUES (?, ?, ?, ?)",
            (asset_id, name, now, self.sequence),
        )

    def media_root_path(self, name: str) -> tuple[str | None] | None:
        return self._one("SELECT path FROM media_roots WHERE name = ?", (name,))  # type: ignore[no-any-return]

    def insert_media_root(self, root_id: bytes, name: str, path: str | None) -> None:
        self._exec(
            "INSERT INTO media_roots (id, name, path, created_sequence) VALUES (?, ?, ?, ?)",
            (root_id, name, path, self.sequence),
        )

    def insert_representation(
        self,
        rep_id: bytes,
        asset_id: bytes,
        kind: int,
        path: str,
        root: str | None,
        size: int,
        mtime: int,
        now: int,
    ) -> None:
        self._exec(
            "INSERT INTO representations (id, asset_id, kind, path, root_name, size, mtime, created_at, "
            "created_sequence) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (rep_id, asset_id, kind, path, root, size, mtime, now, self.sequence),
        )

    def location(self, rep_id: bytes) -> tuple[str, str | None] | None:
        """(stored path, root name) of a representation as this edit sees it, or None."""
        return self._one("SELECT path, root_name FROM representations WHERE id = ?", (rep_id,))  # type: ignore[no-any-return]

    def update_file_facts(self, rep_id: bytes, size: int, mtime: int) -> None:
        self._exec(
            "UPDATE representations SET size = ?, mtime = ? WHERE id = ?",
            (size, mtime, rep_id),
        )

    def set_fingerprint(self, rep_id: bytes, fingerprint: Fingerprint) -> bool:
        """Record a fingerprint; False when the same value is already current."""
        current = self._one(
            "SELECT value FROM representation_fingerprints WHERE representation_id = ? AND algorithm = ? "
            "AND version = ?",
            (rep_id, fingerprint.algorithm, fingerprint.version),
        )
        if current is not None and current[0] == fingerprint.value:
            return False
        self._exec(
            "INSERT INTO representation_fingerprints (representation_id, algorithm, version, value, "
            "recorded_sequence) VALUES (?, ?, ?, ?, ?) ON CONFLICT (representation_id, algorithm, version) "
            "DO UPDATE SET value = excluded.value, recorded_sequence = excluded.recorded_sequence",
            (
                rep_id,
                fingerprint.algorithm,
                fingerprint.version,
                fingerprint.value,
                self.sequence,
            ),
        )
        return True

    def missing(self, table: str, ids: Sequence[bytes]) -> list[bytes]:
        """Those of ``ids`` absent from ``table``."""
        assert table in ("assets", "representations", "activities", "jobs")
        absent: list[bytes] = []
        for chunk_start in range(0, len(ids), 500):
            chunk = ids[chunk_start : chunk_start + 500]
            marks = ",".join("?" * len(chunk))
            found = {r[0] for r in self._all(f"SELECT id FROM {table} WHERE id IN ({marks})", chunk)}
            absent.extend(i for i in chunk if i not in found)
        return absent

    def creates_cycle(self, inputs: Sequence[bytes], outputs: Sequence[bytes]) -> bool:
        """Would edges inputs -> outputs close a loop (an output already upstream of an input)?"""
        if not inputs:
            return False
        self._exec("CREATE TEMP TABLE IF NOT EXISTS cycle_seed (id BLOB PRIMARY KEY) WITHOUT ROWID")
        self._exec("DELETE FROM temp.cycle_seed")
        self.conn.executemany("INSERT OR IGNORE INTO temp.cycle_seed VALUES (?)", [(i,) for i in inputs])
        marks = ",".join("?" * len(outputs))
        row = self._one(
            "WITH RECURSIVE upstream(id) AS (SELECT id FROM temp.cycle_seed UNION "
            "SELECT i.representation_id FROM upstream u "
            "JOIN activity_edges o ON o.representation_id = u.id AND o.direction = 1 "
            "JOIN activity_edges i ON i.activity_id = o.activity_id AND i.direction = 0) "
            f"SELECT 1 FROM upstream WHERE id IN ({marks}) LIMIT 1",
            list(outputs),
        )
        return row is not None

    def outputs_consumed(self, outputs: Sequence[bytes]) -> bool:
        """Is any of these representations already an input somewhere (a cycle is then possible)?"""
        marks = ",".join("?" * len(outputs))
        return (
            self._one(
                f"SELECT 1 FROM activity_edges WHERE representation_id IN ({marks}) AND direction = 0 LIMIT 1",
                list(outputs),
            )
            is not None
        )

    def insert_activity(
        self,
        activity_id: bytes,
        spec: ActivitySpec,
        started: int | None,
        finished: int | None,
    ) -> None:
        tool, agent = spec.tool, spec.agent
        self._exec(
            "INSERT INTO activities (id, kind, tool_name, tool_version, tool_uri, agent_name, started_at, "
            "finished_at, created_sequence) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                activity_id,
                spec.kind,
                tool.name if tool else None,
                tool.version if tool else None,
                tool.uri if tool else None,
                agent.name if agent else None,
                started,
                finished,
                self.sequence,
            ),
        )
        self.created_activities.append(activity_id)
        edge_rows = [
            (activity_id, direction, edge.representation_id.bytes, edge.role or "")
            for direction, edges in ((0, spec.input_edges), (1, spec.output_edges))
            for edge in edges
        ]
        with translated(self.path):
            self.conn.executemany(
                "INSERT INTO activity_edges (activity_id, direction, representation_id, role) VALUES (?, ?, ?, ?)",
                edge_rows,
            )

    def insert_metadata(
        self, target_kind: int, target_id: bytes, vocabulary: str, name: str, value: str
    ) -> None:
        self._exec(
            "INSERT INTO metadata (target_kind, target_id, vocabulary, property, value, created_sequence) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (target_kind, target_id, vocabulary, name, value, self.sequence),
        )

    def staged_here(self, table: str, id_: bytes) -> bool:
        """Was this asset/representation/activity created by this edit?"""
        assert table in ("representations", "activities")
        row = self._one(f"SELECT created_sequence FROM {table} WHERE id = ?", (id_,))
        return row is not None and row[0] == self.sequence

    # --- jobs --------------------------------------------------------------------------

    def insert_job(self, job_id: bytes, request: JobRequest, now: int) -> bool:
        """Insert a requested job; False when the output asset or target root does not exist."""
        try:
            self.conn.execute(
                "INSERT INTO jobs (id, kind, inputs, output_asset_id, output_kind, target_root, state, requested_at, "
                "requested_sequence, updated_sequence) VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?, ?)",
                (
                    job_id,
                    request.kind,
                    b"".join(rep.bytes for rep in request.inputs),
                    request.output_asset_id.bytes,
                    request.output_representation_kind.code,
                    request.target_root,
                    now,
                    self.sequence,
                    self.sequence,
                ),
            )
        except sqlite3.IntegrityError as exc:
            if "FOREIGN KEY" in str(exc):
                return False
            raise translate(exc, self.path) from exc
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from exc
        return True

    def lease_row(self, job_id: bytes) -> LeaseRow | None:
        """The stored claim of a job, or None when the job does not exist."""
        row = self._one(
            "SELECT state, claim_secret, claim_expires_at, claim_sequence FROM jobs WHERE id = ?", (job_id,)
        )
        return LeaseRow(*row) if row is not None else None

    def output_facts(self, rep_id: bytes) -> OutputFacts | None:
        row = self._one(
            "SELECT asset_id, kind, created_sequence FROM representations WHERE id = ?", (rep_id,)
        )
        return OutputFacts(*row) if row is not None else None

    def activity_edge_ids(self, activity_id: bytes) -> tuple[list[bytes], list[bytes]]:
        sides: tuple[list[bytes], list[bytes]] = ([], [])
        for direction, rep in self._all(
            "SELECT direction, representation_id FROM activity_edges WHERE activity_id = ? "
            "ORDER BY direction, representation_id",
            (activity_id,),
        ):
            sides[direction].append(rep)
        return sides

    def job_io(self, job_id: bytes) -> tuple[bytes, int, list[bytes]]:
        """Output asset, output kind code and sorted input ids of a job."""
        asset, kind, inputs = self._one(
            "SELECT output_asset_id, output_kind, inputs FROM jobs WHERE id = ?", (job_id,)
        )
        return asset, kind, rows.split_ids(inputs)

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

    # --- commit ------------------------------------------------------------------------

    def commit(
        self,
        committed_at: int,
        revision_id: bytes,
        origin: str | None,
        message: str | None,
        high_water: int | None,
    ) -> bool:
        """Publish the edit; False (and a rollback) when nothing was staged."""
        if self.positions == 0:
            self.rollback(high_water)
            return False
        seq = self.sequence
        with translated(self.path):
            for start in range(0, len(self.created_activities), 500):
                self._capture_snapshots(self.created_activities[start : start + 500])
            marks = [m for m in (self.stored_high_water, high_water) if m is not None]
            self.conn.execute(
                "INSERT INTO revisions (sequence, id, committed_at, origin, message, clock_mark) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (seq, revision_id, committed_at, origin, message, max(marks, default=None)),
            )
            self.conn.execute("COMMIT")
        if self._on_commit is not None:
            self._on_commit()
        return True

    def _capture_snapshots(self, activity_ids: list[bytes]) -> None:
        """Record each new edge's representation fingerprints as they are at this commit."""
        marks = ",".join("?" * len(activity_ids))
        self.conn.execute(
            "UPDATE activity_edges SET snapshot_sequence = ?, snapshot_fingerprints = ("
            "SELECT json_group_array(json_array(algorithm, version, hex(value))) FROM ("
            "SELECT algorithm, version, value FROM representation_fingerprints f "
            "WHERE f.representation_id = activity_edges.representation_id ORDER BY algorithm, version)) "
            f"WHERE activity_id IN ({marks})",
            [self.sequence, *activity_ids],
        )

    def rollback(self, high_water: int | None) -> None:
        """Undo the edit but keep the highest clock sample it observed (notes §2.2)."""
        with translated(self.path):
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            if high_water is not None and (
                self.stored_high_water is None or high_water > self.stored_high_water
            ):
                connection.begin_immediate(self.conn, self.path, timeout=self.busy_timeout)
                self._raise_high_water(high_water)
                self.conn.execute("COMMIT")

    def _raise_high_water(self, high_water: int | None) -> None:
        if high_water is not None:
            self.conn.execute(
                "UPDATE job_clock SET high_water = ? WHERE high_water IS NULL OR high_water < ?",
                (high_water, high_water),
            )


def _savepoint(token: object) -> tuple[str, int]:
    """(savepoint name, staged event count) from a token of :meth:`WriteSession.savepoint`."""
    assert isinstance(token, tuple), "a savepoint token from this session"
    name, positions = token
    return str(name), int(positions)
