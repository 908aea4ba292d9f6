"""A small read-only table of text records (job parameters, job history, dialog lists)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt

AnyIndex = QModelIndex | QPersistentModelIndex


class RecordTableModel(QAbstractTableModel):
    """Rows of strings under fixed headers; optional tooltips per cell."""

    def __init__(self, headers: Sequence[str], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._headers = tuple(headers)
        self._rows: list[tuple[str, ...]] = []
        self._tips: list[tuple[str, ...]] = []

    def set_rows(self, rows: Sequence[Sequence[str]], tips: Sequence[Sequence[str]] = ()) -> None:
        self.beginResetModel()
        self._rows = [tuple(r) + ("",) * (len(self._headers) - len(r)) for r in rows]
        self._tips = [tuple(t) for t in tips]
        self.endResetModel()

    def record(self, row: int) -> tuple[str, ...]:
        return self._rows[row]

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._headers)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation is Qt.Orientation.Horizontal:
            return self._headers[section] if 0 <= section < len(self._headers) else None
        return None

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self._rows) or index.column() >= len(self._headers):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self._rows[index.row()][index.column()]
        if role == Qt.ItemDataRole.ToolTipRole:
            if index.row() < len(self._tips) and index.column() < len(self._tips[index.row()]):
                return self._tips[index.row()][index.column()] or None
            return self._rows[index.row()][index.column()] or None
        return None
