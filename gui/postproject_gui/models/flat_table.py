"""The common ground of the monitor's flat, read-only table models."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

AnyIndex = QModelIndex | QPersistentModelIndex

READ_ONLY = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren


class FlatTableModel(QAbstractTableModel):
    """Rows without children under fixed column titles (and their tooltips).

    Subclasses give the titles to ``__init__`` and say how many rows there are in
    ``row_total``; they implement ``data`` themselves.
    """

    def __init__(self, titles: Sequence[str], tips: Sequence[str | None] = (), parent: Any = None) -> None:
        super().__init__(parent)
        self._column_titles = tuple(titles)
        self._column_tips = tuple(tips)

    def row_total(self) -> int:
        raise NotImplementedError

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self.row_total()

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._column_titles)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation is not Qt.Orientation.Horizontal or not 0 <= section < len(self._column_titles):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self._column_titles[section]
        if role == Qt.ItemDataRole.ToolTipRole and section < len(self._column_tips):
            return self._column_tips[section]
        return None

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        return READ_ONLY if index.isValid() else Qt.ItemFlag.NoItemFlags
