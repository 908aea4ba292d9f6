"""The non-modal "Waiting for the database…" bar: what waits, when it is tried again, and
*Retry now* / *Give up*. It sits above the tabs and never blocks the window."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QWidget

from postproject.model.clock import monotonic
from postproject_gui.services.waiting import Waiting


class BusyBanner(QFrame):
    """Signals: retry_requested(), give_up_requested()."""

    retry_requested = Signal()
    give_up_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("busyBanner")
        self.setAccessibleName("Waiting for the database")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 4, 6, 4)
        layout.setSpacing(8)
        self.icon = QLabel("◐", self)
        self.icon.setObjectName("busyIcon")
        self.text = QLabel("", self)
        self.text.setObjectName("busyText")
        self.text.setWordWrap(True)
        self.text.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.retry = QPushButton("Retry now", self)
        self.retry.setObjectName("busyRetry")
        self.retry.setToolTip("Try what waits for the database again, now")
        self.give_up = QPushButton("Give up", self)
        self.give_up.setObjectName("busyGiveUp")
        self.give_up.setToolTip("Forget what waits (nothing of it was done)")
        layout.addWidget(self.icon)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.retry)
        layout.addWidget(self.give_up)
        self.retry.clicked.connect(self.retry_requested)
        self.give_up.clicked.connect(self.give_up_requested)
        self._state: Waiting | None = None
        self.hide()

    @property
    def state(self) -> Waiting | None:
        return self._state

    def show_state(self, state: Waiting | None) -> None:
        self._state = state
        if state is None:
            self.hide()
            return
        self.text.setText(state.text(monotonic()))
        self.setAccessibleDescription(self.text.text())
        self.give_up.setVisible(state.next_retry is not None or not state.attempts)
        self.show()
