"""Round trips per operation on PostgreSQL (issue 12: a claim in at most 2, a completion in at most 3).

Counted at the driver: each pipeline a connection sends, and each statement (or message of
statements) sent outside a pipeline, is one round trip (the wrapper only counts; the real
driver runs).
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from postproject import (
    ActivitySpec,
    JobRequest,
    JobState,
    Production,
    RepresentationKind,
    ToolIdentity,
)

TOOL = ToolIdentity("pg-trips", "1")
LEASE = timedelta(minutes=5)


@pytest.fixture
def trips(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    count = [0]
    pipeline, execute = psycopg.Connection.pipeline, psycopg.Cursor.execute

    def counted_pipeline(self: Any) -> Any:
        count[0] += 1
        return pipeline(self)

    def counted_execute(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self.connection.pgconn.pipeline_status == psycopg.pq.PipelineStatus.OFF:
            count[0] += 1
        return execute(self, *args, **kwargs)

    monkeypatch.setattr(psycopg.Connection, "pipeline", counted_pipeline)
    monkeypatch.setattr(psycopg.Cursor, "execute", counted_execute)
    return count


def test_claims_take_two_round_trips_and_a_completion_at_most_three(
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

        def measured(edit: Any) -> tuple[int, Any]:
            trips[0] = 0
            with production.edit() as tx:
                result = edit(tx)
                tx.commit()
            return trips[0], result

        used, lease = measured(lambda tx: tx.claim_next_job_lease(TOOL, LEASE))
        assert lease is not None
        assert used == 2
        used, by_worker = measured(lambda tx: tx.claim_next_job_lease(TOOL, LEASE, worker=session))
        assert by_worker is not None
        assert used == 2
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
        assert used <= 3
        used, third = measured(lambda tx: tx.claim_next_job_lease(TOOL, LEASE, worker=session))
        assert third is not None
        assert used == 2
        # At capacity (2 claims) the worker is told so in the same round trips; nothing is claimed.
        used, none = measured(lambda tx: tx.claim_next_job_lease(TOOL, LEASE, worker=session))
        assert none is None
        assert used <= 2
        assert production.job_counts()[JobState.REQUESTED] == 1


def test_an_operation_without_a_round_trip_sends_no_savepoint(
    postgres_uri: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker's completion edit: the representation's and the activity's operations end with
    their writes still queued, so their savepoints never reach the server (no SAVEPOINT, no
    RELEASE, no subtransaction). An operation that reads inside its savepoint still sends it:
    tests/contract/test_engine_contract.py rolls such savepoints back on both engines."""
    sent: list[str] = []
    execute = psycopg.Cursor.execute

    def recorded(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        sent.append(str(query).split(None, 1)[0].upper())
        return execute(self, query, *args, **kwargs)

    source, output = tmp_path / "source.mov", tmp_path / "out.mov"
    source.write_bytes(b"source")
    output.write_bytes(b"out")
    with Production.create(postgres_uri) as production:
        with production.edit() as tx:
            asset = tx.create_asset("A")
            original = tx.add_representation(asset, RepresentationKind.ORIGINAL, source)
            tx.request_job(JobRequest("org.example:trips", (original,), asset, RepresentationKind.PROXY))
            tx.commit()
        with production.edit() as tx:
            lease = tx.claim_next_job_lease(TOOL, LEASE)
            tx.commit()
        assert lease is not None
        job = production.job(lease.job_id)
        monkeypatch.setattr(psycopg.Cursor, "execute", recorded)
        with production.edit() as tx:
            rep = tx.add_representation(job.output_asset_id, job.output_representation_kind, output)
            activity = tx.create_activity(
                ActivitySpec(job.kind, inputs=job.inputs, outputs=(rep,), tool=TOOL)
            )
            tx.complete_job_lease(lease, rep, activity)
            tx.commit()
        assert "SAVEPOINT" not in sent and "RELEASE" not in sent
        assert len(sent) <= 7  # BEGIN, representation, activity, lease check, job, publish, COMMIT
        assert production.job(lease.job_id).state is JobState.SUCCEEDED
