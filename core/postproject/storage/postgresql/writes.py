"""One edit: a ``READ COMMITTED`` transaction on the engine's write connection, numbered at commit.

Edits of several processes run at once (there is no write lock). While open, an edit writes
its rows with a provisional sequence (:data:`PROVISIONAL`, larger than any revision number:
``sequence`` compares equal only to rows of this edit, and a claim made in an earlier revision
is always smaller) and remembers what it wrote. ``commit`` sends ``pp_publish`` and ``COMMIT``
in one round trip: under a transaction-scoped advisory lock the edit takes the next number,
its rows get it, its activities' edge snapshots are captured, the revision and its events are
written and listeners are notified (see ``migrations/0007_baseline.sql``). Job counts are
deferred constraint triggers, applied at that commit under the same lock.

Round trips: statements whose result the caller does not need (an asset, metadata, a
representation or activity whose references are known to exist, a lease transition after the
job's row was read and locked by ``lease_row``) are queued and sent in one pipeline with the
next statement that needs an answer, each with the row count it must have (``pp_expect``);
answers this edit already knows (facts of what it created) come from memory. A claim is two
round trips (the claim, the commit), also by a registered worker (its row's check rides on the
claim: :mod:`.claims`), a completion two or three.

An edit that adds provenance edges from representations that existed before it repeats the
cycle check at commit, under the numbering lock (:data:`NO_CYCLE`): two concurrent edits each
adding one edge of a cycle both pass the check made while they were open.

A statement that fails aborts the PostgreSQL transaction: unless a savepoint taken before it
is rolled back, every later call of the edit raises that error, and ``rollback`` ends it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import psycopg

from postproject.engine import ActivityFacts, OutputFacts, WorkerFacts
from postproject.model import clock, paths
from postproject.model.activities import ActivitySpec
from postproject.model.assets import Fingerprint
from postproject.model.errors import AlreadyExistsError
from postproject.model.jobs import Job
from postproject.storage.postgresql import rows
from postproject.storage.postgresql.errors import translate
from postproject.storage.postgresql.job_writes import JobWrites
from postproject.storage.postgresql.pipeline import DURABLE_MARK, PROVISIONAL
from postproject.storage.postgresql.progress_writes import ProgressWrites
from postproject.storage.postgresql.service import PRINCIPAL, ServiceWriter
from postproject.storage.postgresql.types import Id, ids, optional

Params = Sequence[Any] | dict[str, Any]


class WriteSession(JobWrites, ProgressWrites):
    """The statements of one edit (see the module docstring)."""

    @property
    def service(self) -> ServiceWriter:
        return ServiceWriter(self)

    # --- setup and files -----------------------------------------------------------------

    def insert_asset(self, asset_id: bytes, name: str | None, now: int) -> None:
        self.queue(
            "INSERT INTO assets (id, name, created_at, created_sequence) VALUES (%s, %s, %s, %s)",
            (Id(asset_id), name, now, PROVISIONAL),
        )
        self.remember("assets", asset_id)

    def media_root_path(self, name: str) -> tuple[str | None] | None:
        if name in self.written["media_roots"]:
            return (self.written["media_roots"][name][0],)
        row = self.one("SELECT path FROM media_roots WHERE name = %s", (name,))
        if row is not None:
            self.host.known.add("media_roots", [name])
        return (row[0],) if row is not None else None

    def insert_media_root(self, root_id: bytes, name: str, path: str | None) -> None:
        row = self.one(
            "INSERT INTO media_roots (id, name, path, created_sequence) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT (name) DO NOTHING RETURNING id",
            (Id(root_id), name, path, PROVISIONAL),
        )
        if row is None:  # another edit added it and committed first
            raise AlreadyExistsError(f"media root {name!r} already exists")
        self.remember("media_roots", name, (path, root_id))

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
        sql = (
            "WITH r AS (INSERT INTO representations (id, asset_id, kind, path, root_name, size, mtime, "
            "created_at, created_sequence) SELECT %(id)s, %(asset)s, %(kind)s, %(path)s, %(root)s, %(size)s, "
            "%(mtime)s, %(now)s, %(seq)s WHERE EXISTS (SELECT 1 FROM assets WHERE id = %(asset)s) AND "
            "(%(root)s::text IS NULL OR EXISTS (SELECT 1 FROM media_roots WHERE name = %(root)s)) RETURNING id), "
            "w AS (INSERT INTO representation_fingerprints (representation_id, algorithm, version, value, "
            "recorded_sequence) SELECT id, %(algorithm)s, %(version)s, %(value)s, %(seq)s FROM r RETURNING 1)"
        )
        params = {
            "id": Id(rep_id),
            "asset": Id(asset_id),
            "kind": kind,
            "path": path,
            "root": root,
            "size": size,
            "mtime": mtime,
            "now": now,
            "seq": PROVISIONAL,
            "algorithm": fingerprint.algorithm,
            "version": fingerprint.version,
            "value": fingerprint.value,
        }
        if self.exists("assets", asset_id) and (root is None or self.exists("media_roots", root)):
            self.queue_expecting(
                sql, params, 1, "PPN01", f"the asset or media root of {path!r} does not exist"
            )
        elif self.one(sql + " SELECT count(*) FROM w", params)[0] != 1:
            return False
        self.remember("representations", rep_id, (OutputFacts(asset_id, kind, PROVISIONAL), path, root))
        self.remember("fingerprints", rep_id)
        return True

    def location(self, rep_id: bytes) -> tuple[str, str | None] | None:
        """(stored path, root name) of a representation as this edit sees it, or None."""
        created = self.written["representations"].get(rep_id)
        if created is not None:
            return paths.decode_path(created[1]), created[2]
        row = self.one("SELECT path, root_name FROM representations WHERE id = %s", (Id(rep_id),))
        return (paths.decode_path(row[0]), row[1]) if row is not None else None

    def update_file_facts(self, rep_id: bytes, size: int, mtime: int) -> None:
        self.queue(
            "UPDATE representations SET size = %s, mtime = %s WHERE id = %s", (size, mtime, Id(rep_id))
        )

    def set_fingerprint(self, rep_id: bytes, fingerprint: Fingerprint) -> bool:
        """Record a fingerprint; False when the same value is already current."""
        row = self.one(
            "INSERT INTO representation_fingerprints AS f (representation_id, algorithm, version, value, "
            "recorded_sequence) VALUES (%s, %s, %s, %s, %s) ON CONFLICT (representation_id, algorithm, version) "
            "DO UPDATE SET value = excluded.value, recorded_sequence = excluded.recorded_sequence "
            "WHERE f.value IS DISTINCT FROM excluded.value RETURNING 1",
            (Id(rep_id), fingerprint.algorithm, fingerprint.version, fingerprint.value, PROVISIONAL),
        )
        if row is None:
            return False
        self.remember("fingerprints", rep_id)
        self.forget_leases()  # a prefetched "inputs changed" answer may be stale now
        return True

    def missing(self, table: str, wanted: Sequence[bytes]) -> list[bytes]:
        """Those of ``wanted`` absent from ``table``."""
        assert table in ("assets", "representations", "activities", "jobs")
        unknown = [i for i in wanted if not self.exists(table, i)]
        if not unknown:
            return []
        found: set[bytes] = set()
        for start in range(0, len(unknown), 500):
            part = unknown[start : start + 500]
            found.update(r[0] for r in self.all(f"SELECT id FROM {table} WHERE id = ANY(%s)", (ids(part),)))
        self.learn(table, found)
        return [i for i in unknown if i not in found]

    # --- provenance and metadata -----------------------------------------------------------

    def creates_cycle(self, inputs: Sequence[bytes], outputs: Sequence[bytes]) -> bool:
        """Would edges inputs -> outputs close a loop (an output already upstream of an input)?"""
        if not inputs:
            return False
        row = self.one(
            "WITH RECURSIVE upstream(id) AS (SELECT unnest(%s::uuid[]) UNION "
            "SELECT i.representation_id FROM upstream u "
            "JOIN activity_edges o ON o.representation_id = u.id AND o.direction = 1 "
            "JOIN activity_edges i ON i.activity_id = o.activity_id AND i.direction = 0) "
            "SELECT 1 FROM upstream WHERE id = ANY(%s::uuid[]) LIMIT 1",
            (ids(inputs), ids(outputs)),
        )
        return row is not None

    def outputs_consumed(self, outputs: Sequence[bytes]) -> bool:
        """Is any of these representations already an input somewhere (a cycle is then possible)?"""
        if all(self.created("representations", o) for o in outputs):
            return any(o in self.consumed for o in outputs)  # nothing committed can refer to them
        row = self.one(
            "SELECT 1 FROM activity_edges WHERE representation_id = ANY(%s) AND direction = 0 LIMIT 1",
            (ids(outputs),),
        )
        return row is not None

    def insert_activity(
        self, activity_id: bytes, spec: ActivitySpec, started: int | None, finished: int | None
    ) -> bool:
        """Insert an activity with its edges; False (and nothing written) when an edge's
        representation is absent."""
        tool, agent = spec.tool, spec.agent
        edges = [
            (direction, edge.representation_id.bytes, edge.role or "")
            for direction, side in ((0, spec.input_edges), (1, spec.output_edges))
            for edge in side
        ]
        reps = list(dict.fromkeys(rep for _, rep, _ in edges))
        sql = (
            "WITH a AS (INSERT INTO activities (id, kind, tool_name, tool_version, tool_uri, agent_name, "
            "started_at, finished_at, created_sequence) SELECT %(id)s, %(kind)s, %(tool_name)s, %(tool_version)s, "
            "%(tool_uri)s, %(agent)s, %(started)s, %(finished)s, %(seq)s "
            "WHERE (SELECT count(*) FROM representations WHERE id = ANY(%(reps)s::uuid[])) = %(count)s RETURNING id), "
            "e AS (INSERT INTO activity_edges (activity_id, direction, representation_id, role) "
            "SELECT a.id, d, r, role FROM a, unnest(%(directions)s::smallint[], %(edges)s::uuid[], "
            "%(roles)s::text[]) AS x (d, r, role)), w AS (SELECT id FROM a)"
        )
        params = {
            "id": Id(activity_id),
            "kind": spec.kind,
            "tool_name": tool.name if tool else None,
            "tool_version": tool.version if tool else None,
            "tool_uri": tool.uri if tool else None,
            "agent": agent.name if agent else None,
            "started": started,
            "finished": finished,
            "seq": PROVISIONAL,
            "reps": ids(reps),
            "count": len(reps),
            "directions": [d for d, _, _ in edges],
            "edges": ids(r for _, r, _ in edges),
            "roles": [role for _, _, role in edges],
        }
        if all(self.exists("representations", rep) for rep in reps):
            self.queue_expecting(sql, params, 1, "PPN01", "a representation of the activity does not exist")
        elif self.one(sql + " SELECT count(*) FROM w", params)[0] != 1:
            return False
        sides: tuple[list[bytes], list[bytes]] = ([], [])
        for direction, rep, _ in sorted(edges, key=lambda e: (e[0], e[1])):
            sides[direction].append(rep)
        self.remember("activities", activity_id, ActivityFacts(PROVISIONAL, sides[0], sides[1]))
        for rep in sides[0]:
            self.remember("consumed", rep)
        return True

    def insert_metadata(
        self, target_kind: int, target_id: bytes, vocabulary: str, name: str, value: str
    ) -> None:
        self.queue(
            "INSERT INTO metadata (target_kind, target_id, vocabulary, property, value, created_sequence) "
            "VALUES (%s, %s, %s, %s, %s, %s)",
            (target_kind, Id(target_id), vocabulary, name, value, PROVISIONAL),
        )
        self.remember("metadata", (target_kind, target_id))

    def activity_facts(self, activity_id: bytes) -> ActivityFacts | None:
        """The creating revision and sorted edge ids of an activity as this edit sees it."""
        facts = self.written["activities"].get(activity_id)
        if facts is not None:
            return facts  # type: ignore[no-any-return]
        found = self.all(
            "SELECT a.created_sequence, e.direction, e.representation_id FROM activities a "
            "LEFT JOIN activity_edges e ON e.activity_id = a.id WHERE a.id = %s "
            "ORDER BY e.direction, e.representation_id",
            (Id(activity_id),),
        )
        if not found:
            return None
        sides: tuple[list[bytes], list[bytes]] = ([], [])
        for _, direction, rep in found:
            if rep is not None:
                sides[direction].append(rep)
        return ActivityFacts(found[0][0], sides[0], sides[1])

    def output_facts(self, rep_id: bytes) -> OutputFacts | None:
        created = self.written["representations"].get(rep_id)
        if created is not None:
            return created[0]  # type: ignore[no-any-return]
        row = self.one(
            "SELECT asset_id, kind, created_sequence FROM representations WHERE id = %s", (Id(rep_id),)
        )
        return OutputFacts(*row) if row is not None else None

    # --- reads inside the edit ------------------------------------------------------------

    def job(self, job_id: bytes) -> Job | None:
        """A job as this edit sees it (with its dependencies, without its attempts)."""
        row = self.one(f"SELECT {rows.JOB_COLUMNS} FROM jobs j WHERE j.id = %s", (Id(job_id),))
        if row is None:
            return None
        return rows.job(row, (), self.dependency_rows(job_id) if row[rows.DEPENDENCY_COUNT] else ())

    def metadata(self, target_kind: int, target_id: bytes) -> list[tuple[str, str, str]]:
        return [
            (v, p, value)
            for v, p, value in self.all(
                "SELECT vocabulary, property, value FROM metadata WHERE target_kind = %s AND target_id = %s "
                "ORDER BY id",
                (target_kind, Id(target_id)),
            )
        ]

    # --- the clock ------------------------------------------------------------------------

    def reset_clock(self, now: int) -> tuple[int | None, list[bytes]]:
        """Lower the durable high-water mark to ``now`` and requeue every claim granted after it
        (under a clock that ran ahead); (the old mark, the requeued job ids)."""
        old = self.one(DURABLE_MARK)[0]
        self.queue("UPDATE job_clock SET high_water = %s", (now,))
        future = [
            r[0]
            for r in self.all("SELECT id FROM jobs WHERE state = 2 AND claimed_at > %s ORDER BY id", (now,))
        ]
        for job in future:
            self.requeue(job, now)
        self.reset_mark = now
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
        row = self.one(
            "INSERT INTO workers (id, name, host, capacity, kinds, session, registered_at, last_seen) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (name) DO UPDATE SET host = excluded.host, "
            "capacity = excluded.capacity, kinds = excluded.kinds, session = excluded.session, "
            "registered_at = excluded.registered_at, last_seen = excluded.last_seen RETURNING id",
            (
                Id(worker_id),
                name,
                host,
                capacity,
                json.dumps(list(kinds)) if kinds is not None else None,
                Id(session),
                now,
                now,
            ),
        )
        self.state_written = True
        return bytes(row[0])

    def heartbeat(self, worker_id: bytes, session: bytes, now: int) -> bool:
        """Record a heartbeat of the current session (last_seen never moves back); False when fenced."""
        count = self.rowcount(
            "UPDATE workers SET last_seen = greatest(last_seen, %s) WHERE id = %s AND session = %s",
            (now, Id(worker_id), Id(session)),
        )
        self.state_written = True
        return count == 1

    def worker_facts(self, worker_id: bytes, now: int) -> WorkerFacts | None:
        """What a claim by this worker checks. The worker's row stays locked until the edit ends,
        so two claims by one worker (say from two threads) count each other's claims."""
        self.queue("SELECT 1 FROM workers WHERE id = %s FOR NO KEY UPDATE", (Id(worker_id),))
        row = self.one(
            "SELECT session, last_seen, capacity, kinds, (SELECT count(*) FROM jobs "
            "WHERE claim_worker_id = w.id AND claim_expires_at > %s) FROM workers w WHERE id = %s",
            (now, Id(worker_id)),
        )
        if row is None:
            return None
        session, last_seen, capacity, kinds, active = row
        return WorkerFacts(session, last_seen, capacity, tuple(json.loads(kinds)) if kinds else None, active)

    # --- ending ------------------------------------------------------------------------

    def commit(
        self,
        committed_at: int,
        revision_id: bytes,
        origin: str | None,
        message: str | None,
        high_water: int | None,
        principal: str | None = None,
    ) -> bool:
        """Publish the edit (numbered now, see the module docstring); False when nothing was staged."""
        if self.positions == 0:
            if self.state_written:  # stored state only (heartbeats): no revision
                self.send("COMMIT")
                self._begun = False
                return False
            self.rollback(high_water)
            return False
        written = self.written
        metadata = list(written["metadata"])
        if self._may_close_cycle():
            self.queue(
                NUMBERING_LOCK, keep=True
            )  # taken before pp_publish: the check sees every edit published
            self.queue(NO_CYCLE, {"activities": _array(written["activities"]), "message": CYCLE})
        if principal is not None:  # the revision's principal column reads it (migration 0008)
            self.queue(PRINCIPAL, (principal,))
        started = clock.monotonic()
        cursor = self.send(
            # the events' kinds and payloads go as binary text[] (no quoting and escaping of each JSON text)
            "SELECT * FROM pp_publish(%s, %s, %s, %s, %s, %s, %s, %b, %s, %b, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (
                PROVISIONAL,
                Id(revision_id),
                committed_at,
                origin,
                message,
                high_water,
                [e.position for e in self.staged],
                [e.kind for e in self.staged],
                [optional(s) for s in self._subjects],
                [json.dumps(e.payload, separators=(",", ":")) for e in self.staged],
                _array(written["assets"]),
                _array(root_id for _, root_id in written["media_roots"].values()),
                _array(written["representations"]),
                _array(written["fingerprints"]),
                _array(written["activities"]),
                [kind for kind, _ in metadata] or None,
                _array(target for _, target in metadata),
                _array(written["jobs"]),
                self.reset_mark is not None,
            ),
            then="COMMIT",
        )
        elapsed = clock.monotonic() - started
        assert cursor is not None
        self._begun = False
        published = cursor.fetchone()
        assert published is not None
        self.sequence, mark, server_now = published
        for table in ("assets", "representations", "activities", "jobs"):
            self.host.known.add(table, written[table])
        self.host.known.add("media_roots", written["media_roots"])
        self.host.committed(self.sequence, mark, server_now, elapsed, reset=self.reset_mark is not None)
        if self.kept:  # the lock was taken before pp_publish, by NUMBERING_LOCK
            locked = self.kept[0].fetchone()
            assert locked is not None
            self.host.last_locked_at = locked[0]
        return True

    def _may_close_cycle(self) -> bool:
        """Could an edit committed meanwhile have closed a cycle through this edit's activities?
        Only when an output of one of them existed before the edit (a representation the edit
        created is invisible to other edits: nothing they commit can consume it)."""
        return any(
            not self.created("representations", output)
            for facts in self.written["activities"].values()
            for output in facts.outputs
        )

    def rollback(self, high_water: int | None) -> None:
        """Undo the edit but keep the highest clock sample it observed (notes §2.2)."""
        statements: list[tuple[str, Params | None]] = [("ROLLBACK", None)] if self._begun else []
        known = self.host.high_water
        raise_mark = high_water is not None and (known is None or high_water > known)
        if raise_mark:
            statements.append(
                (
                    "UPDATE job_clock SET high_water = %s WHERE high_water IS NULL OR high_water < %s",
                    (high_water, high_water),
                )
            )
        self._queue, self._keep, self._failed, self._begun = [], set(), None, False
        self._unsent.clear()
        if not statements:
            return
        try:
            with self.conn.pipeline():
                for statement, values in statements:
                    self.conn.execute(statement, values)
        except psycopg.Error as exc:
            raise translate(exc, self.uri) from exc
        if raise_mark:
            self.host.committed(None, high_water, None, 0.0)


# The revision-numbering lock (pp_publish takes it again: a transaction's advisory locks nest).
NUMBERING_LOCK = (
    "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint "
    "FROM (SELECT pg_advisory_xact_lock(1347441202, hashtext(current_schema()))) AS locked"
)
CYCLE = "the activity would create a provenance cycle (an output is upstream of an input)"
# Concurrent edits may each add one edge of a cycle; each passed ``creates_cycle`` before the
# other committed. Under the numbering lock an edit sees every edit published before it, so
# this check at commit finds the cycle the second one would close (PPC01 aborts the edit).
# Sent only when an output of the edit's activities existed before it (see _may_close_cycle;
# never for a completion, whose output is new); it walks only when such an output is an input.
NO_CYCLE = (
    "WITH RECURSIVE mine AS (SELECT unnest(%(activities)s::uuid[]) AS activity_id), "
    "outs AS (SELECT e.activity_id, e.representation_id FROM activity_edges e JOIN mine USING (activity_id) "
    "WHERE e.direction = 1), "
    "consumed AS (SELECT 1 FROM outs o JOIN activity_edges i ON i.representation_id = o.representation_id "
    "AND i.direction = 0 LIMIT 1), "
    "up (activity_id, id) AS (SELECT e.activity_id, e.representation_id FROM activity_edges e "
    "JOIN mine USING (activity_id) WHERE e.direction = 0 AND EXISTS (SELECT 1 FROM consumed) "
    "UNION SELECT u.activity_id, i.representation_id FROM up u "
    "JOIN activity_edges o ON o.representation_id = u.id AND o.direction = 1 "
    "JOIN activity_edges i ON i.activity_id = o.activity_id AND i.direction = 0) "
    "SELECT pp_expect((SELECT count(*) FROM up JOIN outs ON outs.activity_id = up.activity_id "
    "AND outs.representation_id = up.id), 0, 'PPC01', %(message)s)"
)


def _array(values: Iterable[bytes]) -> list[Id] | None:
    found = ids(values)
    return found or None
