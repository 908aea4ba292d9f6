"""Optional desktop notifications (system tray) when jobs fail or claims get stuck: off by
default, switched on from *View ▸ Desktop notifications*, remembered in the settings.

Rate-limited and grouped: what happens is collected for ``GROUP_SECONDS`` after the first
event and then told in one message per kind of trouble ("5 jobs failed in the last minute"),
and each kind is told at most once per ``MIN_GAP_SECONDS``; what happens meanwhile waits
for the next message. Workers going offline reach :meth:`Notifier.workers_offline` from the
session's worker watch, which reads liveness when a worker's heartbeats should have arrived.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QSystemTrayIcon, QWidget

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
    """Signal: notified(Notice) for every message shown (or that would be, with no tray)."""

    notified = Signal(object)

    def __init__(self, tray: QSystemTrayIcon | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._tray = tray
        self.enabled = False
        self.sent: list[Notice] = []
        self._pending: dict[str, list[str]] = {}  # topic -> what happened (ids or names)
        self._last: dict[str, float] = {}
        self._stuck_seen: set[str] = set()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.flush)

    def set_enabled(self, on: bool) -> None:
        self.enabled = on
        if self._tray is not None:
            self._tray.setVisible(on and QSystemTrayIcon.isSystemTrayAvailable())
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
        if self._tray is not None and self._tray.isVisible():
            self._tray.showMessage(notice.title, notice.text, QSystemTrayIcon.MessageIcon.Warning, 8000)
        self.notified.emit(notice)
