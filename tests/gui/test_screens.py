"""Render every view to PNG, light and dark, and check that something sensible was drawn.

The images land in the test's tmp_path; ``docs/screenshots/make.py`` makes the published
ones (and they were looked at: see docs/monitor.md)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QWidget

from postproject import JobState
from postproject_gui.app import build_window
from postproject_gui.dialogs.cancel_dialog import CancelDialog, CancelPlan
from postproject_gui.dialogs.error_presenter import ErrorPresenter
from postproject_gui.dialogs.request_job_dialog import RequestJobDialog
from postproject_gui.look.theme import ThemeManager, ThemeMode
from postproject_gui.services.filters import JobFilter
from postproject_gui.settings import Settings
from tests.gui.helpers import LoopRunner, wait_for
from tests.gui.scenes import Demo, build_demo


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    return build_demo(tmp_path_factory.mktemp("screens") / "day3.pproj", datetime.now(UTC))


def save(widget: QWidget, path: Path) -> QImage:
    QApplication.processEvents()
    assert widget.grab().save(str(path))
    image = QImage(str(path))
    assert not image.isNull() and image.width() > 300 and image.height() > 200
    colours = {image.pixel(x, y) for x in range(0, image.width(), 7) for y in range(0, image.height(), 7)}
    assert len(colours) > 12, f"{path.name} looks blank"
    return image


@pytest.mark.parametrize("mode", [ThemeMode.LIGHT, ThemeMode.DARK])
def test_every_view_renders(
    qtbot: Any, qloop: LoopRunner, demo: Demo, tmp_path: Path, mode: ThemeMode, presented: list[Any]
) -> None:
    theme = ThemeManager(mode)
    theme.apply()
    window = build_window(Settings.ephemeral(), theme, ErrorPresenter())
    qtbot.addWidget(window)
    window.resize(1440, 900)
    window.show()
    session = window.open_production(demo.path)
    wait_for(qtbot, lambda: session.applied_revision > 0 and not session.busy and session.live)
    background = save(window, tmp_path / f"jobs-{mode.value}.png").pixelColor(5, 300)
    assert (background.lightness() < 100) is theme.theme.dark
    session.set_filter(JobFilter(state=JobState.FAILED))
    wait_for(qtbot, lambda: not session.busy and session.table.rowCount() == len(demo.failed))
    window.select_job(demo.failed[0])
    wait_for(qtbot, lambda: window.detail.detail is not None)
    save(window, tmp_path / f"failed-{mode.value}.png")
    save(window.detail, tmp_path / f"detail-{mode.value}.png")
    save(window.detail.diagram, tmp_path / f"lifecycle-job-{mode.value}.png")
    session.set_filter(JobFilter(stuck=True))
    wait_for(qtbot, lambda: not session.busy and session.table.rowCount() >= len(demo.stuck))
    save(window, tmp_path / f"stuck-{mode.value}.png")
    save(window.detail.diagram, tmp_path / f"lifecycle-production-{mode.value}.png")
    assert window.detail.scene.state.variant == "production"
    window.actions_.tabs[1].trigger()  # Artifacts
    wait_for(qtbot, lambda: session.knowledge.artifacts.rowCount() > 0 and not session.busy)
    save(window, tmp_path / f"artifacts-{mode.value}.png")
    window.knowledge.show_job_graph(demo.succeeded[0])
    wait_for(qtbot, lambda: window.knowledge.provenance.read is not None and not session.busy)
    assert window.tabs.currentIndex() == 2
    wait_for(qtbot, lambda: window.knowledge.provenance.scene.selected_id() == str(demo.succeeded[0]))
    save(window, tmp_path / f"provenance-{mode.value}.png")
    choices = qloop.run(session.service.request_choices())
    request = RequestJobDialog(choices, demo.path)
    qtbot.addWidget(request)
    request.show()
    save(request, tmp_path / f"request-{mode.value}.png")
    rows = [session.table.row(i) for i in range(session.table.rowCount())]
    cancel = CancelDialog(CancelPlan.of(rows, session.now()), session.now())
    qtbot.addWidget(cancel)
    cancel.show()
    save(cancel, tmp_path / f"cancel-{mode.value}.png")
    window.close()
    ThemeManager(ThemeMode.LIGHT).apply()
    assert not presented
