"""The Failure groups panel (Producer workspace): "37 failed: unsupported profile <text>",
from the store (``Production.failure_groups``), regrouped when the feed brings a failure.
Clicking a group lists its jobs: the table's filter becomes failed + the group's search."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QModelIndex, Signal
from PySide6.QtWidgets import QAbstractItemView, QFrame, QHeaderView, QTableView, QVBoxLayout, QWidget

from postproject import FailureGroup
from postproject_gui.models.failure_group_model import FailureGroupModel
from postproject_gui.views.widgets import ElidedLabel

SHOWN_ROWS = 5  # the panel grows to show this many groups, then scrolls
SPACING = 2


class FailureGroupsPanel(QFrame):
    """Signal: group_chosen(FailureGroup)."""

    group_chosen = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("failureGroups")
        self.setAccessibleName("Failure groups")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(SPACING)
        self.title = ElidedLabel(self)
        self.title.setText("Failure groups")
        self.title.setProperty("role", "muted")
        self.model = FailureGroupModel(self)
        self.view = QTableView(self)
        self.view.setObjectName("failureGroupsTable")
        self.view.setAccessibleName("Failure groups")
        self.view.setModel(self.model)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.verticalHeader().hide()
        self.view.horizontalHeader().hide()  # the title says what the columns are
        self.view.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.view.setShowGrid(False)
        self.view.setWordWrap(False)
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.view.clicked.connect(self._clicked)
        self.view.activated.connect(self._clicked)
        layout.addWidget(self.title)
        layout.addWidget(self.view, 1)
        self.set_groups(())

    def set_groups(self, groups: Sequence[FailureGroup]) -> None:
        self.model.set_groups(groups)
        # No taller than its groups (at most SHOWN_ROWS, then it scrolls): the job list above
        # keeps the rest of the height.
        rows = min(max(len(groups), 1), SHOWN_ROWS)
        row_height = self.view.verticalHeader().defaultSectionSize()
        table = rows * row_height + 2 * self.view.frameWidth() + 2
        self.setMaximumHeight(self.title.sizeHint().height() + SPACING + table)
        failed = sum(g.count for g in groups)
        self.title.setText(
            f"Failure groups · {failed:,} failed jobs in {len(groups):,} groups (failed · reason) · click one to list them"
            if groups
            else "Failure groups · no failed jobs"
        )

    def choose(self, row: int) -> None:
        group = self.model.group(row)
        if group is not None:
            self.group_chosen.emit(group)

    def _clicked(self, index: QModelIndex) -> None:
        self.choose(index.row())
