"""The Jobs tab: the filter row over the job table and the detail panel (and, in the Producer
workspace, the failure groups below them), what the filter row
says is shown, and selecting jobs once they are listed (after a request or an enqueue)."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSplitter, QVBoxLayout, QWidget

from postproject import JobId
from postproject_gui.look.theme import Theme
from postproject_gui.session.monitor_session import MonitorSession
from postproject_gui.views.failure_groups import FailureGroupsPanel
from postproject_gui.views.filter_bar import FilterBar
from postproject_gui.views.job_detail_panel import JobDetailPanel
from postproject_gui.views.job_table_view import JobTableView


class JobsPage(QWidget):
    def __init__(self, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("jobsPage")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 6, 0, 0)
        layout.setSpacing(6)
        self.filters = FilterBar(self)
        # Each widget is made in the parent it stays in: moving a built tree to another parent
        # restyles all of it under the application's style sheet (the window's build: 2-3x).
        self.vertical = QSplitter(Qt.Orientation.Vertical, self)
        self.vertical.setObjectName("jobsVerticalSplitter")
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self.vertical)
        self.splitter.setObjectName("mainSplitter")
        self.table = JobTableView(self)  # (its "new jobs" button goes in its parent: this page's layout)
        self.detail = JobDetailPanel(theme, self.splitter)
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(self.detail)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setSizes([960, 440])
        self.splitter.setChildrenCollapsible(False)
        self.failures = FailureGroupsPanel(self.vertical)
        self.failures.setVisible(False)  # the Producer workspace shows it
        self.vertical.addWidget(self.splitter)
        self.vertical.addWidget(self.failures)
        self.vertical.setStretchFactor(0, 4)
        self.vertical.setStretchFactor(1, 1)
        self.vertical.setSizes([600, 130])
        self.vertical.setChildrenCollapsible(False)
        layout.addWidget(self.filters)
        layout.addWidget(self.table.new_jobs, 0, Qt.AlignmentFlag.AlignHCenter)  # shown with new jobs above
        layout.addWidget(self.vertical, 1)
        self._pending: set[JobId] = set()

    def show_status(self, session: MonitorSession | None, muted: str) -> None:
        """The filter row's "N of M shown" and the empty table's note."""
        if session is None:
            self.filters.set_shown("")
            return
        self.select_pending(session)
        self.filters.set_shown(shown_text(session))
        empty = (
            "This production has no jobs yet — request one with Ctrl+N."
            if session.counts and not session.counts.total
            else f"No jobs match: {session.filter.describe()}"
        )
        self.table.set_empty_text(empty, muted)

    def select_when_listed(self, session: MonitorSession, wanted: Iterable[JobId]) -> bool:
        """Select these jobs now if all are listed, else as soon as they are; True when done."""
        self._pending = set(wanted)
        return self.select_pending(session)

    def select_pending(self, session: MonitorSession | None) -> bool:
        """Select the jobs waiting to be selected once all of them are listed; True then."""
        wanted = self._pending
        if not wanted or session is None or session.table.loading:
            return not wanted
        if all(session.table.row_of(j) is not None for j in wanted):
            self.table.select_jobs(wanted)
            self._pending = set()
            return True
        return False


def shown_text(session: MonitorSession) -> str:
    """``200 of 12,345 shown · scroll for more`` for the filter row."""
    table, flt, counts = session.table, session.filter, session.counts
    shown = table.rowCount()
    total: int | None = None
    searching = bool(flt.needle or flt.requested_within or flt.finished_within)
    if counts is not None and not searching and not flt.stuck:
        total = counts.by_state.get(flt.state, 0) if flt.state else counts.total
    text = f"{shown:,} of {total:,} shown" if total is not None else f"{shown:,} shown"
    if flt.client_side:
        text += f" · searched {table.scanned:,}"
    if table.tail:
        text += " · end of the list"
    if table.loading:
        text += " · loading…"
    elif table.tail and not table.exhausted:
        text += " · scroll up for more (Ctrl+Home: the start)"
    elif not table.exhausted and shown:
        text += " · scroll for more (Ctrl+End: the end)"
    return text
