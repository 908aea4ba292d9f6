"""The provenance graph view (objectName ``provenanceGraph``): zoom, pan, keys, export.

Mouse: drag the background to pan, Ctrl+wheel to zoom under the pointer, click to select,
double-click to open. Keys: arrows move the selection to the nearest node that way
(they scroll when nothing is selected), Tab/Shift+Tab cycle the nodes column by column
(Ctrl+Tab leaves the graph), Enter opens the selected node, Escape clears the selection,
+/- zoom, 0 (or Ctrl+0) or Home fits the graph, F focuses the selected node (its
neighbourhood at a readable zoom, the rest of the graph faint), 1 shows it at 100 % (Ctrl+1
is the window's Jobs tab).

Framing happens in the *uncovered* part of the viewport (:meth:`ProvenanceView.uncovered_rect`:
below the truncation banner pinned at the top): a new
graph (:meth:`ProvenanceScene.show_graph`) is fitted into it, zoomed out as far as needed
(a large graph then draws its nodes as plain state-coloured shapes, see
:mod:`provenance_items`); :meth:`ProvenanceView.focus_node` (a node chosen from a list, a
search or a job's "Show provenance") brings the node to the middle of that area at a
readable zoom; a selection that lands outside its inner part is scrolled to its middle, never
left at an edge. The view keeps the user's zoom, and keeps the selected node in the same
place on screen when the scene relays the graph out after a live update.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import shiboken6
from PySide6.QtCore import QEvent, QPointF, QRect, QRectF, QSize, QSizeF, Qt, Signal
from PySide6.QtGui import QImage, QKeyEvent, QMouseEvent, QPainter, QResizeEvent, QShowEvent, QWheelEvent
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QFrame, QGraphicsItem, QGraphicsView, QWidget

from postproject_gui.diagram.provenance_items import SIMPLE_LOD
from postproject_gui.diagram.provenance_scene import ProvenanceScene

MIN_ZOOM, MAX_ZOOM = 0.02, 4.0
STEP = 1.2
READABLE = 0.75  # the least zoom focusing a node shows it at (9 pt text is ~7 px tall)
FRAME_MARGIN = 16  # pixels kept free around a fitted graph or a focused neighbourhood
BANNER_TOP = 6  # the banner is pinned this far below the viewport's top
INNER = 0.18  # a selection outside the uncovered area less this share of each side is re-centred
MAX_EXPORT_SIDE = 12_000  # pixels; larger graphs are exported scaled down
DESCRIPTION = (
    "Representations (cards), activities (hexagons) and jobs (pills), inputs on the left. "
    "Arrow keys move between nodes, Tab cycles them, Enter opens the selected node."
)
DIRECTIONS = {"left": (-1.0, 0.0), "right": (1.0, 0.0), "up": (0.0, -1.0), "down": (0.0, 1.0)}
ARROWS = {
    Qt.Key.Key_Left.value: "left",
    Qt.Key.Key_Right.value: "right",
    Qt.Key.Key_Up.value: "up",
    Qt.Key.Key_Down.value: "down",
}


class ProvenanceView(QGraphicsView):
    """A view of a :class:`ProvenanceScene`. Signal: zoom_changed(float), the new scale."""

    zoom_changed = Signal(float)

    def __init__(self, scene: ProvenanceScene, parent: QWidget | None = None) -> None:
        super().__init__(scene, parent)
        if scene.parent() is None:
            scene.setParent(self)  # the view owns a parentless scene (no Python reference cycle)
        self.setObjectName("provenanceGraph")
        self.setAccessibleName("Provenance graph")
        self.setAccessibleDescription(DESCRIPTION)
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.MinimalViewportUpdate)
        self.setCacheMode(QGraphicsView.CacheModeFlag.CacheBackground)
        self.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontAdjustForAntialiasing)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        # No scroll bars (pan by dragging, the wheel or the keys): a bar appearing after a live
        # update would shrink the viewport and shift the graph under the user's eyes.
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._anchor: tuple[str, QPointF] | None = None
        self._needs_frame = False
        self._pending_focus: str | None = None
        self._pressing = False  # a mouse press is selecting (the node is under the pointer)
        scene.graph_replaced.connect(self._graph_replaced)
        scene.relayout_started.connect(self._remember_anchor)
        scene.relayout_finished.connect(self._restore_anchor)
        scene.selection_changed.connect(self._selection_changed)
        self.horizontalScrollBar().valueChanged.connect(self._pin_banner)
        self.verticalScrollBar().valueChanged.connect(self._pin_banner)

    @property
    def _scene(self) -> ProvenanceScene:
        scene = self.scene()
        assert isinstance(scene, ProvenanceScene), "the provenance view lost its scene"
        return scene

    def sizeHint(self) -> QSize:
        return QSize(900, 560)

    # --- zoom and framing --------------------------------------------------------------

    def zoom(self) -> float:
        return self.transform().m11()

    def set_zoom(self, scale: float, anchor: QPointF | None = None) -> None:
        """Zoom to ``scale`` (clamped), keeping ``anchor`` (scene point; default: the centre) in place."""
        scale = max(MIN_ZOOM, min(MAX_ZOOM, scale))
        if abs(scale - self.zoom()) < 1e-6:
            return
        point = anchor if anchor is not None else self.mapToScene(self.viewport().rect().center())
        before = self.mapFromScene(point)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.NoAnchor)
        self.resetTransform()
        self.scale(scale, scale)
        self._keep(point, QPointF(before))
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self._pin_banner()
        self.zoom_changed.emit(scale)

    def zoom_in(self) -> None:
        self.set_zoom(self.zoom() * STEP, self._zoom_anchor())

    def zoom_out(self) -> None:
        self.set_zoom(self.zoom() / STEP, self._zoom_anchor())

    def uncovered_rect(self) -> QRect:
        """The part of the viewport nothing is drawn over (viewport coordinates): below the
        truncation banner pinned at the top. (The node detail panel sits beside the view in
        a splitter, so it covers none of it.)"""
        area = self.viewport().rect()
        banner = self._scene.banner
        if banner is not None and shiboken6.isValid(banner):
            area.setTop(round(BANNER_TOP + banner.boundingRect().height() + 4))
        return area

    def fit_to_view(self, *, magnify: bool = False) -> None:
        """Show the whole graph in the uncovered area (at most 100 % unless ``magnify``); ends
        any lineage dimming."""
        rect = self._scene.graph_rect()
        if rect.isEmpty():
            return
        self._scene.set_dimming(False)
        area = QRectF(self.uncovered_rect()).adjusted(
            FRAME_MARGIN, FRAME_MARGIN, -FRAME_MARGIN, -FRAME_MARGIN
        )
        scale = min(area.width() / rect.width(), area.height() / rect.height())
        self.set_zoom(scale if magnify else min(1.0, scale))
        self._place(rect.center(), area.center())

    def frame(self) -> None:
        """The framing of a new graph: fitted into the uncovered area; when that is below
        :data:`READABLE`, the node asked for with :meth:`focus_node` before the view could
        frame (else the selected node, if any) is then focused."""
        self._needs_frame = False
        self.fit_to_view()
        pending, self._pending_focus = self._pending_focus, None
        node_id = pending or self._scene.selected_id()
        if node_id is not None and self.zoom() < READABLE:
            self.focus_node(node_id)

    def center_on_node(self, node_id: str) -> None:
        """Scroll (at this zoom) so that the node is in the middle of the uncovered area."""
        item = self._scene.nodes.get(node_id)
        if item is not None:
            self._place(item.centre, QRectF(self.uncovered_rect()).center())

    def focus_node(self, node_id: str) -> None:
        """Select a node chosen elsewhere (a list, a search, a job's "Show provenance") and show
        it: in the middle of the uncovered area, at a readable zoom (its neighbourhood framed
        when the zoom was below :data:`READABLE`, else the zoom kept), the rest of the graph
        faint."""
        item = self._scene.nodes.get(node_id)
        if item is None:
            return
        if self._scene.selected_id() != node_id:
            self._scene.select(node_id)
        if self._needs_frame or not self.isVisible():
            self._pending_focus = node_id  # framed when the view is shown
            return
        self._scene.set_dimming(True)
        if self.zoom() < READABLE:
            self.frame_neighbourhood(node_id)
        else:
            self.center_on_node(node_id)

    def frame_neighbourhood(self, node_id: str) -> None:
        """Zoom so that the node and its direct neighbours fill the uncovered area, between
        :data:`READABLE` and 100 %, with the node in its middle."""
        item = self._scene.nodes.get(node_id)
        if item is None:
            return
        area = QRectF(self.uncovered_rect()).adjusted(
            FRAME_MARGIN, FRAME_MARGIN, -FRAME_MARGIN, -FRAME_MARGIN
        )
        centre = item.centre
        half_w = half_h = 1.0
        for other in self._neighbours(node_id) | {node_id}:
            box = self._scene.nodes[other].sceneBoundingRect()
            half_w = max(half_w, abs(box.left() - centre.x()), abs(box.right() - centre.x()))
            half_h = max(half_h, abs(box.top() - centre.y()), abs(box.bottom() - centre.y()))
        fit = min(area.width() / (2 * half_w), area.height() / (2 * half_h))
        self.set_zoom(max(READABLE, min(1.0, fit)))
        self._place(centre, area.center())

    def focus_selection(self) -> None:
        """F: frame the selected node's neighbourhood (the graph's focus when none is)."""
        graph = self._scene.graph
        node_id = self._scene.selected_id() or (str(graph.focus) if graph is not None else "")
        if node_id in self._scene.nodes:
            if self._scene.selected_id() != node_id:
                self._scene.select(node_id)
            self._scene.set_dimming(True)
            self.frame_neighbourhood(node_id)

    def _neighbours(self, node_id: str) -> set[str]:
        graph = self._scene.graph
        if graph is None:
            return set()
        found = set()
        for edge in graph.edges:
            source, target = str(edge.source), str(edge.target)
            if source == node_id and target in self._scene.nodes:
                found.add(target)
            elif target == node_id and source in self._scene.nodes:
                found.add(source)
        return found

    def _node_rect(self, node_id: str) -> QRectF:
        """A node's box in viewport coordinates."""
        item = self._scene.nodes[node_id]
        return self.mapFromScene(item.sceneBoundingRect()).boundingRect().toRectF()

    def _inner_rect(self) -> QRectF:
        area = QRectF(self.uncovered_rect())
        dx, dy = max(24.0, area.width() * INNER), max(24.0, area.height() * INNER)
        if area.width() <= 2 * dx or area.height() <= 2 * dy:
            return area
        return area.adjusted(dx, dy, -dx, -dy)

    def _place(self, scene_point: QPointF, viewport_point: QPointF) -> None:
        """Scroll so that ``scene_point`` shows at ``viewport_point``, letting the view scroll
        past the graph's edges as far as that needs."""
        zoom = self.zoom()
        size = QSizeF(self.viewport().size()) / zoom
        visible = QRectF(scene_point - viewport_point / zoom, size)
        self.setSceneRect(self._scene.sceneRect().united(visible))
        self._keep(scene_point, viewport_point)
        self._pin_banner()

    # --- keyboard and mouse --------------------------------------------------------------

    def select_neighbour(self, direction: str) -> bool:
        """Move the selection to the nearest node in ``direction``; False when there is none."""
        current = self._scene.selected_id()
        if current is None:
            return False
        target = self.neighbour(current, direction)
        if target is None:
            return False
        self._scene.select(target)
        return True

    def neighbour(self, node_id: str, direction: str) -> str | None:
        """The node an arrow key moves to from ``node_id`` (see :func:`nearest`)."""
        scene = self._scene
        if scene.graph is None or node_id not in scene.nodes:
            return None
        centres = {i: (item.centre.x(), item.centre.y()) for i, item in scene.nodes.items()}
        linked = {
            str(e.target) if direction == "right" else str(e.source)
            for e in scene.graph.edges
            if (direction == "right" and str(e.source) == node_id)
            or (direction == "left" and str(e.target) == node_id)
        }
        return nearest(centres, node_id, direction, linked)

    def cycle(self, forward: bool = True) -> None:
        """Select the next (previous) node in reading order, wrapping around."""
        order = self._scene.reading_order()
        if not order:
            return
        current = self._scene.selected_id()
        if current not in order:
            target = order[0] if forward else order[-1]
        else:
            target = order[(order.index(current) + (1 if forward else -1)) % len(order)]
        self._scene.select(target)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            key, mods = event.key(), event.modifiers()
            if key in (Qt.Key.Key_Tab, Qt.Key.Key_Backtab):
                forward = key == Qt.Key.Key_Tab and not mods & Qt.KeyboardModifier.ShiftModifier
                if mods & Qt.KeyboardModifier.ControlModifier:
                    return self.focusNextPrevChild(forward)  # Ctrl+Tab leaves the graph
                self.cycle(forward)
                return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key, ctrl = event.key(), bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
        selected = self._scene.selected_id()
        if key in ARROWS and selected is not None and not ctrl:
            self.select_neighbour(ARROWS[key])
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and selected is not None:
            self._scene.activate(selected)
        elif key == Qt.Key.Key_Escape and selected is not None:
            self._scene.select(None)
        elif key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom_in()
        elif key in (Qt.Key.Key_Minus, Qt.Key.Key_Underscore):
            self.zoom_out()
        elif key in (Qt.Key.Key_0, Qt.Key.Key_Home):
            self.fit_to_view()
        elif key == Qt.Key.Key_F and not ctrl:
            self.focus_selection()
        elif key == Qt.Key.Key_1 and not ctrl:
            self.set_zoom(1.0, self._zoom_anchor())
        else:
            super().keyPressEvent(event)
            return
        event.accept()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        self._pressing = True
        try:
            super().mousePressEvent(event)
        finally:
            self._pressing = False

    def wheelEvent(self, event: QWheelEvent) -> None:
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            steps = event.angleDelta().y() / 120
            if steps:
                self.set_zoom(self.zoom() * STEP**steps, self.mapToScene(event.position().toPoint()))
            event.accept()
            return
        super().wheelEvent(event)

    # --- export --------------------------------------------------------------------------

    def export_image(self, path: str | Path) -> Path:
        """Save the whole graph as ``.png`` (at 100 %, scaled down past 12 000 px) or ``.svg``."""
        out = Path(path)
        suffix = out.suffix.lower()
        if suffix not in (".png", ".svg"):
            raise ValueError(f"export as .png or .svg; got {out.name!r}")
        source = self._export_rect()
        if suffix == ".svg":
            generator = QSvgGenerator()
            generator.setFileName(str(out))
            generator.setSize(source.size().toSize())
            generator.setViewBox(QRectF(0, 0, source.width(), source.height()))
            generator.setTitle("Provenance graph")
            generator.setDescription(
                self._scene.banner.text if self._scene.banner else "PostProject provenance"
            )
            self._render(generator, source, QRectF(0, 0, source.width(), source.height()))
            return out
        scale = min(1.0, MAX_EXPORT_SIDE / max(source.width(), source.height()))
        image = QImage(
            max(1, round(source.width() * scale)),
            max(1, round(source.height() * scale)),
            QImage.Format.Format_ARGB32_Premultiplied,
        )
        image.fill(self._scene.backgroundBrush().color())
        self._render(image, source, QRectF(0, 0, image.width(), image.height()))
        if not image.save(str(out)):
            raise OSError(f"could not write {out}")
        return out

    def _export_rect(self) -> QRectF:
        rect = self._scene.sceneRect()
        return rect if not rect.isEmpty() else QRectF(0, 0, 1, 1)

    def _render(self, device: QImage | QSvgGenerator, source: QRectF, target: QRectF) -> None:
        """Render the scene vector by vector (no item pixmap caches, so SVG keeps its text)."""
        scene = self._scene
        if scene.banner is not None:
            scene.banner.setPos(source.left() + 8, source.top() + 6)
        cached = [
            item for item in scene.nodes.values() if item.cacheMode() != QGraphicsItem.CacheMode.NoCache
        ]
        for item in cached:
            item.setCacheMode(QGraphicsItem.CacheMode.NoCache)
        dimming = scene.dimming
        scene.set_dimming(False)  # an exported graph is the whole graph, none of it faint
        painter = QPainter(device)
        try:
            painter.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
            if isinstance(device, QSvgGenerator):
                painter.fillRect(target, scene.backgroundBrush())
            scene.render(painter, target, source)
        finally:
            painter.end()
            for item in cached:
                item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
            scene.set_dimming(dimming)
            self._pin_banner()

    # --- keeping place across updates ----------------------------------------------------

    def _zoom_anchor(self) -> QPointF | None:
        selected = self._scene.selected_id()
        item = self._scene.nodes.get(selected or "")
        if item is not None and self.viewport().rect().contains(self.mapFromScene(item.centre)):
            return item.centre
        return None

    def _keep(self, scene_point: QPointF, viewport_point: QPointF) -> None:
        """Scroll so that ``scene_point`` shows at ``viewport_point``."""
        now = QPointF(self.mapFromScene(scene_point))
        delta = now - viewport_point
        self.horizontalScrollBar().setValue(self.horizontalScrollBar().value() + round(delta.x()))
        self.verticalScrollBar().setValue(self.verticalScrollBar().value() + round(delta.y()))

    def _remember_anchor(self) -> None:
        selected = self._scene.selected_id()
        graph = self._scene.graph
        node_id = selected or (str(graph.focus) if graph is not None else "")
        item = self._scene.nodes.get(node_id)
        self._anchor = (node_id, QPointF(self.mapFromScene(item.centre))) if item is not None else None

    def _restore_anchor(self) -> None:
        anchor, self._anchor = self._anchor, None
        item = self._scene.nodes.get(anchor[0]) if anchor is not None else None
        if anchor is not None and item is not None:
            # Let the view scroll wherever the anchor needs (the graph may now fit, or have
            # grown on one side): its scene rect covers the graph and that whole viewport.
            self._place(item.centre, anchor[1])
        self._pin_banner()

    def _graph_replaced(self) -> None:
        self.setSceneRect(QRectF())  # follow the scene's rect again
        self._needs_frame = True
        if self.isVisible():
            self.frame()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._needs_frame:
            self.frame()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self._needs_frame and self.isVisible():
            self.frame()
        self._pin_banner()

    def _selection_changed(self, node_id: str) -> None:
        item = self._scene.nodes.get(node_id)
        if item is not None and self.isVisible() and not self._needs_frame:
            # A click, or any selection in the zoomed-out overview, keeps the graph still
            # unless the node is partly hidden; otherwise a node outside the inner area is
            # brought to the middle, never left at an edge.
            overview = self.zoom() < SIMPLE_LOD
            keep = QRectF(self.uncovered_rect()) if self._pressing or overview else self._inner_rect()
            if not keep.contains(self._node_rect(node_id)):
                self.center_on_node(node_id)
        summary = " — ".join(item.toolTip().splitlines()[:3]) if item is not None else "nothing selected"
        self.setAccessibleDescription(f"{DESCRIPTION} Selected: {summary}")

    def _pin_banner(self, _value: int = 0) -> None:
        scene = self.scene()  # None while the scene is being destroyed (not self._scene then)
        banner = scene.banner if isinstance(scene, ProvenanceScene) else None
        if banner is not None and shiboken6.isValid(banner):
            banner.setPos(self.mapToScene(8, BANNER_TOP))


def nearest(
    centres: Mapping[str, tuple[float, float]], origin: str, direction: str, linked: set[str] | None = None
) -> str | None:
    """The node an arrow key moves to: a linked node that way if any (closest sideways), else
    the closest node within a cone of about 60° either side, sideways distance counting twice."""
    dx, dy = DIRECTIONS[direction]
    ox, oy = centres[origin]
    best: tuple[float, str] | None = None
    for node_id, (x, y) in centres.items():
        along = (x - ox) * dx + (y - oy) * dy
        across = abs((x - ox) * dy - (y - oy) * dx)
        if node_id == origin or along <= 1.0:
            continue
        if linked and node_id in linked:
            score = -1e9 + across
        elif across <= along * 1.8:
            score = along + 2 * across
        else:
            continue
        if best is None or (score, node_id) < best:
            best = (score, node_id)
    return best[1] if best else None
