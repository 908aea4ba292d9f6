"""The request dialog's editable table of typed parameters (name, type, value).

A name is ``NAME`` in the executor's vocabulary or ``VOCABULARY#NAME`` for any other.
Every edit is parsed at once with the core's typed values, and a row that does not parse
is shown as invalid with the reason as its tooltip.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, Qt, Signal
from PySide6.QtGui import QColor

from postproject import EXECUTOR_VOCABULARY, InvalidArgumentError, MetadataValue, Property
from postproject_gui.models.flat_table import AnyIndex
from postproject_gui.text import params

HEADERS = ("Name", "Type", "Value")
INVALID = QColor(192, 57, 43, 40)


def parse_row(name: str, type_name: str, text: str) -> tuple[Property, MetadataValue]:
    """(property, typed value) of one row; ValueError with the reason if it is not valid."""
    vocabulary, _, local = name.strip().rpartition("#")
    try:
        prop = Property(vocabulary or EXECUTOR_VOCABULARY, local)
    except InvalidArgumentError as exc:
        raise ValueError(exc.message) from None
    return prop, params.parse(type_name, text)


class ParameterModel(QAbstractTableModel):
    """Editable rows; Signal: validity_changed() after any edit."""

    validity_changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[list[str]] = []

    def add(self, name: str = "", type_name: str = "string", text: str = "") -> int:
        row = len(self._rows)
        self.beginInsertRows(QModelIndex(), row, row)
        self._rows.append([name, type_name, text])
        self.endInsertRows()
        self.validity_changed.emit()
        return row

    def remove(self, row: int) -> None:
        if 0 <= row < len(self._rows):
            self.beginRemoveRows(QModelIndex(), row, row)
            del self._rows[row]
            self.endRemoveRows()
            self.validity_changed.emit()

    def error(self, row: int) -> str | None:
        try:
            parse_row(*self._rows[row])
        except ValueError as exc:
            return str(exc)
        return None

    def errors(self) -> list[tuple[int, str]]:
        return [(row, message) for row in range(len(self._rows)) if (message := self.error(row))]

    def values(self) -> tuple[tuple[Property, MetadataValue], ...]:
        """The parsed parameters (ValueError naming the first bad row)."""
        parsed = []
        for row, cells in enumerate(self._rows):
            try:
                parsed.append(parse_row(*cells))
            except ValueError as exc:
                raise ValueError(f"parameter {row + 1} ({cells[0] or 'unnamed'}): {exc}") from None
        return tuple(parsed)

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation is not Qt.Orientation.Horizontal or not 0 <= section < len(HEADERS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return (
                "NAME (executor vocabulary) or VOCABULARY#NAME",
                "The value's type: " + ", ".join(params.TYPES),
                "The value, written for its type",
            )[section]
        return None

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return (
            Qt.ItemFlag.ItemIsEnabled
            | Qt.ItemFlag.ItemIsSelectable
            | Qt.ItemFlag.ItemIsEditable
            | Qt.ItemFlag.ItemNeverHasChildren
        )

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self._rows) or index.column() >= len(HEADERS):
            return None
        value = self._rows[index.row()][index.column()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return value
        error = self.error(index.row())
        if role == Qt.ItemDataRole.ToolTipRole:
            return error or params.HINTS.get(self._rows[index.row()][1])
        if role == Qt.ItemDataRole.BackgroundRole and error:
            return INVALID
        return None

    def setData(self, index: AnyIndex, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if not index.isValid() or role != Qt.ItemDataRole.EditRole or index.row() >= len(self._rows):
            return False
        text = str(value)
        if index.column() == 1 and text not in params.TYPES:
            return False
        self._rows[index.row()][index.column()] = text
        self.dataChanged.emit(self.index(index.row(), 0), self.index(index.row(), len(HEADERS) - 1))
        self.validity_changed.emit()
        return True
