"""The window at common screen sizes (issue 26): 1024 x 700, 1440 x 900 and 1600 x 1000, and
the widths between (a maximised 1400, 1536 or 1600 px screen). The workspace switcher is never
cut, the first window fits the screen, the job list keeps most of the height, and nothing in
the window grows with the number of jobs."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QApplication, QMenu, QToolBar

from postproject_gui.window.main_window import MainWindow
from tests.gui.conftest import WindowFactory

SIZES = ((1024, 700), (1440, 900), (1600, 1000))
WIDTHS = (1024, 1280, 1366, 1400, 1440, 1536, 1600, 1680, 1920)


def shown_at(window: MainWindow, width: int, height: int) -> None:
    window.resize(width, height)
    QApplication.processEvents()
    assert (window.width(), window.height()) == (width, height)


def inside(window: MainWindow, widget: Any) -> bool:
    """The widget is visible and wholly inside the window."""
    top_left = widget.mapTo(window, QPoint(0, 0))
    return widget.isVisible() and window.rect().contains(QRect(top_left, widget.size()))


@pytest.mark.parametrize("width", WIDTHS)
def test_the_workspace_switcher_is_never_cut(qtbot: Any, make_window: WindowFactory, width: int) -> None:
    """Issue 26 item 2: from 1,400 to 1,600 px the toolbar with text labels pushed Editor and
    Supervisor out of view, with no overflow."""
    window = make_window()
    shown_at(window, width, 800)
    bar = window.workspaces.toolbar
    for key, action in window.workspaces.actions.items():
        button = bar.widgetForAction(action)
        assert button is not None and inside(window, button), (width, key)
    main = window.findChild(QToolBar, "mainToolbar")
    assert main is not None
    hidden = [
        a.text() for a in main.actions() if not a.isSeparator() and not main.widgetForAction(a).isVisible()
    ]
    assert hidden == [], (width, hidden)  # and the main toolbar keeps every button


def test_workspaces_are_in_the_view_menu(qtbot: Any, make_window: WindowFactory) -> None:
    window = make_window()
    view = window.actions_.view_menu
    assert view is not None
    (menu,) = [a.menu() for a in view.actions() if isinstance(a.menu(), QMenu) and a.text() == "&Workspace"]
    assert [a.text() for a in menu.actions()] == ["Producer", "Editor", "Supervisor"]
    assert [a.shortcut().toString() for a in menu.actions()] == ["Ctrl+Alt+1", "Ctrl+Alt+2", "Ctrl+Alt+3"]
    menu.actions()[2].trigger()
    assert window.workspaces.current.key == "supervisor" and menu.actions()[2].isChecked()
    assert window.workspaces.actions["supervisor"].isChecked()
    window.workspaces.actions["editor"].trigger()  # the toolbar and the menu are one choice
    assert menu.actions()[1].isChecked() and not menu.actions()[2].isChecked()
