"""A small read-only table of text records (job parameters, job history, dialog lists)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QObject, Qt

from postproject_gui.models.flat_table import AnyIndex, FlatTableModel


class RecordTableModel(FlatTableModel):
    """Rows of strings under fixed headers; optional tooltips per cell."""

    def __init__(self, headers: Sequence[str], parent: QObject | None = None) -> None:
        super().__init__(headers, (), parent)
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

    def row_total(self) -> int:
        return len(self._rows)

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
