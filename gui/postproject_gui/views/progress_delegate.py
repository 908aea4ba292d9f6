"""Draws a progress cell: a small bar of the fraction done (``PROGRESS_ROLE``), in the row's
state colour, before the cell's text (``42% · encode · 1m 05s left``). Cells without a fraction draw only their text."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPalette
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from postproject_gui.models import roles
from postproject_gui.models.columns import column

STATE_COLUMN = column("state")  # the bar takes the row's state colour (claimed, or stuck amber)

BAR_WIDTH = 52
BAR_HEIGHT = 6
GAP = 8


def paint_bar(painter: QPainter, rect: QRectF, fraction: float, track: QColor, fill: QColor) -> None:
    """A rounded track with ``fraction`` (0-1) of it filled."""
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    radius = rect.height() / 2
    painter.setBrush(track)
    painter.drawRoundedRect(rect, radius, radius)
    done = QRectF(rect.x(), rect.y(), rect.width() * max(0.0, min(1.0, fraction)), rect.height())
    if done.width() > 0:
        painter.setBrush(fill)
        painter.drawRoundedRect(done, radius, radius)
    painter.restore()


class ProgressDelegate(QStyledItemDelegate):
    """A progress bar and the progress text in one cell."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        value = index.data(roles.PROGRESS_ROLE)
        if not isinstance(value, float):
            super().paint(painter, option, index)
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        text = opt.text
        opt.text = ""
        widget = opt.widget
        style = widget.style() if widget is not None else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        rect = opt.rect.adjusted(6, 0, -4, 0)
        bar = QRectF(rect.x(), rect.center().y() - BAR_HEIGHT / 2 + 0.5, BAR_WIDTH, BAR_HEIGHT)
        track = QColor(opt.palette.color(QPalette.ColorRole.Text))
        track.setAlphaF(0.15)
        state = index.sibling(index.row(), STATE_COLUMN).data(Qt.ItemDataRole.ForegroundRole)
        fill = (
            QColor(state) if isinstance(state, QColor) else QColor(opt.palette.color(QPalette.ColorRole.Link))
        )
        if opt.state & QStyle.StateFlag.State_Selected:
            fill = QColor(opt.palette.color(QPalette.ColorRole.HighlightedText))
        paint_bar(painter, bar, value, track, fill)
        text_rect = rect.adjusted(BAR_WIDTH + GAP, 0, 0, 0)
        role = (
            QPalette.ColorRole.HighlightedText
            if opt.state & QStyle.StateFlag.State_Selected
            else QPalette.ColorRole.Text
        )
        painter.save()
        painter.setPen(opt.palette.color(role))
        painter.setFont(opt.font)
        elided = opt.fontMetrics.elidedText(text, Qt.TextElideMode.ElideRight, text_rect.width())
        painter.drawText(text_rect, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), elided)
        painter.restore()
