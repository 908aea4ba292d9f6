"""Optional notifications when jobs fail, claims get stuck or workers go offline: off by
default, switched on from *View ▸ Desktop notifications*, remembered in the settings. They
are system-tray messages where the desktop has a tray; where it has none (many window
managers, GNOME without an extension) they show in the window instead, in a bar above the
tabs (:class:`NoticeBar`), and the menu says so.

Rate-limited and grouped: what happens is collected for ``GROUP_SECONDS`` after the first
event and then told in one message per kind of trouble ("5 jobs failed in the last minute"),
and each kind is told at most once per ``MIN_GAP_SECONDS``; what happens meanwhile waits
for the next message. Workers going offline reach :meth:`Notifier.workers_offline` from the
session's worker watch, which reads liveness when a worker's heartbeats should have arrived.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QSystemTrayIcon, QWidget

from postproject import Revision
from postproject.model.clock import monotonic
from postproject_gui.services.types import ClaimOutlook

GROUP_SECONDS = 10
MIN_GAP_SECONDS = 60


@dataclass(frozen=True, slots=True)
class Notice:
    title: str
    text: str
    topic: str  # "failed", "stuck" or "offline"


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'s' if count != 1 else ''}"


class Notifier(QObject):
    """Signals: notified(Notice) for every message told; in_window(Notice) for those told in
    the window because there is no system tray to show them."""

    notified = Signal(object)
    in_window = Signal(object)

    def __init__(
        self,
        tray: QSystemTrayIcon | None,
        parent: QWidget | None = None,
        tray_available: Callable[[], bool] = QSystemTrayIcon.isSystemTrayAvailable,
    ) -> None:
        super().__init__(parent)
        self._tray = tray
        self._tray_available = tray_available
        self.enabled = False
        self.sent: list[Notice] = []
        self._pending: dict[str, list[str]] = {}  # topic -> what happened (ids or names)
        self._last: dict[str, float] = {}
        self._stuck_seen: set[str] = set()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.flush)

    @property
    def uses_tray(self) -> bool:
        """Messages go to the system tray (else they show in the window)."""
        return self._tray is not None and self._tray_available()

    def set_enabled(self, on: bool) -> None:
        self.enabled = on
        if self._tray is not None:
            self._tray.setVisible(on and self.uses_tray)
        if not on:
            self._pending.clear()
            self._timer.stop()

    def stop(self) -> None:
        self._timer.stop()
        self._pending.clear()

    # --- what happened -------------------------------------------------------------------

    def on_revisions(self, revisions: list[Revision]) -> None:
        failed = [str(e.payload["job_id"]) for r in revisions for e in r.events if e.kind == "job_failed"]
        self._note("failed", failed)

    def on_outlook(self, outlook: ClaimOutlook, now: datetime) -> None:
        stuck = {str(c.job_id) for c in outlook.stuck(now)}
        fresh = sorted(stuck - self._stuck_seen)
        self._stuck_seen = stuck
        self._note("stuck", fresh)

    def worker_offline(self, name: str) -> None:
        """A registered worker stopped reporting (its last heartbeat is too old)."""
        self._note("offline", [name])

    def workers_offline(self, names: list[str]) -> None:
        self._note("offline", list(names))

    def _note(self, topic: str, items: list[str]) -> None:
        if not self.enabled or not items:
            return
        self._pending.setdefault(topic, []).extend(items)
        if not self._timer.isActive():
            self._timer.start(GROUP_SECONDS * 1000)

    # --- telling -------------------------------------------------------------------------

    def flush(self) -> None:
        """Tell what was collected (topics told less than MIN_GAP_SECONDS ago wait)."""
        now = monotonic()
        waiting = False
        for topic in list(self._pending):
            if now - self._last.get(topic, -1e9) < MIN_GAP_SECONDS:
                waiting = True
                continue
            items = self._pending.pop(topic)
            self._last[topic] = now
            self._show(self._notice(topic, items))
        if waiting and not self._timer.isActive():
            wait = min(MIN_GAP_SECONDS - (now - self._last[t]) for t in self._pending)
            self._timer.start(max(1, int(wait * 1000)))

    @staticmethod
    def _notice(topic: str, items: list[str]) -> Notice:
        count = len(items)
        if topic == "failed":
            return Notice("Jobs failed", f"{_plural(count, 'job')} failed in the last minute", topic)
        if topic == "stuck":
            return Notice(
                "Claims stuck",
                f"{_plural(count, 'claim')} got stuck (the lease expired; nobody renews it)",
                topic,
            )
        names = ", ".join(sorted(set(items))[:5])
        return Notice("Workers offline", f"{_plural(count, 'worker')} went offline: {names}", topic)

    def _show(self, notice: Notice) -> None:
        self.sent.append(notice)
        if self.uses_tray and self._tray is not None:
            self._tray.setVisible(True)
            self._tray.showMessage(notice.title, notice.text, QSystemTrayIcon.MessageIcon.Warning, 8000)
        else:
            self.in_window.emit(notice)
        self.notified.emit(notice)


SHOW = {"failed": "Show failed jobs", "stuck": "Show stuck claims", "offline": "Show workers"}


class NoticeBar(QFrame):
    """A notification told in the window (no system tray): what happened, a button that shows
    it and one that dismisses the bar. The newest notification replaces the one shown.

    Signal: show_requested(str topic): "failed", "stuck" or "offline"."""

    show_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("noticeBar")
        self.setAccessibleName("Notification")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 4, 6, 4)
        layout.setSpacing(8)
        self.icon = QLabel("⚠", self)
        self.icon.setObjectName("noticeIcon")
        self.text = QLabel("", self)
        self.text.setObjectName("noticeText")
        self.text.setWordWrap(True)
        self.text.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.show_button = QPushButton("Show", self)
        self.show_button.setObjectName("noticeShow")
        self.dismiss = QPushButton("Dismiss", self)
        self.dismiss.setObjectName("noticeDismiss")
        self.dismiss.setToolTip("Hide this notification")
        layout.addWidget(self.icon)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.show_button)
        layout.addWidget(self.dismiss)
        self.show_button.clicked.connect(self._show_clicked)
        self.dismiss.clicked.connect(self.hide)
        self.notice: Notice | None = None
        self.hide()

    def show_notice(self, notice: Notice) -> None:
        self.notice = notice
        self.text.setText(f"<b>{notice.title}</b> · {notice.text}")
        self.setAccessibleDescription(f"{notice.title}: {notice.text}")
        self.show_button.setText(SHOW.get(notice.topic, "Show"))
        self.show()

    def _show_clicked(self) -> None:
        if self.notice is not None:
            self.show_requested.emit(self.notice.topic)
        self.hide()
