"""The Artifacts tab: every representation with its kind, path, availability and knowledge.

A filter row ("Stale or diverged only", what is shown, the artifact actions) over a table of
the :class:`~postproject_gui.models.artifact_proxy.ArtifactFilterProxy`. Double-click (or
Enter on) a row to draw its provenance; right-click for the actions.
"""

from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QAction, QColor, QContextMenuEvent, QKeyEvent, QPainter, QPaintEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from postproject import ArtifactState, RepresentationId
from postproject_gui.look.artifact_states import KnowledgeGlyph, palette_for
from postproject_gui.look.theme import Theme
from postproject_gui.models.artifact_model import REPRESENTATION_ID_ROLE, ArtifactTableModel, artifact_icon
from postproject_gui.models.artifact_proxy import ArtifactFilterProxy
from postproject_gui.views.job_table_view import CellDelegate

ROW_HEIGHT = 22
WIDTHS = (210, 80, 400, 96, 132)  # asset, kind, path, availability, knowledge; "why" stretches
PATH_COLUMN = 2


class ArtifactTable(QTableView):
    """The table. Signals: activated_artifact(str representation id), selection_changed_rows(int)."""

    activated_artifact = Signal(str)
    selection_changed_rows = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("artifactTable")
        self.setAccessibleName("Artifacts")
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setAlternatingRowColors(True)
        self.setShowGrid(False)
        self.setWordWrap(False)
        self.setSortingEnabled(True)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.setItemDelegateForColumn(PATH_COLUMN, CellDelegate("middle", self))  # keep the file name
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.verticalHeader().hide()
        self.verticalHeader().setDefaultSectionSize(ROW_HEIGHT)
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header = self.horizontalHeader()
        header.setHighlightSections(False)
        header.setStretchLastSection(True)
        header.setSectionsMovable(True)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.row_actions: list[QAction | None] = []
        self._empty = ("", QColor("#6b7280"))
        self.doubleClicked.connect(self._activated)

    def set_models(self, proxy: ArtifactFilterProxy) -> None:
        self.setModel(proxy)
        for column, width in enumerate(WIDTHS):
            self.setColumnWidth(column, width)
        self.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # creation order until a header is clicked
        self.selectionModel().selectionChanged.connect(
            lambda *_: self.selection_changed_rows.emit(len(self.selectionModel().selectedRows()))
        )

    def selected_ids(self) -> list[RepresentationId]:
        if self.selectionModel() is None:
            return []
        rows = sorted(self.selectionModel().selectedRows(), key=lambda i: i.row())
        return [RepresentationId.parse(str(i.data(REPRESENTATION_ID_ROLE))) for i in rows]

    def select_artifact(self, rep_id: RepresentationId) -> bool:
        """Select and scroll to a representation if it is listed."""
        proxy = self.model()
        if not isinstance(proxy, ArtifactFilterProxy):
            return False
        source = proxy.sourceModel()
        row = source.row_of(rep_id) if isinstance(source, ArtifactTableModel) else None
        if row is None:
            return False
        index = proxy.mapFromSource(source.index(row, 0))
        if not index.isValid():  # filtered out
            return False
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        self.selectionModel().setCurrentIndex(index, flags)
        self.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        return True

    def set_empty_text(self, text: str, muted: str) -> None:
        self._empty = (text, QColor(muted))
        self.viewport().update()

    def _activated(self, index: QModelIndex | QPersistentModelIndex) -> None:
        if index.isValid():
            self.activated_artifact.emit(str(index.data(REPRESENTATION_ID_ROLE)))

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.currentIndex().isValid():
            self._activated(self.currentIndex())
            event.accept()
            return
        super().keyPressEvent(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        index = self.indexAt(event.pos())
        if index.isValid() and not self.selectionModel().isRowSelected(index.row()):
            self.selectRow(index.row())
        menu = QMenu(self)
        for action in self.row_actions:
            menu.addSeparator() if action is None else menu.addAction(action)
        menu.exec(event.globalPos())

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        model = self.model()
        text, colour = self._empty
        if model is not None and model.rowCount() == 0 and text:
            painter = QPainter(self.viewport())
            painter.setPen(colour)
            painter.drawText(
                self.viewport().rect().adjusted(0, 40, 0, 0),
                Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop,
                text,
            )
            painter.end()


class ArtifactsTab(QWidget):
    """Filter row and table. Signals: attention_toggled(bool), artifact_activated(str)."""

    attention_toggled = Signal(bool)
    artifact_activated = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("artifactsTab")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 6, 0, 0)
        layout.setSpacing(6)
        bar = QFrame(self)
        bar.setObjectName("artifactBar")
        row = QHBoxLayout(bar)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(6)
        self.attention = QToolButton(bar)
        self.attention.setObjectName("staleOnly")
        self.attention.setText("Stale or diverged only")
        self.attention.setCheckable(True)
        self.attention.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.attention.setToolTip(
            "List only the artifacts that need regenerating (stale) or were overwritten (diverged)"
        )
        self.attention.setAccessibleName("Show only stale or diverged artifacts")
        self.attention.toggled.connect(self.attention_toggled)
        self.shown = QLabel(bar)
        self.shown.setObjectName("artifactsShown")
        self.shown.setProperty("role", "muted")
        row.addWidget(self.attention)
        row.addWidget(self.shown, 1)
        self.buttons = QHBoxLayout()
        self.buttons.setSpacing(4)
        row.addLayout(self.buttons)
        self.table = ArtifactTable(self)
        self.table.activated_artifact.connect(self.artifact_activated)
        layout.addWidget(bar)
        layout.addWidget(self.table, 1)

    def add_action_buttons(self, actions: list[QAction]) -> None:
        for action in actions:
            button = QToolButton(self)
            button.setDefaultAction(action)
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            self.buttons.addWidget(button)

    def set_theme(self, theme: Theme) -> None:
        colour = palette_for(theme.name).knowledge(ArtifactState.STALE)
        self.attention.setIcon(artifact_icon(KnowledgeGlyph.REFRESH, colour))

    def set_attention(self, on: bool) -> None:
        if self.attention.isChecked() != on:
            self.attention.setChecked(on)

    def show_status(self, model: ArtifactTableModel | None, muted: str) -> None:
        """``12 of 40 shown · 3 stale or diverged · scroll for more`` and the empty-table note."""
        proxy = self.table.model()
        if model is None or proxy is None:
            self.shown.setText("")
            self.table.set_empty_text("", muted)
            return
        loaded, shown = model.rowCount(), proxy.rowCount()
        text = f"{shown:,} of {loaded:,} shown" if shown != loaded else f"{loaded:,} artifacts"
        text += f" · {model.stale_count:,} stale or diverged"
        if self.attention.isChecked() and not model.exhausted:
            text += f" · searched {model.scanned:,}"
        if model.loading:
            text += " · loading…"
        elif not model.exhausted and model.started:
            text += " · scroll for more"
        self.shown.setText(text)
        if model.loading or not model.started:
            empty = "Loading…"
        elif self.attention.isChecked() and loaded:
            empty = "Nothing is stale or diverged: every artifact still matches what made it."
        else:
            empty = "This production has no representations yet."
        self.table.set_empty_text(empty, muted)
