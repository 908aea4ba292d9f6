"""The Dashboard tab (issue 16, item 2): series drawn from the revision feed, live."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

from postproject import FakeClock, JobState, Production
from postproject_gui.models.dashboard_data import DashboardData
from postproject_gui.services.dashboard_reads import first_sequence_since, read_history
from postproject_gui.window.main_window import DASHBOARD
from tests.gui.conftest import WindowFactory
from tests.gui.helpers import ProductionBuilder, commit_from_another_process, wait_for


def _succeed(builder: ProductionBuilder, job_id: Any) -> None:
    from postproject import ActivitySpec, RepresentationKind

    lease = builder.claim(job_id)
    media = builder.media
    out = media / f"{job_id}.mov"
    out.write_bytes(b"proxy")
    with builder.production.edit() as tx:
        rep = tx.add_representation(builder.asset, RepresentationKind.PROXY, out)
        activity = tx.create_activity(
            ActivitySpec("org.postproject:transcode", inputs=[builder.rep], outputs=[rep])
        )
        tx.complete_job_lease(lease, rep, activity)
        tx.commit()


def test_history_is_read_from_the_feed_and_series_match_it(builder: ProductionBuilder) -> None:
    clock = builder.production.clock
    assert isinstance(clock, FakeClock)
    ids = builder.request(4)
    thumbs = builder.request(1, "org.postproject:generate-thumbnail")
    _succeed(builder, ids[0])
    _succeed(builder, thumbs[0])
    builder.fail(ids[1], "moov atom not found")
    now = clock.now()
    head = builder.production.latest_sequence()
    assert first_sequence_since(builder.production, now - timedelta(days=1), head) == 1
    history = read_history(builder.production, now, head)
    assert history.complete and history.through == head
    data = DashboardData()
    data.load(history)
    data.backlog_now = builder.production.job_counts()[JobState.REQUESTED]
    series = data.series(now, "hour")
    assert series.throughput == {
        "org.postproject:generate-proxy": [0] * 59 + [1],
        "org.postproject:generate-thumbnail": [0] * 59 + [1],
    }
    assert series.failure_rate[-1] == 1 / 3 and series.failure_rate[0] is None
    assert series.backlog[-1] == 2 and len(series.backlog) == 60
    day = data.series(now, "day")
    assert len(day.starts) == 96 and day.bucket == timedelta(minutes=15)


def test_the_dashboard_follows_the_feed(
    qtbot: Any, qtmodeltester: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    ids = builder.request(3)
    builder.fail(ids[0], "moov atom not found")
    window = make_window(builder.production.location)  # the system clock, as the other process's
    tab = window.dashboard
    window.tabs.setCurrentIndex(DASHBOARD)
    wait_for(qtbot, lambda: tab.ready and tab.series is not None)
    assert tab.figures["backlog"].text() == "2"
    qtmodeltester.check(tab.model)
    commit_from_another_process(builder, 4)  # four more waiting jobs, from another process
    wait_for(qtbot, lambda: tab.figures["backlog"].text() == "6" and tab.ready)
    assert tab.series is not None and tab.series.backlog[-1] == 6
    tab.set_span("day")
    assert tab.series.span == "day" and tab.model.rowCount() == 96
    qtmodeltester.check(tab.model)
    tab.as_table.setChecked(True)
    assert tab.stack.currentWidget() is tab.table


def test_dashboard_snapshot_lists_the_series(builder: ProductionBuilder, tmp_path: Path) -> None:
    ids = builder.request(3)
    builder.fail(ids[0], "unsupported profile")
    out = tmp_path / "dash.png"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "postproject_gui",
            str(builder.production.location),
            "--snapshot",
            str(out),
            "--view",
            "dashboard",
            "--size",
            "1024x700",
        ],
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    shown = json.loads(out.with_suffix(".json").read_text())
    assert shown["view"] == "dashboard" and shown["size"] == [1024, 700]
    assert set(shown) >= {"throughput", "failure_rate", "backlog", "rows"}
    assert shown["backlog"][-1] == 2 and len(shown["failure_rate"]) == 60
    assert len(shown["rows"]) == 3
    with Production.open(builder.production.location, read_only=True) as production:
        assert shown["head_revision"] == production.latest_sequence()
