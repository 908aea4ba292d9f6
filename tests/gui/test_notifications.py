"""Desktop notifications (issue 16, item 3): off by default, grouped and rate-limited."""

from __future__ import annotations

from typing import Any

from postproject import JobState
from postproject_gui.settings import Settings
from postproject_gui.views import notifications
from postproject_gui.views.notifications import Notifier
from postproject_gui.window.knowledge_tabs import JOBS
from postproject_gui.window.main_window import WORKERS
from tests.gui.conftest import WindowFactory
from tests.gui.helpers import ProductionBuilder, ready, wait_for


def test_failures_are_grouped_into_one_message_and_limited_to_one_a_minute(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder, monkeypatch: Any
) -> None:
    monkeypatch.setattr(notifications, "GROUP_SECONDS", 1)  # the five commits land within it
    ids = builder.request(8)
    window = make_window(builder.production.location, builder.production.clock, Settings.user())
    notifier = window.notifier
    assert not notifier.enabled and not window.notify_action.isChecked()  # off by default
    builder.fail(ids[0], "moov atom not found")
    wait_for(qtbot, lambda: ready(window, builder.production.latest_sequence()))
    notifier.flush()
    assert notifier.sent == []  # off: nothing told
    window.notify_action.trigger()
    assert notifier.enabled and Settings.user().text("notifications") == "on"
    for job_id in ids[1:6]:
        builder.fail(job_id, "unsupported profile")
    wait_for(qtbot, lambda: notifier.sent, timeout=5000)
    assert [n.text for n in notifier.sent] == ["5 jobs failed in the last minute"]
    builder.fail(ids[6], "unsupported profile")
    wait_for(qtbot, lambda: ready(window, builder.production.latest_sequence()))
    notifier.flush()
    assert len(notifier.sent) == 1  # told a moment ago: the next one waits for the minute
    window.notify_action.trigger()
    assert not notifier.enabled


def test_stuck_claims_and_the_offline_hook(qtbot: Any, qapp: Any) -> None:
    notifier = Notifier(None)
    notifier.set_enabled(True)
    notifier.worker_offline("render-07")
    notifier.worker_offline("render-09")
    notifier.flush()
    (notice,) = notifier.sent
    assert notice.topic == "offline" and notice.text == "2 workers went offline: render-07, render-09"
    notifier.stop()


def test_without_a_system_tray_notifications_show_in_the_window_and_the_menu_says_so(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder, monkeypatch: Any
) -> None:
    """Issue 26 item 5: where the desktop has no system tray (as here, offscreen), a
    notification silently did nothing."""
    monkeypatch.setattr(notifications, "GROUP_SECONDS", 1)
    ids = builder.request(3)
    window = make_window(builder.production.location, builder.production.clock)
    assert not window.notifier.uses_tray
    assert "in the window: no system tray" in window.notify_action.text()
    assert window.notify_action in window.actions_.view_menu.actions()  # type: ignore[union-attr]
    bar = window.notice_bar
    window.notify_action.trigger()
    window.tabs.setCurrentIndex(WORKERS)
    for job_id in ids[:2]:
        builder.fail(job_id, "unsupported profile")
    wait_for(qtbot, lambda: bar.isVisible(), timeout=5000)
    assert "2 jobs failed in the last minute" in bar.text.text()
    assert bar.show_button.text() == "Show failed jobs"
    bar.show_button.click()
    session = window.session
    assert session is not None and session.filter.state is JobState.FAILED
    assert window.tabs.currentIndex() == JOBS and bar.isHidden()
    notifier = Notifier(None, tray_available=lambda: True)  # no tray icon given: in the window too
    shown: list[Any] = []
    notifier.in_window.connect(shown.append)
    notifier.set_enabled(True)
    notifier.worker_offline("render-07")
    notifier.flush()
    assert [n.topic for n in shown] == ["offline"]
    notifier.stop()
