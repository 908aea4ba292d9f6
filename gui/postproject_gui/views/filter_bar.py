"""The filter row: state, kind, a store-wide text search, a time range, order, saved filters,
and what the table currently shows."""

from __future__ import annotations

import json
from functools import partial

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QInputDialog,
    QLineEdit,
    QMenu,
    QToolButton,
    QWidget,
)

from postproject import JobState
from postproject_gui.look.states import STATE_LOOKS
from postproject_gui.services.filters import WITHIN, JobFilter
from postproject_gui.settings import Settings
from postproject_gui.views.widgets import ElidedLabel

STUCK = "stuck"
ALL = ""  # item data of "All ..."
SEARCH_DELAY_MS = 250  # typing pauses this long before the search runs
SPANS = {"1h": "last hour", "24h": "last 24 hours", "7d": "last 7 days", "30d": "last 30 days"}
# The time control's items: (label, (requested_within, finished_within)).
TIMES: tuple[tuple[str, tuple[str, str]], ...] = (
    ("Any time", ("", "")),
    *((f"Requested in the {label}", (key, "")) for key, label in SPANS.items()),
    *((f"Finished in the {label}", ("", key)) for key, label in SPANS.items()),
)
assert all(key in WITHIN for key in SPANS)


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
        self.search.setPlaceholderText(
            "Search every job: kinds, assets, workers, diagnostics, parameters (tickets), ids   Ctrl+F"
        )
        self.search.setClearButtonEnabled(True)
        self.search.setToolTip(
            "Searches every job in the production (the store's text index), not only those loaded.\n"
            "Each word must appear in the job's kind, output asset name, an agent or worker that\n"
            "ran it, its diagnostic or a text value of its parameters (a ticket such as TCK-054321,\n"
            "a take, a shot; case-insensitive, any part of a word), or end its id (6+ hex digits)."
        )
        self.time = QComboBox(self)
        self.time.setObjectName("timeFilter")
        self.time.setAccessibleName("Time filter")
        self.time.setToolTip("Only jobs requested, or finished, within a recent span")
        self.time.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.time.setMinimumContentsLength(9)
        for label, spans in TIMES:
            self.time.addItem(label, "|".join(spans))  # plain text data: findData compares it
        self.saved = QToolButton(self)
        self.saved.setObjectName("savedFilters")
        self.saved.setText("Saved")
        self.saved.setAccessibleName("Saved filters")
        self.saved.setToolTip("Apply a saved filter, or save the current one")
        self.saved.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.saved.setMenu(QMenu(self.saved))
        self.saved.menu().aboutToShow.connect(self._fill_saved_menu)
        self._settings: Settings | None = None
        self.order = QToolButton(self)
        self.order.setObjectName("orderButton")
        self.order.setAccessibleName("Order")
        self.order.setToolTip("Newest first or oldest first (jobs are listed in request order)")
        self.clear = QToolButton(self)
        self.clear.setText("Clear")
        self.clear.setAccessibleName("Clear filters")
        self.clear.setToolTip("Show all jobs, newest first")
        self.shown = ElidedLabel(self)  # it grows with the job count: it never widens the window
        self.shown.setObjectName("shownLabel")
        self.shown.setProperty("role", "muted")
        for widget, stretch in (
            (self.state, 0),
            (self.kind, 0),
            (self.search, 1),
            (self.time, 0),
            (self.order, 0),
            (self.saved, 0),
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
        self.time.currentIndexChanged.connect(self._time_chosen)
        self.search.textChanged.connect(self._typed)
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
        self.time.setCurrentIndex(max(0, self.time.findData(f"{flt.requested_within}|{flt.finished_within}")))
        self.time.setEnabled(not flt.stuck)
        self.order.setText(
            "Soonest expiry first"
            if flt.stuck
            else ("Newest first" if flt.newest_first else "Oldest first")
            if flt.sort == "requested"
            else f"By {flt.sort}, {'descending' if flt.newest_first else 'ascending'}"
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

    def _time_chosen(self, _index: int) -> None:
        requested, _, finished = str(self.time.currentData() or "|").partition("|")
        self._emit(self._filter.with_(requested_within=requested, finished_within=finished))

    # --- saved filters (QSettings) -----------------------------------------------------

    def attach_settings(self, settings: Settings) -> None:
        self._settings = settings

    def saved_filters(self) -> dict[str, JobFilter]:
        if self._settings is None:
            return {}
        found = {}
        for name, text in self._settings.saved_filters().items():
            try:
                flt = JobFilter.from_json(json.loads(text))
            except ValueError:
                flt = None
            if flt is not None:
                found[name] = flt
        return found

    def save_filter(self, name: str, flt: JobFilter | None = None) -> None:
        """Remember ``flt`` (the current filter) as ``name`` (replacing one of that name)."""
        if self._settings is None or not name.strip():
            return
        stored = self._settings.saved_filters()
        stored[name.strip()] = json.dumps((flt or self._filter).to_json())
        self._settings.set_saved_filters(stored)

    def delete_filter(self, name: str) -> None:
        if self._settings is not None:
            stored = self._settings.saved_filters()
            stored.pop(name, None)
            self._settings.set_saved_filters(stored)

    def apply_saved(self, name: str) -> None:
        flt = self.saved_filters().get(name)
        if flt is not None:
            self._debounce.stop()
            self._emit(flt)

    def _fill_saved_menu(self) -> None:
        menu = self.saved.menu()
        menu.clear()
        saved = self.saved_filters()
        for name, flt in sorted(saved.items()):
            action = menu.addAction(name)
            action.triggered.connect(partial(self.apply_saved, name))
            action.setToolTip(flt.describe())
        if saved:
            menu.addSeparator()
        menu.addAction("Save current filter…", self._ask_save).setEnabled(self._settings is not None)
        if saved:
            forget = menu.addMenu("Delete saved filter")
            for name in sorted(saved):
                forget.addAction(name).triggered.connect(partial(self.delete_filter, name))

    def _ask_save(self) -> None:
        name, ok = QInputDialog.getText(
            self, "Save filter", "Name for this filter:", text=self._filter.describe()[:60]
        )
        if ok and name.strip():
            self.save_filter(name)

    def _typed(self, _text: str) -> None:
        """Text typed (or pasted) starts the pause before its search; text the bar shows for a
        filter set elsewhere (:meth:`set_filter`) is no search to run."""
        if not self._syncing:
            self._debounce.start()

    def _emit_text(self) -> None:
        self._debounce.stop()
        self._emit(self._filter.with_(text=self.search.text()))

    def _clear(self) -> None:
        self._debounce.stop()
        self.search.clear()
        self._debounce.stop()
        self._emit(JobFilter())
