"""The job table: dense rows, remembered columns, honest sorting, and an empty-state note."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from PySide6.QtCore import (
    QByteArray,
    QItemSelection,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    Qt,
    Signal,
)
from PySide6.QtGui import QAction, QColor, QContextMenuEvent, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QMenu,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QWidget,
)

from postproject import JobId, JobState
from postproject_gui.models.columns import COLUMNS, column, newest_first_for, relevant
from postproject_gui.models.job_table_model import JobTableModel
from postproject_gui.services.types import JobRow

ROW_HEIGHT = 22
HEADER_STATE_VERSION = 1


class CellDelegate(QStyledItemDelegate):
    """Cuts long text where the column says (the start of a kind, the middle of a path) and
    keeps state colours on selected rows. (The focus frame is turned off in the style sheet.)"""

    MODES: ClassVar[dict[str, Qt.TextElideMode]] = {
        "left": Qt.TextElideMode.ElideLeft,
        "middle": Qt.TextElideMode.ElideMiddle,
    }

    def __init__(self, where: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._mode = self.MODES.get(where, Qt.TextElideMode.ElideRight)

    def initStyleOption(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        super().initStyleOption(option, index)
        option.textElideMode = self._mode
        model = index.model()
        colour = (
            model.data(index, Qt.ItemDataRole.ForegroundRole) if isinstance(model, JobTableModel) else None
        )
        if isinstance(colour, QColor):  # keep state colours readable on selected rows too
            option.palette.setColor(QPalette.ColorRole.HighlightedText, colour)


class JobTableView(QTableView):
    """Signals: current_job_changed(str job id or ""), order_requested(bool newest first),
    selection_changed_rows(int number of selected rows)."""

    current_job_changed = Signal(str)
    order_requested = Signal(bool)
    selection_changed_rows = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("jobTable")
        self.setAccessibleName("Jobs")
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setAlternatingRowColors(True)
        self.setShowGrid(False)
        self.setWordWrap(False)
        self.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.verticalHeader().hide()
        self.verticalHeader().setDefaultSectionSize(ROW_HEIGHT)
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header = self.horizontalHeader()
        header.setSectionsMovable(True)
        header.setHighlightSections(False)
        header.setStretchLastSection(True)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self._header_menu)
        header.sectionClicked.connect(self._header_clicked)
        header.setSortIndicatorShown(True)
        self.row_actions: list[QAction | None] = []  # context menu, set by the window
        self._user_hidden = {i for i, c in enumerate(COLUMNS) if not c.visible}
        self._listing: tuple[JobState | None, bool] = (None, False)  # (state, stuck) shown
        self._empty_text = ""
        self._muted = QColor("#6b7280")
        self.verticalScrollBar().valueChanged.connect(lambda _v: self._report_visible())

    # --- model -------------------------------------------------------------------------

    def set_table_model(self, model: JobTableModel) -> None:
        self.setModel(model)
        for index, col in enumerate(COLUMNS):
            self.setColumnWidth(index, col.width)
            if col.elide != "right" or col.key in ("state", "lease"):  # the others need no Python delegate
                self.setItemDelegateForColumn(index, CellDelegate(col.elide, self))
        self._apply_visibility()
        self.selectionModel().currentRowChanged.connect(self._current_changed)
        self.selectionModel().selectionChanged.connect(
            lambda *_: self.selection_changed_rows.emit(len(self.selected_rows()))
        )
        model.status_changed.connect(self.viewport().update)
        model.reset_done.connect(lambda: self.current_job_changed.emit(""))
        self.show_order(model.filter.newest_first, model.filter.stuck)

    def table_model(self) -> JobTableModel:
        model = self.model()
        assert isinstance(model, JobTableModel)
        return model

    def set_empty_text(self, text: str, muted: str) -> None:
        self._empty_text, self._muted = text, QColor(muted)
        self.viewport().update()

    # --- selection ---------------------------------------------------------------------

    def selected_rows(self) -> list[JobRow]:
        model = self.model()
        if not isinstance(model, JobTableModel) or self.selectionModel() is None:
            return []
        rows = sorted({i.row() for i in self.selectionModel().selectedRows()})
        return [model.row(r) for r in rows if r < model.rowCount()]

    def current_row(self) -> JobRow | None:
        index = self.currentIndex()
        model = self.model()
        if not index.isValid() or not isinstance(model, JobTableModel):
            return None
        return model.row(index.row())

    def select_job(self, job_id: JobId) -> bool:
        """Select and scroll to a job if it is loaded."""
        row = self.table_model().row_of(job_id)
        if row is None:
            return False
        index = self.model().index(row, 0)
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        self.selectionModel().setCurrentIndex(index, flags)
        self.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        return True

    def select_jobs(self, job_ids: Iterable[JobId]) -> set[JobId]:
        """Select these jobs (those loaded), the first of them current; the ids selected."""
        model = self.table_model()
        rows = {job_id: model.row_of(job_id) for job_id in job_ids}
        found = sorted((row, job_id) for job_id, row in rows.items() if row is not None)
        if not found:
            return set()
        selection = QItemSelection()
        for row, _job_id in found:
            selection.select(model.index(row, 0), model.index(row, model.columnCount() - 1))
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        first = model.index(found[0][0], 0)
        self.selectionModel().setCurrentIndex(first, QItemSelectionModel.SelectionFlag.NoUpdate)
        self.selectionModel().select(selection, flags)
        self.scrollTo(first, QAbstractItemView.ScrollHint.PositionAtCenter)
        return {job_id for _row, job_id in found}

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        model = self.model()
        if current.isValid() and isinstance(model, JobTableModel):
            self.current_job_changed.emit(str(model.row(current.row()).id))
        else:
            self.current_job_changed.emit("")

    # --- header: columns and order -----------------------------------------------------

    def apply_filter(self, newest_first: bool, state: JobState | None, stuck: bool) -> None:
        """Show the order, and hide the columns that are necessarily empty for this listing
        (no lease on failed jobs, no diagnostic on claimed ones); the user's own choice of
        columns is kept apart and comes back with the next listing."""
        self._listing = (state, stuck)
        self._apply_visibility()
        self.show_order(newest_first, stuck)

    def _apply_visibility(self) -> None:
        state, stuck = self._listing
        for index, col in enumerate(COLUMNS):
            self.setColumnHidden(index, index in self._user_hidden or not relevant(col, state, stuck))

    def hidden_columns(self) -> list[str]:
        return [COLUMNS[i].key for i in sorted(self._user_hidden)]

    def set_hidden_columns(self, keys: list[str] | None) -> None:
        if keys is not None:
            self._user_hidden = {i for i, c in enumerate(COLUMNS) if c.key in keys}
            self._apply_visibility()

    def _toggle_column(self, index: int, shown: bool) -> None:
        (self._user_hidden.discard if shown else self._user_hidden.add)(index)
        self._apply_visibility()

    def show_order(self, newest_first: bool, stuck: bool) -> None:
        header = self.horizontalHeader()
        age = column("age")
        if stuck:
            header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        else:
            header.setSortIndicator(
                age, Qt.SortOrder.AscendingOrder if newest_first else Qt.SortOrder.DescendingOrder
            )

    def _header_clicked(self, section: int) -> None:
        model = self.table_model()
        if model.filter.stuck:
            self.show_order(model.filter.newest_first, True)
            return
        order = self.horizontalHeader().sortIndicatorOrder()
        newest = newest_first_for(section, order is Qt.SortOrder.AscendingOrder)
        if newest is None:  # the store cannot sort by this column: keep the indicator where it was
            self.show_order(model.filter.newest_first, False)
            return
        self.order_requested.emit(newest)

    def _header_menu(self, pos: QPoint) -> None:
        menu = QMenu(self)
        state, stuck = self._listing
        for index, col in enumerate(COLUMNS):
            empty = not relevant(col, state, stuck)
            action = menu.addAction(col.title + ("  (empty in this list)" if empty else ""))
            action.setCheckable(True)
            action.setChecked(index not in self._user_hidden)
            action.setToolTip(col.description)
            action.toggled.connect(lambda on, i=index: self._toggle_column(i, on))
        menu.addSeparator()
        menu.addAction("Reset columns", self.reset_columns)
        menu.exec(self.horizontalHeader().mapToGlobal(pos))

    def reset_columns(self) -> None:
        header = self.horizontalHeader()
        for index, col in enumerate(COLUMNS):
            header.moveSection(header.visualIndex(index), index)
            self.setColumnWidth(index, col.width)
        self._user_hidden = {i for i, c in enumerate(COLUMNS) if not c.visible}
        self._apply_visibility()

    def header_state(self) -> QByteArray:
        state = self.horizontalHeader().saveState()
        state.prepend(QByteArray(bytes([HEADER_STATE_VERSION, len(COLUMNS)])))
        return state

    def restore_header(self, state: QByteArray | None) -> None:
        """Restore column order and widths (visibility is ours: see set_hidden_columns)."""
        if (
            state is None
            or state.size() < 2
            or bytes(state.left(2).data()) != bytes([HEADER_STATE_VERSION, len(COLUMNS)])
        ):
            return
        self.horizontalHeader().restoreState(state.mid(2))
        self._apply_visibility()

    # --- painting and context menu -----------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        model = self.model()
        if isinstance(model, JobTableModel) and model.rowCount() == 0 and self._empty_text:
            painter = QPainter(self.viewport())
            painter.setPen(self._muted)
            text = "Loading…" if model.loading else self._empty_text
            painter.drawText(
                self.viewport().rect().adjusted(0, 40, 0, 0),
                Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop,
                text,
            )
            painter.end()

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        if not self.row_actions:
            return
        index = self.indexAt(event.pos())
        if index.isValid() and not self.selectionModel().isRowSelected(index.row()):
            self.selectRow(index.row())
        menu = QMenu(self)
        for action in self.row_actions:
            if action is None:
                menu.addSeparator()
            else:
                menu.addAction(action)
        menu.exec(event.globalPos())

    def resizeEvent(self, event: object) -> None:
        super().resizeEvent(event)  # type: ignore[arg-type]
        self._report_visible()

    def _report_visible(self) -> None:
        model = self.model()
        if not isinstance(model, JobTableModel):
            return
        first = self.rowAt(0)
        last = self.rowAt(self.viewport().height() - 1)
        model.set_visible_rows(max(first, 0), last if last >= 0 else model.rowCount() - 1)
