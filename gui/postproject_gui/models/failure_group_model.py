"""The Failure groups panel's model: failed jobs grouped by reason, largest group first."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt

from postproject import FailureGroup
from postproject_gui.models.flat_table import FlatTableModel

AnyIndex = QModelIndex | QPersistentModelIndex
GROUP_ROLE = Qt.ItemDataRole.UserRole + 1


class FailureGroupModel(FlatTableModel):
    """Rows: (count, reason) of each group; ``GROUP_ROLE`` gives the FailureGroup."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(
            ("Failed", "Reason"),
            ("Failed jobs in the group", "The diagnostic's first line, its variable parts replaced"),
            parent,
        )
        self._groups: tuple[FailureGroup, ...] = ()

    def row_total(self) -> int:
        return len(self._groups)

    def set_groups(self, groups: Sequence[FailureGroup]) -> None:
        self.beginResetModel()
        self._groups = tuple(groups)
        self.endResetModel()

    def group(self, row: int) -> FailureGroup | None:
        return self._groups[row] if 0 <= row < len(self._groups) else None

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._groups):
            return None
        group = self._groups[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{group.count:,}" if index.column() == 0 else group.reason
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{group.summary()}\n\nFor example:\n{group.example[:1000]}\n\nClick to list them."
        if role == Qt.ItemDataRole.TextAlignmentRole and index.column() == 0:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == GROUP_ROLE:
            return group
        return None
