"""An edit on a production file: one ``BEGIN IMMEDIATE`` transaction on the write connection.

The revision sequence is allocated when the write lock is taken: nobody else can commit
while we hold it, and a rollback writes nothing, so numbers stay gap-free. Rows written by
the edit carry that sequence; events are staged in memory (a failed operation drops its
own) and written with the revision row at commit. The statements both engines share are in
:mod:`postproject.storage.sql.writes`; SQLite's own are here and in :mod:`.claims`. Every
statement runs at once (a statement costs no round trip here).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

from postproject.engine import LeaseRow
from postproject.model.ids import iter_chunks
from postproject.model.jobs import AttemptOutcome
from postproject.model.lifecycle import JobState
from postproject.storage import rows
from postproject.storage.sql.dialect import Dialect, Params
from postproject.storage.sql.leases import CLEAR_CLAIM, HELD, EndClaim, StopClaim
from postproject.storage.sql.writes import CHUNK, SqlWrites
from postproject.storage.sqlite import claims, connection
from postproject.storage.sqlite.errors import translate, translated
from postproject.storage.sqlite.reads import DIALECT

EVENTS_PER_INSERT = 1000  # rows of one multi-row INSERT (5 parameters each, below SQLite's 32766)
CLAIMED = JobState.CLAIMED.code
# json.dumps with separators builds a new encoder per call; one shared encoder gives the same text
_encode_json = json.JSONEncoder(separators=(",", ":")).encode


# The newest revision's sequence and clock mark, the stored high-water mark and the data version
_READ_HEAD = (
    "SELECT (SELECT data_version FROM pragma_data_version()), r.sequence, r.clock_mark, c.high_water "
    "FROM job_clock c LEFT JOIN (SELECT sequence, clock_mark FROM revisions ORDER BY sequence DESC LIMIT 1) r"
)


class _Unchanged(Exception):
    """A guarded statement matched no row: undo the operation's earlier statements."""


class Head:
    """What a write connection knows about the newest revision after its own last commit:
    (``PRAGMA data_version`` then, its sequence, the durable clock high-water mark). An edit
    that finds the same data version reuses it instead of reading it again."""

    __slots__ = ("high_water", "sequence", "shared", "version")

    def __init__(self) -> None:
        self.version: int | None = None
        self.shared = False  # other connections committed lately: probing first would not pay
        self.sequence = 0
        self.high_water: int | None = None


class WriteSession(SqlWrites):
    """The statements of one edit over the production's write connection."""

    dialect: ClassVar[Dialect] = DIALECT

    def __init__(
        self,
        conn: sqlite3.Connection,
        path: Path,
        *,
        busy_timeout: float,
        on_commit: Callable[[], None] | None = None,
        head: Head | None = None,
    ) -> None:
        super().__init__()
        self.conn = conn
        self._head = head if head is not None else Head()
        self._version: int | None = None
        self._on_commit = on_commit
        self.path = path
        self.busy_timeout = busy_timeout
        self.sequence = 0
        self.stored_high_water: int | None = None
        self._savepoints = 0
        self._clock_written = False  # job_clock written (a reset): the cached head is stale

    def begin(self) -> None:
        connection.begin_immediate(self.conn, self.path, timeout=self.busy_timeout)
        head = self._head
        with translated(self.path):
            if head.version is not None and not head.shared:
                version = self._version = self.conn.execute("PRAGMA data_version").fetchone()[0]
                if head.version == version:
                    # nobody else committed since this connection's last commit: reuse it
                    self.sequence = head.sequence + 1
                    self.stored_high_water = head.high_water
                    return
                head.shared = True  # others write too: read the head with the version from now on
            self._version, last, mark, high_water = self.conn.execute(_READ_HEAD).fetchone()
            # back to the cheap probe once this connection is the only writer again
            head.shared = head.version is not None and head.version != self._version
        self.sequence = (last or 0) + 1
        self.stored_high_water = max((m for m in (mark, high_water) if m is not None), default=None)

    # --- statements and savepoints ------------------------------------------------------------

    def _exec(self, sql: str, params: Params | None = None) -> sqlite3.Cursor:
        try:
            return self.conn.execute(sql, () if params is None else params)
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from exc

    def one(self, sql: str, params: Params | None = None) -> Any:
        return self._exec(sql, params).fetchone()

    def all(self, sql: str, params: Params | None = None) -> list[Any]:
        return self._exec(sql, params).fetchall()

    def rowcount(self, sql: str, params: Params | None = None) -> int:
        return self._exec(sql, params).rowcount

    def later(self, sql: str, params: Params | None = None) -> None:
        self._exec(sql, params)

    def learn(self, table: str, keys: Sequence[bytes]) -> None:
        """Nothing to keep: a lookup in the file costs no round trip."""

    def touched(self, job_id: bytes) -> None:
        """Nothing to remember: the edit's rows carry its revision number from the start (an edit
        may request tens of thousands of jobs)."""

    def _insert(self, sql: str, params: Params) -> bool:
        """Run an insert; False when a row it refers to is absent (a foreign key fails)."""
        try:
            cursor = self.conn.execute(sql, params)
        except sqlite3.IntegrityError as exc:
            if "FOREIGN KEY" in str(exc):
                return False
            raise translate(exc, self.path) from exc
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from exc
        return cursor.rowcount == 1

    def _insert_many(self, sql: str, params: list[tuple[Any, ...]]) -> bool:
        try:
            self.conn.executemany(sql, params)
        except sqlite3.IntegrityError as exc:
            if "FOREIGN KEY" in str(exc):
                return False
            raise translate(exc, self.path) from exc
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from exc
        return True

    def savepoint(self) -> tuple[str, int, int]:
        """Open a savepoint; returns the token to release or roll back to."""
        name = f"op{self._savepoints}"
        self._savepoints += 1
        self._exec(f"SAVEPOINT {name}")
        return name, self.positions, len(self.created.journal)

    def release_savepoint(self, token: object) -> None:
        name, _, _ = _savepoint(token)
        self._savepoints -= 1
        self._exec(f"RELEASE {name}")

    def rollback_savepoint(self, token: object) -> None:
        """Undo everything since the savepoint: rows, staged events and what the edit remembers."""
        self._savepoints -= 1
        name, self.positions, journal = _savepoint(token)
        del self.staged[self.positions :], self._subjects[self.positions :]
        self.created.undo(journal)
        self._exec(f"ROLLBACK TO {name}")
        self._exec(f"RELEASE {name}")

    @contextmanager
    def _atomic(self) -> Iterator[None]:
        """Several statements as one: all of them or none (an internal savepoint)."""
        token = self.savepoint()
        try:
            yield
        except BaseException:
            self.rollback_savepoint(token)
            raise
        self.release_savepoint(token)

    # --- setup and provenance ----------------------------------------------------------

    def media_root_path(self, name: str) -> tuple[str | None] | None:
        row = self.one("SELECT path FROM media_roots WHERE name = ?", (name,))
        return (row[0],) if row is not None else None

    def insert_media_root(self, root_id: bytes, name: str, path: str | None) -> None:
        self.later(
            "INSERT INTO media_roots (id, name, path, created_sequence) VALUES (?, ?, ?, ?)",
            (root_id, name, path, self.sequence),
        )
        self.remember("media_roots", name, (path, root_id))

    def insert_representation_row(self, values: dict[str, Any]) -> bool:
        if not self._insert(
            "INSERT INTO representations (id, asset_id, kind, path, root_name, size, mtime, created_at, "
            "created_sequence) VALUES (:id, :asset, :kind, :path, :root, :size, :mtime, :now, :seq)",
            values,
        ):
            return False
        self.later(
            "INSERT INTO representation_fingerprints (representation_id, algorithm, version, value, "
            "recorded_sequence) VALUES (:id, :algorithm, :version, :value, :seq)",
            values,
        )
        return True

    def missing(self, table: str, ids: Sequence[bytes]) -> list[bytes]:
        """Those of ``ids`` absent from ``table``."""
        assert table in ("assets", "representations", "activities", "jobs")
        absent: list[bytes] = []
        for chunk in iter_chunks(ids, CHUNK):
            found = {
                r[0]
                for r in self.all(f"SELECT id FROM {table} WHERE id IN ({','.join('?' * len(chunk))})", chunk)
            }
            absent.extend(i for i in chunk if i not in found)
        return absent

    def creates_cycle(self, inputs: Sequence[bytes], outputs: Sequence[bytes]) -> bool:
        """Would edges inputs -> outputs close a loop (an output already upstream of an input)?"""
        if not inputs:
            return False
        self.later("CREATE TEMP TABLE IF NOT EXISTS cycle_seed (id BLOB PRIMARY KEY) WITHOUT ROWID")
        self.later("DELETE FROM temp.cycle_seed")
        self._insert_many("INSERT OR IGNORE INTO temp.cycle_seed VALUES (?)", [(i,) for i in inputs])
        row = self.one(
            "WITH RECURSIVE upstream(id) AS (SELECT id FROM temp.cycle_seed UNION "
            "SELECT i.representation_id FROM upstream u "
            "JOIN activity_edges o ON o.representation_id = u.id AND o.direction = 1 "
            "JOIN activity_edges i ON i.activity_id = o.activity_id AND i.direction = 0) "
            f"SELECT 1 FROM upstream WHERE id IN ({','.join('?' * len(outputs))}) LIMIT 1",
            list(outputs),
        )
        return row is not None

    def outputs_consumed(self, outputs: Sequence[bytes]) -> bool:
        """Is any of these representations already an input somewhere (a cycle is then possible)?"""
        row = self.one(
            f"SELECT 1 FROM activity_edges WHERE representation_id IN ({','.join('?' * len(outputs))}) "
            "AND direction = 0 LIMIT 1",
            list(outputs),
        )
        return row is not None

    def insert_activity_row(self, values: dict[str, Any], edges: list[tuple[int, bytes, str]]) -> bool:
        """The activity, then its edges (the caller's savepoint undoes the activity row when an
        edge's representation is absent)."""
        self.later(
            "INSERT INTO activities (id, kind, tool_name, tool_version, tool_uri, agent_name, started_at, "
            "finished_at, created_sequence) VALUES (:id, :kind, :tool_name, :tool_version, :tool_uri, :agent, "
            ":started, :finished, :seq)",
            values,
        )
        return self._insert_many(
            "INSERT INTO activity_edges (activity_id, direction, representation_id, role) VALUES (?, ?, ?, ?)",
            [(values["id"], direction, rep, role) for direction, rep, role in edges],
        )

    # --- jobs and leases ----------------------------------------------------------------

    def insert_job_row(
        self, values: dict[str, Any], inputs: list[bytes], upstreams: list[tuple[bytes, int]]
    ) -> bool:
        if len(inputs) > CHUNK:
            if self.missing("representations", inputs):
                return False
            sql, params = claims.insert_job_sql(None), values
        else:  # the input check rides on the insert: one statement
            sql = claims.insert_job_sql(len(inputs))
            params = values  # a fresh dict of this request's columns: the inputs join it
            params.update({f"i{i}": rep for i, rep in enumerate(inputs)}, count=len(inputs))
        if not upstreams:
            return self._insert(sql, params)
        with self._atomic():
            if not self._insert(sql, params):
                return False
            self._insert_many(
                "INSERT INTO job_dependencies (job_id, upstream_id, binds_output) VALUES (?, ?, ?)",
                [(values["id"], upstream, binds) for upstream, binds in upstreams],
            )
        return True

    def lease_row(self, job_id: bytes) -> LeaseRow | None:
        """The stored claim of a job, or None when the job does not exist."""
        row = self.one(
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
            resolved = [r[0] for r in self.all(
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

    def claim_next_row(self, kinds: Sequence[str] | None, params: dict[str, Any]) -> Any:
        """One guarded statement over pinned index probes (:mod:`.claims`)."""
        if kinds is None:
            return self.one(claims.CLAIM_ANY, params)
        return self.one(
            claims.claim_of_kinds(len(kinds)), params | {f"k{i}": kind for i, kind in enumerate(kinds)}
        )

    def renew(self, job_id: bytes, secret: bytes, now: int, expires: int) -> bool:
        return (
            self.rowcount(
                f"UPDATE jobs SET claim_expires_at = :expires, updated_sequence = :seq WHERE id = :id AND {HELD} "
                "AND :expires > claim_expires_at",
                {"id": job_id, "secret": secret, "now": now, "expires": expires, "seq": self.sequence},
            )
            == 1
        )

    def end_claim(self, change: EndClaim) -> bool:
        """The job's guarded update, then its attempt's end (and a success's dependents), in a savepoint."""
        job_id = change.job_id
        with self._atomic():
            count = self.rowcount(
                f"UPDATE jobs SET {change.set_job}, {CLEAR_CLAIM}, updated_sequence = :seq "
                f"WHERE id = :id AND {change.where}",
                change.params | {"id": job_id, "seq": self.sequence},
            )
            if count != 1:
                return False
            self.later(
                claims.END_ATTEMPT,
                {
                    "id": job_id,
                    "now": change.params["now"],
                    "outcome": change.outcome.code,
                    "diagnostic": change.diagnostic,
                    "stopped": change.by_holder,
                },
            )
            if change.succeeds:
                self.later(claims.RELEASE_DEPENDENTS, {"id": job_id})
        self.touched(job_id)
        return True

    def stop_claim(self, change: StopClaim) -> bool:
        """The attempt's end (it reads the claim), then the job's guarded update, in a savepoint."""
        try:
            with self._atomic():
                self.later(
                    claims.STOP_ATTEMPT,
                    {"id": change.job_id, "now": change.now, "outcome": change.outcome.code},
                )
                count = self.rowcount(
                    f"UPDATE jobs SET {change.set_job}, {CLEAR_CLAIM}, updated_sequence = :seq "
                    f"WHERE id = :id AND {change.where}",
                    {"id": change.job_id, "seq": self.sequence, "now": change.now},
                )
                if count != 1:
                    raise _Unchanged
        except _Unchanged:
            return False
        self.touched(change.job_id)
        return True

    def link_retry(self, original: bytes, retry: bytes) -> None:
        with self._atomic():
            self.later("UPDATE jobs SET retried_as = ? WHERE id = ?", (retry, original))
            self.later("UPDATE jobs SET retry_of = ? WHERE id = ?", (original, retry))

    def end_missed_stops(self, now: int, limit: int) -> list[tuple[bytes, int]]:
        """End as lost up to ``limit`` attempts whose holder did not confirm its stop before
        ``stop_by`` (soonest deadline first); (job id, attempt number) of each."""
        lost = AttemptOutcome.LOST.code
        return [
            (bytes(job), int(number))
            for job, number in self.all(
                f"UPDATE job_attempts SET outcome = {lost} WHERE (job_id, number) IN (SELECT job_id, number "
                "FROM job_attempts INDEXED BY job_attempts_stopping WHERE stop_by IS NOT NULL AND stopped_at IS NULL "
                f"AND outcome <> {lost} AND stop_by <= :now ORDER BY stop_by LIMIT :limit) RETURNING job_id, number",
                {"now": now, "limit": limit},
            )
        ]

    # --- the clock ------------------------------------------------------------------------

    def reset_clock(self, now: int) -> tuple[int | None, list[bytes]]:
        """Lower the durable high-water mark to ``now`` and requeue every claim granted after it
        (under a clock that ran ahead); (the old mark, the requeued job ids)."""
        old = self.stored_high_water
        self._clock_written = True
        with self._atomic():
            self.later("UPDATE job_clock SET high_water = ?", (now,))
            future = [
                r[0]
                for r in self.all(
                    f"SELECT id FROM jobs WHERE state = {CLAIMED} AND claimed_at > ? ORDER BY id", (now,)
                )
            ]
            for job in future:
                self.requeue(job, now)
        self.stored_high_water = now
        return old, future

    # --- commit ------------------------------------------------------------------------

    def commit(
        self,
        committed_at: int,
        revision_id: bytes,
        origin: str | None,
        message: str | None,
        high_water: int | None,
        principal: str | None = None,
    ) -> bool:
        """Publish the edit; False (and a rollback) when nothing was staged."""
        if self.positions == 0:
            if self.state_written:  # stored state only (heartbeats): no revision
                with translated(self.path):
                    self.conn.execute("COMMIT")
                if self._clock_written:
                    self._head.version = None
                return False
            self.rollback(high_water)
            return False
        seq = self.sequence
        with translated(self.path):
            for activities in iter_chunks(list(self.written["activities"]), 500):
                self._capture_snapshots(activities)
            # (after reset_clock, stored_high_water is the reset time: the mark goes down)
            marks = [m for m in (self.stored_high_water, high_water) if m is not None]
            clock_mark = max(marks, default=None)
            self.conn.execute(
                "INSERT INTO revisions (sequence, id, committed_at, origin, message, clock_mark, principal) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (seq, revision_id, committed_at, origin, message, clock_mark, principal),
            )
            rows_ = [
                value
                for e, subject in zip(self.staged, self._subjects, strict=True)
                for value in (seq, e.position, e.kind, subject, _encode_json(e.payload))
            ]
            for start in range(0, len(rows_), EVENTS_PER_INSERT * 5):  # one statement per batch of events
                part = rows_[start : start + EVENTS_PER_INSERT * 5]
                self.conn.execute(
                    "INSERT INTO revision_events (sequence, position, kind, subject, payload) VALUES "
                    + ",".join(["(?, ?, ?, ?, ?)"] * (len(part) // 5)),
                    part,
                )
            self.conn.execute("COMMIT")
        # The next edit on this connection starts from here unless another connection commits
        # first (PRAGMA data_version moves only for other connections' commits). The mark is
        # the durable high-water: job_clock.high_water never exceeds it after this commit.
        head = self._head
        head.version, head.sequence, head.high_water = self._version, seq, clock_mark
        if self._on_commit is not None:
            self._on_commit()
        return True

    def _capture_snapshots(self, activity_ids: Sequence[bytes]) -> None:
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
        self._head.version = None  # job_clock changes: read the head again next time
        if high_water is not None:
            self.conn.execute(
                "UPDATE job_clock SET high_water = ? WHERE high_water IS NULL OR high_water < ?",
                (high_water, high_water),
            )


def _savepoint(token: object) -> tuple[str, int, int]:
    """(savepoint name, staged event count, journal length) from a :meth:`WriteSession.savepoint` token."""
    assert isinstance(token, tuple), "a savepoint token from this session"
    name, positions, journal = token
    return str(name), int(positions), int(journal)
