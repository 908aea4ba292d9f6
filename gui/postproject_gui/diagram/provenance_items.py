"""Graphics items of the provenance graph: representation, activity and job nodes, edges, banner.

Shapes differ per node type: representations are rounded cards (asset, kind, short id, file,
knowledge badge and availability badge), activities are hexagons (kind and tool), jobs are
small pills with their lifecycle glyph. Every state is drawn as glyph + text + colour.
Items hold only plain values; texts are elided once when the values change; nodes paint
from a device-coordinate pixmap cache while panning; and when the view is zoomed far out
(level of detail below :data:`SIMPLE_LOD`) nodes are drawn as plain shapes.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPainterPath,
    QPen,
    QPolygonF,
)
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from postproject_gui.artifact_states import ArtifactLook, KnowledgeGlyph
from postproject_gui.states import Glyph
from postproject_gui.theme import paint_glyph

REP_SIZE = (228.0, 58.0)
ACTIVITY_SIZE = (176.0, 40.0)
JOB_SIZE = (196.0, 22.0)
SIMPLE_LOD = 0.42  # below this zoom nodes are drawn without text
Point = tuple[float, float]


@dataclass(frozen=True, slots=True)
class GraphStyle:
    """Colours of the graph (from the theme), as QColor."""

    background: QColor
    node: QColor
    activity: QColor
    border: QColor
    text: QColor
    muted: QColor
    accent: QColor
    edge: QColor
    edge_muted: QColor
    selection: QColor
    warning: QColor
    warning_fill: QColor


class Fonts:
    """The few fonts the items use (created once per scene, after the application)."""

    def __init__(self, base: QFont) -> None:
        self.title, self.body, self.badge, self.small = (_font(base, size) for size in (9.0, 8.0, 8.0, 7.0))
        self.title.setBold(True)
        self.badge.setBold(True)
        self.small.setCapitalization(QFont.Capitalization.AllUppercase)
        self.small.setLetterSpacing(QFont.SpacingType.AbsoluteSpacing, 0.6)
        self.mono = _font(QFont("DejaVu Sans Mono"), 7.5)
        self.mono.setStyleHint(QFont.StyleHint.Monospace)
        self.title_metrics, self.body_metrics, self.mono_metrics, self.small_metrics = (
            QFontMetricsF(f) for f in (self.title, self.body, self.mono, self.small)
        )


def _font(base: QFont, points: float) -> QFont:
    font = QFont(base)
    font.setPointSizeF(points)
    return font


LEFT = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
CENTRE = Qt.AlignmentFlag.AlignCenter


def draw_text(
    painter: QPainter, font: QFont, colour: QColor, rect: QRectF, align: Qt.AlignmentFlag, text: str
) -> None:
    painter.setFont(font)
    painter.setPen(colour)
    painter.drawText(rect, align, text)


def polygon(*points: tuple[float, float]) -> QPolygonF:
    return QPolygonF([QPointF(x, y) for x, y in points])


def elide(
    metrics: QFontMetricsF, text: str, width: float, mode: Qt.TextElideMode = Qt.TextElideMode.ElideRight
) -> str:
    return metrics.elidedText(text, mode, width)


# --- glyphs -----------------------------------------------------------------------------


def paint_artifact_glyph(painter: QPainter, glyph: KnowledgeGlyph, colour: QColor, box: QRectF) -> None:
    """Draw a knowledge or availability glyph inside ``box`` (see artifact_states)."""
    s = min(box.width(), box.height())
    c = box.center()
    pen = QPen(colour, max(1.2, s * 0.13))
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
    painter.setPen(pen)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    r = s * 0.38
    circle = QRectF(c.x() - r, c.y() - r, 2 * r, 2 * r)
    x, y = c.x(), c.y()
    if glyph is KnowledgeGlyph.CHECK:
        painter.drawPolyline(
            polygon((x - r * 0.85, y + r * 0.05), (x - r * 0.25, y + r * 0.65), (x + r * 0.9, y - r * 0.6))
        )
    elif glyph is KnowledgeGlyph.REFRESH:
        painter.drawArc(circle, 60 * 16, 280 * 16)
        tx, ty = x + r * 0.5, y - r * math.sin(math.radians(60))
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(colour)
        painter.drawPolygon(
            polygon(
                (tx - s * 0.05, ty - s * 0.22), (tx + s * 0.2, ty + s * 0.04), (tx - s * 0.2, ty + s * 0.1)
            )
        )
    elif glyph is KnowledgeGlyph.DIAMOND:
        painter.setBrush(colour)
        d = r * 1.1
        painter.drawPolygon(polygon((x, y - d), (x + d, y), (x, y + d), (x - d, y)))
    elif glyph is KnowledgeGlyph.DOTTED:
        pen.setStyle(Qt.PenStyle.DotLine)
        painter.setPen(pen)
        painter.drawEllipse(circle)
        _dot(painter, colour, c, s * 0.08)
    elif glyph is KnowledgeGlyph.SOURCE:
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(colour)
        painter.drawRoundedRect(QRectF(x - r * 0.7, y - r * 0.7, r * 1.4, r * 1.4), s * 0.08, s * 0.08)
    elif glyph is KnowledgeGlyph.ONLINE:
        _dot(painter, colour, c, r * 0.62)
    elif glyph is KnowledgeGlyph.OFFLINE:
        painter.drawEllipse(circle)
        painter.drawLine(QPointF(x - r * 0.7, y + r * 0.7), QPointF(x + r * 0.7, y - r * 0.7))
    else:
        painter.drawLine(QPointF(x - r * 0.6, y), QPointF(x + r * 0.6, y))


def _dot(painter: QPainter, colour: QColor, centre: QPointF, radius: float) -> None:
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(colour)
    painter.drawEllipse(centre, radius, radius)


# --- nodes ------------------------------------------------------------------------------


class NodeItem(QGraphicsItem):
    """Base of the node items: an id, a type, a size, selection and focus emphasis."""

    node_type = "node"

    def __init__(self, node_id: str, size: tuple[float, float], style: GraphStyle, fonts: Fonts) -> None:
        super().__init__()
        self.node_id = node_id
        self.width, self.height = size
        self.style, self.fonts = style, fonts
        self.focus = False
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        # Panning a 500-node graph repaints a third faster from device pixmaps (measured: 7 ms instead of 11 ms per scroll step).
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.setZValue(2)
        self.setCursor(Qt.CursorShape.PointingHandCursor)

    def boundingRect(self) -> QRectF:
        return QRectF(-4, -4, self.width + 8, self.height + 8)

    def shape(self) -> QPainterPath:
        path = QPainterPath()
        path.addRect(QRectF(0, 0, self.width, self.height))
        return path

    @property
    def centre(self) -> QPointF:
        return self.pos() + QPointF(self.width / 2, self.height / 2)

    def outline(self) -> QPainterPath:
        raise NotImplementedError

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        s = self.style
        selected = self.isSelected()
        outline = self.outline()
        if self.focus:
            halo = QColor(s.accent)
            halo.setAlpha(60)
            painter.setPen(QPen(halo, 5.0))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawPath(outline)
        painter.setBrush(s.selection if selected else self.fill())
        width = 2.0 if (selected or self.focus) else 1.0
        painter.setPen(QPen(s.accent if (selected or self.focus) else self.border(), width))
        painter.drawPath(outline)
        if option.levelOfDetailFromTransform(painter.worldTransform()) >= SIMPLE_LOD:
            self.paint_content(painter)
        else:
            self.paint_simple(painter)

    def fill(self) -> QColor:
        return self.style.node

    def border(self) -> QColor:
        return self.style.border

    def paint_content(self, painter: QPainter) -> None:
        raise NotImplementedError

    def paint_simple(self, painter: QPainter) -> None:
        """What a far zoomed-out node shows (no text)."""


class RepresentationItem(NodeItem):
    """A representation card: asset + kind, short id + file, knowledge and availability badges."""

    node_type = "representation"

    def __init__(self, node_id: str, style: GraphStyle, fonts: Fonts) -> None:
        super().__init__(node_id, REP_SIZE, style, fonts)
        self.texts = ("", "", "", "")  # asset, kind, short id, file name (elided)
        self.knowledge_look: ArtifactLook | None = None
        self.knowledge_colour = style.muted
        self.availability_look: ArtifactLook | None = None
        self.availability_colour = style.muted

    def set_values(
        self,
        *,
        asset: str,
        kind: str,
        short_id: str,
        file_name: str,
        knowledge: tuple[ArtifactLook, QColor],
        availability: tuple[ArtifactLook, QColor],
    ) -> None:
        f, w = self.fonts, self.width
        kind_w = f.small_metrics.horizontalAdvance(kind) + 2
        file_w = w - 32 - f.mono_metrics.horizontalAdvance(short_id)
        self.texts = (
            elide(f.title_metrics, asset, w - 26 - kind_w),
            kind,
            short_id,
            elide(f.body_metrics, file_name, file_w, Qt.TextElideMode.ElideMiddle),
        )
        self.knowledge_look, self.knowledge_colour = knowledge
        self.availability_look, self.availability_colour = availability
        self.update()

    def outline(self) -> QPainterPath:
        path = QPainterPath()
        path.addRoundedRect(QRectF(0.5, 0.5, self.width - 1, self.height - 1), 5, 5)
        return path

    def paint_simple(self, painter: QPainter) -> None:
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(self.knowledge_colour)
        painter.drawRoundedRect(QRectF(0, 0, 10, self.height), 3, 3)

    def paint_content(self, painter: QPainter) -> None:
        f, s, w = self.fonts, self.style, self.width
        asset, kind, short, file_name = self.texts
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(self.knowledge_colour)
        painter.drawRoundedRect(QRectF(3, 4, 3, self.height - 8), 1.5, 1.5)
        draw_text(painter, f.title, s.text, QRectF(12, 4, w - 20, 16), LEFT, asset)
        draw_text(painter, f.small, s.muted, QRectF(12, 4, w - 20, 16), RIGHT, kind)
        draw_text(painter, f.mono, s.muted, QRectF(12, 21, w - 20, 14), LEFT, short)
        x = 20 + f.mono_metrics.horizontalAdvance(short)
        draw_text(painter, f.body, s.muted, QRectF(x, 21, w - x - 8, 14), LEFT, file_name)
        if self.knowledge_look is not None:
            look, colour = self.knowledge_look, self.knowledge_colour
            paint_artifact_glyph(painter, look.glyph, colour, QRectF(11, 39, 13, 13))
            draw_text(painter, f.badge, colour, QRectF(28, 38, w / 2, 15), LEFT, look.label)
        if self.availability_look is not None:
            look, colour = self.availability_look, self.availability_colour
            text_w = f.body_metrics.horizontalAdvance(look.label)
            draw_text(painter, f.body, colour, QRectF(w - 9 - text_w, 38, text_w + 1, 15), LEFT, look.label)
            paint_artifact_glyph(painter, look.glyph, colour, QRectF(w - 24 - text_w, 40, 11, 11))


class ActivityItem(NodeItem):
    """An activity hexagon: kind (its name part) and tool."""

    node_type = "activity"

    def __init__(self, node_id: str, style: GraphStyle, fonts: Fonts) -> None:
        super().__init__(node_id, ACTIVITY_SIZE, style, fonts)
        self.texts = ("", "")  # kind, tool (elided)
        self._outline: QPainterPath | None = None

    def set_values(self, *, kind: str, tool: str) -> None:
        f, w = self.fonts, self.width - 30
        self.texts = (elide(f.title_metrics, kind, w), elide(f.body_metrics, tool, w))
        self.update()

    def fill(self) -> QColor:
        return self.style.activity

    def outline(self) -> QPainterPath:
        if self._outline is None:
            w, h, cut = self.width - 0.5, self.height - 0.5, 12.0
            self._outline = QPainterPath()
            self._outline.addPolygon(
                polygon(
                    (cut, 0.5), (w - cut, 0.5), (w, h / 2), (w - cut, h), (cut, h), (0.5, h / 2), (cut, 0.5)
                )
            )
        return self._outline

    def paint_content(self, painter: QPainter) -> None:
        kind, tool = self.texts
        draw_text(
            painter, self.fonts.title, self.style.text, QRectF(14, 3, self.width - 28, 18), CENTRE, kind
        )
        draw_text(
            painter, self.fonts.body, self.style.muted, QRectF(14, 20, self.width - 28, 16), CENTRE, tool
        )


class JobItem(NodeItem):
    """A job pill: lifecycle glyph, state and short id."""

    node_type = "job"

    def __init__(self, node_id: str, style: GraphStyle, fonts: Fonts) -> None:
        super().__init__(node_id, JOB_SIZE, style, fonts)
        self.glyph, self.colour, self.text = Glyph.RING, style.muted, ""

    def set_values(self, *, glyph: Glyph, colour: QColor, text: str) -> None:
        self.glyph, self.colour = glyph, colour
        self.text = elide(self.fonts.body_metrics, text, self.width - 30)
        self.update()

    def fill(self) -> QColor:
        tint = QColor(self.colour)
        tint.setAlpha(26)
        return tint

    def border(self) -> QColor:
        return self.colour

    def outline(self) -> QPainterPath:
        path = QPainterPath()
        r = self.height / 2
        path.addRoundedRect(QRectF(0.5, 0.5, self.width - 1, self.height - 1), r, r)
        return path

    def paint_content(self, painter: QPainter) -> None:
        paint_glyph(painter, self.glyph, self.colour, QRectF(6, 3, self.height - 6, self.height - 6))
        rect = QRectF(self.height + 2, 0, self.width - self.height - 8, self.height)
        draw_text(painter, self.fonts.body, self.style.text, rect, LEFT, self.text)


# --- edges ------------------------------------------------------------------------------


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

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        s = self.style
        colour = s.accent if self.highlighted else (s.edge_muted if self.relation == "completed" else s.edge)
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
        if self.label and option.levelOfDetailFromTransform(painter.worldTransform()) >= SIMPLE_LOD:
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
