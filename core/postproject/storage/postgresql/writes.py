"""One edit: a ``READ COMMITTED`` transaction on the engine's write connection, numbered at commit.

Edits of several processes run at once (there is no write lock). While open, an edit writes
its rows with a provisional sequence (:data:`.pipeline.PROVISIONAL`, larger than any revision
number: ``sequence`` compares equal only to rows of this edit, and a claim made in an earlier
revision is always smaller) and remembers what it wrote. ``commit`` sends ``pp_publish`` and
``COMMIT`` in one round trip: under a transaction-scoped advisory lock the edit takes the next
number, its rows get it, its activities' edge snapshots are captured, the revision and its
events are written and listeners are notified (see ``migrations/0007_baseline.sql``). Job
counts are deferred constraint triggers, applied at that commit under the same lock.

Rows written once (``migrations/0009_job_path.sql``): inserts of new rows still queued at
commit (a worker's completion queues all of its own) are sent after ``pp_number`` (the lock,
the next number) and write that number; the edit's other statements go before it (a lease
transition refers to the new rows through foreign keys checked at commit), so nothing that may
wait for another edit's row runs under the lock. ``pp_publish`` renumbers the rest. When only
such inserts follow ``pp_number``, one ``pp_commit`` call (0012, :mod:`.packing`) does it all.

Round trips: statements whose result the caller does not need (an asset, metadata, a
representation or activity whose references are known to exist, a lease transition after the
job's row was read and locked by ``lease_row``) are queued and sent in one pipeline with the
next statement that needs an answer (:mod:`.pipeline`), each with the row count it must have
(``pp_expect``); answers this edit already knows (facts of what it created) come from memory.
A claim is two round trips (the claim, the commit), also by a registered worker (its row's
check rides on the claim: :mod:`.claims`), a completion two (the lease check, sent ahead of
the queued inserts; the commit) or three. Neither can be one in an edit: the claim answers the
caller (the lease) and a completion's lease check decides whether ``complete_job_lease``
raises, both before the caller's code goes on to commit. A worker's path has calls that are
one each (migration 0013, :mod:`.calls`): a claim committed in one ``pp_claim_next`` call, and
in an edit that defers its lease checks, a completion whose check goes with the commit.

The statements both engines share are in :mod:`postproject.storage.sql.writes`; PostgreSQL's
own (one statement where SQLite runs several, with its checks and locks) are :mod:`.statements`.
Claims take their job with ``FOR UPDATE SKIP LOCKED``: a claim never waits for another claim's
job row. ``lease_row`` reads and locks a job's row (until the edit ends), so the lease
transition that follows it is known to succeed and is sent ahead without waiting.

An edit that adds provenance edges from representations that existed before it repeats the
cycle check at commit, under the numbering lock (:data:`.statements.NO_CYCLE`): two concurrent
edits each adding one edge of a cycle both pass the check made while they were open.

A statement that fails aborts the PostgreSQL transaction: unless a savepoint taken before it
is rolled back, every later call of the edit raises that error, and ``rollback`` ends it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

from postproject.engine import ChangedInput, LeaseRow
from postproject.model import clock
from postproject.model.errors import AlreadyExistsError, StorageError
from postproject.model.ids import JobId
from postproject.model.lifecycle import Action, JobState, sources
from postproject.storage import rows
from postproject.storage.postgresql import calls, claims, packing
from postproject.storage.postgresql import pipeline as pipelines
from postproject.storage.postgresql import statements as pg
from postproject.storage.postgresql.changes import CHANNEL, PROGRESS
from postproject.storage.postgresql.claims import WORKER_ROW_LOCK, claim_next_sql
from postproject.storage.postgresql.connection import Connection
from postproject.storage.postgresql.pipeline import DURABLE_MARK, PROVISIONAL, Host, Params, Pipeline
from postproject.storage.postgresql.types import DIALECT, Id, ids, optional
from postproject.storage.sql import statements as q
from postproject.storage.sql.dialect import Dialect
from postproject.storage.sql.leases import EndClaim, StopClaim
from postproject.storage.sql.service import PRINCIPAL
from postproject.storage.sql.writes import SqlWrites

CLAIMED = JobState.CLAIMED.code


# Queued inserts of new rows (shared statements): no read of the edit looks for them before
# commit but through its memory, and they never wait for another edit's row lock.
_NEW_ROWS = {DIALECT.sql(q.INSERT_ASSET): "assets", DIALECT.sql(q.INSERT_METADATA): "metadata"}
# Queue flags (.pipeline): an insert of a new row; a lease transition of a job this edit locked
# (at commit, sent before the inserts queued ahead of it); the cycle check (after them).
NEW_ROW, LOCKED_ROW, AFTER_INSERTS = pipelines.INDEPENDENT, pipelines.EARLY, pipelines.LATE
# The statements renumbered by pp_publish when written before commit, and the tables they write.
_RENUMBERED = ("assets", "media_roots", "representations", "fingerprints", "activities", "metadata", "jobs")


def _allowed(action: Action) -> frozenset[int]:
    return frozenset(state.code for state in sources(action))


class WriteSession(SqlWrites):
    """The statements of one edit (see the module docstring)."""

    dialect: ClassVar[Dialect] = DIALECT
    # A signalling progress report wakes followers on every host (NOTIFY is sent at commit, and
    # repeats within a transaction fold into one); the payload names only the schema.
    PROGRESS_NOTICE = (
        ", CASE WHEN progress_signalled_at = :now THEN "
        f"(SELECT 1 FROM pg_notify('{CHANNEL}', current_schema() || ' {PROGRESS}')) END"
    )
    LOCK_WORKER = WORKER_ROW_LOCK
    LOCK_IDEMPOTENCY_KEY = "SELECT pg_advisory_xact_lock(1347441203, hashtext(?))"
    # history is append-only for the farm's role: a fingerprint replaced runs as the owner (0011)
    SET_FINGERPRINT = "SELECT * FROM pp_set_fingerprint(?, ?::text, ?::integer, ?::bytea, ?::bigint)"

    def __init__(self, host: Host, conn: Connection, *, busy_timeout: float) -> None:
        super().__init__()
        self.host = host
        self.uri = host.uri
        self.pipeline = Pipeline(host, conn, busy_timeout=busy_timeout)
        self.sequence = PROVISIONAL
        self._savepoints = 0
        self._mark_read = False
        self.reset_mark: int | None = None  # reset_clock's new mark
        # job id -> (lease row, changed input) read and locked by this edit
        self.leases: dict[bytes, tuple[LeaseRow, ChangedInput | None]] = {}
        self.deferring = False  # lease checks of claims known here go with the commit (.calls)
        self.called: int | None = None  # the revision a one-call operation committed (.calls)

    @property
    def stored_high_water(self) -> int | None:
        """The durable clock mark: as this process last saw it (its commits, notifications), read
        again in the edit when that is ahead of the server's time (a clock that ran ahead, or a
        mark lowered by ``reset_clock`` since), so a stale mark can never wedge a process."""
        if self.reset_mark is not None:
            return self.reset_mark
        known = self.host.high_water
        server = self.host.server_now()
        if known is not None and not self._mark_read and (server is None or known > server):
            self._mark_read = True
            known = self.one(DURABLE_MARK)[0]
            self.host.committed(None, known, None, 0.0, reset=True)
        return known

    @stored_high_water.setter
    def stored_high_water(self, value: int | None) -> None:
        raise AttributeError("the stored high-water mark is the engine's")

    # --- statements, memory and savepoints -----------------------------------------------

    def one(self, sql: str, params: Params | None = None) -> Any:
        return self.pipeline.one(sql, params)

    def all(self, sql: str, params: Params | None = None) -> list[Any]:
        return self.pipeline.all(sql, params)

    def rowcount(self, sql: str, params: Params | None = None) -> int:
        return self.pipeline.rowcount(sql, params)

    def later(self, sql: str, params: Params | None = None) -> None:
        pack = _NEW_ROWS.get(sql)
        self.pipeline.queue(sql, params, flags=NEW_ROW if pack is not None else 0, pack=pack)

    def remember(self, table: str, key: Any, value: Any = None) -> None:
        super().remember(table, key, value)
        self.pipeline.wrote(table, key)

    def learn(self, table: str, keys: Iterable[bytes]) -> None:
        """Rows seen to exist (rows are never deleted); those this edit wrote become known only
        when it commits."""
        written = self.written.get(table, {})
        self.host.known.add(table, [k for k in keys if k not in written])

    def exists(self, table: str, key: bytes | str) -> bool:
        """Known to exist for this edit: written by it, or seen committed by this engine."""
        return key in self.written[table] or self.host.known.has(table, key)

    def touched(self, job_id: bytes) -> None:
        """This edit changes ``job_id``: renumber it at commit; its lease row is stale."""
        self.remember("jobs", job_id)
        self.leases.pop(job_id, None)

    def fingerprinted(self, rep_id: bytes) -> None:
        self.remember("fingerprints", rep_id)
        self.leases.clear()  # a prefetched "inputs changed" answer may be stale now

    def savepoint(self) -> tuple[str, int, int]:
        name = f"op{self._savepoints}"
        self._savepoints += 1
        self.pipeline.savepoint(name)
        return name, self.positions, len(self.created.journal)

    def release_savepoint(self, token: object) -> None:
        name, _, _ = _savepoint(token)
        self._savepoints -= 1
        self.pipeline.release(name)

    def rollback_savepoint(self, token: object) -> None:
        """Undo everything since the savepoint: rows, staged events and what the edit remembers."""
        name, positions, journal = _savepoint(token)
        self._savepoints -= 1
        self.positions = positions
        del self.staged[positions:], self._subjects[positions:]
        self.created.undo(journal)
        self.leases.clear()
        self.pipeline.rollback_to(name)

    # --- setup, files and provenance ---------------------------------------------------

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

    def insert_representation_row(self, values: dict[str, Any]) -> bool:
        root = values["root"]
        if self.exists("assets", bytes(values["asset"])) and (
            root is None or self.exists("media_roots", root)
        ):
            message = f"the asset or media root of {values['path']!r} does not exist"
            self.pipeline.queue_expecting(
                pg.INSERT_REPRESENTATION, values, 1, "PPN01", message, flags=NEW_ROW, pack="representations"
            )
            return True
        return bool(self.one(pg.INSERT_REPRESENTATION + " SELECT count(*) FROM w", values)[0] == 1)

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

    def creates_cycle(self, inputs: Sequence[bytes], outputs: Sequence[bytes]) -> bool:
        """Would edges inputs -> outputs close a loop (an output already upstream of an input)?"""
        if not inputs:
            return False
        return self.one(pg.CREATES_CYCLE, (ids(inputs), ids(outputs))) is not None

    def outputs_consumed(self, outputs: Sequence[bytes]) -> bool:
        """Is any of these representations already an input somewhere (a cycle is then possible)?"""
        if all(self.exists_created("representations", o) for o in outputs):
            return any(o in self.created.consumed for o in outputs)  # nothing committed can refer to them
        row = self.one(
            "SELECT 1 FROM activity_edges WHERE representation_id = ANY(%s) AND direction = 0 LIMIT 1",
            (ids(outputs),),
        )
        return row is not None

    def exists_created(self, table: str, key: Any) -> bool:
        return key in self.written[table]

    def insert_activity_row(self, values: dict[str, Any], edges: list[tuple[int, bytes, str]]) -> bool:
        reps = list(dict.fromkeys(rep for _, rep, _ in edges))
        params = values | {
            "reps": ids(reps),
            "count": len(reps),
            "directions": [d for d, _, _ in edges],
            "edges": ids(r for _, r, _ in edges),
            "roles": [role for _, _, role in edges],
        }
        if all(self.exists("representations", rep) for rep in reps):
            message = "a representation of the activity does not exist"
            self.pipeline.queue_expecting(
                pg.INSERT_ACTIVITY,
                params,
                1,
                "PPN01",
                message,
                flags=NEW_ROW,
                late=pg.INSERT_ACTIVITY_LATE,
                pack="activities",
            )
            return True
        return bool(self.one(pg.INSERT_ACTIVITY + " SELECT count(*) FROM w", params)[0] == 1)

    # --- jobs and leases ----------------------------------------------------------------

    def insert_job_row(
        self, values: dict[str, Any], inputs: list[bytes], upstreams: list[tuple[bytes, int]]
    ) -> bool:
        """The job and its dependency rows in one statement that checks what it refers to."""
        params = values | {
            "seq": PROVISIONAL,
            "reps": ids(inputs),
            "count": len(inputs),
            "upstreams": ids(upstream for upstream, _ in upstreams),
            "binds": [binds for _, binds in upstreams],
        }
        return bool(self.one(pg.INSERT_JOB, params)[0] == 1)

    def lease_row(self, job_id: bytes) -> LeaseRow | None:
        """The stored claim of a job (its row locked until the edit ends), or None when absent.
        Sent ahead of queued inserts of new rows (it reads none of them), which stay queued."""
        row = self.pipeline.one(pg.LEASE_ROW, (Id(job_id),), overtake=True)
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
        if state == CLAIMED:
            calls.keep(self, job_id, lease)
        self.learn("assets", [asset])
        self.learn("representations", lease.inputs)
        return lease

    held_lease_row = calls.held_lease_row

    def defer_lease_checks(self) -> None:
        self.deferring = True

    claim_next_committed = calls.claim_next_committed
    complete_committed = calls.complete_committed

    def record_attempt_log(
        self, job_id: bytes, secret: bytes, root: str | None, path: str | None, tail: str | None, now: int
    ) -> int | None:
        params = {"id": Id(job_id), "secret": secret, "root": root, "path": path, "tail": tail, "now": now}
        number = calls.record_log_later(self, job_id, secret, params)
        return (
            number
            if number is not None
            else super().record_attempt_log(job_id, secret, root, path, tail, now)
        )

    def fingerprints_changed_after(self, rep_ids: Sequence[bytes], sequence: int) -> ChangedInput | None:
        """The first input whose fingerprint was recorded after ``sequence``: (rep, seq, revision id)."""
        for lease, changed in self.leases.values():
            if lease.claim_sequence == sequence and lease.inputs == list(rep_ids):
                return changed  # read with the lease row, and no fingerprint was recorded since
        return super().fingerprints_changed_after(rep_ids, sequence)

    def claim_next_row(self, kinds: Sequence[str] | None, params: dict[str, Any]) -> Any:
        """One statement: each candidate is one index probe that skips rows other edits hold
        (``SKIP LOCKED``): the best ready job (of each kind) and the claim that expired first.
        Only when every claimable job is held by another edit (which may be a sweep or a
        release about to make it claimable, as SQLite's single writer would have waited for)
        does the claim wait for them and look again, so None means what it means on SQLite:
        nothing is claimable."""
        if kinds is not None:
            params["kinds"] = list(kinds)
        row = self.one(claim_next_sql(kinds is not None, wait=False), params)
        if row[0] is None and row[4]:  # claimable jobs exist, all held: wait for their holders
            row = self.one(claim_next_sql(kinds is not None, wait=True), params)
            if row[0] is None:  # they changed them: look again with what they committed
                row = self.one(claim_next_sql(kinds is not None, wait=False), params)
        return row[:4] if row[0] is not None else None

    claim_next_gated = claims.claim_next_gated

    def predicted(self, job_id: bytes, secret: bytes, now: int, action: Action) -> bool | None:
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
        predicted = self.predicted(job_id, secret, now, Action.RENEW)
        if predicted is not None:
            lease = self.leases[job_id][0]
            if not predicted or lease.expires is None or expires <= lease.expires:
                return False
            self.pipeline.queue_expecting(
                f"WITH w AS ({pg.RENEW} RETURNING 1)", params, 1, "PPL01", _lost(job_id), flags=LOCKED_ROW
            )
        elif self.rowcount(pg.RENEW, params) != 1:
            return False
        self.touched(job_id)
        return True

    def end_claim(self, change: EndClaim) -> bool:
        """One statement (:func:`.statements.end_claim`); sent ahead, expecting its one row, when
        the edit locked the job's row and knows the guard holds."""
        if change.predicted is False:
            return False
        sql = pg.end_claim(change.set_job, change.where, change.succeeds)
        params = change.params | {
            "id": Id(change.job_id),
            "seq": PROVISIONAL,
            "outcome": change.outcome.code,
            "diagnostic": change.diagnostic,
            "stopped_at": change.params["now"] if change.by_holder else None,
        }
        if change.predicted:
            self.pipeline.queue_expecting(sql, params, 1, "PPL01", _lost(change.job_id), flags=LOCKED_ROW)
        elif self.one(sql + " SELECT count(*) FROM w", params)[0] != 1:
            return False
        self.touched(change.job_id)
        return True

    def stop_claim(self, change: StopClaim) -> bool:
        params = {
            "id": Id(change.job_id),
            "seq": PROVISIONAL,
            "now": change.now,
            "outcome": change.outcome.code,
        }
        if self.one(pg.stop_claim(change.set_job, change.where), params)[0] != 1:
            return False
        self.touched(change.job_id)
        return True

    def link_retry(self, original: bytes, retry: bytes) -> None:
        self.later("UPDATE jobs SET retried_as = %s WHERE id = %s", (Id(retry), Id(original)))
        self.later("UPDATE jobs SET retry_of = %s WHERE id = %s", (Id(original), Id(retry)))
        self.leases.pop(original, None)
        self.leases.pop(retry, None)

    def end_missed_stops(self, now: int, limit: int) -> list[tuple[bytes, int]]:
        """End as lost up to ``limit`` attempts whose holder did not confirm its stop before
        ``stop_by`` (soonest deadline first); (job id, attempt number) of each."""
        found = self.all(pg.END_MISSED_STOPS, {"now": now, "limit": limit})
        return [(bytes(job), int(number)) for job, number in found]

    # --- the clock ------------------------------------------------------------------------

    def reset_clock(self, now: int) -> tuple[int | None, list[bytes]]:
        """Lower the durable high-water mark to ``now`` and requeue every claim granted after it
        (under a clock that ran ahead); (the old mark, the requeued job ids)."""
        old = self.one(DURABLE_MARK)[0]
        self.later("UPDATE job_clock SET high_water = %s", (now,))
        future = [
            r[0]
            for r in self.all(
                f"SELECT id FROM jobs WHERE state = {CLAIMED} AND claimed_at > %s ORDER BY id", (now,)
            )
        ]
        for job in future:
            self.requeue(job, now)
        self.reset_mark = now
        return old, future

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
        if self.called is not None:  # one call claimed and committed it, or claimed nothing (.calls)
            self.sequence = self.called or self.sequence
            return bool(self.called)
        for job in self.written["jobs"]:  # its lease row known here is stale now
            self.host.claims.pop(job, None)
        if self.positions == 0:
            if self.state_written:  # stored state only (heartbeats): no revision
                self.pipeline.send("COMMIT")
                self.pipeline.begun = False
                return False
            self.rollback(high_water)
            return False
        written = self.written
        # Numbered first (the queued statements write the revision's number, pp_publish
        # renumbers only what was written before), or numbered last (pp_publish renumbers all).
        cycle = self._may_close_cycle()
        number = pg.NUMBER if self.pipeline.numbering_at_commit() else None
        if cycle:  # checked under the numbering lock: it sees every edit published
            if number is None:
                self.pipeline.queue(pg.NUMBERING_LOCK, keep=True)
            self.pipeline.queue(
                pg.NO_CYCLE,
                {"activities": _array(written["activities"]), "message": pg.CYCLE},
                flags=AFTER_INSERTS,
            )
        early = self.pipeline.early_at_commit() if number is not None else set()
        renumbered = {
            table: [key for key in written[table] if number is None or (table, key) in early]
            for table in _RENUMBERED
        }
        metadata = renumbered["metadata"]
        if principal is not None:  # the revision's principal column reads it (migration 0008);
            self.pipeline.queue(PRINCIPAL, (principal,), flags=LOCKED_ROW)  # sent before pp_number
        # only inserts of new rows after pp_number: one pp_commit writes them and publishes (0012)
        packable = number is not None and not cycle and self.host.commits_rows
        packed = packing.packed(self.pipeline.packable_at_commit()) if packable else None
        publish = (
            PROVISIONAL, Id(revision_id), committed_at, origin, message, high_water,
            [e.position for e in self.staged], [e.kind for e in self.staged],
            [optional(s) for s in self._subjects],
            [json.dumps(e.payload, separators=(",", ":")) for e in self.staged],
            _array(renumbered["assets"]),
            _array(written["media_roots"][name][1] for name in renumbered["media_roots"]),
            _array(renumbered["representations"]), _array(renumbered["fingerprints"]),
            _array(renumbered["activities"]), [kind for kind, _ in metadata] or None,
            _array(target for _, target in metadata), _array(renumbered["jobs"]), self.reset_mark is not None,
        )  # fmt: skip
        started = clock.monotonic()
        if packed is not None:
            rows, entries = packed
            self.pipeline.take(entries)
            cursor = self.pipeline.send(pg.COMMIT_ROWS, (rows, *publish), then="COMMIT")
        else:
            cursor = self.pipeline.send(pg.PUBLISH, publish, then="COMMIT", number=number)
        elapsed = clock.monotonic() - started
        assert cursor is not None
        self.pipeline.begun = False
        published = cursor.fetchone()
        assert published is not None
        self.sequence, mark, server_now = published[:3]
        if packed is not None:
            self.host.last_locked_at = published[3]
        for table in ("assets", "representations", "activities", "jobs"):
            self.host.known.add(table, written[table])
        self.host.known.add("media_roots", written["media_roots"])
        self.host.committed(self.sequence, mark, server_now, elapsed, reset=self.reset_mark is not None)
        if self.pipeline.kept:  # the lock was taken before pp_publish (pp_number, or NUMBERING_LOCK)
            locked = self.pipeline.kept[0].fetchone()
            assert locked is not None
            if number is not None and locked[0] != self.sequence:
                raise StorageError(f"revision {self.sequence} was published as number {locked[0]}")
            self.host.last_locked_at = locked[-1]
        return True

    def _may_close_cycle(self) -> bool:
        """Could an edit committed meanwhile have closed a cycle through this edit's activities?
        Only when an output of one of them existed before the edit (a representation the edit
        created is invisible to other edits: nothing they commit can consume it)."""
        return any(
            not self.exists_created("representations", output)
            for facts in self.written["activities"].values()
            for output in facts.outputs
        )

    def rollback(self, high_water: int | None) -> None:
        """Undo the edit but keep the highest clock sample it observed (notes §2.2)."""
        statements: list[tuple[str, Params | None]] = [("ROLLBACK", None)] if self.pipeline.begun else []
        known = self.host.high_water
        raise_mark = high_water is not None and (known is None or high_water > known)
        if raise_mark:
            statements.append(
                (
                    "UPDATE job_clock SET high_water = %s WHERE high_water IS NULL OR high_water < %s",
                    (high_water, high_water),
                )
            )
        self.pipeline.end(statements)
        if raise_mark:
            self.host.committed(None, high_water, None, 0.0)


def _lost(job_id: bytes) -> str:
    return f"job {JobId(job_id)} changed under this lease"


def _array(values: Iterable[bytes]) -> list[Id] | None:
    found = ids(values)
    return found or None


def _savepoint(token: object) -> tuple[str, int, int]:
    assert isinstance(token, tuple), "a savepoint token from this session"
    name, positions, journal = token
    return str(name), int(positions), int(journal)
