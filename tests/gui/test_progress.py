"""Live progress, "cancelling…" and the attempt's log in the monitor (issue 15): a real
production, a job claimed by a registered worker that reports progress through the core,
followed by the feed watcher's progress probe (progress is not a revision)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pytestqt.modeltest import ModelTester
from shiboken6 import Shiboken

from postproject import (
    AgentIdentity,
    FakeClock,
    JobLease,
    JobRequest,
    JobState,
    Production,
    RepresentationKind,
    ToolIdentity,
)
from postproject_gui.models import roles
from postproject_gui.models.columns import column
from postproject_gui.models.job_table_model import JobTableModel
from postproject_gui.services.filters import JobFilter
from postproject_gui.services.reads import NameCache, row
from postproject_gui.text import progress_text
from postproject_gui.window.main_window import JOBS, WORKERS, MainWindow
from tests.gui.conftest import WindowFactory
from tests.gui.helpers import wait_for

TOOL = ToolIdentity("ffmpeg", "7.0")
KIND = "org.postproject:generate-proxy"
PROGRESS = column("progress")


class Farm:
    """One requested job claimed by worker ``render-01``, its attempt log a file beside it."""

    def __init__(self, production: Production, clock: FakeClock, folder: Path) -> None:
        self.production, self.clock = production, clock
        self.log = folder / "attempt.log"
        self.log.write_text("probe: 24 frames\n", encoding="utf-8")
        (folder / "A001_C001.mov").write_bytes(b"camera original" * 16)
        with production.edit() as tx:
            tx.add_media_root("work", folder)  # an attempt's log lives under a media root
            asset = tx.create_asset("A001_C001")
            original = tx.add_representation(asset, RepresentationKind.ORIGINAL, folder / "A001_C001.mov")
            self.job = tx.request_job(JobRequest(KIND, (original,), asset, RepresentationKind.PROXY))
            session = tx.register_worker("render-01", capacity=2, host="node-a")
            tx.commit()
        with production.edit() as tx:
            self.lease: JobLease = tx.claim_job_lease(
                self.job, TOOL, timedelta(minutes=5), AgentIdentity("node-a/1"), worker=session
            )
            tx.record_attempt_log(self.lease, path=self.log)
            tx.commit()

    def report(self, fraction: float, stage: str) -> None:
        self.clock.advance(timedelta(seconds=2))  # past the one-signal-per-second coalescing
        with self.production.edit() as tx:
            assert tx.report_progress(self.lease, fraction=fraction, stage=stage, message=f"{stage} frame")
            tx.commit()


@pytest.fixture
def farm(production: Production, clock: FakeClock, tmp_path: Path) -> Farm:
    return Farm(production, clock, tmp_path)


def test_progress_texts_and_the_model_role(qtmodeltester: ModelTester, farm: Farm) -> None:
    production = farm.production
    assert progress_text.progress_text(production.job(farm.job), farm.clock.now()) == ""
    farm.clock.advance(timedelta(seconds=8))
    farm.report(0.25, "encode")  # 10 s for a quarter: 30 s left
    job = production.job(farm.job)
    now = farm.clock.now()
    assert progress_text.progress_text(job, now) == "25% · encode · 30s left"
    assert "encode frame" in progress_text.progress_tip(job, now)
    assert progress_text.progress_text(job, now + timedelta(seconds=10)) == "25% · encode · 20s left"
    assert progress_text.progress_text(job, now + timedelta(seconds=40)) == "25% · encode"  # estimate ran out

    model = JobTableModel(farm.clock.now)
    qtmodeltester.check(model)
    model.reset(JobFilter())
    model.apply_changes({farm.job: row(production, NameCache(), job)})
    qtmodeltester.check(model)
    index = model.index(model.row_of(farm.job) or 0, PROGRESS)
    assert index.data() == "25% · encode · 30s left"
    assert index.data(roles.PROGRESS_ROLE) == 0.25

    with production.edit() as tx:
        tx.cancel_job(farm.job)
        tx.commit()
    stopping = production.job(farm.job)
    assert stopping.state is JobState.CANCELLED and stopping.stopping is not None
    model.apply_changes({farm.job: row(production, NameCache(), stopping)})
    assert model.index(model.row_of(farm.job) or 0, column("state")).data() == "Cancelling…"
    assert model.index(model.row_of(farm.job) or 0, PROGRESS).data() == "cancelling…"
    model.shutdown()
    Shiboken.delete(model)  # on the GUI thread, not whenever (and wherever) the collector runs


def test_live_progress_log_and_cancelling_in_the_window(
    qtbot: Any, qtmodeltester: ModelTester, make_window: WindowFactory, farm: Farm
) -> None:
    window: MainWindow = make_window(farm.production.location, farm.clock)
    window.tabs.setCurrentIndex(JOBS)
    assert window.table.select_job(farm.job)
    wait_for(qtbot, lambda: window.detail.detail is not None and window.detail.detail.job.id == farm.job)
    detail = window.detail
    assert "attempt 1 (live)" in detail.log_title.text()
    assert detail.log.toPlainText() == "probe: 24 frames\n"
    model = window.table.table_model()

    def progress_shown() -> str:
        return str(model.index(model.row_of(farm.job) or 0, PROGRESS).data())

    farm.log.write_text("probe: 24 frames\nencode: 10/24\n", encoding="utf-8")
    farm.report(0.4, "encode")  # no revision: only the progress probe can tell
    wait_for(qtbot, lambda: progress_shown().startswith("40% · encode"), timeout=8000)
    wait_for(qtbot, lambda: detail.facts.text("progress").startswith("40% · encode"))
    wait_for(qtbot, lambda: "encode: 10/24" in detail.log.toPlainText())  # the live log follows
    assert "running · 40%" in detail.attempt_model.record(0)

    window.tabs.setCurrentIndex(WORKERS)
    workers = window.workers.model
    wait_for(qtbot, lambda: workers.row_of("render-01") is not None, timeout=8000)
    wait_for(qtbot, lambda: "40% · encode" in str(workers.data(workers.index(0, 4))), timeout=8000)
    qtmodeltester.check(workers)

    farm.report(0.75, "publish")
    wait_for(qtbot, lambda: "75% · publish" in str(workers.data(workers.index(0, 4))), timeout=8000)
    window.tabs.setCurrentIndex(JOBS)
    wait_for(qtbot, lambda: progress_shown().startswith("75% · publish"), timeout=8000)

    with farm.production.edit() as tx:
        tx.cancel_job(farm.job)
        tx.commit()
    wait_for(qtbot, lambda: detail.facts.text("progress") == "cancelling…", timeout=8000)
    assert "Cancelling…" in detail.facts.text("state") or detail.detail.job.stopping is not None  # type: ignore[union-attr]
    with farm.production.edit() as tx:
        tx.confirm_stopped(farm.lease)
        tx.commit()
    wait_for(qtbot, lambda: detail.detail is not None and detail.detail.job.stopping is None, timeout=8000)
    assert progress_shown() in ("", "None")
    assert "cancelled" in detail.attempt_model.record(0)
