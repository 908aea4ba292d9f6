"""Desktop notifications (issue 16, item 3): off by default, grouped and rate-limited."""

from __future__ import annotations

from typing import Any

from postproject_gui.settings import Settings
from postproject_gui.views import notifications
from postproject_gui.views.notifications import Notifier
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
