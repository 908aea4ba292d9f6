"""Small widgets the panels share: section headings and text tool buttons."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QLabel, QToolButton, QWidget


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
