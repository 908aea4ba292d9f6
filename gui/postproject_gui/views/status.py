"""The status bar: which production, which revision the view reflects, and whether live
updates are working (so nobody mistakes a stale screen for a quiet production)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

from postproject_gui.theme import Theme

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
        self.set_live(None)

    @property
    def revision_number(self) -> int | None:
        return self._revision

    @property
    def is_live(self) -> bool | None:
        return self._live

    def set_theme(self, theme: Theme) -> None:
        self.set_live(self._live)

    def message(self, text: str) -> None:
        self.showMessage(text, MESSAGE_MS)

    def set_production(self, path: Path | None) -> None:
        self.production.setText(path.name if path else "No production")
        self.production.setToolTip(str(path) if path else "")
        if path is None:
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
            text, tip = "", ""
        elif live:
            text, tip = "● Live", "Live updates are working: new revisions show within a fraction of a second"
        else:
            text, tip = "○ Not live", "The revision feed cannot be read; what you see may be out of date"
        self.live.setText(text)
        self.live.setToolTip(tip)
        self.live.setAccessibleName(tip or "Live updates")
        self.live.setProperty("live", "true" if live else "false")
        self.live.style().unpolish(self.live)
        self.live.style().polish(self.live)
