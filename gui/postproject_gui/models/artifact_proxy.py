"""Sorting and the "stale or diverged only" filter of the Artifacts table (over loaded rows)."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QSortFilterProxyModel

from postproject_gui.models.artifact_model import ATTENTION_ROLE, SORT_ROLE

AnyIndex = QModelIndex | QPersistentModelIndex


class ArtifactFilterProxy(QSortFilterProxyModel):
    """Sorting by any column (by :data:`SORT_ROLE`) and the "stale or diverged only" filter."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._attention_only = False
        self.setSortRole(SORT_ROLE)
        self.setDynamicSortFilter(True)

    @property
    def attention_only(self) -> bool:
        return self._attention_only

    def set_attention_only(self, on: bool) -> None:
        """Show only stale or diverged rows (True) or every row (False)."""
        if on == self._attention_only:
            return
        if hasattr(self, "beginFilterChange"):  # Qt >= 6.10
            self.beginFilterChange()
            self._attention_only = on
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:  # pragma: no cover - older Qt
            self._attention_only = on
            self.invalidateRowsFilter()

    def filterAcceptsRow(self, source_row: int, source_parent: AnyIndex) -> bool:
        if not self._attention_only:
            return True
        model = self.sourceModel()
        return bool(model.data(model.index(source_row, 0, source_parent), ATTENTION_ROLE))
