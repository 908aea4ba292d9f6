"""The filter row: state, kind, text search, order, and what the table currently shows."""

from __future__ import annotations

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QComboBox, QFrame, QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

from postproject import JobState
from postproject_gui.models.filters import JobFilter
from postproject_gui.states import STATE_LOOKS

STUCK = "stuck"
ALL = ""  # item data of "All ..."
SEARCH_DELAY_MS = 250  # typing pauses this long before the search runs


class FilterBar(QFrame):
    """Signal: filter_requested(JobFilter)."""

    filter_requested = Signal(JobFilter)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("filterBar")
        self.setAccessibleName("Job filters")
        self._filter = JobFilter()
        self._syncing = False
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        self.state = QComboBox(self)
        self.state.setObjectName("stateFilter")
        self.state.setAccessibleName("State filter")
        self.state.setToolTip("Show jobs in one state, or stuck claims (Ctrl+L)")
        self.state.addItem("All states", ALL)
        for state, look in STATE_LOOKS.items():
            self.state.addItem(look.label, state.value)
        self.state.addItem("Stuck claims", STUCK)
        self.state.setMinimumContentsLength(12)
        self.kind = QComboBox(self)
        self.kind.setObjectName("kindFilter")
        self.kind.setAccessibleName("Kind filter")
        self.kind.setToolTip("Show jobs of one kind")
        self.kind.addItem("All kinds", ALL)
        self.kind.setMinimumContentsLength(26)
        self.search = QLineEdit(self)
        self.search.setObjectName("searchField")
        self.search.setAccessibleName("Search jobs")
        self.search.setPlaceholderText("Search ids, kinds, names, tools, agents, diagnostics   Ctrl+F")
        self.search.setClearButtonEnabled(True)
        self.search.setToolTip(
            "Searches the jobs as they are read, page by page (the store has no text index).\n"
            "Matches job and asset ids, kinds, output and input names, tool and agent names, diagnostics."
        )
        self.order = QToolButton(self)
        self.order.setObjectName("orderButton")
        self.order.setAccessibleName("Order")
        self.order.setToolTip("Newest first or oldest first (jobs are listed in request order)")
        self.clear = QToolButton(self)
        self.clear.setText("Clear")
        self.clear.setAccessibleName("Clear filters")
        self.clear.setToolTip("Show all jobs, newest first")
        self.shown = QLabel("", self)
        self.shown.setObjectName("shownLabel")
        self.shown.setProperty("role", "muted")
        for widget, stretch in (
            (self.state, 0),
            (self.kind, 0),
            (self.search, 1),
            (self.order, 0),
            (self.clear, 0),
        ):
            layout.addWidget(widget, stretch)
        layout.addWidget(self.shown)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(SEARCH_DELAY_MS)
        self._debounce.timeout.connect(self._emit_text)
        self.state.currentIndexChanged.connect(self._state_chosen)
        self.kind.currentIndexChanged.connect(self._kind_chosen)
        self.search.textChanged.connect(lambda _text: self._debounce.start())
        self.search.returnPressed.connect(self._emit_text)
        self.order.clicked.connect(
            lambda: self._emit(self._filter.with_(newest_first=not self._filter.newest_first))
        )
        self.clear.clicked.connect(self._clear)
        self._sync()

    def shutdown(self) -> None:
        self._debounce.stop()

    def set_kinds(self, kinds: tuple[str, ...]) -> None:
        self._syncing = True
        current = self._filter.kind
        self.kind.clear()
        self.kind.addItem("All kinds", ALL)
        for kind in sorted({*kinds, *([current] if current else [])}):
            self.kind.addItem(kind, kind)
        self._syncing = False
        self._sync()

    def set_filter(self, flt: JobFilter) -> None:
        self._filter = flt
        self._sync()

    def set_shown(self, text: str) -> None:
        self.shown.setText(text)

    def _sync(self) -> None:
        self._syncing = True
        flt = self._filter
        value = STUCK if flt.stuck else (flt.state.value if flt.state else ALL)
        self.state.setCurrentIndex(max(0, self.state.findData(value)))
        self.kind.setCurrentIndex(max(0, self.kind.findData(flt.kind or ALL)))
        if self.search.text() != flt.text and not self._debounce.isActive():
            self.search.setText(flt.text)
        self.order.setText(
            "Soonest expiry first" if flt.stuck else "Newest first" if flt.newest_first else "Oldest first"
        )
        self.order.setEnabled(not flt.stuck)
        self._syncing = False

    def _emit(self, flt: JobFilter) -> None:
        if not self._syncing and flt != self._filter:
            self.filter_requested.emit(flt)

    def _state_chosen(self, _index: int) -> None:
        value = self.state.currentData()
        if value == STUCK:
            self._emit(self._filter.with_(stuck=True))
        else:
            self._emit(self._filter.with_(state=JobState(value) if value != ALL else None, stuck=False))

    def _kind_chosen(self, _index: int) -> None:
        self._emit(self._filter.with_(kind=self.kind.currentData() or None))

    def _emit_text(self) -> None:
        self._debounce.stop()
        self._emit(self._filter.with_(text=self.search.text()))

    def _clear(self) -> None:
        self._debounce.stop()
        self.search.clear()
        self._debounce.stop()
        self._emit(JobFilter())
