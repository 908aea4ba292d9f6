"""The Workers tab (Ctrl+5, the Supervisor's first tab): every registered worker with its
liveness, live "last seen" age, the jobs it runs, how much of its capacity they use and its
attempts by outcome; selecting a worker lists its newest attempts (double-click one to show
its job). "Finalize lost work…" ends expired, unrenewed claims (the monitor never does it on
its own).

What it shows comes from the session's :class:`~postproject_gui.session.worker_watch.WorkerWatch`;
while the tab is visible the watch reads every few seconds (heartbeats are not revisions,
so the feed cannot say when they arrive) and a 1 Hz clock moves the ages and liveness.
"""

from __future__ import annotations

from datetime import datetime

from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from postproject import SystemClock
from postproject.model.workers import WorkerState
from postproject_gui.look.theme import Theme, glyph_icon
from postproject_gui.models import roles
from postproject_gui.models.worker_model import WORKER_KEYS, AttemptTableModel, WorkerTableModel
from postproject_gui.services.types import WorkerList, liveness, used
from postproject_gui.session.monitor_session import MonitorSession
from postproject_gui.views.widgets import section_label

EMPTY = (
    "No registered workers yet. A worker registers when it starts "
    "(postproject worker run PRODUCTION): its name, host and capacity then show here, "
    "with its liveness from its heartbeats."
)


RUNNING, KINDS = WORKER_KEYS.index("running"), WORKER_KEYS.index("kinds")
RUNNING_WIDTH = 220  # px: the Running column at least (it grows to its texts)
KINDS_MIN = 120  # px: what Kinds (the last column, stretching) keeps at least while Running grows


def _table(name: str, parent: QWidget) -> QTableView:
    view = QTableView(parent)
    view.setObjectName(name)
    view.setAccessibleName(name)
    view.verticalHeader().hide()
    view.verticalHeader().setDefaultSectionSize(22)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.setAlternatingRowColors(True)
    view.setShowGrid(False)
    view.setWordWrap(False)
    view.horizontalHeader().setStretchLastSection(True)
    view.horizontalHeader().setHighlightSections(False)
    view.horizontalHeader().setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
    return view


class WorkersTab(QWidget):
    """Signals: job_wanted(str job id), finalize_requested()."""

    job_wanted = Signal(str)
    finalize_requested = Signal()

    def __init__(self, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("workersTab")
        self.setAccessibleName("Workers")
        self._theme = theme
        self._session: MonitorSession | None = None
        self._attempts_for: str | None = None  # whose attempts are loaded (or loading)
        self._attempt_reads = 0
        self.model = WorkerTableModel(self._now, self)
        self.attempts = AttemptTableModel(self._now, self)
        self._clock = QTimer(self)
        self._clock.setInterval(1000)
        self._clock.timeout.connect(self._tick)
        self._build()
        self.set_theme(theme)

    # --- construction ------------------------------------------------------------------

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 6, 0, 0)
        layout.setSpacing(6)
        head = QHBoxLayout()
        self.summary = QLabel("", self)
        self.summary.setObjectName("workersSummary")
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        head.addWidget(self.summary, 1)
        self.finalize = QPushButton("Finalize lost work…", self)
        self.finalize.setObjectName("finalizeLost")
        self.finalize.setToolTip(
            "End every expired, unrenewed claim as lost: back to requested while it has attempts "
            "left, else failed (asks first; the monitor never does this on its own)"
        )
        self.finalize.clicked.connect(self.finalize_requested)
        head.addWidget(self.finalize)
        layout.addLayout(head)
        self.empty = QLabel(EMPTY, self)
        self.empty.setObjectName("workersEmpty")
        self.empty.setWordWrap(True)
        self.empty.setProperty("role", "muted")
        layout.addWidget(self.empty)
        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.splitter.setObjectName("workersSplitter")
        self.table = _table("workerTable", self.splitter)
        self.table.setAccessibleName("Registered workers")
        self.table.setModel(self.model)
        header = self.table.horizontalHeader()
        for column, width in enumerate((96, 150, 140, 84, RUNNING_WIDTH, 56, 92, 64)):
            self.table.setColumnWidth(column, width)
        self._running_width: int | None = None  # what _fit_running last set
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.selectionModel().currentRowChanged.connect(lambda current, _old: self._selected(current))
        lower = QWidget(self.splitter)
        box = QVBoxLayout(lower)
        box.setContentsMargins(0, 4, 0, 0)
        box.setSpacing(4)
        self.attempts_title = section_label("Attempts", lower)
        self.attempts_title.setObjectName("attemptsTitle")
        box.addWidget(self.attempts_title)
        self.attempt_table = _table("workerAttempts", lower)
        self.attempt_table.setAccessibleName("Attempts of the selected worker")
        self.attempt_table.setModel(self.attempts)
        for column, width in enumerate((118, 104, 150, 30, 230, 150, 70)):
            self.attempt_table.setColumnWidth(column, width)
        self.attempt_table.doubleClicked.connect(self._attempt_activated)
        self.attempt_table.activated.connect(self._attempt_activated)
        box.addWidget(self.attempt_table, 1)
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(lower)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)
        layout.addWidget(self.splitter, 1)
        self._show_list(None)

    # --- session -------------------------------------------------------------------------

    def connect_session(self, session: MonitorSession) -> None:
        self._session = session
        session.workers.changed.connect(self._show_list)
        self._show_list(session.workers.current)

    def disconnect_session(self) -> None:
        self._clock.stop()
        self._session = None
        self._attempts_for = None
        self.attempts.set_attempts(None, ())
        self._show_list(None)

    def set_visible_tab(self, visible: bool) -> None:
        """The tab became visible or hidden: read every few seconds and tick only while shown."""
        if self._session is not None:
            self._session.workers.set_polling(visible)
        if visible and self._session is not None:
            self._clock.start()
        else:
            self._clock.stop()

    @property
    def ready(self) -> bool:
        """A read arrived and the selected worker's attempts are loaded (what a snapshot waits for)."""
        session = self._session
        return (
            session is not None
            and session.workers.current is not None
            and not session.workers.reading
            and not self._attempt_reads
        )

    def _now(self) -> datetime:
        session = self._session
        return session.now() if session is not None else SystemClock().now()

    # --- showing -------------------------------------------------------------------------

    def _show_list(self, workers: WorkerList | None) -> None:
        selected = self.selected_name()
        self.model.set_list(workers)
        self._fit_running()
        has = bool(workers and workers.workers)
        self.empty.setVisible(workers is not None and not has)
        self.splitter.setVisible(has)
        self._summarise()
        if not has:
            return
        row = self.model.row_of(selected) if selected else None
        if row is None:
            row = 0
        if self.table.currentIndex().row() != row:
            self.table.setCurrentIndex(self.model.index(row, 0))
        elif selected is not None:
            self._load_attempts(selected, again=self._changed(workers, selected))

    def _changed(self, workers: WorkerList | None, name: str) -> bool:
        """Whether the attempts of ``name`` may have changed since they were read."""
        worker = workers.worker(name) if workers else None
        shown = self.attempts.attempts()
        if worker is None:
            return False
        finished = sum(worker.outcomes.values())
        running = len(worker.running)
        return (
            sum(1 for a in shown if a.attempt.outcome is not None) < min(finished, 200)
            or sum(1 for a in shown if a.attempt.outcome is None) != running
        )

    def _summarise(self) -> None:
        session = self._session
        workers = session.workers.current if session else None
        if workers is None:
            self.summary.setText("Reading the workers…" if session is not None else "")
            return
        now = self._now()
        online = [w for w in workers.workers if liveness(w, now) is WorkerState.ONLINE]
        capacity = sum(w.capacity for w in online)
        busy = sum(used(w) for w in online)
        offline = len(workers.workers) - len(online)
        holding = sum(1 for w in workers.workers if w.running and liveness(w, now) is WorkerState.OFFLINE)
        parts = [
            f"<b>{len(workers.workers):,}</b> worker{'s' if len(workers.workers) != 1 else ''}",
            f"{len(online):,} online",
            f"{offline:,} offline" + (f" ({holding:,} still holding claims)" if holding else ""),
            f"capacity used <b>{busy:,}/{capacity:,}</b>" if capacity else "no capacity online",
        ]
        self.summary.setText(" · ".join(parts))

    def _tick(self) -> None:
        self.model.tick()
        self._summarise()
        self._fit_running()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_running()

    def _fit_running(self) -> None:
        """The Running column as wide as its jobs' texts ("…4f1c 62% · encode · 1m 10s left")
        need, taking the width the last column (Kinds, which stretches) would otherwise
        keep; at least its default width, and left alone once the user resized it."""
        header = self.table.horizontalHeader()
        current = header.sectionSize(RUNNING)
        if self._running_width is not None and current != self._running_width:
            return  # resized by hand
        others = sum(
            header.sectionSize(c)
            for c in range(header.count())
            if c not in (RUNNING, KINDS) and not header.isSectionHidden(c)
        )
        room = self.table.viewport().width() - others - KINDS_MIN
        width = max(RUNNING_WIDTH, min(self.table.sizeHintForColumn(RUNNING) + 8, room))
        if width != current:
            self.table.setColumnWidth(RUNNING, width)
        self._running_width = width

    def selected_name(self) -> str | None:
        index = self.table.currentIndex()
        return str(index.data(roles.WORKER_ROLE)) if index.isValid() else None

    def select_worker(self, name: str) -> bool:
        row = self.model.row_of(name)
        if row is None:
            return False
        self.table.setCurrentIndex(self.model.index(row, 0))
        return True

    def _selected(self, current: QModelIndex) -> None:
        name = current.data(roles.WORKER_ROLE) if current.isValid() else None
        if name is None:
            self._attempts_for = None
            self.attempts.set_attempts(None, ())
            self.attempts_title.setText("Attempts")
            return
        self._load_attempts(str(name), again=True)

    def _load_attempts(self, name: str, *, again: bool) -> None:
        session = self._session
        if session is None or (name == self._attempts_for and not again):
            return
        self._attempts_for = name
        self.attempts_title.setText(f"Attempts of {name} (newest first)")
        self._attempt_reads += 1
        session.spawn(self._read_attempts(session, name), f"Reading the attempts of {name}")

    async def _read_attempts(self, session: MonitorSession, name: str) -> None:
        try:
            found = await session.service.worker_attempts(name)
        finally:
            self._attempt_reads -= 1
        if session is self._session and name == self._attempts_for:
            self.attempts.set_attempts(name, found)
            if not found:
                self.attempts_title.setText(f"Attempts of {name}: none yet")

    def _attempt_activated(self, index: QModelIndex) -> None:
        job = index.data(roles.JOB_ID_ROLE)
        if job:
            self.job_wanted.emit(str(job))

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        self.model.set_look(theme.states, glyph_icon)
        self.attempts.set_look(theme.states, glyph_icon)
