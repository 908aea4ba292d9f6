"""Graphics items of the lifecycle diagram: state boxes and transition arrows."""

from __future__ import annotations

import math
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPainterPath,
    QPainterPathStroker,
    QPen,
)
from PySide6.QtWidgets import (
    QGraphicsObject,
    QGraphicsSceneHoverEvent,
    QGraphicsSceneMouseEvent,
    QStyleOptionGraphicsItem,
    QWidget,
)

from postproject import Action
from postproject_gui.diagram import lifecycle_layout as lay
from postproject_gui.look.states import StateLook
from postproject_gui.look.theme import paint_glyph

LABEL_PT = 8.0


@dataclass(frozen=True, slots=True)
class NodeStyle:
    colour: QColor  # the state's colour
    fill: QColor
    text: QColor
    border: QColor
    current: bool = False
    tinted: bool = False  # production variant: every box tinted with its colour


class NodeItem(QGraphicsObject):
    """A state box: glyph, label, optional count and badge. Signal: clicked()."""

    clicked = Signal()

    def __init__(
        self,
        box: lay.NodeBox,
        look: StateLook,
        style: NodeStyle,
        count: int | None = None,
        badge: tuple[str, QColor] | None = None,
    ) -> None:
        super().__init__()
        self.box, self.look, self.style, self.count, self.badge = box, look, style, count, badge
        self.setPos(box.x, box.y)
        self.setAcceptHoverEvents(True)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self._hover = False

    @property
    def current(self) -> bool:
        return self.style.current

    def boundingRect(self) -> QRectF:
        return QRectF(-3, -12, lay.NODE_W + 6, lay.NODE_H + 15)

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        s = self.style
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        rect = QRectF(0, 0, lay.NODE_W, lay.NODE_H)
        fill = QColor(s.colour)
        fill.setAlpha(52 if s.current else 22)
        painter.setBrush(QBrush(s.fill))
        painter.setPen(Qt.PenStyle.NoPen)
        painter.drawRoundedRect(rect, 7, 7)
        if s.current or s.tinted or self._hover:
            painter.setBrush(QBrush(fill))
            painter.drawRoundedRect(rect, 7, 7)
        border = s.colour if (s.current or s.tinted) else s.border
        painter.setPen(QPen(border, 2.6 if s.current else 1.2))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRoundedRect(rect.adjusted(0.5, 0.5, -0.5, -0.5), 7, 7)
        self._paint_text(painter)
        if self.badge is not None:
            self._paint_badge(painter, *self.badge)

    def _paint_text(self, painter: QPainter) -> None:
        s = self.style
        two_lines = self.count is not None
        glyph_box = QRectF(8, (lay.NODE_H - 16) / 2, 16, 16)
        paint_glyph(painter, self.look.glyph, s.colour, glyph_box)
        font = QFont(painter.font())
        font.setPointSizeF(9.0)
        font.setBold(s.current)
        painter.setFont(font)
        painter.setPen(s.text)
        text_box = QRectF(30, 0, lay.NODE_W - 34, lay.NODE_H / 2 + 2 if two_lines else lay.NODE_H)
        align = Qt.AlignmentFlag.AlignLeft | (
            Qt.AlignmentFlag.AlignBottom if two_lines else Qt.AlignmentFlag.AlignVCenter
        )
        painter.drawText(text_box, align, self.look.label)
        if two_lines:
            font.setBold(True)
            font.setPointSizeF(10.5)
            painter.setFont(font)
            painter.setPen(s.colour)
            painter.drawText(
                QRectF(30, lay.NODE_H / 2, lay.NODE_W - 34, lay.NODE_H / 2 - 2),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop,
                f"{self.count:,}",
            )

    def _paint_badge(self, painter: QPainter, text: str, colour: QColor) -> None:
        font = QFont(painter.font())
        font.setPointSizeF(LABEL_PT)
        font.setBold(True)
        width = QFontMetricsF(font).horizontalAdvance(text) + 12
        rect = QRectF(lay.NODE_W - width + 4, -10, width, 16)
        painter.setBrush(colour)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.drawRoundedRect(rect, 8, 8)
        painter.setFont(font)
        painter.setPen(QColor("#ffffff"))
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)

    def hoverEnterEvent(self, event: QGraphicsSceneHoverEvent) -> None:
        self._hover = True
        self.update()

    def hoverLeaveEvent(self, event: QGraphicsSceneHoverEvent) -> None:
        self._hover = False
        self.update()

    def mousePressEvent(self, event: QGraphicsSceneMouseEvent) -> None:
        event.accept()

    def mouseReleaseEvent(self, event: QGraphicsSceneMouseEvent) -> None:
        if self.boundingRect().contains(event.pos()):
            self.clicked.emit()


@dataclass(frozen=True, slots=True)
class ArrowStyle:
    colour: QColor
    label: QColor
    width: float
    dashed: bool = False
    pill: QColor | None = None  # clickable: the label is drawn as a button


class ArrowItem(QGraphicsObject):
    """A transition arrow with its label; clickable when ``action`` is set. Signal: clicked()."""

    clicked = Signal()

    def __init__(
        self, path: QPainterPath, arrow: lay.Arrow, style: ArrowStyle, times: int, action: Action | None
    ) -> None:
        super().__init__()
        self.path, self.arrow, self.style, self.times, self.action = path, arrow, style, times, action
        self._font = QFont()
        self._font.setPointSizeF(LABEL_PT)
        self._label = arrow.label if arrow.source is not None else "request"
        if action is not None and len(arrow.actions) > 1:
            self._label = action.value  # the button names what it does; the tooltip lists the rest
        if times > 1:
            self._label += f"  ×{times}"
        self._label_rect = self._place_label()
        self._hover = False
        if action is not None:
            self.setAcceptHoverEvents(True)
            self.setCursor(Qt.CursorShape.PointingHandCursor)
            self.setToolTip(f"{action.value.capitalize()} now (click)\n{arrow.tooltip}")
        else:
            self.setToolTip(arrow.tooltip)
        self.setZValue(-1)

    @property
    def travelled(self) -> int:
        return self.times

    @property
    def clickable(self) -> bool:
        return self.action is not None

    def _place_label(self) -> QRectF:
        metrics = QFontMetricsF(self._font)
        lines = self._label.split("\n")
        w = max(metrics.horizontalAdvance(line) for line in lines) + (14 if self.style.pill else 2)
        h = metrics.height() * len(lines) + 2
        shape = self.arrow.shape
        if shape is lay.ArrowShape.LOOP:  # above the loop, clear of arrows leaving the box's side
            top = self.path.boundingRect().top()
            return QRectF(self.path.pointAtPercent(0.5).x() - 10, top - h + 1, w, h)
        if shape is lay.ArrowShape.BACK:
            p = self.path.pointAtPercent(0.5)
            return QRectF(p.x() - w - 4, p.y() - h / 2, w, h)
        if shape is lay.ArrowShape.SKIP:
            p = self.path.pointAtPercent(0.62)
            return QRectF(p.x() + 6, p.y() - h / 2, w, h)
        p = self.path.pointAtPercent(0.45)
        start, end = self.path.pointAtPercent(0), self.path.pointAtPercent(1)
        if end.x() < start.x() - 1:
            return QRectF(p.x() - w - 6, p.y() - h / 2, w, h)
        return QRectF(p.x() + 6, p.y() - h / 2, w, h)

    def boundingRect(self) -> QRectF:
        return self.path.boundingRect().adjusted(-8, -8, 8, 8).united(self._label_rect.adjusted(-2, -2, 2, 2))

    def shape(self) -> QPainterPath:
        stroker = QPainterPathStroker()
        stroker.setWidth(10)
        outline = stroker.createStroke(self.path)
        outline.addRect(self._label_rect)
        return outline

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        s = self.style
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        pen = QPen(s.colour, s.width + (1.0 if self._hover else 0.0))
        if s.dashed:
            pen.setStyle(Qt.PenStyle.DashLine)
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(self.path)
        self._paint_head(painter)
        painter.setFont(self._font)
        if s.pill is not None:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(s.pill.darker(115) if self._hover else s.pill)
            painter.drawRoundedRect(self._label_rect, 8, 8)
            painter.setPen(QColor("#ffffff"))
            painter.drawText(self._label_rect, Qt.AlignmentFlag.AlignCenter, self._label)
        else:
            painter.setPen(s.label)
            painter.drawText(self._label_rect, Qt.AlignmentFlag.AlignCenter, self._label)

    def _paint_head(self, painter: QPainter) -> None:
        end = self.path.pointAtPercent(1.0)
        angle = math.radians(-self.path.angleAtPercent(0.999))
        size = 7.0
        left = QPointF(end.x() - size * math.cos(angle - 0.42), end.y() - size * math.sin(angle - 0.42))
        right = QPointF(end.x() - size * math.cos(angle + 0.42), end.y() - size * math.sin(angle + 0.42))
        head = QPainterPath(end)
        head.lineTo(left)
        head.lineTo(right)
        head.closeSubpath()
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(self.style.colour)
        painter.drawPath(head)

    def hoverEnterEvent(self, event: QGraphicsSceneHoverEvent) -> None:
        self._hover = True
        self.update()

    def hoverLeaveEvent(self, event: QGraphicsSceneHoverEvent) -> None:
        self._hover = False
        self.update()

    def mousePressEvent(self, event: QGraphicsSceneMouseEvent) -> None:
        if self.action is None:
            event.ignore()
            return
        event.accept()

    def mouseReleaseEvent(self, event: QGraphicsSceneMouseEvent) -> None:
        if self.action is not None and self.shape().contains(event.pos()):
            self.clicked.emit()
