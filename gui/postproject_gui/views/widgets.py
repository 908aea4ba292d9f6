"""Small widgets the panels share: section headings, text tool buttons, scrolling bodies and
one-line captions that elide instead of widening the window."""

from __future__ import annotations

import math
from collections.abc import Callable

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent, QResizeEvent, QTextOption
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QStackedWidget,
    QTabWidget,
    QTextEdit,
    QToolButton,
    QWidget,
)


def section_label(text: str, parent: QWidget) -> QLabel:
    """A heading inside a panel (styled by the theme's ``role=section`` rule)."""
    label = QLabel(text, parent)
    label.setProperty("role", "section")
    return label


def tool_button(parent: QWidget, text: str, tip: str, slot: Callable[[], object]) -> QToolButton:
    """A flat text button with a tooltip and an accessible name."""
    button = QToolButton(parent)
    button.setText(text)
    button.setToolTip(tip)
    button.setAccessibleName(text)
    button.clicked.connect(slot)
    return button


def title_row(parent: QWidget, object_name: str) -> tuple[QHBoxLayout, QLabel, QLabel]:
    """A panel's heading: a state glyph beside a selectable, wrapping title."""
    row = QHBoxLayout()
    row.setSpacing(6)
    glyph = QLabel(parent)
    glyph.setFixedSize(18, 18)
    title = QLabel(parent)
    title.setObjectName(object_name)
    title.setProperty("role", "title")
    title.setWordWrap(True)
    title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    row.addWidget(glyph, 0, Qt.AlignmentFlag.AlignTop)
    row.addWidget(title, 1)
    return row, glyph, title


def tab_page_parent(tabs: QTabWidget) -> QWidget:
    """Where a tab's page ends up (the tab widget's own stack): a page made there is not moved
    when added, which would restyle all of it under the application's style sheet."""
    stack = tabs.findChild(
        QStackedWidget, "qt_tabwidget_stackedwidget", Qt.FindChildOption.FindDirectChildrenOnly
    )
    return stack if stack is not None else tabs


def detail_scroll(parent: QWidget, build_body: Callable[[QWidget], QWidget]) -> QScrollArea:
    """A side panel's scrolling body, made by ``build_body(viewport)`` in the scroll area's viewport
    (a body made elsewhere and moved there was restyled whole under the application's style
    sheet): as wide as the panel, scrolling vertically.

    The vertical bar is always shown: with "as needed", a body whose wrapped labels are just
    too tall at the width left beside the bar, and just short enough without it, makes the
    scroll area show and hide the bar for ever (Qt recurses until the stack overflows and the
    monitor crashes; it did when a requested job was selected at the default window size).
    A bar that never comes or goes keeps the body's width fixed.

    The body is exactly as wide as the panel, never wider: a row that cannot be narrower (an
    id, a path) is cut at the panel's edge instead of widening the whole body, which pushed
    everything centred in it (the lifecycle diagram) out of view.
    """
    scroll = QScrollArea(parent)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    scroll.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
    body = build_body(scroll.viewport())
    body.setSizePolicy(QSizePolicy.Policy.Ignored, body.sizePolicy().verticalPolicy())
    scroll.setWidget(body)
    return scroll


class ElidedLabel(QLabel):
    """A one-line caption that is cut with "…" when the window is narrower than its text (the
    whole text in its tooltip then), so a caption that grows with the numbers it shows
    ("200 of 100,000 shown · scroll for more") never sets how narrow the window can be.
    ``text()`` is the whole text."""

    MINIMUM = 48  # px: room for a few characters and the ellipsis

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self._text = ""

    def setText(self, text: str) -> None:
        """A new caption. One that fits the room the label has ("2,200 of 200,000 shown ·
        loading…" after "2,000 of 200,000 shown · scroll for more") is only repainted: QLabel
        would ask for a new layout, and that repaints the tables beside it (a job table at
        every page it loads). A wider one asks for the room it needs."""
        if text == self._text:
            return
        self._text = text
        if super().text() and self.fontMetrics().horizontalAdvance(text) <= self.contentsRect().width():
            self.setAccessibleName(text)
            self.update()
        else:
            super().setText(text)
        self._update_tip()

    def text(self) -> str:
        return self._text

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        return QSize(min(hint.width(), self.MINIMUM), hint.height())

    def elided(self) -> bool:
        return self.fontMetrics().horizontalAdvance(self.text()) > self.contentsRect().width()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._update_tip()

    def paintEvent(self, event: QPaintEvent) -> None:
        rect = self.contentsRect()
        shown = self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, rect.width())
        painter = QPainter(self)
        self.style().drawItemText(
            painter,
            rect,
            int(self.alignment()),
            self.palette(),
            self.isEnabled(),
            shown,
            self.foregroundRole(),
        )
        painter.end()

    def _update_tip(self) -> None:
        self.setToolTip(self.text() if self.elided() else "")


class WrappedText(QTextEdit):
    """Selectable plain text that wraps anywhere a line must break (a path has no spaces to
    wrap at, and a label would keep it whole and widen its panel) and is as tall as its lines.
    What is copied is the text itself (no zero-width breaks put in)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setLineWrapMode(QTextEdit.LineWrapMode.WidgetWidth)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.viewport().setAutoFillBackground(False)
        self.setStyleSheet("QTextEdit { background: transparent; }")
        self.document().setDocumentMargin(0)
        self.document().contentsChanged.connect(self._fit)

    def text(self) -> str:
        return self.toPlainText()

    def setText(self, text: str) -> None:  # as a QLabel, so it stands in for one
        if text != self.toPlainText():
            self.setPlainText(text)

    def minimumSizeHint(self) -> QSize:
        return QSize(40, self.height())

    def sizeHint(self) -> QSize:
        return QSize(200, self.height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        document = self.document()
        document.setTextWidth(self.viewport().width())
        height = max(self.fontMetrics().height(), math.ceil(document.size().height()))
        if height != self.height():
            self.setFixedHeight(height)
