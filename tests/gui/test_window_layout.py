"""The window at common screen sizes (issue 26): 1024 x 700, 1440 x 900 and 1600 x 1000, and
the widths between (a maximised 1400, 1536 or 1600 px screen). The workspace switcher is never
cut, the first window fits the screen, the job list keeps most of the height, and nothing in
the window grows with the number of jobs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QApplication, QMenu, QToolBar

from postproject import FailureGroup, JobId, JobState
from postproject_gui.services.types import JobCounts
from postproject_gui.window.main_window import MainWindow
from tests.gui.conftest import WindowFactory
from tests.gui.helpers import wait_for

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


def test_numbers_that_grow_with_the_jobs_never_widen_the_window(
    qtbot: Any, make_window: WindowFactory, big_copy: Path
) -> None:
    """Issue 26 item 4: at 100,000 jobs the window could not be narrower than 1,138 px (the
    filter row's "200 of 100,000 shown · scroll for more" set its minimum)."""
    window = make_window(big_copy)
    for width, height in SIZES:
        shown_at(window, width, height)
    shown_at(window, 1024, 700)
    assert window.filters.shown.text().startswith("200 of 10,000 shown")
    window.summary.set_counts(JobCounts(dict.fromkeys(JobState, 12_345_678)))
    groups = [
        FailureGroup(f"unsupported profile <text> in <path> {n}", 123_456, "profile", "x", JobId.new(), None)
        for n in range(9)
    ]
    window.jobs_page.failures.set_groups(groups)
    QApplication.processEvents()
    assert window.minimumSizeHint().width() <= 1024
    shown_at(window, 1024, 700)
    shown = window.filters.shown
    assert inside(window, shown) and shown.text().startswith("200 of 10,000 shown")
    assert shown.toolTip() in ("", shown.text())  # cut with "…", the whole text in its tooltip
    assert all(inside(window, card) for card in window.summary.cards.values())


def test_at_1024_by_700_the_job_list_keeps_most_of_the_height(
    qtbot: Any, make_window: WindowFactory, big_copy: Path
) -> None:
    """Issue 26 item 4: the event log took a quarter of the height by default, so a maximised
    1024 x 700 window showed 8 job rows."""
    window = make_window(big_copy)
    shown_at(window, 1024, 700)
    wait_for(qtbot, lambda: window.session is not None and window.session.table.rowCount() >= 200)
    table = window.table
    rows = table.viewport().height() // table.rowHeight(0)
    assert rows > 8 and window.log.isVisible() and window.log.height() < 700 / 6, (rows, window.log.height())


FIRST_WINDOW = r"""
import sys
from PySide6.QtWidgets import QApplication
app = QApplication([])
from postproject_gui.app import build_window
from postproject_gui.dialogs.error_presenter import ErrorPresenter
from postproject_gui.look.theme import ThemeManager, ThemeMode
from postproject_gui.settings import Settings
theme = ThemeManager(ThemeMode.LIGHT)
theme.apply()
window = build_window(Settings.ephemeral(), theme, ErrorPresenter(interactive=False))
window.show()
app.processEvents()
available = window.screen().availableGeometry()
g, inner = window.frameGeometry(), window.geometry()
print(g.x(), g.y(), g.width(), g.height(), available.width(), available.height(), inner.width(), inner.height())
"""


@pytest.mark.parametrize(("screen", "expected"), [((1024, 700), None), ((1920, 1080), (1380, 860))])
def test_the_first_window_fits_the_screen(
    tmp_path: Path, screen: tuple[int, int], expected: tuple[int, int] | None
) -> None:
    """Issue 26 item 4: the first window opened at 1,380 x 860 even on a 1,024 x 700 screen."""
    config = tmp_path / "screen.json"
    width, height = screen
    config.write_text(
        json.dumps({"screens": [{"name": "s", "x": 0, "y": 0, "width": width, "height": height}]})
    )
    env = dict(
        os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={config}", QT_LOGGING_RULES="qt.qpa.*=false"
    )
    done = subprocess.run(
        [sys.executable, "-c", FIRST_WINDOW], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    x, y, w, h, aw, ah, inner_w, inner_h = (int(v) for v in done.stdout.split())
    assert (aw, ah) == screen
    assert QRect(0, 0, aw, ah).contains(QRect(x, y, w, h)), (x, y, w, h)
    if expected is not None:
        assert (inner_w, inner_h) == expected
