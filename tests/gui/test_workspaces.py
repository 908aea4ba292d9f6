"""Workspaces (issue 16, item 4): one click between Producer, Editor and Supervisor, each
remembering its filter, columns and tab."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication

from postproject import JobState, Production
from postproject_gui.models.columns import column
from postproject_gui.services.filters import JobFilter
from postproject_gui.settings import Settings
from postproject_gui.views.workspaces import filter_from_text, filter_to_text
from postproject_gui.window.knowledge_tabs import ARTIFACTS, JOBS
from postproject_gui.window.main_window import WORKERS
from tests.gui.conftest import WindowFactory
from tests.gui.helpers import KIND, ProductionBuilder, ready, wait_for


def test_one_click_switches_and_each_workspace_remembers_its_own(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    ids = builder.request(3)
    builder.fail(ids[0], "unsupported profile")
    builder.claim(ids[1], seconds=30)
    settings = Settings.user()
    window = make_window(builder.production.path, builder.production.clock, settings)
    spaces = window.workspaces
    session = window.session
    assert session is not None and spaces.current.key == "producer"
    assert [a.text() for a in spaces.toolbar.actions()] == ["Producer", "Editor", "Supervisor"]
    session.set_filter(JobFilter(state=JobState.FAILED))
    window.table._toggle_column(column("inputs"), False)
    wait_for(qtbot, lambda: ready(window))
    spaces.actions["supervisor"].trigger()  # one click
    assert spaces.current.key == "supervisor" and window.tabs.currentIndex() == WORKERS
    assert session.filter.stuck and window.table.isColumnHidden(column("inputs"))
    assert not window.table.isColumnHidden(column("output"))  # issue 26: the supervisor sees outputs
    assert not window.table.isColumnHidden(column("lease"))
    spaces.actions["editor"].trigger()
    assert window.tabs.currentIndex() == ARTIFACTS and session.filter == JobFilter()
    spaces.actions["producer"].trigger()
    assert session.filter.state is JobState.FAILED and window.tabs.currentIndex() == JOBS
    assert window.table.isColumnHidden(column("inputs"))
    wait_for(qtbot, lambda: ready(window) and session.table.rowCount() == 1)
    spaces.actions["supervisor"].trigger()
    window.close()
    again = make_window(builder.production.path, builder.production.clock, settings)  # next run
    assert again.workspaces.current.key == "supervisor" and again.tabs.currentIndex() == WORKERS
    assert again.session is not None and again.session.filter.stuck


def test_filters_survive_the_settings_file() -> None:
    flt = JobFilter(state=JobState.CLAIMED, kind="org.x:y", text="render", newest_first=False)
    assert filter_from_text(filter_to_text(flt), JobFilter()) == flt
    assert filter_from_text("not json", JobFilter(stuck=True)) == JobFilter(stuck=True)
    assert filter_from_text('{"state": "nope"}', JobFilter()) == JobFilter()


@pytest.mark.parametrize(("width", "height"), [(1024, 700), (1440, 900), (1600, 1000)])
def test_the_supervisor_sees_output_and_progress_within_the_right_edge(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder, width: int, height: int
) -> None:
    """Issue 26 item 10: the Supervisor workspace had no Output column and put Progress past
    the right edge."""
    ids = builder.request(3)
    builder.claim(ids[0], seconds=30)
    window = make_window(builder.production.path, builder.production.clock)
    window.resize(width, height)
    window.workspaces.actions["supervisor"].trigger()
    window.tabs.setCurrentIndex(JOBS)
    wait_for(qtbot, lambda: ready(window))
    QApplication.processEvents()
    table = window.table
    output, progress = column("output"), column("progress")
    assert not table.isColumnHidden(output) and not table.isColumnHidden(progress)
    right = table.columnViewportPosition(progress) + table.columnWidth(progress)
    if width >= 1440:
        assert right <= table.viewport().width(), (right, table.viewport().width())
    else:  # the table is 620 px wide beside the detail panel: Progress starts in view
        assert table.columnViewportPosition(progress) < table.viewport().width()
    header = table.horizontalHeader()
    assert header.visualIndex(progress) < header.visualIndex(output)


def test_a_new_window_on_another_production_does_not_reuse_the_last_ones_filter(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder, tmp_path: Path
) -> None:
    """Issue 26 item 10: a filter of the last production (a kind, a search) opened a new
    window on another production as "0 of 0 shown"."""
    builder.request(2)
    settings = Settings.user()
    first = make_window(builder.production.path, builder.production.clock, settings)
    assert first.session is not None
    only_here = JobFilter(kind=KIND, text="A001")
    first.session.set_filter(only_here)
    wait_for(qtbot, lambda: ready(first))
    first.close()
    with Production.create(
        tmp_path / "other.pproj", clock=builder.production.clock, allow_injected_clock=True
    ) as other:
        ProductionBuilder(other, tmp_path / "other-media").request(3, kind="org.example:conform")
    second = make_window(tmp_path / "other.pproj", builder.production.clock, settings)
    assert second.session is not None and second.session.filter == JobFilter()
    wait_for(qtbot, lambda: ready(second) and second.session.table.rowCount() == 3)  # type: ignore[union-attr]
    assert second.filters.shown.text().startswith("3 of 3 shown")
    second.close()
    again = make_window(builder.production.path, builder.production.clock, settings)  # the first one again
    assert again.session is not None and again.session.filter == only_here


def test_a_producer_sees_when_each_job_finished_and_why_it_failed(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    """The Producer workspace at 1,440 x 900 shows the Finished and Diagnostic columns, whole
    time stamps in Finished (before, both were past the right edge, behind Claimed by, Lease and
    Progress, and a time stamp lost its seconds to the column's width)."""
    ids = builder.request(2)
    builder.fail(ids[0], "moov atom not found")
    window = make_window(builder.production.path, builder.production.clock)
    window.resize(1440, 900)
    wait_for(qtbot, lambda: ready(window))
    QApplication.processEvents()
    table, header = window.table, window.table.horizontalHeader()
    width = table.viewport().width()
    finished, diagnostic = column("finished"), column("diagnostic")
    for index in (finished, diagnostic):
        assert not header.isSectionHidden(index)
        assert header.sectionViewportPosition(index) + 60 <= width, (
            index,
            header.sectionViewportPosition(index),
            width,
        )
    assert header.sectionViewportPosition(finished) + header.sectionSize(finished) <= width
    model = table.model()
    row = next(r for r in range(model.rowCount()) if model.data(model.index(r, finished)))
    text = model.data(model.index(row, finished))
    assert table.fontMetrics().horizontalAdvance(text) + 12 <= header.sectionSize(finished), text
