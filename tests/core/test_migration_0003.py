"""Schema 3 migrates a version-2 production in place: jobs keep their state, live claims and
claim order; no job waits on anything; nothing is superseded."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from postproject import JobId, JobState, Production, ProductionId, RepresentationId, ToolIdentity
from postproject.storage.sqlite import connection, schema

T0 = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z, the suite's fake clock start


def version_2_file(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[bytes, bytes, bytes]:
    """A production at schema version 2 with an asset, an original, a requested and a claimed
    job (rows written as a version-2 release wrote them); (requested, claimed, original)."""
    with monkeypatch.context() as patch:
        patch.setattr(schema, "_MIGRATIONS", schema._MIGRATIONS[:2])
        patch.setattr(schema, "LATEST", 2)
        conn = connection.create_file(path, ProductionId.new().bytes, T0)
    asset, rep = JobId.new().bytes, RepresentationId.new().bytes
    requested, claimed = JobId.new().bytes, JobId.new().bytes
    with conn:
        conn.execute("INSERT INTO assets VALUES (?, 'A001', ?, 1)", (asset, T0))
        conn.execute(
            "INSERT INTO representations VALUES (?, ?, 0, '/media/a.mov', NULL, 1, ?, ?, 1)",
            (rep, asset, T0, T0),
        )
        for job in (requested, claimed):
            conn.execute(
                "INSERT INTO jobs (id, kind, inputs, output_asset_id, output_kind, state, requested_at, "
                "requested_sequence, updated_sequence, available_at) VALUES (?, 'org.example:a', ?, ?, 1, 1, ?, 1, 1, ?)",
                (job, rep, asset, T0, T0),
            )
        conn.execute(
            "UPDATE jobs SET state = 2, claim_secret_hash = ?, claim_tool_name = 'old', claimed_at = ?, "
            "claim_expires_at = ?, claim_sequence = 1, claim_attempt = 1, attempts = 1 WHERE id = ?",
            (b"\x01" * 32, T0, T0 + 10**12, claimed),
        )
        conn.execute("INSERT INTO revisions VALUES (1, ?, ?, NULL, NULL, NULL)", (JobId.new().bytes, T0))
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
    conn.close()
    return requested, claimed, rep


def test_a_version_2_production_migrates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clock: object
) -> None:
    path = tmp_path / "v2.pproj"
    requested, claimed, rep = version_2_file(path, monkeypatch)
    with Production.open(path, clock=clock) as production:  # type: ignore[arg-type]
        job = production.job(JobId(claimed))
        assert (job.state, job.depends_on, job.bound_inputs, job.regenerates) == (
            JobState.CLAIMED,
            (),
            (),
            None,
        )
        assert job.inputs == (RepresentationId(rep),)
        assert production.representation(RepresentationId(rep)).superseded_by is None
        assert production.explain_pending(JobId(requested)).claimable
        with production.edit() as tx:
            lease = tx.claim_next_job_lease(ToolIdentity("new", "1"), timedelta(minutes=1))
            tx.commit()
        assert lease is not None and lease.job_id == JobId(requested)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.LATEST  # 3 and later applied
        ready = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'jobs_ready'").fetchone()[0]
        assert "waiting = 0" in ready
