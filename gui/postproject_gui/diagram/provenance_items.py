"""Graphics items of the provenance graph: representation, activity and job nodes (edges and
the banner are in :mod:`provenance_edges`).

Shapes differ per node type: representations are rounded cards (asset, kind, short id, file,
knowledge badge and availability badge), activities are hexagons (kind and tool), jobs are
small pills with their lifecycle glyph. Every state is drawn as glyph + text + colour.
Items hold only plain values; texts are elided once when the values change; nodes paint
from a device-coordinate pixmap cache while panning.

Level of detail: below :data:`SIMPLE_LOD` (a zoom at which 9 pt text is under 4 px tall)
a node is a plain shape filled with its state's colour (a representation's knowledge, a
job's lifecycle state; activities stay neutral) and no text; the selected node is filled
with the accent colour and the focus outlined in it; edges are thin lines without
arrowheads or labels (:mod:`provenance_edges`). Text and labels appear from
:data:`SIMPLE_LOD` up. A node outside the selected node's lineage can be ``dimmed``.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPainterPath,
    QPen,
)
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from postproject_gui.look.artifact_states import ArtifactLook
from postproject_gui.look.states import Glyph
from postproject_gui.look.theme import Theme, paint_artifact_glyph, paint_glyph, polygon

REP_SIZE = (228.0, 58.0)
ACTIVITY_SIZE = (176.0, 40.0)
JOB_SIZE = (196.0, 22.0)
SIMPLE_LOD = 0.42  # below this zoom nodes are drawn without text (see the module doc)
DIM_OPACITY = 0.22  # nodes and edges outside the focused lineage
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


def graph_style(theme: Theme) -> GraphStyle:
    ui, dark = theme.ui, theme.dark
    return GraphStyle(
        background=QColor("#1d2126" if dark else "#f7f8fa"),
        node=QColor(ui.diagram_node),
        activity=QColor("#2a3038" if dark else "#edf1f6"),
        border=QColor("#48515c" if dark else "#c4cad2"),
        text=QColor(ui.text),
        muted=QColor(ui.muted),
        accent=QColor(theme.states.accent),
        edge=QColor("#6b7684" if dark else "#9aa3ae"),
        edge_muted=QColor("#4f5863" if dark else "#bcc2ca"),
        selection=QColor(ui.highlight),
        warning=QColor(theme.states.stuck),
        warning_fill=QColor("#3a2c19" if dark else "#fff4e5"),
    )


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


def elide(
    metrics: QFontMetricsF, text: str, width: float, mode: Qt.TextElideMode = Qt.TextElideMode.ElideRight
) -> str:
    return metrics.elidedText(text, mode, width)


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
        self.dimmed = False
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

    def set_dimmed(self, dimmed: bool) -> None:
        if dimmed != self.dimmed:
            self.dimmed = dimmed
            self.update()

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        if self.dimmed:
            painter.setOpacity(painter.opacity() * DIM_OPACITY)
        if option.levelOfDetailFromTransform(painter.worldTransform()) < SIMPLE_LOD:
            self.paint_simple(painter)
            return
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
        self.paint_content(painter)

    def paint_simple(self, painter: QPainter) -> None:
        """A far zoomed-out node: its shape in its state colour, no text. The selected node is
        filled with the accent colour (its state is in the detail panel) and the focus
        outlined in it, with cosmetic (device-pixel) pens so that both stay visible however
        far out (a halo would be clipped to the node's bounds)."""
        s = self.style
        selected = self.isSelected()
        painter.setBrush(s.accent if selected else self.state_colour())
        if selected or self.focus:
            pen = QPen(s.text if selected else s.accent, 1.5)
            pen.setCosmetic(True)
            painter.setPen(pen)
        else:
            painter.setPen(Qt.PenStyle.NoPen)
        painter.drawPath(self.outline())

    def state_colour(self) -> QColor:
        """The fill of the simple (zoomed-out) shape."""
        return self.style.border

    def fill(self) -> QColor:
        return self.style.node

    def border(self) -> QColor:
        return self.style.border

    def paint_content(self, painter: QPainter) -> None:
        raise NotImplementedError


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

    def state_colour(self) -> QColor:
        return self.knowledge_colour

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

    def state_colour(self) -> QColor:
        return self.colour

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
