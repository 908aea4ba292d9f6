"""How the main window fits its screen: the first window's geometry, the event log's first
height, and the main toolbar's labels, shown only where they fit beside the whole workspace
switcher (issue 26: from 1,400 to 1,600 px the labelled toolbar pushed Editor and Supervisor
out of view; a 1,380 x 860 first window had half of it off a 1,024 x 700 screen)."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QToolBar

DEFAULT_SIZE = QSize(1380, 860)  # the first window's size where the screen has room for it
FRAME = QSize(16, 48)  # room left for a window manager's frame and title bar
LOG_HEIGHT = 100  # the event log's first height (px): about four revisions; the jobs keep the rest
COMPACT_WIDTH = 1400  # narrower than this (or than its labels and the switcher), icons only


def first_geometry(available: QRect) -> QRect:
    """Where the first window opens (before one was remembered): :data:`DEFAULT_SIZE`, or less
    so that it and its frame fit the screen's available area, centred on it."""
    rect = QRect(QPoint(0, 0), DEFAULT_SIZE.boundedTo(available.size() - FRAME))
    rect.moveCenter(available.center())
    return rect


class ToolbarFit:
    """Text labels on the main toolbar only where they fit beside the whole workspace switcher;
    else icons only (each names itself in its tooltip), so the switcher is never cut. With
    labels the toolbar needs about 1,360 px, the switcher about 270."""

    def __init__(self) -> None:
        self._labelled = 0  # the toolbar's width with labels (measured whenever shown so)

    def fit(self, width: int, bar: QToolBar | None, switcher: QToolBar) -> None:
        if bar is None:
            return
        labelled = Qt.ToolButtonStyle.ToolButtonTextBesideIcon
        for _ in range(2):  # the labels' width is known again once they are shown
            if bar.toolButtonStyle() == labelled:
                self._labelled = bar.sizeHint().width()
            fits = width >= max(self._labelled, COMPACT_WIDTH) + switcher.sizeHint().width()
            bar.setToolButtonStyle(labelled if fits else Qt.ToolButtonStyle.ToolButtonIconOnly)
