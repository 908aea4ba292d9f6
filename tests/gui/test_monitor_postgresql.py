"""The monitor on a PostgreSQL production (issue 12): the real window opens a ``postgresql://``
URI and never shows its password, another process's commit and progress arrive live through
LISTEN/NOTIFY, and a killed server connection turns the status to "Not live" and back to
"Live" while the window catches up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from psycopg import sql

from postproject import Production
from postproject.storage.postgresql.localserver import LocalServer
from postproject_gui.models.columns import column
from postproject_gui.settings import Settings
from postproject_gui.window.main_window import MainWindow
from tests.gui.conftest import WindowFactory
from tests.gui.helpers import ProductionBuilder, commit_from_another_process, wait_for
from tests.postgresql_fixtures import SHARED_DATABASE

MONITOR = "pp_monitor_under_test"  # the application_name of the window's connections
PROGRESS = column("progress")

# Another process: claim the first job, print its id, then report progress for each line read.
REPORTER = """
import sys
from datetime import timedelta
from postproject import Production, ToolIdentity
with Production.open(sys.argv[1]) as production:
    with production.edit() as tx:
        lease = tx.claim_next_job_lease(ToolIdentity("pg-gui", "1"), timedelta(minutes=5))
        tx.commit()
    print(lease.job_id, flush=True)
    for line in sys.stdin:
        fraction, stage = line.split()
        with production.edit() as tx:
            tx.report_progress(lease, fraction=float(fraction), stage=stage)
            tx.commit()
        print("reported", flush=True)
"""


@pytest.fixture
def pg_builder(
    postgres_uri: str, postgres_server: LocalServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[ProductionBuilder]:
    """A production on the test server, on the server's clock; other processes find the
    password in PGPASSWORD (the production's ``location`` never holds it)."""
    monkeypatch.setenv("PGPASSWORD", postgres_server.password)
    with Production.create(postgres_uri) as production:
        yield ProductionBuilder(production, tmp_path / "media")


def monitored(uri: str) -> str:
    """``uri`` with the window's connections named, so the test can find and kill them."""
    base, _, query = uri.partition("?")
    return f"{base}?application_name={MONITOR}&{query}"


def test_a_postgresql_production_opens_live_and_its_password_is_never_shown(
    qtbot: Any,
    make_window: WindowFactory,
    pg_builder: ProductionBuilder,
    postgres_uri: str,
    postgres_server: LocalServer,
) -> None:
    pg_builder.request(2)
    settings = Settings.ephemeral()
    window: MainWindow = make_window(postgres_uri, None, settings)  # the URI holds the password
    password = postgres_server.password
    assert password in postgres_uri
    shown = pg_builder.production.location
    assert shown.startswith("postgresql://postproject@127.0.0.1:") and password not in shown
    assert window.windowTitle() == f"{shown} — PostProject Monitor"
    assert window.status.production.text() == shown and window.status.production.toolTip() == shown
    schema = shown.rpartition("production=")[2]
    assert window.detail.title.text() == f"{schema} on 127.0.0.1:{postgres_server.port}/postproject_tests"
    assert window.detail.subtitle.text() == shown
    assert settings.recent() == [shown]  # remembered without the password
    assert [a.toolTip() for a in window.actions_.recent_menu.actions()][:1] == [shown]
    assert window.status.feed_state == "live"
    session = window.session
    assert session is not None and session.table.rowCount() == 2

    head = session.applied_revision
    (job,) = commit_from_another_process(pg_builder)
    wait_for(qtbot, lambda: session.applied_revision == head + 1, timeout=10_000)
    wait_for(qtbot, lambda: session.table.rowCount() == 3)
    assert str(job) in {str(session.table.row(r).job.id) for r in range(3)}
    assert window.status.revision.text() == f"as of revision {head + 1:,}"
    texts = [window.windowTitle(), window.status.production.text(), window.detail.subtitle.text()]
    assert all(password not in text for text in texts)


def test_another_process_progress_shows_live(
    qtbot: Any, make_window: WindowFactory, pg_builder: ProductionBuilder
) -> None:
    pg_builder.request(1)
    with subprocess.Popen(
        [sys.executable, "-c", REPORTER, pg_builder.production.location],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as reporter:
        assert reporter.stdin is not None and reporter.stdout is not None
        job = reporter.stdout.readline().strip()
        window: MainWindow = make_window(pg_builder.production.location)
        model = window.table.table_model()
        session = window.session
        assert session is not None

        def progress_shown() -> str:
            row = next((r for r in range(model.rowCount()) if str(session.table.row(r).job.id) == job), 0)
            return str(model.index(row, PROGRESS).data())

        wait_for(
            qtbot, lambda: model.rowCount() == 1 and str(session.table.row(0).job.state.value) == "claimed"
        )
        head = session.applied_revision
        reporter.stdin.write("0.4 encode\n")
        reporter.stdin.flush()
        assert reporter.stdout.readline().strip() == "reported"
        wait_for(qtbot, lambda: progress_shown().startswith("40% · encode"), timeout=8000)
        assert session.applied_revision == head  # progress is not a revision
        reporter.stdin.close()
        assert reporter.wait(30) == 0


def test_a_killed_connection_goes_not_live_then_catches_up(
    qtbot: Any, make_window: WindowFactory, pg_builder: ProductionBuilder, postgres_server: LocalServer
) -> None:
    pg_builder.request(1)
    window: MainWindow = make_window(monitored(pg_builder.production.location))
    session = window.session
    assert session is not None and window.status.feed_state == "live"
    states: list[bool] = []
    session.live_changed.connect(states.append)
    head = session.applied_revision
    # New connections to the database are refused while the window's are killed: a killed
    # connection alone may be replaced before the feed's next read needs it (the listener
    # reconnects at once, a pooled read retries on a fresh connection), and then the window
    # rightly never stops being live; refused, it cannot read, and must say so.
    database = sql.Identifier(SHARED_DATABASE)
    with postgres_server.admin() as admin:
        admin.execute(sql.SQL("ALTER DATABASE {} WITH ALLOW_CONNECTIONS false").format(database))
        try:
            killed = admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
                (MONITOR,),
            ).fetchall()
            assert killed  # the listening connection and the pooled readers
            wait_for(qtbot, lambda: window.status.feed_state == "down", timeout=15_000)
        finally:
            admin.execute(sql.SQL("ALTER DATABASE {} WITH ALLOW_CONNECTIONS true").format(database))
    (job,) = commit_from_another_process(pg_builder)  # lands while the window reconnects
    wait_for(qtbot, lambda: session.applied_revision == head + 1, timeout=15_000)
    wait_for(qtbot, lambda: window.status.feed_state == "live", timeout=15_000)
    assert states[:1] == [False] and states[-1] is True  # "Not live" while it could not read
    wait_for(qtbot, lambda: session.table.rowCount() == 2)
    assert str(job) in {str(session.table.row(r).job.id) for r in range(2)}

    commit_from_another_process(pg_builder)  # and live updates continue
    wait_for(qtbot, lambda: session.applied_revision == head + 2, timeout=10_000)


def test_the_configured_production_may_be_a_uri_and_the_snapshot_hides_its_password(
    pg_builder: ProductionBuilder, postgres_uri: str, postgres_server: LocalServer, tmp_path: Path
) -> None:
    """``production = 'postgresql://...'`` in the configuration opens in the monitor; the
    snapshot document names it without the password even when the URI carries one."""
    pg_builder.request(3)
    config = tmp_path / "config.toml"
    config.write_text(f"production = '{postgres_uri}'\n", encoding="utf-8")
    out = tmp_path / "shot.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "POSTPROJECT_CONFIG": str(config)}
    env.pop("PGPASSWORD")  # the password is only in the configured URI
    done = subprocess.run(
        [sys.executable, "-m", "postproject_gui", "--snapshot", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert document["production"] == pg_builder.production.location
    assert document["counts"]["requested"] == 3 and document["live"] is True
    password = postgres_server.password
    assert password not in out.with_suffix(".json").read_text(encoding="utf-8")
    assert password not in done.stdout + done.stderr
    logs = list(Path(os.environ["XDG_STATE_HOME"]).rglob("monitor.log"))
    assert logs and all(password not in log.read_text(encoding="utf-8") for log in logs)


def test_an_idle_window_reads_nothing(
    qtbot: Any, make_window: WindowFactory, pg_builder: ProductionBuilder, postgres_server: LocalServer
) -> None:
    """Between commits the window's connections run no query: the feed watcher sleeps until
    the server notifies (a polling watcher would query every few tens of milliseconds)."""
    pg_builder.request(2)
    window: MainWindow = make_window(monitored(pg_builder.production.location))
    session = window.session
    assert session is not None
    qtbot.wait(1500)  # the opening reads finish
    admin = postgres_server.admin()
    (started,) = admin.execute("SELECT clock_timestamp()").fetchone()
    qtbot.wait(2000)
    (last,) = admin.execute(
        "SELECT max(query_start) FROM pg_stat_activity WHERE application_name = %s", (MONITOR,)
    ).fetchone()
    assert last is not None and last < started, "the idle window queried the server"
    head = session.applied_revision
    commit_from_another_process(pg_builder)  # and it still wakes at once
    wait_for(qtbot, lambda: session.applied_revision == head + 1, timeout=10_000)
