"""What only the PostgreSQL engine has: concurrent edits numbered at commit, NOTIFY wake-ups
that survive a dropped connection, the server's clock, and secrets that never leave as text."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import psycopg
import pytest

from postproject import AssetId, JobRequest, Production, RepresentationKind, ToolIdentity
from postproject.production import DEFAULT_BUSY_TIMEOUT
from postproject.storage.postgresql import connection, uri
from postproject.storage.postgresql.changes import ServerClock
from postproject.storage.postgresql.localserver import LocalServer
from tests.waiting import wait_until, wait_until_in_feed_wait

TOOL = ToolIdentity("pg-test", "1")


@pytest.fixture
def production(postgres_uri: str) -> Iterator[Production]:
    with Production.create(postgres_uri) as production:
        yield production


def raw(location: str) -> psycopg.Connection[Any]:
    return connection.connect(uri.parse(location), autocommit=True)


def test_a_follower_never_skips_a_revision_while_edits_commit_concurrently(
    production: Production, postgres_uri: str
) -> None:
    writers, commits = 4, 40
    errors: list[BaseException] = []
    done = threading.Event()

    def write() -> None:
        try:
            with Production.open(postgres_uri) as mine:
                for _ in range(commits):
                    with mine.edit() as tx:
                        tx.create_asset()
                        tx.commit()
        except BaseException as error:  # reported below
            errors.append(error)

    seen: list[int] = []

    def follow() -> None:
        with Production.open(postgres_uri, read_only=True) as follower:
            last = 0
            while True:
                # Whether the writers had finished before this read: only then does an empty
                # page mean the end (one read before they finished may miss their last commits).
                finished = done.is_set()
                page = follower.changes_since(last, limit=7)
                seen.extend(r.sequence for r in page.revisions)
                last = page.revisions[-1].sequence if page.revisions else last
                if not page.revisions and finished:
                    break

    threads = [threading.Thread(target=write) for _ in range(writers)]
    follower = threading.Thread(target=follow)
    follower.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    done.set()
    follower.join(60)
    assert errors == []
    assert seen == list(range(1, writers * commits + 1))  # gap-free, in order, each once


def test_wait_for_changes_hears_another_hosts_commit_and_survives_a_dropped_connection(
    production: Production, postgres_uri: str, postgres_server: LocalServer
) -> None:
    with Production.open(postgres_uri) as writer:
        assert production.wait_for_changes(0, 0).revisions == ()  # starts listening
        woke: list[float] = []
        timeout = 20

        def wait(after: int) -> None:
            started = time.monotonic()
            production.wait_for_changes(after, timeout)
            woke.append(time.monotonic() - started)

        for round_ in range(2):
            if round_ == 1:  # the listening connection drops: it reconnects and catches up
                admin = postgres_server.admin()
                ended = admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE application_name = 'postproject-listen'"
                ).fetchall()
                assert ended
            waiter = threading.Thread(target=wait, args=(round_,))
            waiter.start()
            wait_until_in_feed_wait(waiter)
            with writer.edit() as tx:
                tx.create_asset()
                tx.commit()
            waiter.join(30)
        assert len(woke) == 2 and max(woke) < timeout  # both woken by the commit, not their timeout
        assert production.latest_sequence() == 2


def test_a_listener_whose_server_goes_between_connect_and_listen_raises_a_storage_error(
    production: Production, postgres_server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server stopped just after the listener connected (found by the outage test under
    load): the LISTEN's failure left as the driver's error, which the workers' recovery policy
    does not know, and a worker's lane stopped with an internal error instead of riding out the
    outage. It is a storage error, the connection's loss, like the connect's own failure."""
    from postproject.model.errors import StorageError
    from postproject.storage.postgresql import changes

    connect = changes.connection.connect

    def connect_then_lose(*args: Any, **kwargs: Any) -> Any:
        conn = connect(*args, **kwargs)
        with postgres_server.admin() as admin:  # the server ends the new connection's backend
            admin.execute("SELECT pg_terminate_backend(%s)", (conn.info.backend_pid,))
        return conn

    monkeypatch.setattr(changes.connection, "connect", connect_then_lose)
    with pytest.raises(StorageError):
        production.wait_for_changes(0, 0)  # starts listening


def test_notifications_and_rows_hold_no_lease_secret(production: Production, postgres_uri: str) -> None:
    with production.edit() as tx:
        asset = tx.create_asset()
        tx.commit()
    listener = raw(postgres_uri)
    listener.execute("LISTEN postproject")
    with production.edit() as tx:
        tx.request_job(JobRequest("org.example:k", (), asset, RepresentationKind.PROXY))
        tx.commit()
    with production.edit() as tx:
        lease = tx.claim_next_job_lease(TOOL, timedelta(minutes=1))
        tx.commit()
    assert lease is not None
    token = lease.export_token()
    secret = token.rsplit(":", 1)[-1]
    payloads = [n.payload for n in listener.notifies(timeout=2, stop_after=2)]
    listener.close()
    assert len(payloads) == 2 and all(secret not in p and token not in p for p in payloads)
    with raw(postgres_uri) as conn:
        (stored,) = conn.execute("SELECT claim_secret_hash FROM jobs").fetchone()
        (attempt,) = conn.execute("SELECT secret_hash FROM job_attempts").fetchone()
    assert len(stored) == 32 and stored == attempt  # SHA-256 only


def test_the_server_clock_follows_the_server_not_this_host(production: Production, postgres_uri: str) -> None:
    clock = production.clock
    assert isinstance(clock, ServerClock)
    with raw(postgres_uri) as conn:
        before = conn.execute("SELECT clock_timestamp()").fetchone()[0]
        ours = clock.now()
        after = conn.execute("SELECT clock_timestamp()").fetchone()[0]
    assert before - timedelta(milliseconds=5) <= ours <= after + timedelta(milliseconds=5)
    assert clock.now() >= ours  # never backwards in one process


def test_a_production_without_a_clock_takes_the_servers_time(postgres_uri: str) -> None:
    with Production.create(postgres_uri) as production:
        with raw(postgres_uri) as conn:
            server = conn.execute("SELECT clock_timestamp()").fetchone()[0]
        with production.edit() as tx:
            asset = production_asset = tx.create_asset()
            tx.commit()
        created = production.asset(asset).created_at
        assert abs((created - server).total_seconds()) < 1
        assert isinstance(production_asset, AssetId)


def test_a_claim_skips_held_jobs_and_waits_only_when_every_claimable_one_is_held(
    production: Production, postgres_uri: str, postgres_server: LocalServer
) -> None:
    with production.edit() as tx:
        asset = tx.create_asset()
        first, second = (
            tx.request_job(JobRequest("org.example:k", (), asset, RepresentationKind.PROXY)) for _ in range(2)
        )
        tx.commit()
    with Production.open(postgres_uri) as other:
        holding = production.edit()
        held = holding.claim_next_job_lease(TOOL, timedelta(minutes=1))  # not committed: holds `first`
        assert held is not None and held.job_id == first
        started = time.monotonic()
        with other.edit() as tx:  # not blocked by the held row: it takes the next job at once
            lease = tx.claim_next_job_lease(TOOL, timedelta(minutes=1))
            tx.commit()
        assert lease is not None and lease.job_id == second
        # Had it waited for the held row (its holder is this very thread), it would have waited
        # out its whole busy timeout.
        assert time.monotonic() - started < DEFAULT_BUSY_TIMEOUT
        holding.rollback()

        # `first` is claimed by a worker that dies: its lease lapses. (A lease long enough to
        # survive its own commit on a loaded machine; the sleep outlasts it.)
        with production.edit() as tx:
            dying = tx.claim_job_lease(first, TOOL, timedelta(milliseconds=500))
            tx.commit()
        expires = dying.expires_at
        assert expires is not None
        wait_until(lambda: production.clock.now() > expires, "the dead worker's lease to lapse")
        with production.edit() as tx:
            assert tx.finalize_lost() == 1  # a sweep in flight holds the expired, claimable `first`
            claimed: list[Any] = []
            waiter = threading.Thread(target=lambda: claimed.extend(_claim_twice(other)))
            waiter.start()
            wait_until(lambda: _waiting_for_a_row_lock(postgres_server), "the claim to wait for the sweep")
            tx.commit()
        waiter.join(10)
        # The claim waited for the sweep (all it could claim was held) and then took `first`:
        # never None while a claimable job exists, as on SQLite.
        assert claimed == [first, None]


def _waiting_for_a_row_lock(server: LocalServer) -> bool:
    """Whether a session of the server waits for a lock another transaction holds."""
    found = server.admin().execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")
    return bool(found.fetchone()[0])  # type: ignore[index]


def _claim_twice(production: Production) -> list[Any]:
    found = []
    for _ in range(2):
        with production.edit() as tx:
            lease = tx.claim_next_job_lease(TOOL, timedelta(minutes=1))
            tx.commit()
        found.append(lease.job_id if lease else None)
    return found
