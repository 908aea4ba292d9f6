"""Small widgets the panels share: section headings and text tool buttons."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QWidget


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
