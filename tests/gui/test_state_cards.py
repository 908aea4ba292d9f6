"""The summary's cards (issue 26 item 8): a card click means "show me these" from any tab,
and never two cards look selected."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

from postproject import JobState
from postproject_gui.window.knowledge_tabs import ARTIFACTS, JOBS
from postproject_gui.window.main_window import DASHBOARD, WORKERS, MainWindow
from tests.gui.conftest import WindowFactory
from tests.gui.helpers import ProductionBuilder, wait_for


def selected(window: MainWindow) -> list[str]:
    """The cards that look selected."""
    summary = window.summary
    cards = [*summary.cards.values(), summary.stuck_card, summary.stale_card]
    return [card.accessibleName().split(":")[0] for card in cards if card.isChecked()]


def test_a_card_click_always_shows_its_jobs_and_one_card_at_most_looks_selected(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    ids = builder.request(3)
    builder.fail(ids[0], "unsupported profile")
    window = make_window(builder.production.location, builder.production.clock)
    session = window.session
    assert session is not None
    failed = window.summary.cards[JobState.FAILED]
    qtbot.mouseClick(failed, Qt.MouseButton.LeftButton)
    assert session.filter.state is JobState.FAILED and selected(window) == ["Failed"]
    for tab in (WORKERS, DASHBOARD, ARTIFACTS):
        window.tabs.setCurrentIndex(tab)
        qtbot.mouseClick(failed, Qt.MouseButton.LeftButton)  # from another tab: show them
        assert window.tabs.currentIndex() == JOBS and session.filter.state is JobState.FAILED, tab
        assert selected(window) == ["Failed"]
        window.tabs.setCurrentIndex(tab)
        assert selected(window) == [], tab  # the failed jobs are not on screen here
    window.summary.stale_card.click()
    assert window.tabs.currentIndex() == ARTIFACTS and selected(window) == ["Stale or diverged artifacts"]
    qtbot.mouseClick(window.summary.stuck_card, Qt.MouseButton.LeftButton)
    assert (
        window.tabs.currentIndex() == JOBS and session.filter.stuck and selected(window) == ["Stuck claims"]
    )
    window.tabs.setCurrentIndex(WORKERS)
    qtbot.mouseClick(window.summary.stuck_card, Qt.MouseButton.LeftButton)
    assert session.filter.stuck and selected(window) == ["Stuck claims"]
    qtbot.mouseClick(failed, Qt.MouseButton.LeftButton)
    assert session.filter.state is JobState.FAILED and not session.filter.stuck
    wait_for(qtbot, lambda: session.table.rowCount() == 1 and not session.busy)
    qtbot.mouseClick(failed, Qt.MouseButton.LeftButton)  # the selected card, in the Jobs tab: all jobs
    assert session.filter.state is None and selected(window) == []
    wait_for(qtbot, lambda: session.table.rowCount() == 3)
