"""Waiting for other writers' locks (issue 28 item 10). SQLite: a renewal needs the write
lock, so it cannot beat a lock held longer than the lease; a wait past half of the time an
edit may wait (a worker's renewals: its lease) is logged as a warning while it waits.
PostgreSQL: a renewal does not wait behind other writers' locks (rows of other jobs, the
clock row, workers, the input's fingerprints, an edit open in another process)."""

from __future__ import annotations

import logging
import sqlite3
import threading
from datetime import timedelta
from pathlib import Path

import psycopg
import pytest

from postproject import JobLease, Production, StorageError
from postproject.storage.postgresql.uri import parse
from tests.core.jobs_helpers import Setup, make_setup
from tests.waiting import wait_until


def test_sqlite_warns_while_an_edit_waits_past_half_its_busy_timeout(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "locked.pproj"
    Production.create(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another program holds the write lock throughout
    try:
        with (
            caplog.at_level(logging.WARNING),
            Production.open(path, busy_timeout=1.2) as production,
            pytest.raises(StorageError) as raised,
            production.edit() as tx,
        ):
            tx.create_asset("A001")
    finally:
        holder.rollback()
        holder.close()
    assert "busy" in raised.value.message, raised.value
    warnings = [r for r in caplog.records if getattr(r, "action", None) == "lock_wait"]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING
    assert "another program holds it" in warnings[0].getMessage()


def test_sqlite_a_short_wait_is_not_worth_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "free.pproj"
    with caplog.at_level(logging.WARNING), Production.create(path) as production, production.edit() as tx:
        tx.create_asset("A001")
        tx.commit()
    assert not [r for r in caplog.records if getattr(r, "action", None) == "lock_wait"]


@pytest.fixture
def s(production: Production, tmp_path: Path) -> Setup:
    return make_setup(production, production.clock, tmp_path)  # type: ignore[arg-type]


def test_postgresql_a_renewal_does_not_wait_behind_other_writers_locks(s: Setup, engine_kind: str) -> None:
    if engine_kind != "postgresql":
        pytest.skip("SQLite has one writer at a time: its renewals wait for the lock (the warning above)")
    ours, theirs = s.request(), s.request()
    lease = s.claim(ours, 60_000_000)
    s.claim(theirs, 60_000_000)
    location = s.production.location
    uri = parse(location)
    with (
        psycopg.connect(uri.conninfo, autocommit=False) as blocker,
        Production.open(location, clock=s.clock, allow_injected_clock=True) as other,
    ):
        blocker.execute(f"SET search_path TO {uri.production}")
        blocker.execute(
            "UPDATE jobs SET priority = priority WHERE id <> %s", (ours,)
        )  # every other job's row
        blocker.execute("UPDATE job_clock SET high_water = high_water")
        blocker.execute("UPDATE workers SET host = host")
        blocker.execute("SELECT * FROM representation_fingerprints FOR UPDATE")  # our input's too
        edit = other.edit()  # and a library edit open in another process, mid-way
        tx = edit.__enter__()
        tx.create_asset("A002")
        tx.add_media_root("elsewhere", None)

        renewed = threading.Event()

        def renew() -> None:
            with Production.open(location, clock=s.clock, allow_injected_clock=True) as production:
                held = JobLease.import_token(production, lease.export_token())
                with production.edit() as renewal:
                    renewal.renew_job_lease(held, timedelta(minutes=5))
                    renewal.commit()
            renewed.set()

        thread = threading.Thread(target=renew, daemon=True)
        thread.start()
        try:
            wait_until(renewed.is_set, "the renewal, while the other writers hold their locks", timeout=30)
        finally:
            tx.commit()
            edit.__exit__(None, None, None)
            blocker.rollback()
            thread.join(30)
    claim = s.production.job(ours).claim
    assert claim is not None and claim.expires_at > lease.expires_at - timedelta(minutes=1)
