"""The job detail panel with long texts (issue 26 item 3): "why it failed", the producer's
main question, wraps and is selectable however long its paths; so does the log's title; and
neither pushes the lifecycle diagram out of view, at 1024 x 700, 1440 x 900 and 1600 x 1000."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtWidgets import QApplication, QScrollArea

from postproject import AgentIdentity, JobRequest, RepresentationKind, ToolIdentity
from tests.gui.conftest import WindowFactory
from tests.gui.helpers import KIND, ProductionBuilder, wait_for

SIZES = ((1024, 700), (1440, 900), (1600, 1000))
DEEP = "/mnt/san/projects/northlight_feature_2026/reel_04/conform/v0123/A001_C002_graded_and_conformed"


def failed_with_long_paths(builder: ProductionBuilder, tmp_path: Path) -> Any:
    (job,) = builder.request(1)
    folder = tmp_path / ("logs_of_the_render_farm_" * 3) / "attempt_0001_of_the_job_with_a_long_name"
    folder.mkdir(parents=True)
    log = folder / "ffmpeg_A001_C002_graded_and_conformed_proxy_720p_attempt_1.log"
    log.write_text("frame= 12 fps=0.0 q=0.0 size=0kB\n" * 20 + f"{DEEP}/A001_C002.mov: Invalid data\n")
    production = builder.production
    with production.edit() as tx:
        tx.add_media_root("farm-logs", tmp_path)  # a recorded log lies under a media root
        lease = tx.claim_job_lease(
            job, ToolIdentity("ffmpeg", "6.1"), timedelta(minutes=2), AgentIdentity("r-07")
        )
        tx.commit()
    with production.edit() as tx:
        tx.record_attempt_log(lease, path=log)
        tx.fail_job_lease(lease, f"ffmpeg exited with status 1: {DEEP}/A001_C002.mov: Invalid data found")
        tx.commit()
    return job, str(log)


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_a_long_diagnostic_and_log_title_wrap_and_keep_the_diagram_in_view(
    qtbot: Any,
    make_window: WindowFactory,
    builder: ProductionBuilder,
    tmp_path: Path,
    width: int,
    height: int,
) -> None:
    job, log = failed_with_long_paths(builder, tmp_path)
    window = make_window(builder.production.location, builder.production.clock)
    window.resize(width, height)
    assert window.table.select_job(job)
    detail = window.detail
    wait_for(qtbot, lambda: detail.detail is not None and detail.detail.log is not None)
    QApplication.processEvents()
    scroll = detail.findChild(QScrollArea)
    assert scroll is not None
    body = scroll.widget()
    assert body.width() <= scroll.viewport().width(), "the panel's body is wider than the panel"
    failure = detail.failure
    assert failure.isVisible() and DEEP in failure.toPlainText()
    assert failure.horizontalScrollBar().maximum() == 0  # wrapped, not cut
    assert failure.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse
    title = detail.log_source
    assert log in title.text() and title.isVisible()
    assert title.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse
    assert title.mapTo(body, QPoint(0, 0)).x() + title.width() <= scroll.viewport().width()
    diagram = detail.diagram
    top_left = diagram.mapTo(scroll.viewport(), QPoint(0, 0))
    shown = scroll.viewport().rect().intersected(QRect(top_left, diagram.size()))
    assert shown.width() == diagram.width(), "the lifecycle diagram is out of view"
    if height >= 900:  # the whole diagram, the failed state at its bottom too
        assert shown.height() == diagram.height(), (shown.height(), diagram.height())
    else:  # a short panel: its top at least, under the diagnostic
        assert shown.height() >= 60, shown.height()


def test_why_still_requested_never_contradicts_itself_and_says_when_in_local_time(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    """Issue 26 item 10: it said "Claimable now:" and then why it was not ("no online worker"),
    and showed not-before as raw ISO with microseconds in UTC."""
    production = builder.production
    now = production.clock.now()
    later = now + timedelta(hours=2, minutes=10, microseconds=123_456)
    with production.edit() as tx:
        free = tx.request_job(JobRequest(KIND, [builder.rep], builder.asset, RepresentationKind.PROXY))
        held = tx.request_job(
            JobRequest(KIND, [builder.rep], builder.asset, RepresentationKind.PROXY, not_before=later)
        )
        tx.commit()
    window = make_window(production.location, production.clock)
    detail = window.detail
    assert window.table.select_job(free)
    wait_for(qtbot, lambda: detail.detail is not None and detail.detail.job.id == free)
    text = detail.why.text()
    assert "no online worker" in text and "Claimable now" not in text, text
    assert "no worker for its kind is online" in text
    assert window.table.select_job(held)
    wait_for(qtbot, lambda: detail.detail is not None and detail.detail.job.id == held)
    text = detail.why.text()
    local = later.astimezone()
    clock = (
        local.strftime("%H:%M")
        if local.date() == now.astimezone().date()
        else local.strftime("%Y-%m-%d %H:%M")
    )
    assert text.startswith("<b>Held back:</b>")
    assert f"not before: in 2h 10m ({clock})" in text, text
    assert later.isoformat() not in text and "+00:00" not in text
