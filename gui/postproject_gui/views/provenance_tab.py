"""The Provenance tab: the graph of one representation's neighbourhood and the selected node.

A header (what is shown, zoom, the graph actions), the :class:`ProvenanceView` (objectName
``provenanceGraph``) with a legend of the knowledge states, and the
:class:`~postproject_gui.views.node_detail.NodeDetailPanel` beside it in a splitter. A graph
for a new focus is drawn afresh, fitted, and the focus selected (and, when the fit is too
small to read, brought to the middle at a readable zoom: :meth:`ProvenanceView.frame`; the
rest of a large graph stays a click on Fit away); a node found with the header's find field,
or the job a job's "Show provenance" asked for, is focused (:meth:`ProvenanceView.focus_node`);
a newer read of the same focus goes through
``ProvenanceScene.update_graph``, which keeps the zoom and the selection.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QAction, QColor, QFontMetricsF, QPainter, QPaintEvent, QResizeEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from postproject import ArtifactState, RepresentationId
from postproject_gui.diagram.provenance_scene import ProvenanceScene
from postproject_gui.look import artifact_states as looks
from postproject_gui.look.artifact_states import KNOWLEDGE_LOOKS, SOURCE_LOOK
from postproject_gui.look.theme import Theme, paint_artifact_glyph
from postproject_gui.services.types import GraphRead
from postproject_gui.views.node_detail import NodeDetailPanel
from postproject_gui.views.provenance_view import ProvenanceView
from postproject_gui.views.widgets import tool_button

COMPACT_WIDTH = 1300  # narrower than this, the graph actions show icons only
LEGEND_ORDER = (
    ArtifactState.CURRENT,
    ArtifactState.STALE,
    ArtifactState.DIVERGED,
    ArtifactState.INDETERMINATE,
    ArtifactState.SUPERSEDED,
)


class KnowledgeLegend(QWidget):
    """✓ Current ↻ Stale ◆ Diverged ? Indeterminate ⤳ Superseded ▪ Source, painted in the theme's colours."""

    def __init__(self, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("knowledgeLegend")
        self.setAccessibleName("Legend: current, stale, diverged, indeterminate, superseded, source")
        self._theme = theme
        self.setFixedHeight(22)

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(620, 22)

    def paintEvent(self, event: QPaintEvent) -> None:
        palette = looks.palette_for(self._theme.name)
        entries = [(KNOWLEDGE_LOOKS[s], palette.knowledge(s)) for s in LEGEND_ORDER]
        entries.append((SOURCE_LOOK, palette.source))
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        metrics = QFontMetricsF(self.font())
        x = 4.0
        for look, colour in entries:
            paint_artifact_glyph(painter, look.glyph, QColor(colour), QRectF(x, 4, 14, 14))
            painter.setPen(QColor(self._theme.ui.muted))
            width = metrics.horizontalAdvance(look.label)
            painter.drawText(QRectF(x + 18, 0, width + 2, 22), Qt.AlignmentFlag.AlignVCenter, look.label)
            x += 18 + width + 16
        painter.end()


class ProvenanceTab(QWidget):
    """Signals: representation_activated(str), job_activated(str), selection_changed(str)."""

    representation_activated = Signal(str)
    job_activated = Signal(str)
    selection_changed = Signal(str)

    def __init__(self, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("provenanceTab")
        self._theme = theme
        self._read: GraphRead | None = None
        self.scene = ProvenanceScene(theme)
        self.view = ProvenanceView(self.scene)
        self.detail = NodeDetailPanel(theme, self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 6, 0, 0)
        layout.setSpacing(6)
        layout.addLayout(self._build_header())
        self.stack = QStackedWidget(self)
        self.placeholder = QLabel(
            "No provenance shown yet.\n\nDouble-click an artifact in the Artifacts tab (Ctrl+2), or choose "
            "“Show provenance” on a job,\nto draw where it came from and what was made from it.",
            self,
        )
        self.placeholder.setObjectName("provenancePlaceholder")
        self.placeholder.setProperty("role", "muted")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        graph_box = QFrame(self)
        graph_box.setObjectName("graphBox")
        box = QVBoxLayout(graph_box)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(2)
        box.addWidget(self.view, 1)
        self.legend = KnowledgeLegend(theme, graph_box)
        self.show_superseded = QCheckBox("Show superseded", graph_box)
        self.show_superseded.setObjectName("showSuperseded")
        self.show_superseded.setToolTip(
            "Draw artifacts a regeneration replaced (faded, with a dashed arrow to their replacement)"
        )
        self.show_superseded.setChecked(True)
        self.show_superseded.toggled.connect(self.scene.set_show_superseded)
        legend_row = QHBoxLayout()
        legend_row.setContentsMargins(0, 0, 6, 0)
        legend_row.addWidget(self.legend, 1)
        legend_row.addWidget(self.show_superseded)
        box.addLayout(legend_row)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.setObjectName("provenanceSplitter")
        self.splitter.addWidget(graph_box)
        self.splitter.addWidget(self.detail)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([1040, 380])
        self.splitter.setChildrenCollapsible(False)
        self.stack.addWidget(self.placeholder)
        self.stack.addWidget(self.splitter)
        layout.addWidget(self.stack, 1)
        self.scene.representation_activated.connect(self.representation_activated)
        self.scene.job_activated.connect(self.job_activated)
        self.scene.activity_activated.connect(self.scene.select)
        self.scene.selection_changed.connect(self._selection_changed)
        self.detail.open_requested.connect(self.scene.activate)
        self.view.zoom_changed.connect(lambda scale: self.zoom.setText(f"{scale * 100:.0f} %"))

    def _build_header(self) -> QHBoxLayout:
        row = QHBoxLayout()
        row.setSpacing(6)
        self.heading = QLabel("Provenance", self)
        self.heading.setObjectName("provenanceHeading")
        self.heading.setTextFormat(Qt.TextFormat.RichText)
        self.heading.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.heading.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)  # 1024 px fits
        self.fit = tool_button(
            self, "Fit", "Show the whole graph (0 or Home in the graph)", lambda: self.view.fit_to_view()
        )
        self.focus_button = tool_button(
            self,
            "Focus",
            "Zoom to the selected node and its neighbours, the rest faint (F in the graph)",
            lambda: self.view.focus_selection(),
        )
        self.actual = tool_button(
            self, "100 %", "Show the graph at 100 % (1 in the graph)", lambda: self.view.set_zoom(1.0)
        )
        self.zoom = QLabel("", self)
        self.zoom.setProperty("role", "muted")
        self.zoom.setMinimumWidth(44)
        self.find_field = QLineEdit(self)
        self.find_field.setObjectName("provenanceFind")
        self.find_field.setPlaceholderText("Find in graph…")
        self.find_field.setAccessibleName("Find a node in the graph")
        self.find_field.setToolTip(
            "Asset, file, kind, tool, job or id: Enter focuses the next node that matches"
        )
        self.find_field.setClearButtonEnabled(True)
        self.find_field.setMaximumWidth(200)
        self.find_field.returnPressed.connect(lambda: self.find_node())
        self.find_status = QLabel("", self)
        self.find_status.setProperty("role", "muted")
        self.find_field.textChanged.connect(lambda _text: self.find_status.setText(""))
        row.addWidget(self.heading, 1)
        row.addWidget(self.find_field)
        row.addWidget(self.find_status)
        row.addWidget(self.zoom)
        row.addWidget(self.fit)
        row.addWidget(self.focus_button)
        row.addWidget(self.actual)
        self.action_buttons: list[QToolButton] = []
        self.buttons = QHBoxLayout()
        self.buttons.setSpacing(4)
        row.addSpacing(8)
        row.addLayout(self.buttons)
        return row

    def add_action_buttons(self, actions: list[QAction]) -> None:
        for action in actions:
            button = QToolButton(self)
            button.setDefaultAction(action)
            self.action_buttons.append(button)
            self.buttons.addWidget(button)
        self._fit_header()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_header()

    def _fit_header(self) -> None:
        """Below :data:`COMPACT_WIDTH` the action buttons show their icons only (each names
        itself in its tooltip), leaving the heading and the find field room at 1024 px."""
        style = (
            Qt.ToolButtonStyle.ToolButtonIconOnly
            if self.width() < COMPACT_WIDTH
            else Qt.ToolButtonStyle.ToolButtonTextBesideIcon
        )
        for button in self.action_buttons:
            button.setToolButtonStyle(style)

    # --- showing -------------------------------------------------------------------------

    @property
    def read(self) -> GraphRead | None:
        return self._read

    def focus(self) -> RepresentationId | None:
        return self._read.graph.focus if self._read is not None else None

    def selected_representation(self) -> RepresentationId | None:
        """The selected node when it is a representation, else None."""
        node_id = self.scene.selected_id()
        item = self.scene.nodes.get(node_id or "")
        if item is None or item.node_type != "representation":
            return None
        return RepresentationId.parse(item.node_id)

    def show_read(self, read: GraphRead) -> None:
        """Draw a graph: afresh for a new focus (selecting the focus), else update in place."""
        new_focus = self._read is None or self._read.graph.focus != read.graph.focus
        self._read = read
        self.stack.setCurrentWidget(self.splitter)
        if new_focus:
            self.scene.show_graph(read.graph, read.knowledge)
            self.scene.select(str(read.graph.focus))
            if self.view.isVisible():
                self.view.frame()  # fitted; the focus in the middle, readable, if the fit is not
            # (a hidden view frames so when it is shown)
        else:
            self.scene.update_graph(read.graph, read.knowledge)
            self._selection_changed(self.scene.selected_id() or "")
        focus = next((n for n in read.graph.nodes if n.id == read.graph.focus), None)
        label = looks.node_label(focus) if focus is not None else str(read.graph.focus)
        truncated = " · truncated at 500 nodes" if read.graph.truncated else ""
        self.heading.setText(f"<b>{html.escape(label)}</b> · {len(read.graph.nodes)} nodes{truncated}")
        self.zoom.setText(f"{self.view.zoom() * 100:.0f} %")

    def focus_node(self, node_id: str) -> None:
        """Select and show a node chosen elsewhere (a job's "Show provenance", a search)."""
        if node_id in self.scene.nodes:
            self.view.focus_node(node_id)

    def find_node(self, text: str | None = None) -> str | None:
        """Focus the next node whose label, id or details contain ``text`` (the find field's
        text by default; again: the next match, wrapping); the node's id, or None."""
        words = (self.find_field.text() if text is None else text).strip().lower()
        if not words:
            self.find_status.setText("")
            return None
        matches = [
            node_id
            for node_id in self.scene.reading_order()
            if words in node_id or words in self.scene.tooltip(node_id).lower()
        ]
        if not matches:
            self.find_status.setText("no node matches")
            return None
        current = self.scene.selected_id()
        index = (matches.index(current) + 1) % len(matches) if current in matches else 0
        self.find_status.setText(f"{index + 1} of {len(matches)}")
        self.view.focus_node(matches[index])
        return matches[index]

    def show_failure(self, message: str) -> None:
        if self._read is None:
            self.placeholder.setText(f"The provenance graph could not be read:\n{message}")
            self.stack.setCurrentWidget(self.placeholder)

    def clear(self) -> None:
        self._read = None
        self.scene.clear_graph()
        self.detail.show_summary(None)
        self.stack.setCurrentWidget(self.placeholder)
        self.heading.setText("Provenance")

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        self.scene.set_theme(theme)
        self.detail.set_theme(theme)
        self.legend.set_theme(theme)

    def _selection_changed(self, node_id: str) -> None:
        document = self.scene.node_document(node_id) if node_id else None
        if document is not None:
            self.detail.show_node(document)
        else:
            self.detail.show_summary(self._read)
        self.selection_changed.emit(node_id)
