"""The main window: opening productions, summary and filters, detail, live updates, looks."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QMimeData, QPoint, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QWidget

from postproject import FakeClock, JobState
from postproject_gui.app import build_window
from postproject_gui.dialogs.error_presenter import ErrorPresenter
from postproject_gui.look.theme import ThemeManager, ThemeMode
from postproject_gui.models.columns import column
from postproject_gui.services.filters import JobFilter
from postproject_gui.settings import Settings
from postproject_gui.text import location as production_location
from tests.gui.conftest import WindowFactory
from tests.gui.helpers import LoopRunner, ProductionBuilder, commit_from_another_process, ready, wait_for


def test_main_widgets_have_object_and_accessible_names(
    make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    builder.request(2)
    window = make_window(builder.production.location, builder.production.clock)
    for name in ("jobTable", "stateSummary", "filterBar", "jobDetail", "lifecycleDiagram", "eventLog"):
        widget = window.findChild(QWidget, name)
        assert widget is not None, name
        assert widget.accessibleName(), name
    assert window.status.production.text() == production_location.title(builder.production.location)
    assert (
        window.windowTitle()
        == f"{production_location.title(builder.production.location)} — PostProject Monitor"
    )
    assert window.status.revision.text() == f"as of revision {builder.production.latest_revision().sequence}"  # type: ignore[union-attr]
    assert window.status.is_live


def test_summary_counts_are_filter_toggles(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    ids = builder.request(4)
    builder.fail(ids[0], "ffmpeg exited with status 1\nmoov atom not found")
    builder.cancel(ids[1])
    window = make_window(builder.production.location, builder.production.clock)
    cards = window.summary.cards
    assert [cards[s].count_text for s in JobState] == ["2", "0", "0", "1", "1"]
    qtbot.mouseClick(cards[JobState.FAILED], Qt.MouseButton.LeftButton)
    assert window.session is not None and window.session.filter.state is JobState.FAILED
    wait_for(qtbot, lambda: window.session.table.rowCount() == 1 and not window.session.busy)  # type: ignore[union-attr]
    assert window.filters.state.currentText() == "Failed" and cards[JobState.FAILED].isChecked()
    assert window.table.isColumnHidden(column("lease")) and not window.table.isColumnHidden(
        column("diagnostic")
    )
    qtbot.mouseClick(cards[JobState.FAILED], Qt.MouseButton.LeftButton)
    assert window.session.filter.state is None
    wait_for(qtbot, lambda: window.session.table.rowCount() == 4)  # type: ignore[union-attr]


def test_filter_bar_kind_and_search(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    builder.request(2)
    other = builder.request(1, "org.example:conform")
    window = make_window(builder.production.location, builder.production.clock)
    session = window.session
    assert session is not None
    window.filters.kind.setCurrentIndex(window.filters.kind.findData("org.example:conform"))
    wait_for(qtbot, lambda: session.table.rowCount() == 1 and not session.busy)
    assert session.counts is not None and session.counts.kind == "org.example:conform"
    window.filters.clear.click()
    qtbot.keyClicks(window.filters.search, str(other[0])[-6:])
    wait_for(qtbot, lambda: session.filter.text and session.table.rowCount() == 1 and not session.busy)
    assert session.table.row(0).id == other[0]
    assert "searched" not in window.filters.shown.text()  # the store searched every job


def test_selecting_a_job_shows_every_fact_and_its_lifecycle(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    ids = builder.request(2)
    builder.fail(ids[0], "ffmpeg exited with status 1\nmoov atom not found")
    window = make_window(builder.production.location, builder.production.clock)
    session = window.session
    assert session is not None
    assert window.detail.mode == "production" and window.detail.scene.state.counts[JobState.FAILED] == 1
    assert window.select_job(ids[0]) is None
    wait_for(qtbot, lambda: window.detail.detail is not None)
    detail = window.detail
    assert detail.title.text() == "org.postproject:generate-proxy"
    assert detail.failure.toPlainText() == "ffmpeg exited with status 1\nmoov atom not found"
    assert detail.facts.text("inputs").count("A001_C002.mov") == 1
    assert [detail.history_model.record(r)[2] for r in range(3)] == [
        "job_requested",
        "job_claimed",
        "job_failed",
    ]
    scene = detail.scene.state
    assert scene.variant == "job" and scene.highlighted is JobState.FAILED
    assert scene.travelled[(JobState.CLAIMED, JobState.FAILED)] == 1 and scene.offered == ()
    assert not detail.cancel.isEnabled()
    assert detail.cli.text() == f"postproject job show {shlex.quote(builder.production.location)} {ids[0]}"
    window.table.clearSelection()
    window.table.setCurrentIndex(window.table.model().index(-1, -1))
    wait_for(qtbot, lambda: window.detail.mode == "production")


def test_another_process_commit_updates_table_counts_log_and_status(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    builder.request(1)
    window = make_window(builder.production.location)
    session = window.session
    assert session is not None
    head = session.applied_revision
    (new_id,) = commit_from_another_process(builder)
    wait_for(
        qtbot, lambda: session.table.rowCount() == 2 and session.applied_revision == head + 1, timeout=10_000
    )
    assert str(session.table.row(0).id) == new_id
    wait_for(qtbot, lambda: window.summary.cards[JobState.REQUESTED].count_text == "2")
    assert window.status.revision.text() == f"as of revision {head + 1}"
    assert window.log.view.model().rowCount() >= 1
    assert window.filters.kind.findData("org.example:from-elsewhere") >= 0


def test_stuck_claims_show_in_summary_and_filter(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder, clock: FakeClock
) -> None:
    from datetime import timedelta

    ids = builder.request(3)
    builder.claim(ids[0], seconds=10)
    builder.claim(ids[1], seconds=3600)
    window = make_window(builder.production.location, clock)
    session = window.session
    assert session is not None
    assert window.summary.stuck_card.count_text == "0"
    clock.advance(timedelta(seconds=11))
    session.recheck_time()
    assert window.summary.stuck_card.count_text == "1"
    window.actions_.stuck.trigger()
    wait_for(qtbot, lambda: session.filter.stuck and session.table.rowCount() == 1 and not session.busy)
    assert session.table.row(0).id == ids[0]
    assert window.filters.state.currentText() == "Stuck claims" and window.summary.stuck_card.isChecked()
    assert window.detail.scene.state.highlighted is JobState.CLAIMED


@pytest.mark.sqlite_only("drops a .pproj file on the window and remembers file paths")
def test_open_recent_drop_and_reopen(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder, tmp_path: Path
) -> None:
    from postproject import Production

    builder.request(1)
    settings = Settings.user()
    window = make_window(settings=settings)
    assert window.detail.title.text() == "No production open"
    data = QMimeData()
    data.setUrls([QUrl.fromLocalFile(str(builder.production.location))])
    drop = QDropEvent(
        QPoint(10, 10),
        Qt.DropAction.CopyAction,
        data,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    window.dropEvent(drop)
    wait_for(qtbot, lambda: ready(window))
    assert settings.recent()[0] == str(Path(builder.production.location).resolve())
    assert Path(builder.production.location).name in window.actions_.recent_menu.actions()[0].text()
    with Production.create(tmp_path / "second.pproj"):
        pass
    window.open_production(tmp_path / "second.pproj")
    wait_for(
        qtbot,
        lambda: window.session is not None and window.session.info is not None and not window.session.busy,
    )
    assert window.session.table.rowCount() == 0  # type: ignore[union-attr]
    assert [Path(p).name for p in settings.recent()] == [
        "second.pproj",
        Path(builder.production.location).name,
    ]
    window.close_production()
    assert window.session is None and window.status.production.text() == "No production"


def test_theme_switch_and_column_memory(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    builder.request(1)
    settings = Settings.user()
    window = make_window(builder.production.location, builder.production.clock, settings)
    window.theme.set_mode(ThemeMode.DARK)
    assert window.theme.theme.dark and window.actions_.themes[ThemeMode.DARK].isChecked()
    assert settings.theme() is ThemeMode.DARK
    window.table._toggle_column(column("inputs"), False)
    window.table.setColumnWidth(column("kind"), 321)
    window.close()
    assert "inputs" in (settings.strings("workspace/producer/jobTableHidden") or [])
    again = make_window(builder.production.location, builder.production.clock, settings)
    assert again.table.isColumnHidden(column("inputs")) and again.table.columnWidth(column("kind")) == 321
    window.theme.set_mode(ThemeMode.LIGHT)


def test_failures_reach_the_presenter(
    qtbot: Any, qloop: LoopRunner, tmp_path: Path, presented: list[Any]
) -> None:
    theme = ThemeManager(ThemeMode.LIGHT)
    window = build_window(Settings.ephemeral(), theme, ErrorPresenter())
    qtbot.addWidget(window)
    window.open_production(tmp_path / "nowhere.pproj")
    wait_for(qtbot, lambda: presented and window.session is None)
    assert [p.title for p in presented] == ["Opening nowhere.pproj failed: not found"]
    assert window.status.production.text() == "No production"
    presented.clear()


def test_filter_is_kept_immutable() -> None:
    flt = JobFilter(state=JobState.FAILED)
    assert flt.with_(text="x").state is JobState.FAILED and flt.text == ""
