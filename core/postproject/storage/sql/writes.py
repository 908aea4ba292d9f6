"""The statements of an edit both engines run alike (:class:`postproject.engine.WriteSession`).

:class:`SqlWrites` is each adapter's write session's base. The adapter gives it its
transaction: statements whose answer the edit needs now (:meth:`SqlWrites.one`,
:meth:`SqlWrites.all`, :meth:`SqlWrites.rowcount`) and statements it may send later
(:meth:`SqlWrites.later`: SQLite runs them at once; PostgreSQL queues them for the next round
trip), savepoints, commit and rollback, and the statements whose plan is its own: requests,
representations and activities with their checks, claims of the next job (SQLite's pinned
index probes; PostgreSQL's ``SKIP LOCKED``), lease rows, and how a lease transition ends a
claim (:class:`EndClaim`, :class:`StopClaim`: one guarded update of the job, the end of its
attempt, as one step). Everything else an edit writes or reads is here once.

What an edit created is remembered (:meth:`SqlWrites.remember`), undone with the savepoint
that undoes the rows: a completion checks the output and activity it just made without
reading them back, and PostgreSQL numbers them at commit. Job states and attempt outcomes
appear in SQL by their codes (:mod:`.leases`). The statements are named in :mod:`.statements`.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

from postproject.engine import (
    ActivityFacts,
    ChangedInput,
    ExpiringClaim,
    OutputFacts,
    WorkerFacts,
)
from postproject.engine.progress import AttemptFacts
from postproject.model import paths
from postproject.model.activities import ActivitySpec
from postproject.model.assets import Fingerprint
from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.model.ids import iter_chunks
from postproject.model.jobs import Job, JobRequest
from postproject.model.lifecycle import Action
from postproject.model.revisions import RevisionEvent
from postproject.storage import rows
from postproject.storage.sql import leases
from postproject.storage.sql import statements as q
from postproject.storage.sql.created import Created
from postproject.storage.sql.dialect import Dialect, Params
from postproject.storage.sql.leases import EndClaim, StopClaim
from postproject.storage.sql.service import ServiceWriter

CHUNK = 500  # ids per list


class SqlWrites(ABC):
    """The statements both engines share, over the adapter's transaction (see the module docstring)."""

    dialect: ClassVar[Dialect]
    # What PostgreSQL adds (concurrent edits) where SQLite's single writer needs nothing: extra
    # RETURNING columns of a progress report (a NOTIFY that wakes followers); a lock that holds
    # a worker's row until the edit ends (two claims by one worker count each other); a lock that
    # queues edits requesting with one idempotency key; a fingerprint recorded by its owner's function.
    PROGRESS_NOTICE: ClassVar[str] = ""
    LOCK_WORKER: ClassVar[str | None] = None
    LOCK_IDEMPOTENCY_KEY: ClassVar[str | None] = None
    SET_FINGERPRINT: ClassVar[str] = q.SET_FINGERPRINT
    sequence: int

    def __init__(self) -> None:
        self.positions = 0
        self.staged: list[RevisionEvent] = []  # what the receipt reports, in staging order
        self._subjects: list[bytes | None] = []  # each staged event's subject
        self.state_written = False  # stored state that is not a revision (heartbeats, progress)
        self.created = Created()

    @property
    def service(self) -> ServiceWriter:
        """Token and reply writes (:mod:`postproject.storage.sql.service`)."""
        return ServiceWriter(self)

    # --- what the adapter provides ---------------------------------------------------------

    @abstractmethod
    def one(self, sql: str, params: Params | None = None) -> Any:
        """Run ``sql`` (the adapter's placeholders) now: its first row, or None."""

    @abstractmethod
    def all(self, sql: str, params: Params | None = None) -> list[Any]:
        """Run ``sql`` now: every row."""

    @abstractmethod
    def rowcount(self, sql: str, params: Params | None = None) -> int:
        """Run ``sql`` now: how many rows it changed."""

    @abstractmethod
    def later(self, sql: str, params: Params | None = None) -> None:
        """Run ``sql``, whose answer nobody needs, at the latest with the next statement that
        needs one (its errors surface there)."""

    @abstractmethod
    def insert_job_row(
        self, values: dict[str, Any], inputs: list[bytes], upstreams: list[tuple[bytes, int]]
    ) -> bool:
        """Insert the job ``values`` (its columns, SQLite's names) and its dependency rows
        ``(upstream, binds_output)``; False, writing nothing, when an input representation, the
        output asset, the target root or the regenerated artifact is absent."""

    @abstractmethod
    def insert_representation_row(self, values: dict[str, Any]) -> bool:
        """Insert the representation ``values`` and its first fingerprint (``algorithm``,
        ``version``, ``value``); False, writing nothing, when its asset or root is absent."""

    @abstractmethod
    def insert_activity_row(self, values: dict[str, Any], edges: list[tuple[int, bytes, str]]) -> bool:
        """Insert the activity ``values`` and its ``(direction, representation, role)`` edges;
        False, writing nothing, when an edge's representation is absent."""

    @abstractmethod
    def claim_next_row(self, kinds: Sequence[str] | None, params: dict[str, Any]) -> Any:
        """Claim the first claimable job of ``kinds`` (priority, then availability, then id)
        with :data:`SET_CLAIM` over ``params``: the ``(id, attempt, output asset, inputs)`` row
        of the claim (:data:`RETURNING_CLAIM`), or None."""

    @abstractmethod
    def end_claim(self, change: EndClaim) -> bool: ...

    @abstractmethod
    def stop_claim(self, change: StopClaim) -> bool: ...

    @abstractmethod
    def learn(self, table: str, keys: Sequence[bytes]) -> None:
        """Rows seen to exist in committed state (PostgreSQL keeps them: no check's round trip)."""

    def predicted(self, job_id: bytes, secret: bytes, now: int, action: Action) -> bool | None:
        """Whether a guarded transition of the held job will match, when the edit knows (None)."""
        return None

    def touched(self, job_id: bytes) -> None:
        """This edit changed the job's row."""
        self.remember("jobs", job_id)

    def fingerprinted(self, rep_id: bytes) -> None:
        """This edit recorded a fingerprint of the representation."""
        self.remember("fingerprints", rep_id)

    # --- statements in SQLite's placeholders -----------------------------------------------

    def _row(self, sql: str, params: Params | None = None) -> Any:
        return self.one(self.dialect.sql(sql), params)

    def _rows(self, sql: str, params: Params | None = None) -> list[Any]:
        return self.all(self.dialect.sql(sql), params)

    def _count(self, sql: str, params: Params | None = None) -> int:
        return self.rowcount(self.dialect.sql(sql), params)

    def _later(self, sql: str, params: Params | None = None) -> None:
        self.later(self.dialect.sql(sql), params)

    # --- events and what the edit created ---------------------------------------------------

    def event(self, kind: str, subject: bytes | None, payload: dict[str, Any]) -> None:
        """Stage an event; staged events are written with the revision at commit."""
        self.staged.append(RevisionEvent(self.positions, kind, payload))
        self._subjects.append(subject)
        self.positions += 1

    def mark(self) -> int:
        """Where the staged events end now (an operation that writes at most once needs no savepoint)."""
        return self.positions

    def rewind(self, mark: object) -> None:
        """Drop the events staged after ``mark`` (the failed operation wrote no row)."""
        assert isinstance(mark, int)
        self.positions = mark
        del self.staged[mark:], self._subjects[mark:]

    def remember(self, table: str, key: Any, value: Any = None) -> None:
        """Record that this edit wrote ``key`` in ``table`` (forgotten with its savepoint)."""
        self.created.add(table, key, value)

    @property
    def written(self) -> dict[str, dict[Any, Any]]:
        return self.created.written

    # --- setup and files -----------------------------------------------------------------

    def insert_asset(self, asset_id: bytes, name: str | None, now: int) -> None:
        self._later(q.INSERT_ASSET, (self.dialect.id(asset_id), name, now, self.sequence))
        self.remember("assets", asset_id)

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
        bind = self.dialect.id
        values = {"id": bind(rep_id), "asset": bind(asset_id), "kind": kind, "path": path, "root": root}
        values |= {"size": size, "mtime": mtime, "now": now, "seq": self.sequence}
        values |= {
            "algorithm": fingerprint.algorithm,
            "version": fingerprint.version,
            "value": fingerprint.value,
        }
        if not self.insert_representation_row(values):
            return False
        self.remember("representations", rep_id, (OutputFacts(asset_id, kind, self.sequence), path, root))
        self.remember("fingerprints", rep_id)
        return True

    def location(self, rep_id: bytes) -> tuple[str, str | None] | None:
        """(stored path, root name) of a representation as this edit sees it, or None."""
        created = self.written["representations"].get(rep_id)
        if created is not None:
            return paths.decode_path(created[1]), created[2]
        row = self._row(q.LOCATION, (self.dialect.id(rep_id),))
        return (paths.decode_path(row[0]), row[1]) if row is not None else None

    def update_file_facts(self, rep_id: bytes, size: int, mtime: int) -> None:
        self._later(q.UPDATE_FILE_FACTS, (size, mtime, self.dialect.id(rep_id)))

    def set_fingerprint(self, rep_id: bytes, fingerprint: Fingerprint) -> bool:
        """Record a fingerprint; False (nothing written) when the same value is already current."""
        fingerprint_row = (fingerprint.algorithm, fingerprint.version, fingerprint.value, self.sequence)
        row = self._row(self.SET_FINGERPRINT, (self.dialect.id(rep_id), *fingerprint_row))
        if row is None:
            return False
        self.fingerprinted(rep_id)
        return True

    # --- provenance and metadata -----------------------------------------------------------

    def insert_activity(
        self, activity_id: bytes, spec: ActivitySpec, started: int | None, finished: int | None
    ) -> bool:
        """Insert an activity with its edges; False (and nothing written) when an edge's
        representation is absent."""
        tool, agent = spec.tool, spec.agent
        values = {
            "id": self.dialect.id(activity_id),
            "kind": spec.kind,
            "agent": agent.name if agent else None,
        }
        values |= {"tool_name": None, "tool_version": None, "tool_uri": None} if tool is None else {
            "tool_name": tool.name, "tool_version": tool.version, "tool_uri": tool.uri
        }  # fmt: skip
        values |= {"started": started, "finished": finished, "seq": self.sequence}
        edges = [
            (direction, edge.representation_id.bytes, edge.role or "")
            for direction, side in ((0, spec.input_edges), (1, spec.output_edges))
            for edge in side
        ]
        if not self.insert_activity_row(values, edges):
            return False
        sides: tuple[list[bytes], list[bytes]] = ([], [])
        for direction, rep, _ in sorted(edges, key=lambda e: (e[0], e[1])):
            sides[direction].append(rep)
        self.remember("activities", activity_id, ActivityFacts(self.sequence, sides[0], sides[1]))
        for rep in sides[0]:
            self.remember("consumed", rep)
        return True

    def insert_metadata(
        self, target_kind: int, target_id: bytes, vocabulary: str, name: str, value: str
    ) -> None:
        self._later(
            q.INSERT_METADATA,
            (target_kind, self.dialect.id(target_id), vocabulary, name, value, self.sequence),
        )
        self.remember("metadata", (target_kind, target_id))

    def activity_facts(self, activity_id: bytes) -> ActivityFacts | None:
        """The creating revision and sorted edge ids of an activity as this edit sees it."""
        known = self.written["activities"].get(activity_id)  # created in this edit: not read back
        if known is not None:
            return ActivityFacts(known.created_sequence, list(known.inputs), list(known.outputs))
        found = self._rows(q.ACTIVITY_FACTS, (self.dialect.id(activity_id),))
        if not found:
            return None
        sides: tuple[list[bytes], list[bytes]] = ([], [])
        for _, direction, rep in found:
            if rep is not None:
                sides[direction].append(rep)
        return ActivityFacts(found[0][0], sides[0], sides[1])

    def output_facts(self, rep_id: bytes) -> OutputFacts | None:
        known = self.written["representations"].get(rep_id)  # created in this edit: not read back
        if known is not None:
            return known[0]  # type: ignore[no-any-return]
        row = self._row(q.OUTPUT_FACTS, (self.dialect.id(rep_id),))
        return OutputFacts(row[0], row[1], row[2]) if row is not None else None

    # --- reads inside the edit ------------------------------------------------------------

    def job(self, job_id: bytes) -> Job | None:
        """A job as this edit sees it (with its dependencies, without its attempts)."""
        row = self._row(q.JOB, (self.dialect.id(job_id),))
        if row is None:
            return None
        return rows.job(row, (), self.dependency_rows(job_id) if row[rows.DEPENDENCY_COUNT] else ())

    def dependency_rows(self, job_id: bytes) -> list[Any]:
        """The dependency rows (``rows.DEPENDENCY_COLUMNS``) of one job, by upstream id."""
        return self._rows(q.DEPENDENCY_ROWS, (self.dialect.id(job_id),))

    def metadata(self, target_kind: int, target_id: bytes) -> list[tuple[str, str, str]]:
        """(vocabulary, property, value JSON) of an object, in order."""
        found = self._rows(q.METADATA, (target_kind, self.dialect.id(target_id)))
        return [(vocabulary, name, value) for vocabulary, name, value in found]

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
        stored_kinds = json.dumps(list(kinds)) if kinds is not None else None
        bind = self.dialect.id
        row = self._row(
            q.REGISTER_WORKER, (bind(worker_id), name, host, capacity, stored_kinds, bind(session), now, now)
        )
        self.state_written = True
        return bytes(row[0])

    def heartbeat(self, worker_id: bytes, session: bytes, now: int) -> bool:
        """Record a heartbeat of the current session (last_seen never moves back); False when fenced."""
        count = self._count(
            q.HEARTBEAT,
            {"now": now, "id": self.dialect.id(worker_id), "session": self.dialect.id(session)},
        )
        self.state_written = True
        return count == 1

    def worker_facts(self, worker_id: bytes, now: int) -> WorkerFacts | None:
        """What a claim by this worker checks: its session, liveness, capacity and load. The
        worker's row stays locked until the edit ends, so two claims by one worker (say from
        two threads) count each other's claims."""
        if self.LOCK_WORKER is not None:
            self._later(self.LOCK_WORKER, (self.dialect.id(worker_id),))
        row = self._row(
            q.WORKER_FACTS.format(hint=self.dialect.indexed_by("jobs_by_worker")),
            (now, self.dialect.id(worker_id)),
        )
        if row is None:
            return None
        session, last_seen, capacity, kinds, active = row
        return WorkerFacts(session, last_seen, capacity, tuple(json.loads(kinds)) if kinds else None, active)

    # --- jobs -------------------------------------------------------------------------------

    def insert_job(
        self,
        job_id: bytes,
        request: JobRequest,
        now: int,
        not_before: int | None,
        digest: bytes | None,
        waiting: int = 0,
    ) -> bool:
        """Insert a requested job (with its dependencies); False (nothing written) when an
        input, the output asset, the target root or the regenerated artifact is absent."""
        inputs = [rep.bytes for rep in request.representation_inputs]
        bound = {b.job_id for b in request.bound_outputs}
        values = q.job_values(
            self.dialect.id, self.sequence, job_id, request, now, not_before, digest, waiting
        )
        upstreams = [(upstream.bytes, int(upstream in bound)) for upstream in request.dependencies]
        if not self.insert_job_row(values, inputs, upstreams):
            return False
        self.touched(job_id)
        return True

    def job_states(self, job_ids: Sequence[bytes]) -> dict[bytes, int]:
        """The stored state code of each of ``job_ids`` that exists."""
        found: dict[bytes, int] = {}
        for part in iter_chunks(job_ids, CHUNK):
            match, params = self.dialect.in_ids("id", part)
            found.update((job, state) for job, state in self._rows(q.JOB_STATES.format(match=match), params))
        return found

    def move_dependents(self, old: bytes, new: bytes) -> int:
        """Make every job that depends on ``old`` depend on ``new`` instead (its output binding
        too); how many moved. Waiting counts do not change: neither job has succeeded."""
        return self._count(q.MOVE_DEPENDENTS, (self.dialect.id(new), self.dialect.id(old)))

    def supersede(self, rep_id: bytes, replacement: bytes) -> bytes | None:
        """Record that ``replacement`` supersedes ``rep_id`` or, when that was superseded
        already, the newest representation of its chain; the id superseded (None when
        ``rep_id`` does not exist)."""
        row = self._row(
            q.SUPERSEDE,
            {"rep": self.dialect.id(rep_id), "replacement": self.dialect.id(replacement)},
        )
        return bytes(row[0]) if row is not None else None

    def idempotent_job(self, key: str) -> tuple[bytes, bytes] | None:
        """(job id, request digest) of the job requested with ``key``, if any."""
        if self.LOCK_IDEMPOTENCY_KEY is not None:
            self._later(self.LOCK_IDEMPOTENCY_KEY, (key,))
        row = self._row(q.IDEMPOTENT_JOB, (key,))
        return (row[0], row[1]) if row is not None else None

    def completed_by(self, job_id: bytes) -> tuple[int, bytes | None, bytes | None] | None:
        """(state, completion representation, completing attempt's secret hash) of a job."""
        row = self._row(q.COMPLETED_BY, (self.dialect.id(job_id),))
        return (row[0], row[1], row[2]) if row is not None else None

    def fingerprints_changed_after(self, rep_ids: Sequence[bytes], sequence: int) -> ChangedInput | None:
        """The first input whose fingerprint was recorded after ``sequence``: (rep, seq, revision id)."""
        for part in iter_chunks(rep_ids, CHUNK):
            match, params = self.dialect.in_ids("f.representation_id", part)
            row = self._row(q.CHANGED_INPUT.format(match=match), [*params, sequence])
            if row is not None:
                return ChangedInput(row[0], row[1], row[2])
        return None

    # --- claims and lease transitions -------------------------------------------------------

    def claimed(self, row: Any) -> tuple[bytes, int] | None:
        """(job id, attempt) of a claim's :data:`RETURNING_CLAIM` row (None: nothing claimed)."""
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
        params = leases.claim_params(
            self.dialect.id, self.sequence, secret, tool, agent, worker, now, expires
        )
        params["id"] = self.dialect.id(job_id)
        claimed = self.claimed(self._row(q.CLAIM, params))
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
        """Claim the first claimable job of ``kinds`` (priority, then availability, then id);
        (job id, attempt number) or None."""
        params = leases.claim_params(
            self.dialect.id, self.sequence, secret, tool, agent, worker, now, expires
        )
        return self.claimed(self.claim_next_row(kinds, params))

    def release(self, job_id: bytes, secret: bytes, now: int) -> bool:
        predicted = self.predicted(job_id, secret, now, Action.RELEASE)
        return self.end_claim(leases.release(job_id, secret, now, predicted))

    def fail(self, job_id: bytes, secret: bytes, now: int, diagnostic: str, *, retry: bool) -> bool:
        """Fail the job, or (``retry``) return it to requested; the attempt ends failed either way."""
        predicted = self.predicted(job_id, secret, now, Action.RETRY if retry else Action.FAIL)
        return self.end_claim(leases.fail(job_id, secret, now, diagnostic, retry, predicted))

    def succeed(self, job_id: bytes, secret: bytes, now: int, activity_id: bytes, rep_id: bytes) -> bool:
        """Mark the held job succeeded; every job that depends on it waits on one job fewer."""
        predicted = self.predicted(job_id, secret, now, Action.COMPLETE)
        bind = self.dialect.id
        return self.end_claim(leases.succeed(job_id, secret, now, bind(activity_id), bind(rep_id), predicted))

    def cancel(self, job_id: bytes, now: int) -> bool:
        """Cancel a requested or claimed job; a running attempt ends ``cancelled`` and waits
        for its holder to confirm the stop (``lost`` when its lease already expired)."""
        return self.stop_claim(leases.cancel(job_id, now))

    def requeue(self, job_id: bytes, now: int) -> bool:
        """Return a claimed job (expired or not) to requested, fencing its lease; its attempt
        ends ``released`` and waits for its holder to confirm the stop (``lost`` if expired)."""
        return self.stop_claim(leases.requeue(job_id, now))

    def set_priority(self, job_id: bytes, priority: int) -> bool:
        count = self._count(q.SET_PRIORITY, (priority, self.sequence, self.dialect.id(job_id)))
        if count != 1:
            return False
        self.touched(job_id)
        return True

    def claims_expiring(self, before: int, limit: int) -> list[ExpiringClaim]:
        """Claims whose lease expires at or before ``before``, soonest first (then by job id),
        with what ending them needs."""
        found = self._rows(
            q.CLAIMS_EXPIRING.format(hint=self.dialect.indexed_by("jobs_claimed_expiry")), (before, limit)
        )
        return [ExpiringClaim(*row) for row in found]

    def finalize_lost(self, job_id: bytes, attempt: int, now: int, diagnostic: str | None) -> bool:
        """End an expired claim's attempt as lost: back to requested, or failed with ``diagnostic``.

        Guarded by the attempt and the expiry, so a re-claim committed first wins."""
        return self.end_claim(leases.finalize_lost(job_id, attempt, now, diagnostic))

    # --- progress, stop confirmations and attempt logs (stored state) ------------------------

    def report_progress(
        self,
        job_id: bytes,
        secret: bytes,
        now: int,
        fraction: float | None,
        stage: str | None,
        message: str | None,
        signal_every: int,
    ) -> tuple[int, bool, int] | None:
        """Keep the running attempt's latest progress (a None field keeps its value) when
        ``secret`` holds the job's unexpired claim; (attempt number, signalled, lease expiry)
        or None. When the attempt's last signal is ``signal_every`` old (or never was) it moves
        ``progress_signalled_at``: a trigger bumps the progress signal in the same statement."""
        row = self._row(
            q.REPORT_PROGRESS + self.PROGRESS_NOTICE,
            {
                "id": self.dialect.id(job_id),
                "secret": secret,
                "now": now,
                "fraction": fraction,
                "stage": stage,
                "message": message,
                "every": signal_every,
            },
        )
        if row is None:
            return None
        self.state_written = True
        return int(row[0]), bool(row[1]), int(row[2])

    def attempt_facts(self, job_id: bytes, secret: bytes) -> AttemptFacts | None:
        """The attempt ``secret`` claimed (its number, outcome, stop deadline and confirmation)."""
        row = self._row(q.ATTEMPT_FACTS, (self.dialect.id(job_id), secret))
        return AttemptFacts(row[0], row[1], row[2], row[3]) if row is not None else None

    def confirm_stop(self, job_id: bytes, secret: bytes, now: int) -> tuple[int, int] | None:
        """The holder of ``secret`` stopped: before the attempt's ``stop_by`` it records
        ``stopped_at`` (the outcome stays), at or after it the attempt ends lost; (attempt
        number, outcome code), or None when that attempt awaits no confirmation."""
        row = self._row(
            q.CONFIRM_STOP,
            {"id": self.dialect.id(job_id), "secret": secret, "now": now},
        )
        if row is None:
            return None
        self.state_written = True
        return int(row[0]), int(row[1])

    def record_attempt_log(
        self,
        job_id: bytes,
        secret: bytes,
        root: str | None,
        path: str | None,
        tail: str | None,
        now: int,
    ) -> int | None:
        """Record where the attempt ``secret`` claimed keeps its full log and/or its tail (a
        None argument keeps what was recorded); the attempt number, or None when ``secret``
        claimed no attempt of the job."""
        row = self._row(
            q.RECORD_ATTEMPT_LOG,
            {
                "id": self.dialect.id(job_id),
                "secret": secret,
                "root": root,
                "path": path,
                "tail": tail,
                "now": now,
            },
        )
        if row is None:
            return None
        self.state_written = True
        return int(row[0])
