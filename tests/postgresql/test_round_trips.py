"""Round trips per operation on PostgreSQL (issue 12: a claim in at most 2, a completion in at most 3;
issue 27: a worker's completion in 2, its rows written once, with their final revision number).

Neither a claim nor a completion can be one round trip: the claim's answer (the lease) goes
to the caller before the caller's code decides to commit, and a completion's lease check
decides whether ``complete_job_lease`` raises before the caller goes on; the commit's own
statements share one: since migration 0012 a completion's commit is its transition, one
``pp_commit`` (``pp_number``, the queued inserts, ``pp_publish``) and ``COMMIT``.
A worker's calls (migration 0013) are one each: ``Production.claim_next_job_lease`` is one
``pp_claim_next`` call (``claim_next_job`` adds the job's and its parameters' reads to the same
round trip), and a completion in an edit opened with ``defer_lease_checks`` sends its lease
check with the commit; ``Production.complete_job`` (migration 0014) is one ``pp_complete`` call.

Counted at the driver: each pipeline a connection sends, and each statement (or message of
statements) sent outside a pipeline, is one round trip (the wrapper only counts; the real
driver runs).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import psycopg
import pytest

from postproject import (
    ActivityRef,
    ActivitySpec,
    AssetRef,
    JobRef,
    JobRequest,
    JobState,
    Production,
    Property,
    RepresentationKind,
    ToolIdentity,
)
from postproject.storage.postgresql import connection, types, uri
from postproject.storage.postgresql import statements as pg

TOOL = ToolIdentity("pg-trips", "1")
LEASE = timedelta(minutes=5)
PROFILE = Property("https://example.com/transcode", "profile")


@pytest.fixture
def trips(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """[round trips, statements] sent since the test last reset them."""
    count = [0, 0]
    pipeline, execute = psycopg.Connection.pipeline, psycopg.Cursor.execute

    def counted_pipeline(self: Any) -> Any:
        count[0] += 1
        return pipeline(self)

    def counted_execute(self: Any, *args: Any, **kwargs: Any) -> Any:
        count[1] += 1
        if self.connection.pgconn.pipeline_status == psycopg.pq.PipelineStatus.OFF:
            count[0] += 1
        return execute(self, *args, **kwargs)

    monkeypatch.setattr(psycopg.Connection, "pipeline", counted_pipeline)
    monkeypatch.setattr(psycopg.Cursor, "execute", counted_execute)
    return count


def test_claims_and_a_worker_completion_take_two_round_trips_each(
    postgres_uri: str, tmp_path: Path, trips: list[int]
) -> None:
    source = tmp_path / "source.mov"
    source.write_bytes(b"source")
    with Production.create(postgres_uri) as production:
        with production.edit() as tx:
            asset = tx.create_asset("A")
            original = tx.add_representation(asset, RepresentationKind.ORIGINAL, source)
            for _ in range(4):
                tx.request_job(JobRequest("org.example:trips", (original,), asset, RepresentationKind.PROXY))
            tx.commit()
        with production.edit() as tx:
            session = tx.register_worker("trips", capacity=2)
            tx.commit()

        statements = [0]

        def measured(edit: Any) -> tuple[int, Any]:
            trips[0] = trips[1] = 0
            with production.edit() as tx:
                result = edit(tx)
                tx.commit()
            statements[0] = trips[1]
            return trips[0], result

        used, lease = measured(lambda tx: tx.claim_next_job_lease(TOOL, LEASE))
        assert lease is not None
        assert used == 2
        assert statements[0] == 4  # BEGIN, the claim; pp_publish, COMMIT
        used, by_worker = measured(lambda tx: tx.claim_next_job_lease(TOOL, LEASE, worker=session))
        assert by_worker is not None
        assert used == 2
        assert statements[0] == 5  # BEGIN, the worker's row lock, the claim; pp_publish, COMMIT
        job = production.job(lease.job_id)
        output = tmp_path / "out.mov"
        output.write_bytes(b"out")

        def complete(tx: Any) -> None:
            rep = tx.add_representation(job.output_asset_id, job.output_representation_kind, output)
            activity = tx.create_activity(
                ActivitySpec(job.kind, inputs=job.inputs, outputs=(rep,), tool=TOOL)
            )
            tx.complete_job_lease(lease, rep, activity)

        used, _ = measured(complete)
        assert used == 2  # the lease check (sent ahead of the queued inserts); the commit
        assert statements[0] == 5  # BEGIN, the lease check; the transition, pp_commit, COMMIT (9 before 0012)
        used, third = measured(lambda tx: tx.claim_next_job_lease(TOOL, LEASE, worker=session))
        assert third is not None
        assert used == 2
        # At capacity (2 claims) the worker is told so in the same round trips; nothing is claimed.
        used, none = measured(lambda tx: tx.claim_next_job_lease(TOOL, LEASE, worker=session))
        assert none is None
        assert used <= 2
        assert production.job_counts()[JobState.REQUESTED] == 1


def _claimed(production: Production, tmp_path: Path) -> tuple[Any, Any]:
    """One job requested on an original and claimed: (its lease, the job)."""
    source = tmp_path / "source.mov"
    source.write_bytes(b"source")
    with production.edit() as tx:
        asset = tx.create_asset("A")
        original = tx.add_representation(asset, RepresentationKind.ORIGINAL, source)
        tx.request_job(JobRequest("org.example:trips", (original,), asset, RepresentationKind.PROXY))
        tx.commit()
    with production.edit() as tx:
        lease = tx.claim_next_job_lease(TOOL, LEASE)
        tx.commit()
    assert lease is not None
    return lease, production.job(lease.job_id)


def test_an_operation_without_a_round_trip_sends_no_savepoint(
    postgres_uri: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker's completion edit: the representation's and the activity's operations end with
    their writes still queued, so their savepoints never reach the server (no SAVEPOINT, no
    RELEASE, no subtransaction). An operation that reads inside its savepoint still sends it:
    tests/contract/test_engine_contract.py rolls such savepoints back on both engines."""
    output = tmp_path / "out.mov"
    output.write_bytes(b"out")
    with Production.create(postgres_uri) as production:
        lease, job = _claimed(production, tmp_path)
        sent = _recording(monkeypatch, lambda query, _: query.split(None, 1)[0].upper())
        with production.edit() as tx:
            rep = tx.add_representation(job.output_asset_id, job.output_representation_kind, output)
            activity = tx.create_activity(
                ActivitySpec(job.kind, inputs=job.inputs, outputs=(rep,), tool=TOOL)
            )
            tx.complete_job_lease(lease, rep, activity)
            tx.commit()
        assert "SAVEPOINT" not in sent and "RELEASE" not in sent
        # BEGIN and the lease check (sent ahead of the queued inserts, which it does not read);
        # at commit: the job, then one pp_commit (the number, the representation, the activity,
        # publish: migration 0012), COMMIT
        assert sent == ["BEGIN", "SELECT", "WITH", "SELECT", "COMMIT"]
        assert production.job(lease.job_id).state is JobState.SUCCEEDED


T = TypeVar("T")


def _recording(monkeypatch: pytest.MonkeyPatch, entry: Callable[[str, Any], T]) -> list[T]:
    """From now on, ``entry(query text, parameters)`` of every statement a cursor executes."""
    sent: list[T] = []
    execute = psycopg.Cursor.execute

    def recorded(self: Any, query: Any, params: Any = None, *args: Any, **kwargs: Any) -> Any:
        sent.append(entry(str(query), params))
        return execute(self, query, params, *args, **kwargs)

    monkeypatch.setattr(psycopg.Cursor, "execute", recorded)
    return sent


def _publish_arrays(sent: list[tuple[str, Any]]) -> dict[str, Any]:
    """What the last pp_publish sent was asked to renumber (its array parameters by table),
    sent as itself or inside pp_commit (whose first parameter is the rows it writes)."""
    query, params = [
        (query, values) for query, values in sent if "pp_publish" in query or "pp_commit" in query
    ][-1]
    params = params[1:] if "pp_commit" in query else params
    names = ("assets", "roots", "representations", "fingerprints", "activities", "metadata_kinds")
    return dict(zip(names, params[10:16], strict=True)) | {"jobs": params[17]}


def test_a_completion_writes_its_rows_once_with_their_final_number(
    postgres_uri: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 27: a worker's completion queues its inserts until commit, where they follow
    pp_number and write the revision's number: pp_publish renumbers none of them, only the job
    (its transition goes before the numbering lock, with its dependents' counts: the first job
    here has a dependent, which becomes claimable). The rows carry the revision's number."""
    source = tmp_path / "source.mov"
    source.write_bytes(b"source")
    with Production.create(postgres_uri) as production:
        with production.edit() as tx:
            asset = tx.create_asset("A")
            original = tx.add_representation(asset, RepresentationKind.ORIGINAL, source)
            upstream = tx.request_job(
                JobRequest("org.example:trips", (original,), asset, RepresentationKind.PROXY)
            )
            tx.request_job(
                JobRequest(
                    "org.example:trips", (original,), asset, RepresentationKind.PROXY, after=(upstream,)
                )
            )
            tx.commit()
        sent = _recording(monkeypatch, lambda query, params: (query, params))
        for _ in range(2):  # the upstream first (depended on), then its dependent
            with production.edit() as tx:
                lease = tx.claim_next_job_lease(TOOL, LEASE)
                tx.commit()
            assert lease is not None
            job = production.job(lease.job_id)
            output = tmp_path / f"{job.id}.mov"
            output.write_bytes(b"out")
            sent.clear()
            with production.edit() as tx:
                rep = tx.add_representation(job.output_asset_id, job.output_representation_kind, output)
                activity = tx.create_activity(
                    ActivitySpec(job.kind, inputs=job.inputs, outputs=(rep,), tool=TOOL)
                )
                tx.add_metadata(ActivityRef(activity), PROFILE, "proxy-720p")
                tx.complete_job_lease(lease, rep, activity)
                receipt = tx.commit()
            assert any("pp_commit" in query for query, _ in sent)  # pp_number inside it
            renumbered = _publish_arrays(sent)
            assert renumbered.pop("jobs") == [job.id.bytes]
            assert all(value is None for value in renumbered.values()), renumbered
            sequence = receipt.revision.sequence
            stored = production.activity(activity)
            assert stored.revision_sequence == sequence
            for edge in (*stored.inputs, *stored.outputs):  # each edge's fingerprints as at commit
                assert edge.snapshot is not None
                assert edge.snapshot.revision_sequence == sequence
                assert (
                    edge.snapshot.fingerprints
                    == production.representation(edge.representation_id).fingerprints
                )
            assert production.job(job.id).state is JobState.SUCCEEDED


def test_a_completion_numbered_first_records_its_principal(
    postgres_uri: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The principal (migration 0008, a transaction-local setting the revision's column reads)
    is set before pp_number, so a completion whose rows are written with their final number
    (a worker through the service) still records who acted; its inserts keep the final number."""
    with Production.create(postgres_uri) as production:
        lease, job = _claimed(production, tmp_path)
        output = tmp_path / "out.mov"
        output.write_bytes(b"out")
        sent = _recording(monkeypatch, lambda query, _: query)
        with production.edit(origin="postproject-service", principal="render-node-7") as tx:
            rep = tx.add_representation(job.output_asset_id, job.output_representation_kind, output)
            activity = tx.create_activity(
                ActivitySpec(job.kind, inputs=job.inputs, outputs=(rep,), tool=TOOL)
            )
            tx.complete_job_lease(lease, rep, activity)
            receipt = tx.commit()
        monkeypatch.undo()
        number = next(i for i, query in enumerate(sent) if "pp_commit" in query)  # pp_number inside it
        assert any("set_config('postproject.principal'" in query for query in sent[:number])
        assert receipt.revision is not None and receipt.revision.principal == "render-node-7"
        assert production.activity(activity).revision_sequence == receipt.revision.sequence
        assert next(iter(production.revisions())).principal == "render-node-7"  # stored, newest first


def test_pp_commit_checks_what_its_rows_refer_to_and_publishes_nothing_when_absent(
    postgres_uri: str, tmp_path: Path
) -> None:
    """Migration 0012: pp_commit makes the checks the queued inserts made: a representation whose
    asset is absent, an activity whose representation is absent raise PPN01 with the row's own
    message (the edit's error), the transaction is aborted, and no revision is published."""
    with Production.create(postgres_uri) as production:
        _, job = _claimed(production, tmp_path)
        published = production.revisions(limit=1)[0].sequence
    absent = uuid.uuid4().hex
    representation = {
        "id": uuid.uuid4().hex, "asset": absent, "kind": 1, "path": "x.mov", "root": None, "size": 1,
        "mtime": 1, "created_at": 1, "algorithm": "sha256", "version": 1, "value": "00",
        "message": "the asset or media root of 'x.mov' does not exist",
    }  # fmt: skip
    activity = {
        "id": uuid.uuid4().hex, "kind": "k", "tool_name": None, "tool_version": None, "tool_uri": None,
        "agent": None, "started": None, "finished": None, "reps": [absent], "directions": [0],
        "edges": [absent], "roles": [""], "message": "a representation of the activity does not exist",
    }  # fmt: skip
    subject = types.Id(uuid.uuid4().bytes)
    publish = (1 << 62, types.Id(uuid.uuid4().bytes), 1, None, None, None, [1], ["x"], [subject], ["{}"])
    with connection.connect(uri.parse(postgres_uri), autocommit=True) as conn:
        types.configure(conn)
        for rows in ({"representations": [representation]}, {"activities": [activity]}):
            with pytest.raises(psycopg.Error) as caught, conn.transaction():
                conn.execute(pg.COMMIT_ROWS, (json.dumps(rows), *publish, *[None] * 8, False))
            assert caught.value.sqlstate == "PPN01"
            assert caught.value.diag.message_primary == next(iter(rows.values()))[0]["message"]
    with Production.open(postgres_uri, read_only=True) as production:
        assert production.revisions(limit=1)[0].sequence == published
        assert production.job(job.id).state is JobState.CLAIMED


def test_a_value_json_text_cannot_carry_is_committed_by_the_statements(
    postgres_uri: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An edit that only adds metadata commits through pp_commit (0012); one whose value holds
    a NUL (JSON's \\u0000, which PostgreSQL's jsonb refuses) goes as pp_number, the insert and
    pp_publish instead, and both read back as they were asserted, in order."""
    with Production.create(postgres_uri) as production:
        with production.edit() as tx:
            asset = tx.create_asset("A")
            tx.commit()
        sent = _recording(monkeypatch, lambda query, _: query)
        for values in (["proxy-720p", "proxy-1080p"], ["nul \x00 inside", "after it"]):
            sent.clear()
            with production.edit() as tx:
                for value in values:
                    tx.add_metadata(AssetRef(asset), PROFILE, value)
                tx.commit()
            commit_rows = any("pp_commit" in query for query in sent)
            assert commit_rows is ("\x00" not in values[0]), sent
            assert [a.value.value for a in production.metadata[AssetRef(asset)]][-2:] == values


def test_a_workers_claim_and_completion_take_one_round_trip_each(
    postgres_uri: str, tmp_path: Path, trips: list[int]
) -> None:
    """Migration 0013: ``Production.claim_next_job_lease`` is one ``pp_claim_next`` call
    (claim, event, ``pp_publish``; autocommit), also by a registered worker; a completion in an
    edit opened with ``defer_lease_checks`` sends its lease check with the commit: one pipeline
    of BEGIN, ``pp_lease_check``, the transition, ``pp_commit`` and COMMIT."""
    source = tmp_path / "source.mov"
    source.write_bytes(b"source")
    with Production.create(postgres_uri) as production:
        with production.edit() as tx:
            asset = tx.create_asset("A")
            original = tx.add_representation(asset, RepresentationKind.ORIGINAL, source)
            for _ in range(4):
                tx.request_job(JobRequest("org.example:trips", (original,), asset, RepresentationKind.PROXY))
            tx.commit()
        with production.edit() as tx:
            session = tx.register_worker("trips", capacity=1)
            tx.commit()
        production.claim_next_job_lease(TOOL, LEASE)  # the write connection's settings go once, first
        trips[0] = trips[1] = 0
        lease = production.claim_next_job_lease(TOOL, LEASE)
        assert lease is not None
        assert trips == [1, 1]  # pp_claim_next (was: 2 round trips, 4 statements)
        job = production.job(lease.job_id)
        output = tmp_path / "out.mov"
        output.write_bytes(b"out")
        trips[0] = trips[1] = 0
        with production.edit(defer_lease_checks=True) as tx:
            rep = tx.add_representation(job.output_asset_id, job.output_representation_kind, output)
            activity = tx.create_activity(
                ActivitySpec(job.kind, inputs=job.inputs, outputs=(rep,), tool=TOOL)
            )
            tx.add_metadata(ActivityRef(activity), PROFILE, "proxy-720p")
            tx.complete_job_lease(lease, rep, activity)
            assert trips == [0, 0]  # nothing sent before the commit
            tx.commit()
        assert trips == [1, 5]  # BEGIN, pp_lease_check, the transition, pp_commit, COMMIT (was 2 round trips)
        assert production.job(job.id).state is JobState.SUCCEEDED
        trips[0] = trips[1] = 0
        by_worker = production.claim_next_job_lease(TOOL, LEASE, worker=session)
        assert by_worker is not None
        assert trips == [1, 1]  # the worker's row lock, facts and gate ride in the call (was 2, 5)
        trips[0] = trips[1] = 0
        assert production.claim_next_job_lease(TOOL, LEASE, worker=session) is None  # at capacity
        assert trips == [1, 1]
        assert production.job_counts()[JobState.REQUESTED] == 1
        trips[0] = trips[1] = 0
        work = production.claim_next_job(TOOL, LEASE)  # with the job and its parameters
        assert work is not None
        assert trips == [1, 1]  # pp_claim_next with the job and its metadata as it left them (0014; was 3)
        assert work.job == production.job(work.lease.job_id)
        with production.edit() as tx:
            tx.request_job(JobRequest(job.kind, job.inputs, job.output_asset_id, RepresentationKind.PROXY))
            tx.commit()
        trips[0] = trips[1] = 0
        work = production.claim_next_job(TOOL, LEASE, principal="farm")  # (the service's claim)
        assert work is not None
        assert trips == [1, 4]  # BEGIN, the principal's setting, pp_claim_next with the reads, COMMIT


def test_complete_job_is_one_round_trip_and_one_statement(
    postgres_uri: str, tmp_path: Path, trips: list[int]
) -> None:
    """Migration 0014: ``Production.complete_job`` of a claim made in this process is one
    ``pp_complete`` call (lease check, rows, events, ``pp_publish``; autocommit), with a
    principal one round trip too; a claim this process does not know runs the completion edit."""
    source = tmp_path / "source.mov"
    source.write_bytes(b"source")
    with Production.create(postgres_uri) as production:
        with production.edit() as tx:
            asset = tx.create_asset("A")
            original = tx.add_representation(asset, RepresentationKind.ORIGINAL, source)
            for _ in range(3):
                job = tx.request_job(
                    JobRequest("org.example:trips", (original,), asset, RepresentationKind.PROXY)
                )
                tx.add_metadata(JobRef(job), PROFILE, "proxy-720p")
            tx.commit()
        outputs = []
        for n in range(3):
            outputs.append(tmp_path / f"out{n}.mov")
            outputs[-1].write_bytes(b"out %d" % n)
        work = production.claim_next_job(TOOL, LEASE)
        assert work is not None
        trips[0] = trips[1] = 0
        done = production.complete_job(work.lease, outputs[0], tool=TOOL, tail="done\n")
        assert trips == [1, 1]  # pp_complete (was: 1 round trip, 5 statements, and the edit's Python)
        assert production.job(work.lease.job_id).completion == done
        work = production.claim_next_job(TOOL, LEASE)
        assert work is not None
        trips[0] = trips[1] = 0
        production.complete_job(work.lease, outputs[1], tool=TOOL, principal="farm")
        assert trips == [1, 4]  # BEGIN, the principal's setting, pp_complete, COMMIT
        assert production.latest_revision().principal == "farm"  # type: ignore[union-attr]
        with Production.open(postgres_uri) as elsewhere:  # a claim this process does not know
            lease = elsewhere.claim_next_job_lease(TOOL, LEASE)
            assert lease is not None
        trips[0] = trips[1] = 0
        production.complete_job(lease, outputs[2], tool=TOOL)
        assert trips[0] > 1  # the job and its parameters read, then the edit (its lease row read first)
        assert production.job(lease.job_id).state is JobState.SUCCEEDED
