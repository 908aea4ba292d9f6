"""A production moves from a .pproj to PostgreSQL with every fact (and back: tests/cli/test_copy.py)."""

from __future__ import annotations

import secrets
from datetime import timedelta
from pathlib import Path

import pytest

from postproject import (
    ActivitySpec,
    AssetRef,
    ConflictError,
    FakeClock,
    JobLease,
    JobRequest,
    JobState,
    Production,
    Property,
    RepresentationKind,
    ToolIdentity,
    transfer,
)
from tests.conftest import START
from tests.waiting import wait_until

TOOL = ToolIdentity("copy-test", "1")
NOTE = Property("https://example.com/notes", "note")


def test_a_file_production_copies_into_postgresql_with_its_live_claims(
    postgres_uri: str, tmp_path: Path
) -> None:
    clock = FakeClock(START)
    source = tmp_path / "source.pproj"
    media = tmp_path / "a.mov"
    media.write_bytes(b"a")
    with Production.create(source, clock=clock, allow_injected_clock=True) as production:
        with production.edit() as tx:
            asset = tx.create_asset("A")
            tx.add_metadata(AssetRef(asset), NOTE, "before")
            original = tx.add_representation(asset, RepresentationKind.ORIGINAL, media)
            done = tx.request_job(JobRequest("org.example:k", (original,), asset, RepresentationKind.PROXY))
            live = tx.request_job(JobRequest("org.example:k", (original,), asset, RepresentationKind.PROXY))
            tx.commit()
        with production.edit() as tx:
            first = tx.claim_job_lease(done, TOOL, timedelta(minutes=5))
            second = tx.claim_job_lease(live, TOOL, timedelta(minutes=5))
            tx.commit()
        with production.edit() as tx:
            out = tx.add_representation(asset, RepresentationKind.PROXY, media)
            activity = tx.create_activity(ActivitySpec("org.example:k", inputs=(original,), outputs=(out,)))
            tx.complete_job_lease(first, out, activity)
            tx.commit()
        token = second.export_token()
        report = transfer.copy(source, postgres_uri)
    assert report.rows["jobs"] == 2 and report.rows["job_attempts"] == 2
    assert transfer.verify(source, postgres_uri).equal
    with Production.open(postgres_uri, clock=clock, allow_injected_clock=True) as copied:
        assert copied.job(done).state is JobState.SUCCEEDED
        assert copied.activity(activity).outputs[0].snapshot is not None
        lease = JobLease.import_token(copied, token)
        with copied.edit() as tx:
            tx.renew_job_lease(lease, timedelta(minutes=10))
            tx.commit()
        assert copied.latest_sequence() == 4
        with copied.edit() as tx:  # metadata ids go on after the copied ones
            tx.add_metadata(AssetRef(asset), NOTE, "after")
            tx.commit()
        assert [a.value.value for a in copied.metadata[AssetRef(asset)]] == ["before", "after"]
    with pytest.raises(ConflictError) as refused:
        transfer.copy(source, postgres_uri)
    assert refused.value.reason == "not_empty"


def test_verify_closes_the_first_production_when_the_second_cannot_be_opened(
    postgres_uri: str, postgres_server: object, tmp_path: Path
) -> None:
    """(Its connection was left open, found by a ResourceWarning once a read-only open on
    PostgreSQL kept its first connection rather than a pool.)"""
    from postproject.model.errors import NotFoundError
    from postproject.storage.postgresql.localserver import LocalServer

    assert isinstance(postgres_server, LocalServer)
    Production.create(postgres_uri).close()
    # The server is the whole pytest-xdist worker's: count only this call's connections (other
    # tests' connections may still be ending meanwhile).
    application = f"verify_{secrets.token_hex(4)}"
    location = f"{postgres_uri}&application_name={application}"

    def connections() -> int:
        with postgres_server.admin() as admin:
            (count,) = admin.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (application,)
            ).fetchone()
        return int(count)

    with Production.open(location, read_only=True) as production:  # the count sees these connections
        production.jobs(limit=1)
        assert connections() >= 1
    wait_until(lambda: connections() == 0, "the read-only production's connections to end", timeout=10)
    with pytest.raises(NotFoundError):
        transfer.verify(location, tmp_path / "missing.pproj")
    wait_until(lambda: connections() == 0, "verify's connection to end (it was left open)", timeout=10)
