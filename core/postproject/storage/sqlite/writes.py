"""Write statements, run inside one ``BEGIN IMMEDIATE`` transaction per edit.

The revision sequence is allocated when the write lock is taken: nobody else can commit
while we hold it, and a rollback writes nothing, so numbers stay gap-free. Rows written by
the edit carry that sequence; events are staged in memory (a failed operation drops its
own) and written with the revision row at commit. Job and lease statements live in
:mod:`.job_writes`, progress, stop confirmations and attempt logs in :mod:`.progress_writes`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from postproject.engine import OutputFacts, WorkerFacts
from postproject.model import paths
from postproject.model.activities import ActivitySpec
from postproject.model.assets import Fingerprint
from postproject.model.jobs import Job
from postproject.model.revisions import RevisionEvent
from postproject.storage import rows
from postproject.storage.sqlite import connection
from postproject.storage.sqlite.errors import translate, translated
from postproject.storage.sqlite.job_writes import JobWrites
from postproject.storage.sqlite.progress_writes import ProgressWrites
from postproject.storage.sqlite.service import ServiceWriter

CHUNK = 500  # ids per IN (...) list
EVENTS_PER_INSERT = 1000  # rows of one multi-row INSERT (5 parameters each, below SQLite's 32766)
# json.dumps with separators builds a new encoder per call; one shared encoder gives the same text
_encode_json = json.JSONEncoder(separators=(",", ":")).encode


# The newest revision's sequence and clock mark, the stored high-water mark and the data version
_READ_HEAD = (
    "SELECT (SELECT data_version FROM pragma_data_version()), r.sequence, r.clock_mark, c.high_water "
    "FROM job_clock c LEFT JOIN (SELECT sequence, clock_mark FROM revisions ORDER BY sequence DESC LIMIT 1) r"
)


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


class WriteSession(JobWrites, ProgressWrites):
    """The statements of one edit over the production's write connection."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        path: Path,
        *,
        busy_timeout: float,
        on_commit: Callable[[], None] | None = None,
        head: Head | None = None,
    ) -> None:
        self.conn = conn
        self._head = head if head is not None else Head()
        self._version: int | None = None
        self._on_commit = on_commit
        self.path = path
        self.busy_timeout = busy_timeout
        self.sequence = 0
        self.stored_high_water: int | None = None
        self.positions = 0
        self.staged: list[RevisionEvent] = []  # what the receipt reports, in staging order
        self._savepoints = 0
        self.state_written = False  # stored state that is not a revision (heartbeats, registrations)
        self._subjects: list[bytes | None] = []  # each staged event's subject
        self.created_activities: list[bytes] = []
        self._clock_written = False  # job_clock written (a reset): the cached head is stale
        # What this edit created, as a completion checks it (forgotten when an operation fails)
        self.created_outputs: dict[bytes, OutputFacts] = {}
        self.created_edges: dict[bytes, tuple[list[bytes], list[bytes]]] = {}

    @property
    def service(self) -> ServiceWriter:
        return ServiceWriter(self)

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

    def mark(self) -> int:
        """Where the staged events end now (an operation that writes at most once needs no savepoint)."""
        return self.positions

    def rewind(self, mark: object) -> None:
        """Drop the events staged after ``mark`` (the failed operation wrote no row)."""
        assert isinstance(mark, int)
        self.positions = mark
        del self.staged[mark:], self._subjects[mark:]
        self._forget_created()

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
        del self.staged[self.positions :], self._subjects[self.positions :]
        self._forget_created()
        self._exec(f"ROLLBACK TO {name}")
        self._exec(f"RELEASE {name}")

    def _forget_created(self) -> None:
        """A failed operation may have undone rows: read them from the database again."""
        self.created_outputs.clear()
        self.created_edges.clear()

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
        """Stage an event; staged events are written with the revision at commit."""
        self.staged.append(RevisionEvent(self.positions, kind, payload))
        self._subjects.append(subject)
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
        fingerprint: Fingerprint,
    ) -> bool:
        """Insert a representation and its first fingerprint; False when its asset or root is absent."""
        try:
            self.conn.execute(
                "INSERT INTO representations (id, asset_id, kind, path, root_name, size, mtime, created_at, "
                "created_sequence) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (rep_id, asset_id, kind, path, root, size, mtime, now, self.sequence),
            )
        except sqlite3.IntegrityError as exc:
            if "FOREIGN KEY" in str(exc):
                return False
            raise translate(exc, self.path) from exc
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from exc
        self._exec(
            "INSERT INTO representation_fingerprints (representation_id, algorithm, version, value, "
            "recorded_sequence) VALUES (?, ?, ?, ?, ?)",
            (rep_id, fingerprint.algorithm, fingerprint.version, fingerprint.value, self.sequence),
        )
        self.created_outputs[rep_id] = OutputFacts(asset_id, kind, self.sequence)
        return True

    def location(self, rep_id: bytes) -> tuple[str, str | None] | None:
        """(stored path, root name) of a representation as this edit sees it, or None."""
        row = self._one("SELECT path, root_name FROM representations WHERE id = ?", (rep_id,))
        return (paths.decode_path(row[0]), row[1]) if row is not None else None

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
        for chunk_start in range(0, len(ids), CHUNK):
            chunk = ids[chunk_start : chunk_start + CHUNK]
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
    ) -> bool:
        """Insert an activity with its edges; False when an edge's representation is absent
        (the caller's savepoint then undoes the activity row)."""
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
        try:
            self.conn.executemany(
                "INSERT INTO activity_edges (activity_id, direction, representation_id, role) VALUES (?, ?, ?, ?)",
                edge_rows,
            )
        except sqlite3.IntegrityError as exc:
            if "FOREIGN KEY" in str(exc):
                return False
            raise translate(exc, self.path) from exc
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from exc
        self.created_edges[activity_id] = (
            sorted(edge.representation_id.bytes for edge in spec.input_edges),
            sorted(edge.representation_id.bytes for edge in spec.output_edges),
        )
        return True

    def insert_metadata(
        self, target_kind: int, target_id: bytes, vocabulary: str, name: str, value: str
    ) -> None:
        self._exec(
            "INSERT INTO metadata (target_kind, target_id, vocabulary, property, value, created_sequence) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (target_kind, target_id, vocabulary, name, value, self.sequence),
        )

    # --- reads inside the edit ------------------------------------------------------------

    def job(self, job_id: bytes) -> Job | None:
        """A job as this edit sees it (with its dependencies, without its attempts)."""
        row = self._one(f"SELECT {rows.JOB_COLUMNS} FROM jobs j WHERE j.id = ?", (job_id,))
        if row is None:
            return None
        return rows.job(row, (), self.dependency_rows(job_id) if row[rows.DEPENDENCY_COUNT] else ())

    def metadata(self, target_kind: int, target_id: bytes) -> list[tuple[str, str, str]]:
        """(vocabulary, property, value JSON) of an object, in order."""
        return self._all(
            "SELECT vocabulary, property, value FROM metadata WHERE target_kind = ? AND target_id = ? ORDER BY id",
            (target_kind, target_id),
        )

    # --- the clock ------------------------------------------------------------------------

    def reset_clock(self, now: int) -> tuple[int | None, list[bytes]]:
        """Lower the durable high-water mark to ``now`` and requeue every claim granted after it
        (under a clock that ran ahead); (the old mark, the requeued job ids)."""
        old = self.stored_high_water
        self._clock_written = True
        with self._atomic():
            self._exec("UPDATE job_clock SET high_water = ?", (now,))
            future = [
                r[0]
                for r in self._all(
                    "SELECT id FROM jobs WHERE state = 2 AND claimed_at > ? ORDER BY id", (now,)
                )
            ]
            for job in future:
                self.requeue(job, now)
        self.stored_high_water = now
        return old, future

    # --- workers (stored state: heartbeats are not revisions) -------------------------------

    def register_worker(
        self,
        worker_id: bytes,
        name: str,
        session: bytes,
        capacity: int,
        kinds: Sequence[str] | None,
        host: str | None,
        now: int,
    ) -> bytes:
        """Create the worker named ``name`` or replace its session; its (stable) id."""
        row = self._one(
            "INSERT INTO workers (id, name, host, capacity, kinds, session, registered_at, last_seen) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET host = excluded.host, "
            "capacity = excluded.capacity, kinds = excluded.kinds, session = excluded.session, "
            "registered_at = excluded.registered_at, last_seen = excluded.last_seen RETURNING id",
            (
                worker_id,
                name,
                host,
                capacity,
                json.dumps(list(kinds)) if kinds is not None else None,
                session,
                now,
                now,
            ),
        )
        self.state_written = True
        return bytes(row[0])

    def heartbeat(self, worker_id: bytes, session: bytes, now: int) -> bool:
        """Record a heartbeat of the current session (last_seen never moves back); False when fenced."""
        cursor = self._exec(
            "UPDATE workers SET last_seen = max(last_seen, ?) WHERE id = ? AND session = ?",
            (now, worker_id, session),
        )
        self.state_written = True
        return cursor.rowcount == 1

    def worker_facts(self, worker_id: bytes, now: int) -> WorkerFacts | None:
        """What a claim by this worker checks: its session, liveness, capacity and load."""
        row = self._one(
            "SELECT session, last_seen, capacity, kinds, (SELECT count(*) FROM jobs INDEXED BY jobs_by_worker "
            "WHERE claim_worker_id = w.id AND claim_expires_at > ?) FROM workers w WHERE id = ?",
            (now, worker_id),
        )
        if row is None:
            return None
        session, last_seen, capacity, kinds, active = row
        return WorkerFacts(session, last_seen, capacity, tuple(json.loads(kinds)) if kinds else None, active)

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
            for start in range(0, len(self.created_activities), 500):
                self._capture_snapshots(self.created_activities[start : start + 500])
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
        self._head.version = None  # job_clock changes: read the head again next time
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
