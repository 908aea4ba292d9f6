"""Small widgets the panels share: section headings, text tool buttons and scrolling bodies."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QScrollArea, QToolButton, QWidget


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


def detail_scroll(parent: QWidget, body: QWidget) -> QScrollArea:
    """A side panel's scrolling body: as wide as the panel, scrolling vertically.

    The vertical bar is always shown: with "as needed", a body whose wrapped labels are just
    too tall at the width left beside the bar, and just short enough without it, makes the
    scroll area show and hide the bar for ever (Qt recurses until the stack overflows and the
    monitor crashes; it did when a requested job was selected at the default window size).
    A bar that never comes or goes keeps the body's width fixed.
    """
    scroll = QScrollArea(parent)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    scroll.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
    scroll.setWidget(body)
    return scroll
