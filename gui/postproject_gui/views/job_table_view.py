"""The job table: dense rows, remembered columns, honest sorting, and an empty-state note.

Reading a live list: the State column stays in view when the table scrolls sideways (a
frozen copy of it is laid over the left edge); rows stay put under the reader while live
inserts arrive above them (the scroll position follows the rows, and a "N new jobs" bar
offers to go up to them); Ctrl+End shows the end of the list at once (the model reads it
from the other end) and Ctrl+Home the start; a new filter starts at the top left.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from PySide6.QtCore import (
    QByteArray,
    QCoreApplication,
    QEvent,
    QItemSelection,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    Qt,
    Signal,
)
from PySide6.QtGui import (
    QAction,
    QColor,
    QContextMenuEvent,
    QFocusEvent,
    QFontMetrics,
    QKeyEvent,
    QPainter,
    QPaintEvent,
    QPalette,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractScrollArea,
    QApplication,
    QHeaderView,
    QMenu,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QToolButton,
    QWidget,
)

from postproject import JobId, JobState
from postproject_gui.models.columns import COLUMNS, column, relevant, sort_for, sorted_column
from postproject_gui.models.job_table_model import JobTableModel
from postproject_gui.services.types import JobRow
from postproject_gui.views.progress_delegate import ProgressDelegate

ROW_HEIGHT = 22
HEADER_STATE_VERSION = 1
EARLIER_MARGIN = 10  # rows from the top of a tail at which the page before it is read
_STATE = column("state")
SELECTED = QStyle.StateFlag.State_Selected


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
        if self._mode is not Qt.TextElideMode.ElideRight:
            option.textElideMode = self._mode
        if not option.state & SELECTED:  # (on every paint of every row: the rest only when selected)
            return
        model = index.model()
        colour = (
            model.data(index, Qt.ItemDataRole.ForegroundRole) if isinstance(model, JobTableModel) else None
        )
        if isinstance(colour, QColor):  # keep state colours readable on selected rows too
            option.palette.setColor(QPalette.ColorRole.HighlightedText, colour)


class JobTableView(QTableView):
    """Signals: current_job_changed(str job id or ""), order_requested(str sort, bool descending),
    selection_changed_rows(int number of selected rows)."""

    current_job_changed = Signal(str)
    order_requested = Signal(str, bool)
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
        self._reordering = False  # while a header click asks for its order
        self._empty_text = ""
        self._muted = QColor("#6b7280")
        self._anchor: tuple[QPersistentModelIndex, int] | None = None
        self._unseen = 0  # new jobs inserted above the rows shown since the reader was at the top
        self.frozen = FrozenColumn(self)
        # Above the table, never over its rows: the page that holds the table lays it out
        # (see JobsPage); over the viewport it covered the first row.
        self.new_jobs = QToolButton(parent if parent is not None else self)
        self.new_jobs.setObjectName("newJobsBar")
        self.new_jobs.setAccessibleName("New jobs above")
        self.new_jobs.setToolTip("Jobs arrived above the rows you are reading: click to go up to them")
        self.new_jobs.setCursor(Qt.CursorShape.PointingHandCursor)
        self.new_jobs.hide()
        self.new_jobs.clicked.connect(self.show_newest)
        self.verticalScrollBar().valueChanged.connect(self._scrolled)

    # --- model -------------------------------------------------------------------------

    def set_table_model(self, model: JobTableModel) -> None:
        self.setModel(model)
        for index, col in enumerate(COLUMNS):
            self.setColumnWidth(index, self.default_width(index))
            if col.elide != "right" or col.key in ("state", "lease"):  # the others need no Python delegate
                self.setItemDelegateForColumn(index, CellDelegate(col.elide, self))
            if col.key == "progress":
                self.setItemDelegateForColumn(index, ProgressDelegate(self))
        self.frozen.follow(model)
        self._apply_visibility()
        model.rowsAboutToBeInserted.connect(self._remember_anchor)
        model.rowsAboutToBeRemoved.connect(self._remember_anchor)
        model.rowsInserted.connect(self._restore_anchor)
        model.rowsRemoved.connect(self._restore_anchor)
        model.live_inserted.connect(self._live_inserted)
        model.unseen_changed.connect(lambda _n: self._show_unseen())
        model.tail_loaded.connect(self._tail_loaded)
        model.modelReset.connect(self._model_reset)
        self.selectionModel().currentRowChanged.connect(self._current_changed)
        self.selectionModel().selectionChanged.connect(
            lambda *_: self.selection_changed_rows.emit(len(self.selected_rows()))
        )
        model.status_changed.connect(self._status_changed)
        model.reset_done.connect(lambda: self.current_job_changed.emit(""))
        self.show_order(model.filter.newest_first, model.filter.stuck, model.filter.sort)

    def _status_changed(self) -> None:
        """Loading or exhausted: only the empty list's note ("Loading…") shows it, so only an
        empty list repaints (a page that lands below the rows shown repaints nothing)."""
        model = self.model()
        if model is not None and model.rowCount() == 0:
            self.viewport().update()

    def table_model(self) -> JobTableModel:
        model = self.model()
        assert isinstance(model, JobTableModel)
        return model

    def set_empty_text(self, text: str, muted: str) -> None:
        """The note an empty list shows (repainted only when it is shown and changed: this is
        said after every page, and a repaint of the rows costs more than the page)."""
        colour = QColor(muted)
        if (text, colour) == (self._empty_text, self._muted):
            return
        self._empty_text, self._muted = text, colour
        self._status_changed()

    def default_width(self, index: int) -> int:
        """A column's width at the default size: its declared width, or more when its title
        (with the sort arrow, for the columns that sort) or its widest text would be cut."""
        col = COLUMNS[index]
        metrics = QFontMetrics(self.horizontalHeader().font())
        bold = metrics.horizontalAdvance(col.title) * 1.1  # the header is bold
        needed = int(bold) + (34 if col.sorts_by_id or col.sort else 18)
        cells = QFontMetrics(self.font())
        if col.key == "age":
            needed = max(needed, cells.horizontalAdvance("999d") + 20)
        if col.key in ("requested", "finished"):  # a whole time stamp (its seconds were cut)
            needed = max(needed, cells.horizontalAdvance("2088-12-28 23:58:58") + 20)
        return max(col.width, needed)

    # --- live rows stay put --------------------------------------------------------------

    def _remember_anchor(self, _parent: QModelIndex, _first: int, _last: int) -> None:
        top = self.rowAt(0)
        model = self.model()
        if top < 0 or model is None:
            self._anchor = None
            return
        self._anchor = (QPersistentModelIndex(model.index(top, 0)), self.rowViewportPosition(top))

    def _restore_anchor(self, _parent: QModelIndex, _first: int, _last: int) -> None:
        anchor, self._anchor = self._anchor, None
        if anchor is None or not anchor[0].isValid():
            return
        self.updateGeometries()
        moved = self.rowViewportPosition(anchor[0].row()) - anchor[1]
        if moved:
            bar = self.verticalScrollBar()
            bar.setValue(bar.value() + moved)

    def _live_inserted(self, row: int) -> None:
        if self.rowViewportPosition(row) < 0:  # above the rows shown: the reader did not see it
            self._unseen += 1
            self._show_unseen()

    def _show_unseen(self) -> None:
        model = self.model()
        count = self._unseen + (model.unseen_new if isinstance(model, JobTableModel) else 0)
        if not count:
            self.new_jobs.hide()
            return
        self.new_jobs.setText(f"↑  {count:,} new job{'s' if count != 1 else ''}")
        self.new_jobs.show()

    def show_newest(self) -> None:
        """Go up to the start of the list (the newest jobs, newest first); read it afresh
        when the rows shown are the end of the list."""
        model = self.model()
        self._unseen = 0
        if isinstance(model, JobTableModel) and model.tail:
            model.reset()
        self.scrollToTop()
        self._show_unseen()

    def _scrolled(self, value: int) -> None:
        self._report_visible()
        if value == 0 and self._unseen:
            self._unseen = 0
            self._show_unseen()
        model = self.model()
        if isinstance(model, JobTableModel) and model.tail and value < EARLIER_MARGIN * ROW_HEIGHT:
            model.fetch_earlier()

    def _model_reset(self) -> None:
        self._unseen = 0
        self._show_unseen()

    # --- keys ----------------------------------------------------------------------------

    def keyPressEvent(self, event: QKeyEvent) -> None:
        ctrl = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
        model = self.model()
        if ctrl and event.key() == Qt.Key.Key_End and isinstance(model, JobTableModel):
            model.jump_to_end()  # tail_loaded moves to the last row
            return
        if ctrl and event.key() == Qt.Key.Key_Home and isinstance(model, JobTableModel) and model.tail:
            self.show_newest()
            return
        super().keyPressEvent(event)

    def _tail_loaded(self) -> None:
        model = self.model()
        if model is None or not model.rowCount():
            return
        last = model.index(model.rowCount() - 1, _STATE)
        self.selectionModel().setCurrentIndex(
            last, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        )
        self.scrollToBottom()

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

    def apply_filter(
        self, newest_first: bool, state: JobState | None, stuck: bool, sort: str = "requested"
    ) -> None:
        """Show the order, and hide the columns that are necessarily empty for this listing
        (no lease on failed jobs, no diagnostic on claimed ones); the user's own choice of
        columns is kept apart and comes back with the next listing."""
        same_columns = self._listing == (state, stuck)
        self._listing = (state, stuck)
        self._apply_visibility()
        self.show_order(newest_first, stuck, sort)
        if not (self._reordering and same_columns):
            # A new list starts at its left edge (State in view); a header click that only
            # reorders it keeps the columns where they are, the one clicked still in view.
            self.horizontalScrollBar().setValue(0)
        self.scrollToTop()

    def _apply_visibility(self) -> None:
        state, stuck = self._listing
        for index, col in enumerate(COLUMNS):
            self.setColumnHidden(index, index in self._user_hidden or not relevant(col, state, stuck))
        self.frozen.sync()

    def hidden_columns(self) -> list[str]:
        return [COLUMNS[i].key for i in sorted(self._user_hidden)]

    def set_hidden_columns(self, keys: list[str] | None) -> None:
        if keys is not None:
            self._user_hidden = {i for i, c in enumerate(COLUMNS) if c.key in keys}
            self._apply_visibility()

    def _toggle_column(self, index: int, shown: bool) -> None:
        (self._user_hidden.discard if shown else self._user_hidden.add)(index)
        self._apply_visibility()

    def show_order(self, newest_first: bool, stuck: bool, sort: str = "requested") -> None:
        header = self.horizontalHeader()
        if stuck:
            header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
            return
        section, ascending = sorted_column(sort, newest_first)
        header.setSortIndicator(
            section, Qt.SortOrder.AscendingOrder if ascending else Qt.SortOrder.DescendingOrder
        )

    def _header_clicked(self, section: int) -> None:
        flt = self.table_model().filter
        if flt.stuck:
            self.show_order(flt.newest_first, True)
            return
        order = self.horizontalHeader().sortIndicatorOrder()
        wanted = sort_for(section, order is Qt.SortOrder.AscendingOrder)
        if wanted is None:  # the store cannot sort by this column: keep the indicator where it was
            self.show_order(flt.newest_first, False, flt.sort)
            return
        self._reordering = True
        try:
            self.order_requested.emit(*wanted)
        finally:
            self._reordering = False

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
        menu.addAction("Reset columns", lambda: self.reset_columns())
        menu.exec(self.horizontalHeader().mapToGlobal(pos))

    def reset_columns(self, first: tuple[str, ...] = ()) -> None:
        """Default widths and order (the columns named in ``first`` first, in that order)."""
        header = self.horizontalHeader()
        keys = [c.key for c in COLUMNS]
        order = [keys.index(k) for k in first] + [i for i, k in enumerate(keys) if k not in first]
        for visual, index in enumerate(order):
            header.moveSection(header.visualIndex(index), visual)
            self.setColumnWidth(index, self.default_width(index))
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
        model = self.model()
        if isinstance(model, JobTableModel):
            with model.painting():
                super().paintEvent(event)
        else:
            super().paintEvent(event)
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
        self.frozen.sync()

    def updateGeometries(self) -> None:
        super().updateGeometries()
        if hasattr(self, "frozen"):
            self.frozen.sync()

    def focusInEvent(self, event: QFocusEvent) -> None:
        """The focus arriving with the window's activation makes no row current (Qt makes the
        first one current when a view gets the focus without one: the detail panel would show
        that job instead of the production's overview, depending on whether the window was
        activated before or after the first page came in). Tab and clicks do as Qt does."""
        if event.reason() is Qt.FocusReason.ActiveWindowFocusReason and not self.currentIndex().isValid():
            QAbstractScrollArea.focusInEvent(self, event)  # (QAbstractItemView's would pick a row)
            self.viewport().update()
            return
        super().focusInEvent(event)

    def lay_out_now(self) -> None:
        """Lay the rows out now (Qt does it at a later turn of the loop, after a paint that may
        come first: the rows would be painted, then painted again with the scroll bar they need),
        the scroll bars shown or hidden for them too (Qt's own call for that is queued)."""
        self.executeDelayedItemsLayout()
        QCoreApplication.sendPostedEvents(self, QEvent.Type.MetaCall)

    def _report_visible(self) -> None:
        model = self.model()
        if not isinstance(model, JobTableModel):
            return
        first = self.rowAt(0)
        last = self.rowAt(self.viewport().height() - 1)
        model.set_visible_rows(max(first, 0), last if last >= 0 else model.rowCount() - 1)


class FrozenColumn(QTableView):
    """The State column laid over the left edge of the job table, so it stays in view when
    the table scrolls sideways. It shares the table's model and selection and scrolls with
    it; clicks, keys and the context menu act on the table."""

    def __init__(self, table: JobTableView) -> None:
        super().__init__(table)
        self._table = table
        self.setObjectName("frozenColumn")
        self.setAccessibleName("Job states")
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setAlternatingRowColors(True)
        self.setShowGrid(False)
        self.setWordWrap(False)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.verticalHeader().hide()
        self.verticalHeader().setDefaultSectionSize(ROW_HEIGHT)
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header = self.horizontalHeader()
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        header.setSectionsClickable(False)
        header.setHighlightSections(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.hide()
        self._following: JobTableModel | None = None  # the table's model (this view's once shown)
        table.verticalScrollBar().valueChanged.connect(self.verticalScrollBar().setValue)
        self.verticalScrollBar().valueChanged.connect(table.verticalScrollBar().setValue)
        table.horizontalHeader().sectionResized.connect(lambda index, _old, _new: self.sync())
        table.horizontalHeader().sectionMoved.connect(lambda *_: self.sync())
        table.horizontalScrollBar().valueChanged.connect(lambda _v: self.sync())
        self.viewport().installEventFilter(self)

    def follow(self, model: JobTableModel) -> None:
        """Follow the table's new ``model``: taken up when this view first shows (until then a
        hidden copy of the table's rows, laid out again with every page, at every open)."""
        self._following = model
        if self.model() is not None:  # (taken up again when shown: with the table's new selection)
            self.setModel(None)
        self.sync()

    def _take_up(self, model: JobTableModel) -> None:
        table = self._table
        self.setModel(model)
        self.setSelectionModel(table.selectionModel())
        self.setItemDelegateForColumn(_STATE, table.itemDelegateForColumn(_STATE))

    def sync(self) -> None:
        """Show the State column over the table's left edge while the table is scrolled sideways
        and State is its first visible column."""
        table, model = self._table, self._following
        header = table.horizontalHeader()
        first = next(
            (
                header.logicalIndex(v)
                for v in range(header.count())
                if not header.isSectionHidden(header.logicalIndex(v))
            ),
            -1,
        )
        wanted = model is not None and first == _STATE and table.horizontalScrollBar().value() > 0
        if not wanted or model is None:
            self.hide()
            return
        if self.model() is not model:
            self._take_up(model)
        for index in range(model.columnCount()):
            self.setColumnHidden(index, index != _STATE)
        width = table.columnWidth(_STATE)
        self.setColumnWidth(_STATE, width)
        self.horizontalHeader().setFixedHeight(header.height())
        frame = table.frameWidth()
        self.setGeometry(frame, frame, width + 1, table.viewport().height() + header.height())
        self.verticalScrollBar().setValue(table.verticalScrollBar().value())
        self.show()
        self.raise_()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Wheel:
            QApplication.sendEvent(self._table.viewport(), event)
            return True
        return super().eventFilter(watched, event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        self._table.contextMenuEvent(event)
