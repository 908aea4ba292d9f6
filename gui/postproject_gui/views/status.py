"""The status bar: which production, which revision the view reflects, and whether live
updates are working (so nobody mistakes a stale screen for a quiet production): ● Live (green),
◐ Feed stalled or ◐ Waiting for the database (amber), ○ Not live (amber, bold)."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

from postproject_gui.look.theme import Theme
from postproject_gui.text import location as production_location

MESSAGE_MS = 8000


class StatusBar(QStatusBar):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("statusBar")
        self.setSizeGripEnabled(True)
        self.production = QLabel("No production", self)
        self.production.setObjectName("productionLabel")
        self.revision = QLabel("", self)
        self.revision.setObjectName("revisionLabel")
        self.revision.setToolTip("The newest revision whose changes the window shows")
        self.live = QLabel("", self)
        self.live.setObjectName("liveIndicator")
        for label in (self.production, self.revision, self.live):
            self.addPermanentWidget(label)
        self._revision: int | None = None
        self._live: bool | None = None
        self._stalled = 0.0
        self._waiting = False
        self.set_live(None)

    @property
    def revision_number(self) -> int | None:
        return self._revision

    @property
    def is_live(self) -> bool | None:
        return self._live

    @property
    def feed_state(self) -> str:
        """``live``, ``stalled``, ``waiting``, ``down`` or "" (no production)."""
        if self._live is None:
            return ""
        if not self._live:
            return "down"
        if self._waiting:
            return "waiting"
        return "stalled" if self._stalled else "live"

    def set_theme(self, theme: Theme) -> None:
        self.set_live(self._live)

    def message(self, text: str) -> None:
        self.showMessage(text, MESSAGE_MS)

    def set_production(self, location: str | None) -> None:
        """The production's name (a file name, or a URI without its password) and, as the
        tooltip, where it is."""
        self.production.setText(production_location.title(location) if location else "No production")
        self.production.setToolTip(production_location.shown(location) if location else "")
        if location is None:
            self._revision = None
            self.revision.setText("")
            self.set_live(None)

    def set_revision(self, revision: int) -> None:
        self._revision = revision
        self.revision.setText(f"as of revision {revision:,}")
        self.revision.setAccessibleName(self.revision.text())

    def set_live(self, live: bool | None) -> None:
        self._live = live
        if live is None:
            self._stalled, self._waiting = 0.0, False
        self._show_feed()

    def set_stalled(self, seconds: float) -> None:
        """The feed has not answered for ``seconds`` (0: it answers)."""
        self._stalled = seconds
        self._show_feed()

    def set_waiting(self, waiting: bool) -> None:
        """Something waits for a busy database."""
        self._waiting = waiting
        self._show_feed()

    def _show_feed(self) -> None:
        state = self.feed_state
        text, tip = {
            "": ("", ""),
            "live": ("● Live", "Live updates are working: new revisions show within a fraction of a second"),
            "stalled": (
                f"◐ Feed stalled ({self._stalled:.0f} s)",
                "The revision feed has not answered for a while (a slow or hung disk?); "
                "what you see may be out of date until it does",
            ),
            "waiting": (
                "◐ Waiting for the database",
                "Another program is writing to the production; what waits is tried again",
            ),
            "down": ("○ Not live", "The revision feed cannot be read; what you see may be out of date"),
        }[state]
        self.live.setText(text)
        self.live.setToolTip(tip)
        self.live.setAccessibleName(tip or "Live updates")
        self.live.setProperty("live", {"live": "true", "": "false", "down": "false"}.get(state, "amber"))
        self.live.style().unpolish(self.live)
        self.live.style().polish(self.live)
