"""Wake-ups on PostgreSQL come from LISTEN/NOTIFY: a wait reads nothing while nothing commits,
another process's progress report wakes ``wait_for_progress`` and ``wait_for_activity`` at
once, and no payload carries a lease secret."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import psycopg
import pytest

from postproject import JobRequest, Production, RepresentationKind, ToolIdentity
from postproject.storage.postgresql import connection, uri
from postproject.storage.postgresql.localserver import LocalServer
from tests.waiting import wait_until_in_feed_wait

TOOL = ToolIdentity("pg-wake", "1")
WAIT = 30  # seconds a wait may last here: far longer than a wake-up takes, even on a loaded machine
WATCHER = "pp_wake_watcher"  # the application_name of the waiting production's connections

# Another process: claim the one job, wait for "go" on stdin, report progress, print when its
# commit returned (CLOCK_MONOTONIC is one clock for every process on the host), then renew.
REPORTER = """
import sys, time
from datetime import timedelta
from postproject import Production, ToolIdentity
with Production.open(sys.argv[1]) as production:
    with production.edit() as tx:
        lease = tx.claim_next_job_lease(ToolIdentity("pg-wake", "1"), timedelta(minutes=5))
        tx.commit()
    print(lease.export_token(), flush=True)
    for line in sys.stdin:
        with production.edit() as tx:
            tx.report_progress(lease, fraction=float(line))
            tx.commit()
        print(time.monotonic(), flush=True)
"""


@pytest.fixture
def location(postgres_uri: str, postgres_server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("PGPASSWORD", postgres_server.password)
    with Production.create(postgres_uri) as production, production.edit() as tx:
        asset = tx.create_asset()
        tx.request_job(JobRequest("org.example:wake", (), asset, RepresentationKind.PROXY))
        tx.commit()
    return postgres_uri


@pytest.fixture
def watcher(location: str) -> Iterator[Production]:
    """The waiting side, its connections named so the server can say what they ran."""
    base, _, query = location.partition("?")
    with Production.open(f"{base}?application_name={WATCHER}&{query}", read_only=True) as production:
        yield production


@pytest.fixture
def reporter(location: str) -> Iterator[subprocess.Popen[str]]:
    with subprocess.Popen(
        [sys.executable, "-c", REPORTER, location],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    ) as process:
        assert process.stdout is not None and process.stdout.readline().startswith("ppl1:")
        yield process
        assert process.stdin is not None
        process.stdin.close()
        assert process.wait(30) == 0


def report(process: subprocess.Popen[str], fraction: float) -> float:
    """Have the other process report progress; when its commit returned (monotonic seconds)."""
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(f"{fraction}\n")
    process.stdin.flush()
    return float(process.stdout.readline())


def last_query_of_watcher(admin: psycopg.Connection[Any]) -> Any:
    return admin.execute(
        "SELECT max(query_start) FROM pg_stat_activity WHERE application_name = %s", (WATCHER,)
    ).fetchone()[0]


def quiet_while(wait: Callable[[], object], admin: psycopg.Connection[Any]) -> None:
    """While ``wait`` blocks with nothing committing, the waiter's connections run no query."""
    thread = threading.Thread(target=wait)
    thread.start()
    wait_until_in_feed_wait(thread)  # its first read is done; from here on it only sleeps
    (started,) = admin.execute("SELECT clock_timestamp()").fetchone()
    time.sleep(1.2)  # the window watched: polling every 50 ms would run some 24 queries in it
    last = last_query_of_watcher(admin)
    thread.join(10)
    assert last is not None and last < started, "the wait read the tables while nothing committed"


def test_waits_read_nothing_while_nothing_commits(watcher: Production, postgres_server: LocalServer) -> None:
    token = watcher.progress_token()
    with postgres_server.admin() as admin:
        quiet_while(lambda: watcher.wait_for_changes(watcher.latest_sequence(), 1.8), admin)
        quiet_while(lambda: watcher.wait_for_progress(token, 1.8), admin)
        quiet_while(lambda: watcher.wait_for_activity(watcher.latest_sequence(), token, 1.8), admin)


def test_another_process_progress_wakes_the_waits_at_once(
    watcher: Production, reporter: subprocess.Popen[str]
) -> None:
    # Each wait may last WAIT seconds: one that ends sooner was woken by the report's
    # notification (the waits poll nothing: see above). How soon is a benchmark's figure
    # (bench_postgres_claims.py, wake), not a test's.
    token = watcher.progress_token()
    woke: list[tuple[float, int]] = []

    def wait() -> None:
        found = watcher.wait_for_progress(token, WAIT)
        woke.append((time.monotonic(), found))

    thread = threading.Thread(target=wait)
    started = time.monotonic()
    thread.start()
    wait_until_in_feed_wait(thread)
    report(reporter, 0.25)
    thread.join(WAIT + 10)
    ((at, found),) = woke
    assert found != token
    assert at - started < WAIT  # woken by the report, not by its timeout

    head = watcher.latest_sequence()
    results: list[tuple[float, int, int]] = []

    def follow() -> None:
        changes, progress = watcher.wait_for_activity(head, found, WAIT)
        results.append((time.monotonic(), len(changes.revisions), progress))

    thread = threading.Thread(target=follow)
    started = time.monotonic()
    thread.start()
    time.sleep(1.1)  # the attempt signals at most once a second: the next report must be a second later
    report(reporter, 0.5)
    thread.join(WAIT + 10)
    ((at, revisions, progress),) = results
    assert revisions == 0 and progress != found  # progress is not a revision
    assert at - started < WAIT  # woken by the report, not by its timeout


def test_progress_notifications_hold_no_lease_secret(location: str, reporter: subprocess.Popen[str]) -> None:
    listener = connection.connect(uri.parse(location), autocommit=True)
    listener.execute("LISTEN postproject")
    time.sleep(1.1)
    report(reporter, 0.75)
    payloads = [n.payload for n in listener.notifies(timeout=5, stop_after=1)]
    listener.close()
    assert payloads == [f"{uri.parse(location).production} progress"]


def test_a_wait_catches_up_while_its_notifications_are_down(
    location: str, postgres_server: LocalServer
) -> None:
    """With the listening connection killed, a commit made before it is back is still seen."""
    with Production.open(location, read_only=True) as follower, Production.open(location) as writer:
        head = follower.latest_sequence()
        assert follower.wait_for_changes(head, 0).revisions == ()  # listening from here on
        with postgres_server.admin() as admin:
            ended = admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = 'postproject-listen'"
            ).fetchall()
        assert ended
        with writer.edit() as tx:
            tx.create_asset()
            tx.commit()
        started = time.monotonic()
        changes = follower.wait_for_changes(head, timedelta(seconds=WAIT))
        assert [r.sequence for r in changes.revisions] == [head + 1]
        assert time.monotonic() - started < WAIT  # it caught up, rather than waiting out its timeout
