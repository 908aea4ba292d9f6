"""Export the job list (issue 16, item 6): every job the filters list, paged from the store,
not only the rows loaded in the table, to CSV or JSON."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from postproject import JobState, Production
from postproject_gui.services.filters import JobFilter
from tests.gui.conftest import WindowFactory
from tests.gui.helpers import ProductionBuilder, ready, wait_for


def test_export_writes_every_matching_job_not_only_the_loaded_rows(
    qtbot: Any, make_window: WindowFactory, big_copy: Path, tmp_path: Path
) -> None:
    window = make_window(big_copy)
    session = window.session
    assert session is not None and session.table.rowCount() == 200  # one page loaded of 10,000
    done: list[tuple[str, int]] = []
    window.jobs.exported.connect(lambda path, count: done.append((path, count)))
    target = tmp_path / "all.csv"
    window.jobs.export_to(session, target)
    wait_for(qtbot, lambda: done, timeout=60_000)
    assert done == [(str(target), 10_000)]
    with target.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    with Production.open(big_copy, read_only=True) as production:
        newest = [str(j.id) for j in production.jobs(limit=5, newest_first=True).items]
    assert len(rows) == 10_000 and [r["id"] for r in rows[:5]] == newest  # the table's order
    assert {r["state"] for r in rows} == {"requested"} and rows[0]["kind"] == "org.postproject:generate-proxy"
    assert not list(tmp_path.glob(".*.partial"))
    assert window.status.currentMessage().startswith("Exported 10,000 jobs")


def test_export_follows_the_filters_to_json(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder, tmp_path: Path
) -> None:
    ids = builder.request(6)
    builder.fail(ids[0], "ffmpeg exited with status 1\nmoov atom not found")
    builder.fail(ids[1], "unsupported profile")
    builder.claim(ids[2], agent="render-09")
    window = make_window(builder.production.path, builder.production.clock)
    session = window.session
    assert session is not None
    session.set_filter(JobFilter(state=JobState.FAILED, text="moov"))
    wait_for(qtbot, lambda: ready(window) and session.table.rowCount() == 1)
    done: list[int] = []
    window.jobs.exported.connect(lambda _path, count: done.append(count))
    target = tmp_path / "failed.json"
    window.jobs.export_to(session, target)
    wait_for(qtbot, lambda: done, timeout=20_000)
    document = json.loads(target.read_text(encoding="utf-8"))
    assert document["count"] == 1 and document["filter"]["state"] == "failed"
    (item,) = document["items"]
    assert item["id"] == str(ids[0]) and item["diagnostic"].startswith("ffmpeg exited")
    assert item["inputs"] == [str(builder.rep)] and item["output_name"] == "A001_C002"
    session.set_filter(JobFilter(stuck=False, state=JobState.CLAIMED))
    wait_for(qtbot, lambda: ready(window) and session.table.rowCount() == 1)
    claimed = tmp_path / "claimed.csv"
    window.jobs.export_to(session, claimed)
    wait_for(qtbot, lambda: len(done) == 2, timeout=20_000)
    with claimed.open(newline="", encoding="utf-8") as handle:
        (row,) = list(csv.DictReader(handle))
    assert row["claimed_by_agent"] == "render-09" and row["claimed_by_tool"] == "ffmpeg 6.1"
    assert row["claim_health"] == "live" and row["lease_expires_at"]
