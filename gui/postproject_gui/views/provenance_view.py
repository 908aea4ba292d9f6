"""The provenance graph view (objectName ``provenanceGraph``): zoom, pan, keys, export.

Mouse: drag the background to pan, Ctrl+wheel to zoom under the pointer, click to select,
double-click to open. Keys: arrows move the selection to the nearest node that way
(they scroll when nothing is selected), Tab/Shift+Tab cycle the nodes column by column
(Ctrl+Tab leaves the graph), Enter opens the selected node, Escape clears the selection,
+/- zoom, 0 (or Ctrl+0) fits the graph, 1 shows it at 100 % (Ctrl+1 is the window's Jobs tab).

The view keeps the user's zoom and keeps the selected node in the same place on screen
when the scene relays the graph out after a live update; only :meth:`ProvenanceScene.show_graph`
(a new neighbourhood) frames the graph again: fitted when that is legible, else at 100 %
around the focus node.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import shiboken6
from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QImage, QKeyEvent, QPainter, QResizeEvent, QShowEvent, QWheelEvent
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QFrame, QGraphicsItem, QGraphicsView, QWidget

from postproject_gui.diagram.provenance_scene import ProvenanceScene

MIN_ZOOM, MAX_ZOOM = 0.02, 4.0
STEP = 1.2
LEGIBLE = 0.6  # a fit below this zoom is unreadable: frame the focus at 100 % instead
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

    def fit_to_view(self, *, magnify: bool = False) -> None:
        """Show the whole graph (at most 100 % unless ``magnify``)."""
        rect = self._scene.sceneRect()
        if rect.isEmpty():
            return
        self.setSceneRect(QRectF())
        viewport = self.viewport().rect().adjusted(4, 4, -4, -4)
        scale = min(viewport.width() / rect.width(), viewport.height() / rect.height())
        self.set_zoom(scale if magnify else min(1.0, scale))
        self.centerOn(rect.center())
        self._pin_banner()

    def frame(self) -> None:
        """The default framing: fit when legible, else 100 % around the focus node."""
        self._needs_frame = False
        rect = self._scene.sceneRect()
        viewport = self.viewport().rect()
        fit = min(viewport.width() / max(rect.width(), 1.0), viewport.height() / max(rect.height(), 1.0))
        if fit >= LEGIBLE:
            self.fit_to_view()
            return
        self.set_zoom(1.0)
        graph = self._scene.graph
        focus = self._scene.nodes.get(str(graph.focus)) if graph is not None else None
        if focus is not None:
            self.centerOn(focus.centre)
        self._pin_banner()

    def center_on_node(self, node_id: str) -> None:
        item = self._scene.nodes.get(node_id)
        if item is not None:
            self.centerOn(item.centre)

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
        elif key == Qt.Key.Key_0:
            self.fit_to_view()
        elif key == Qt.Key.Key_1 and not ctrl:
            self.set_zoom(1.0, self._zoom_anchor())
        else:
            super().keyPressEvent(event)
            return
        event.accept()

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
            zoom, size = self.zoom(), self.viewport().size()
            top_left = item.centre - anchor[1] / zoom
            visible = QRectF(top_left.x(), top_left.y(), size.width() / zoom, size.height() / zoom)
            self.setSceneRect(self._scene.sceneRect().united(visible))
            self._keep(item.centre, anchor[1])
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
        if item is not None:
            self.ensureVisible(item.sceneBoundingRect(), 40, 40)
        summary = " — ".join(item.toolTip().splitlines()[:3]) if item is not None else "nothing selected"
        self.setAccessibleDescription(f"{DESCRIPTION} Selected: {summary}")

    def _pin_banner(self, _value: int = 0) -> None:
        scene = self.scene()  # None while the scene is being destroyed (not self._scene then)
        banner = scene.banner if isinstance(scene, ProvenanceScene) else None
        if banner is not None and shiboken6.isValid(banner):
            banner.setPos(self.mapToScene(8, 6))


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
