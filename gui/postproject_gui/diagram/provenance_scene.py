"""The provenance graph scene: a layered left-to-right drawing of a :class:`ProvenanceGraph`.

The scene adapts values; it never fetches. :meth:`ProvenanceScene.show_graph` rebuilds
everything from a graph (layout by :func:`graph_layout.layout_graph`, computed without Qt);
:meth:`ProvenanceScene.update_graph` applies a newer graph of the same neighbourhood:
with the same nodes and edges it only restyles the nodes that changed, otherwise it lays
the graph out again, keeps the items of surviving nodes (and so the selection) and tells
its views through ``relayout_started``/``relayout_finished`` so they can keep the zoom and
keep the selected node where it was on screen. With :meth:`ProvenanceScene.set_dimming` on,
the nodes and edges outside the selected node's lineage (what it came from and what was made
from it) are drawn faint.

Signals (narrow and typed; ids are the canonical UUID text):
    representation_activated(str), activity_activated(str), job_activated(str):
        a node was double-clicked or activated with Enter.
    selection_changed(str): the selected node id ("" when nothing is selected).
    graph_replaced(): show_graph rebuilt the scene (views frame the new graph).
    relayout_started(), relayout_finished(): update_graph is moving nodes.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QObject, QPointF, QRectF, Signal
from PySide6.QtGui import QColor, QTransform
from PySide6.QtWidgets import QGraphicsScene, QGraphicsSceneMouseEvent

from postproject import ArtifactKnowledge, RepresentationId
from postproject.knowledge.provenance import (
    ActivityNode,
    JobNode,
    ProvenanceGraph,
    ProvenanceNode,
    RepresentationNode,
)
from postproject_gui.diagram import provenance_edges as edges_
from postproject_gui.diagram import provenance_items as items
from postproject_gui.diagram.graph_layout import GraphLayout, LayoutEdge, LayoutNode, layout_graph
from postproject_gui.look import artifact_states as looks
from postproject_gui.look.artifact_states import graph_labeller, node_label, node_tooltip
from postproject_gui.look.states import STATE_LOOKS
from postproject_gui.look.theme import Theme
from postproject_gui.models.documents import graph_document, node_document

LAYER_GAP = 96.0
NODE_GAP = 16.0
MARGIN = 24.0
BANNER_SPACE = 34.0
SUPERSEDED_OPACITY = 0.45  # superseded artifacts are drawn faded
Knowledge = Mapping[RepresentationId, ArtifactKnowledge]


class ProvenanceScene(QGraphicsScene):
    """See the module docstring."""

    representation_activated = Signal(str)
    activity_activated = Signal(str)
    job_activated = Signal(str)
    selection_changed = Signal(str)
    graph_replaced = Signal()
    relayout_started = Signal()
    relayout_finished = Signal()

    def __init__(self, theme: Theme, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._theme = theme
        self._style = items.graph_style(theme)
        self._palette = looks.palette_for(theme.name)
        self._fonts = items.Fonts(self.font())
        self._graph: ProvenanceGraph | None = None
        self._knowledge: dict[RepresentationId, ArtifactKnowledge] = {}
        self._label: looks.Labeller = lambda _rep: None
        self._produced: frozenset[object] = frozenset()
        self._layout: GraphLayout | None = None
        self.nodes: dict[str, items.NodeItem] = {}
        self.edges: dict[tuple[str, str], edges_.EdgeItem] = {}
        self.banner: edges_.BannerItem | None = None
        self.supersessions: list[edges_.SupersessionItem] = []
        self._show_superseded = True
        self._full: ProvenanceGraph | None = None  # the graph as given (before hiding superseded)
        self._selected = ""
        self._dimming = False
        self._quiet = False  # while rebuilding or selecting: selectionChanged is handled once after
        self.setBackgroundBrush(self._style.background)
        self.selectionChanged.connect(self._on_selection)

    # --- public API --------------------------------------------------------------------

    @property
    def graph(self) -> ProvenanceGraph | None:
        return self._graph

    @property
    def layout(self) -> GraphLayout | None:
        return self._layout

    @property
    def theme(self) -> Theme:
        return self._theme

    def knowledge(self, rep_id: RepresentationId) -> ArtifactKnowledge | None:
        return self._knowledge.get(rep_id)

    def set_theme(self, theme: Theme) -> None:
        """Restyle every item (positions and selection stay)."""
        self._theme, self._style = theme, items.graph_style(theme)
        self._palette = looks.palette_for(theme.name)
        self.setBackgroundBrush(self._style.background)
        for node_item in self.nodes.values():
            node_item.style = self._style
        for edge in self.edges.values():
            edge.style = self._style
        for arrow in self.supersessions:
            arrow.style = self._style
        if self.banner is not None:
            self.banner.style = self._style
        if self._graph is not None:
            for node in self._graph.nodes:
                self._restyle(node)
        self.update()

    @property
    def show_superseded(self) -> bool:
        return self._show_superseded

    def set_show_superseded(self, show: bool) -> None:
        """Draw superseded artifacts (faded, with an arrow to their replacement) or hide them."""
        if show == self._show_superseded:
            return
        self._show_superseded = show
        if self._full is not None:
            self.show_graph(self._full, self._knowledge)

    def _visible(self, graph: ProvenanceGraph) -> ProvenanceGraph:
        """``graph`` without its superseded artifacts (and their edges) when they are hidden;
        the focus always stays."""
        self._full = graph
        if self._show_superseded:
            return graph
        hidden = {
            n.id
            for n in graph.nodes
            if isinstance(n, RepresentationNode) and n.superseded_by is not None and n.id != graph.focus
        }
        if not hidden:
            return graph
        return dataclasses.replace(
            graph,
            nodes=tuple(n for n in graph.nodes if n.id not in hidden),
            edges=tuple(e for e in graph.edges if e.source not in hidden and e.target not in hidden),
        )

    def show_graph(self, graph: ProvenanceGraph, knowledge: Knowledge | None = None) -> None:
        """Replace the drawing with ``graph`` (knowledge adds reasons to representation nodes)."""
        graph = self._visible(graph)
        had_selection = bool(self._selected)
        self._dimming = False
        self._quiet = True
        try:
            self.nodes, self.edges, self.banner, self._selected = {}, {}, None, ""
            self.supersessions = []
            self.clear()
            self._set_values(graph, knowledge)
            self._place(graph)
        finally:
            self._quiet = False
        self.graph_replaced.emit()
        if had_selection:
            self.selection_changed.emit("")

    def clear_graph(self) -> None:
        """Show nothing (the production was closed)."""
        self.show_graph(ProvenanceGraph(RepresentationId(bytes(16)), (), (), False))
        self._graph = self._full = None

    def update_graph(self, graph: ProvenanceGraph, knowledge: Knowledge | None = None) -> bool:
        """Apply a newer graph; True when the nodes had to be laid out again (see module doc)."""
        old = self._graph
        if old is None or old.focus != graph.focus:
            self.show_graph(graph, knowledge)
            return True
        graph = self._visible(graph)
        old_knowledge = self._knowledge
        self._set_values(graph, knowledge)
        if _shape(old) == _shape(graph):
            before = {str(n.id): n for n in old.nodes}
            for node in graph.nodes:
                rep = node.id if isinstance(node, RepresentationNode) else None
                if before.get(str(node.id)) != node or (
                    rep is not None and old_knowledge.get(rep) != self._knowledge.get(rep)
                ):
                    self._restyle(node)
            self._add_supersessions(graph)
            self._set_banner(graph)
            return False
        self.relayout_started.emit()
        selected = self._selected
        self._quiet = True
        try:
            self._place(graph)
            item = self.nodes.get(selected)
            if item is not None:
                item.setSelected(True)
        finally:
            self._quiet = False
        self._on_selection()
        self._apply_dimming()
        self.relayout_finished.emit()
        return True

    def selected_id(self) -> str | None:
        return self._selected or None

    def lineage(self, node_id: str) -> frozenset[str]:
        """``node_id``, every node it came from and every node made from it (edges followed
        backwards, then forwards; empty for an unknown id)."""
        if self._graph is None or node_id not in self.nodes:
            return frozenset()
        forward: dict[str, list[str]] = defaultdict(list)
        backward: dict[str, list[str]] = defaultdict(list)
        for edge in self._graph.edges:
            forward[str(edge.source)].append(str(edge.target))
            backward[str(edge.target)].append(str(edge.source))
        found = {node_id}
        for links in (backward, forward):
            todo, seen = [node_id], {node_id}
            while todo:
                for other in links[todo.pop()]:
                    if other not in seen:
                        seen.add(other)
                        todo.append(other)
            found |= seen
        return frozenset(found)

    @property
    def dimming(self) -> bool:
        return self._dimming

    def set_dimming(self, on: bool) -> None:
        """Draw what is outside the selected node's lineage faint (while a node is selected)."""
        self._dimming = on
        self._apply_dimming()

    def _apply_dimming(self) -> None:
        keep = self.lineage(self._selected) if self._dimming and self._selected else None
        for node_id, item in self.nodes.items():
            item.set_dimmed(keep is not None and node_id not in keep)
        for (source, target), edge in self.edges.items():
            edge.set_dimmed(keep is not None and not (source in keep and target in keep))

    def select(self, node_id: str | None) -> None:
        """Select one node (None or an unknown id clears the selection)."""
        item = self.nodes.get(node_id or "")
        self._quiet = True
        try:
            self.clearSelection()
            if item is not None:
                item.setSelected(True)
        finally:
            self._quiet = False
        self._on_selection()

    def activate(self, node_id: str) -> None:
        """Emit the activation signal of a node's type."""
        item = self.nodes.get(node_id)
        if item is None:
            return
        signal = {
            "representation": self.representation_activated,
            "activity": self.activity_activated,
            "job": self.job_activated,
        }[item.node_type]
        signal.emit(node_id)

    def reading_order(self) -> list[str]:
        """Node ids by column, then top to bottom (the Tab order)."""
        if self._layout is None:
            return []
        positions = self._layout.positions
        return sorted(positions, key=lambda i: (positions[i].layer, positions[i].y))

    def node_document(self, node_id: str) -> dict[str, Any] | None:
        """What is known about one node (for a detail panel): state, reasons with texts, ..."""
        if self._graph is None or node_id not in self.nodes:
            return None
        node = next(n for n in self._graph.nodes if str(n.id) == node_id)
        return node_document(node, self._graph.focus, self._knowledge, self._label, node.id in self._produced)

    def tooltip(self, node_id: str) -> str:
        item = self.nodes.get(node_id)
        return item.toolTip() if item is not None else ""

    def graph_rect(self) -> QRectF:
        """The nodes' and edges' extent (without the banner)."""
        if self._layout is None:
            return QRectF()
        return QRectF(0, 0, self._layout.width, self._layout.height)

    def describe(self) -> dict[str, Any]:
        """What the scene shows, as JSON-ready values (snapshot mode)."""
        if self._graph is None:
            return {"focus": None, "nodes": [], "edges": [], "truncated": False, "selected": None}
        document = graph_document(self._graph, self._knowledge)
        for entry in document["nodes"]:
            item = self.nodes[entry["id"]]
            entry["x"], entry["y"] = round(item.pos().x(), 1), round(item.pos().y(), 1)
        document["selected"] = self.selected_id()
        document["banner"] = self.banner.text if self.banner is not None else None
        return document

    # --- building ------------------------------------------------------------------------

    def _place(self, graph: ProvenanceGraph) -> None:
        sizes = {
            RepresentationNode: items.REP_SIZE,
            ActivityNode: items.ACTIVITY_SIZE,
            JobNode: items.JOB_SIZE,
        }
        layout = layout_graph(
            [LayoutNode(str(n.id), *sizes[type(n)]) for n in graph.nodes],
            [LayoutEdge(str(e.source), str(e.target)) for e in graph.edges],
            layer_gap=LAYER_GAP,
            node_gap=NODE_GAP,
        )
        self._layout = layout
        keep = {str(n.id) for n in graph.nodes}
        for node_id in [i for i in self.nodes if i not in keep]:
            self.removeItem(self.nodes.pop(node_id))
        for edge in self.edges.values():
            self.removeItem(edge)
        self.edges = {}
        for node in graph.nodes:
            node_id = str(node.id)
            item = self.nodes.get(node_id)
            if item is None:
                item = self._new_item(node)
                self.nodes[node_id] = item
                self.addItem(item)
            item.focus = node.id == graph.focus
            position = layout.positions[node_id]
            item.setPos(position.x, position.y)
            self._restyle(node)
        self._add_edges(graph, layout)
        self._add_supersessions(graph)
        self._set_banner(graph)
        top = -BANNER_SPACE if graph.truncated else 0.0
        self.setSceneRect(
            QRectF(-MARGIN, top - MARGIN, layout.width + 2 * MARGIN, layout.height - top + 2 * MARGIN)
        )

    def _new_item(self, node: ProvenanceNode) -> items.NodeItem:
        node_id, style, fonts = str(node.id), self._style, self._fonts
        if isinstance(node, RepresentationNode):
            return items.RepresentationItem(node_id, style, fonts)
        if isinstance(node, ActivityNode):
            return items.ActivityItem(node_id, style, fonts)
        return items.JobItem(node_id, style, fonts)

    def _set_values(self, graph: ProvenanceGraph, knowledge: Knowledge | None) -> None:
        self._graph, self._knowledge = graph, dict(knowledge or {})
        self._label = graph_labeller(graph)
        self._produced = frozenset(e.target for e in graph.edges if e.relation == "generated")

    def _restyle(self, node: ProvenanceNode) -> None:
        item = self.nodes[str(node.id)]
        if isinstance(node, RepresentationNode):
            assert isinstance(item, items.RepresentationItem)
            state, look = looks.representation_look(
                node, self._knowledge.get(node.id), node.id in self._produced
            )
            colour = self._palette.source if look is looks.SOURCE_LOOK else self._palette.knowledge(state)
            item.setOpacity(SUPERSEDED_OPACITY if node.superseded_by is not None else 1.0)
            item.set_values(
                asset=node.asset_name or "unnamed asset",
                kind=node.kind.value,
                short_id="…" + str(node.id)[-8:],
                file_name=node.path.name,
                knowledge=(look, QColor(colour)),
                availability=(
                    looks.AVAILABILITY_LOOKS[node.availability],
                    QColor(self._palette.availability(node.availability)),
                ),
            )
        elif isinstance(node, ActivityNode):
            assert isinstance(item, items.ActivityItem)
            item.set_values(kind=node_label(node), tool=str(node.tool) if node.tool else "no tool recorded")
        else:
            assert isinstance(item, items.JobItem)
            state_look = STATE_LOOKS[node.state]
            item.set_values(
                glyph=state_look.glyph,
                colour=QColor(self._theme.states.colour(node.state)),
                text=f"job …{str(node.id)[-8:]} · {state_look.label.lower()}",
            )
        item.setToolTip(node_tooltip(node, self._knowledge, self._label, node.id in self._produced))

    def _add_edges(self, graph: ProvenanceGraph, layout: GraphLayout) -> None:
        roles: dict[tuple[str, str], list[str]] = defaultdict(list)
        relations: dict[tuple[str, str], str] = {}
        for edge in graph.edges:
            key = (str(edge.source), str(edge.target))
            relations.setdefault(key, edge.relation)
            if edge.role:
                roles[key].append(edge.role)
        for key, relation in relations.items():
            role = ", ".join(dict.fromkeys(roles[key])) or None
            item = edges_.EdgeItem(
                layout.edge_routes[key], relation, role, self._style, self._fonts, label_width=LAYER_GAP - 8
            )
            self.edges[key] = item
            self.addItem(item)
        self._place_labels(layout)

    def _add_supersessions(self, graph: ProvenanceGraph) -> None:
        """A dashed arrow from each superseded artifact to its replacement when both are drawn."""
        for item in self.supersessions:
            self.removeItem(item)
        self.supersessions = []
        for node in graph.nodes:
            if not isinstance(node, RepresentationNode) or node.superseded_by is None:
                continue
            source, target = self.nodes.get(str(node.id)), self.nodes.get(str(node.superseded_by))
            if source is None or target is None:
                continue
            arrow = edges_.SupersessionItem(
                source.mapRectToScene(QRectF(0, 0, *items.REP_SIZE)),
                target.mapRectToScene(QRectF(0, 0, *items.REP_SIZE)),
                self._style,
            )
            self.supersessions.append(arrow)
            self.addItem(arrow)

    def _place_labels(self, layout: GraphLayout) -> None:
        """Role labels in the gap before the target's column, pushed apart where they would touch."""
        columns: dict[int, float] = {}
        for p in layout.positions.values():
            columns[p.layer] = min(columns.get(p.layer, p.x), p.x)
        by_gap: dict[int, list[tuple[float, float, edges_.EdgeItem]]] = defaultdict(list)
        for (_source, target), edge in self.edges.items():
            if not edge.label:
                continue
            column = columns[layout.positions[target].layer]
            x, y = edges_.gap_point(edge.points, column)
            by_gap[round(x)].append((y, x, edge))
        for placed in by_gap.values():
            placed.sort(key=lambda entry: entry[0])
            floor = -1e18
            for y, x, edge in placed:
                height = edge.label_size()[1]
                y = max(y, floor + height + 2)
                edge.set_label_centre(QPointF(x, y))
                floor = y

    def _set_banner(self, graph: ProvenanceGraph) -> None:
        text = f"Neighbourhood truncated at {len(graph.nodes)} nodes — showing the nearest"
        if not graph.truncated:
            if self.banner is not None:
                old, self.banner = self.banner, None
                self.removeItem(old)
            return
        if self.banner is not None and self.banner.text == text:
            return
        if self.banner is not None:
            old, self.banner = self.banner, None
            self.removeItem(old)
        self.banner = edges_.BannerItem(text, self._style, self._fonts)
        self.banner.setPos(0, -BANNER_SPACE + 4)
        self.addItem(self.banner)

    # --- interaction ---------------------------------------------------------------------

    def _on_selection(self) -> None:
        if self._quiet:
            return
        chosen = [i for i in self.selectedItems() if isinstance(i, items.NodeItem)]
        selected = chosen[0].node_id if chosen else ""
        for (source, target), edge in self.edges.items():
            edge.set_highlighted(selected in (source, target))
        if selected != self._selected:
            self._selected = selected
            self._apply_dimming()
            self.selection_changed.emit(selected)

    def mouseDoubleClickEvent(self, event: QGraphicsSceneMouseEvent) -> None:
        item = self.itemAt(event.scenePos(), QTransform())
        if isinstance(item, items.NodeItem):
            event.accept()
            self.activate(item.node_id)
            return
        super().mouseDoubleClickEvent(event)


def _shape(graph: ProvenanceGraph) -> tuple[frozenset[str], frozenset[tuple[str, str, str]], bool]:
    return (
        frozenset(str(n.id) for n in graph.nodes),
        frozenset((str(e.source), str(e.target), e.relation) for e in graph.edges),
        graph.truncated,
    )
