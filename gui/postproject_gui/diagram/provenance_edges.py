"""Edges and the truncation banner of the provenance graph (see :mod:`provenance_items`).

An :class:`EdgeItem` follows its layout route (straight along columns, S-curves across
gaps) with an arrowhead and an optional role label; ``completed`` edges (job -> activity)
are dashed. Zoomed out (below ``SIMPLE_LOD``) an edge is a thin cosmetic line without an
arrowhead, dashes or label. The :class:`BannerItem` is drawn at a fixed size whatever the zoom.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from postproject_gui.diagram.provenance_items import (
    CENTRE,
    DIM_OPACITY,
    LEFT,
    SIMPLE_LOD,
    Fonts,
    GraphStyle,
    Point,
    draw_text,
    elide,
)
from postproject_gui.look.states import Glyph
from postproject_gui.look.theme import paint_glyph, polygon


def route_path(points: Sequence[Point]) -> QPainterPath:
    """A smooth path through a layout route: straight along columns, S-curves across gaps."""
    path = QPainterPath(QPointF(*points[0]))
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        if abs(y1 - y0) < 0.5 or abs(x1 - x0) < 0.5:
            path.lineTo(x1, y1)
        else:
            mid = (x0 + x1) / 2
            path.cubicTo(QPointF(mid, y0), QPointF(mid, y1), QPointF(x1, y1))
    return path


class EdgeItem(QGraphicsItem):
    """An edge along its layout route, with an arrowhead and an optional role label.

    ``completed`` edges (job -> activity) are dashed and muted; edges of the selected node
    are drawn in the accent colour.
    """

    def __init__(
        self,
        points: Sequence[Point],
        relation: str,
        role: str | None,
        style: GraphStyle,
        fonts: Fonts,
        label_width: float = 80.0,
    ) -> None:
        super().__init__()
        self.relation, self.role, self.style, self.fonts = relation, role, style, fonts
        self.highlighted = False
        self.dimmed = False
        self.points = tuple(points)
        self.path = route_path(points)
        self.label = elide(fonts.body_metrics, short_role(role), label_width - 8) if role else ""
        self._label_rect = QRectF()
        self._bounds = self.path.boundingRect().adjusted(-6, -6, 6, 6)
        self.setZValue(0 if relation != "completed" else -1)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        if role:
            self.setToolTip(f"{relation} as role {role}")

    def label_size(self) -> tuple[float, float]:
        metrics = self.fonts.body_metrics
        return metrics.horizontalAdvance(self.label) + 8, metrics.height() + 1

    def set_label_centre(self, centre: QPointF) -> None:
        """Where the role label sits (the scene places labels so that they do not overlap)."""
        if self.label:
            self.prepareGeometryChange()
            w, h = self.label_size()
            self._label_rect = QRectF(centre.x() - w / 2, centre.y() - h / 2, w, h)
            self._bounds = self.path.boundingRect().adjusted(-6, -6, 6, 6).united(self._label_rect)

    @property
    def label_rect(self) -> QRectF:
        return self._label_rect

    def boundingRect(self) -> QRectF:
        return self._bounds

    def shape(self) -> QPainterPath:
        path = QPainterPath()
        if self.label:
            path.addRect(self._label_rect)
        return path

    def set_highlighted(self, on: bool) -> None:
        if on != self.highlighted:
            self.highlighted = on
            self.setZValue(1 if on else (0 if self.relation != "completed" else -1))
            self.update()

    def set_dimmed(self, dimmed: bool) -> None:
        if dimmed != self.dimmed:
            self.dimmed = dimmed
            self.update()

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        s = self.style
        colour = s.accent if self.highlighted else (s.edge_muted if self.relation == "completed" else s.edge)
        if self.dimmed:
            painter.setOpacity(painter.opacity() * DIM_OPACITY)
        if option.levelOfDetailFromTransform(painter.worldTransform()) < SIMPLE_LOD:
            pen = QPen(colour if self.highlighted else s.edge_muted, 1.6 if self.highlighted else 0.0)
            pen.setCosmetic(True)  # 0 = one device pixel whatever the zoom
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawPath(self.path)
            return
        pen = QPen(colour, 1.8 if self.highlighted else 1.1)
        if self.relation == "completed":
            pen.setStyle(Qt.PenStyle.DashLine)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(self.path)
        end = self.path.pointAtPercent(1.0)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(colour)
        painter.drawPolygon(
            polygon((end.x(), end.y()), (end.x() - 7, end.y() - 3.5), (end.x() - 7, end.y() + 3.5))
        )
        if self.label:
            painter.setBrush(s.background)
            painter.setPen(QPen(colour if self.highlighted else s.border, 0.8))
            painter.drawRoundedRect(self._label_rect, 3, 3)
            text = s.text if self.highlighted else s.muted
            draw_text(painter, self.fonts.body, text, self._label_rect, CENTRE, self.label)


def short_role(role: str) -> str:
    """The name part of a namespaced role (``org.example:picture`` -> ``picture``)."""
    for sep in ("#", ":", "/"):
        if sep in role.rstrip(sep):
            role = role.rstrip(sep).rsplit(sep, 1)[1]
    return role


# --- banner -----------------------------------------------------------------------------


class BannerItem(QGraphicsItem):
    """A warning strip drawn at a fixed size whatever the zoom (the view pins it top-left)."""

    def __init__(self, text: str, style: GraphStyle, fonts: Fonts) -> None:
        super().__init__()
        self.text, self.style, self.fonts = text, style, fonts
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations)
        self.setZValue(10)
        self._rect = QRectF(0, 0, fonts.body_metrics.horizontalAdvance(text) + 36, 24)
        self.setToolTip("Open a node's own neighbourhood, or raise the limit, to see the rest")

    def boundingRect(self) -> QRectF:
        return self._rect

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        s = self.style
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setBrush(s.warning_fill)
        painter.setPen(QPen(s.warning, 1.0))
        painter.drawRoundedRect(self._rect.adjusted(0.5, 0.5, -0.5, -0.5), 4, 4)
        paint_glyph(painter, Glyph.WARNING, s.warning, QRectF(7, 4, 16, 16))
        draw_text(painter, self.fonts.body, s.text, self._rect.adjusted(28, 0, -6, 0), LEFT, self.text)


def gap_point(points: tuple[Point, ...], column_left: float) -> tuple[float, float]:
    """The middle of the route's segment that ends at the target column's left edge."""
    for (x0, y0), (x1, y1) in zip(points[-2::-1], points[:0:-1], strict=False):
        if abs(x1 - column_left) < 0.5 and x0 < x1 - 1:
            return (x0 + x1) / 2, (y0 + y1) / 2
    (x0, y0), (x1, y1) = points[0], points[-1]
    return (x0 + x1) / 2, (y0 + y1) / 2


class SupersessionItem(QGraphicsItem):
    """A dashed arrow from a superseded artifact to its replacement: out of the old node's
    right side, round through the gap beside the column, into the replacement's right side
    (both usually sit in one column: they were made from the same inputs)."""

    def __init__(self, source: QRectF, target: QRectF, style: GraphStyle) -> None:
        super().__init__()
        self.style = style
        start = QPointF(source.right(), source.center().y())
        end = QPointF(target.right(), target.center().y())
        bulge = max(start.x(), end.x()) + 26
        path = QPainterPath(start)
        path.cubicTo(QPointF(bulge, start.y()), QPointF(bulge, end.y()), end)
        self.path = path
        self.end = end
        self._bounds = path.boundingRect().adjusted(-8, -8, 8, 8)
        self.setZValue(-1)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.setToolTip("superseded by (a regeneration replaced it)")

    def boundingRect(self) -> QRectF:
        return self._bounds

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        colour = self.style.muted
        pen = QPen(colour, 1.3)
        if option.levelOfDetailFromTransform(painter.worldTransform()) < SIMPLE_LOD:
            pen = QPen(colour, 0.0)  # zoomed out: a thin cosmetic line, no dashes or arrowhead
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawPath(self.path)
            return
        pen.setStyle(Qt.PenStyle.DashLine)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(self.path)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(colour)
        x, y = self.end.x(), self.end.y()
        painter.drawPolygon(polygon((x, y), (x + 7, y - 3.5), (x + 7, y + 3.5)))  # points left, into the node
