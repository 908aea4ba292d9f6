"""Menus, toolbar and window-level actions (open, recent, refresh, find, filter, theme)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu, QMessageBox, QToolBar, QWidget

from postproject import __version__
from postproject_gui.actions.job_actions import JobActions
from postproject_gui.actions.provenance_actions import ProvenanceActions
from postproject_gui.look.theme import ThemeManager, ThemeMode
from postproject_gui.text import location as production_location

SHORTCUTS: tuple[tuple[str, str], ...] = (
    ("Ctrl+O", "Open a production"),
    ("F5 / Ctrl+R", "Refresh everything"),
    ("Ctrl+F", "Search jobs"),
    ("Ctrl+L", "Filter by state"),
    ("Ctrl+Shift+S", "Show stuck claims"),
    ("Ctrl+Shift+X", "Clear filters"),
    ("Ctrl+N", "Request a job"),
    ("Ctrl+Shift+N", "Request a job like the selected one"),
    ("Del", "Cancel the selected jobs (asks first)"),
    ("Ctrl+Shift+Y", "Retry the selected failed or cancelled jobs (request them again)"),
    ("Ctrl+Shift+U", "Requeue the selected claims (asks first)"),
    ("Ctrl+Shift+P", "Change the priority of the selected requested jobs"),
    ("Ctrl+Shift+L", "Finalize lost work: expired, unrenewed claims (asks first)"),
    ("Ctrl+C", "Copy the selected job ids"),
    ("Ctrl+Shift+C", "Copy the equivalent postproject commands"),
    ("Ctrl+Shift+E", "Export the job list (every job the filters list) to CSV or JSON"),
    ("Ctrl+1 … Ctrl+5", "Jobs, Artifacts, Provenance, Dashboard or Workers tab"),
    ("Ctrl+G", "Show the provenance of the selected job, artifact or node"),
    ("Ctrl+Shift+R", "Plan regeneration of the selected artifacts"),
    ("Ctrl+Shift+D", "Regenerate everything stale downstream of the selected representation"),
    ("Ctrl+Shift+O", "Re-read the selected representations' files (record a re-delivered original)"),
    ("Ctrl+E", "Show or hide the event log"),
    ("Ctrl+Shift+T", "Switch theme (system, light, dark)"),
    ("Ctrl+W", "Close the production"),
    ("F1", "Keyboard shortcuts"),
)


@dataclass
class WindowActions:
    open: QAction
    refresh: QAction
    find: QAction
    filter: QAction
    stuck: QAction
    clear: QAction
    cycle_theme: QAction
    shortcuts: QAction
    close_production: QAction
    quit: QAction
    themes: dict[ThemeMode, QAction]
    recent_menu: QMenu
    tabs: tuple[QAction, ...] = ()
    view_menu: QMenu | None = None
    icons: dict[QAction, str] = field(default_factory=dict)  # what retheme() re-tints

    def retheme(self, theme: ThemeManager) -> None:
        """Re-tint the icons for the current theme (dark icons on a dark toolbar look disabled)."""
        for action, name in self.icons.items():
            action.setIcon(theme.icon(name))


def make_action(
    window: QMainWindow,
    theme: ThemeManager,
    text: str,
    icon: str | None,
    keys: list[str],
    tip: str,
    slot: Callable[[], object],
) -> QAction:
    action = QAction(text, window)
    if icon:
        action.setIcon(theme.icon(icon))
    action.setShortcuts([QKeySequence(k) for k in keys])
    action.setToolTip(f"{tip} ({keys[0]})" if keys else tip)
    action.setStatusTip(tip)
    action.triggered.connect(lambda _checked=False: slot())
    window.addAction(action)
    return action


def build(
    window: QMainWindow,
    theme: ThemeManager,
    jobs: JobActions,
    knowledge: ProvenanceActions,
    hooks: dict[str, Callable[[], object]],
) -> WindowActions:
    """Create the window actions, the menus and the toolbar. ``hooks`` names the slots."""
    a = WindowActions(
        open=make_action(
            window, theme, "&Open production…", "open", ["Ctrl+O"], "Open a .pproj production", hooks["open"]
        ),
        refresh=make_action(
            window, theme, "&Refresh", "refresh", ["F5", "Ctrl+R"], "Reload counts and jobs", hooks["refresh"]
        ),
        find=make_action(window, theme, "&Find…", "search", ["Ctrl+F"], "Search jobs", hooks["find"]),
        filter=make_action(
            window,
            theme,
            "Filter by &state",
            "filter",
            ["Ctrl+L"],
            "Choose the state to show",
            hooks["filter"],
        ),
        stuck=make_action(
            window,
            theme,
            "Show &stuck claims",
            "stuck",
            ["Ctrl+Shift+S"],
            "List expired and expiring claims",
            hooks["stuck"],
        ),
        clear=make_action(
            window, theme, "C&lear filters", "clear", ["Ctrl+Shift+X"], "Show all jobs", hooks["clear"]
        ),
        cycle_theme=make_action(
            window,
            theme,
            "Switch &theme",
            "theme",
            ["Ctrl+Shift+T"],
            "Cycle system, light and dark",
            hooks["cycle_theme"],
        ),
        shortcuts=make_action(
            window,
            theme,
            "&Keyboard shortcuts",
            "keyboard",
            ["F1"],
            "List the keyboard shortcuts",
            hooks["shortcuts"],
        ),
        close_production=make_action(
            window, theme, "&Close production", "close", ["Ctrl+W"], "Close the production", hooks["close"]
        ),
        quit=make_action(window, theme, "&Quit", "quit", ["Ctrl+Q"], "Quit", window.close),
        themes={},
        recent_menu=QMenu("Open &recent", window),
        tabs=tuple(
            make_action(window, theme, text, None, [f"Ctrl+{n}"], tip, hooks[hook])
            for n, (text, hook, tip) in enumerate(
                (
                    ("&Jobs", "tab_jobs", "Show the jobs"),
                    ("&Artifacts", "tab_artifacts", "Show the artifacts and their knowledge"),
                    ("&Provenance", "tab_provenance", "Show the provenance graph"),
                    ("&Dashboard", "tab_dashboard", "Show throughput, failures and backlog over time"),
                    ("&Workers", "tab_workers", "Show the registered workers, their liveness and attempts"),
                ),
                start=1,
            )
        ),
    )
    menu = window.menuBar()
    file_menu = menu.addMenu("&File")
    file_menu.addAction(a.open)
    file_menu.addMenu(a.recent_menu)
    file_menu.addAction(a.close_production)
    file_menu.addSeparator()
    file_menu.addAction(a.quit)
    jobs_menu = menu.addMenu("&Jobs")
    for action in (
        jobs.request,
        jobs.request_similar,
        jobs.cancel,
        None,
        jobs.retry,
        jobs.requeue,
        jobs.priority,
        jobs.finalize_lost,
        None,
        jobs.copy_id,
        jobs.copy_cli,
        jobs.export_list,
        None,
        a.refresh,
    ):
        jobs_menu.addSeparator() if action is None else jobs_menu.addAction(action)
    artifacts_menu = menu.addMenu("&Artifacts")
    for action in (
        knowledge.show,
        None,
        knowledge.plan,
        knowledge.downstream,
        knowledge.reread,
        None,
        knowledge.save_image,
        knowledge.export,
    ):
        artifacts_menu.addSeparator() if action is None else artifacts_menu.addAction(action)
    view_menu = menu.addMenu("&View")
    for action in a.tabs:
        view_menu.addAction(action)
    view_menu.addSeparator()
    for action in (a.find, a.filter, a.stuck, a.clear):
        view_menu.addAction(action)
    view_menu.addSeparator()
    theme_menu = view_menu.addMenu("&Theme")
    group = QActionGroup(window)
    for mode, label in (
        (ThemeMode.SYSTEM, "Follow the system"),
        (ThemeMode.LIGHT, "Light"),
        (ThemeMode.DARK, "Dark"),
    ):
        action = theme_menu.addAction(label)
        action.setCheckable(True)
        action.setChecked(mode is theme.mode)
        action.triggered.connect(lambda _checked=False, m=mode: theme.set_mode(m))
        group.addAction(action)
        a.themes[mode] = action
    theme_menu.addSeparator()
    theme_menu.addAction(a.cycle_theme)
    a.view_menu = view_menu
    help_menu = menu.addMenu("&Help")
    help_menu.addAction(a.shortcuts)
    help_menu.addAction("&About PostProject Monitor", hooks["about"])
    a.icons = {
        a.open: "open",
        a.refresh: "refresh",
        a.find: "search",
        a.filter: "filter",
        a.stuck: "stuck",
        a.clear: "clear",
        a.cycle_theme: "theme",
        a.shortcuts: "keyboard",
        a.close_production: "close",
        a.quit: "quit",
    }
    _toolbar(window, a, jobs, knowledge)
    return a


def _toolbar(window: QMainWindow, a: WindowActions, jobs: JobActions, knowledge: ProvenanceActions) -> None:
    bar = QToolBar("Main", window)
    bar.setObjectName("mainToolbar")
    bar.setMovable(False)
    bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    for action in (
        a.open,
        a.refresh,
        None,
        jobs.request,
        jobs.cancel,
        None,
        jobs.copy_id,
        jobs.copy_cli,
        None,
        a.stuck,
        None,
        knowledge.show,
        knowledge.plan,
    ):
        bar.addSeparator() if action is None else bar.addAction(action)
    window.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)


def add_workspaces(view_menu: QMenu, actions: list[QAction]) -> QMenu:
    """The workspaces (the switcher's own actions, so both show one choice) atop the View menu."""
    menu = QMenu("&Workspace", view_menu)
    for action in actions:
        menu.addAction(action)
    first = view_menu.actions()[0]  # the View menu starts with the tabs
    view_menu.insertMenu(first, menu)
    view_menu.insertSeparator(first)
    return menu


def fill_recent(
    menu: QMenu, locations: list[str], opener: Callable[[str], object], clear: Callable[[], None]
) -> None:
    menu.clear()
    for index, location in enumerate(locations):
        name = production_location.name(location)
        action = menu.addAction(f"&{index + 1}  {name}" if index < 9 else name)
        action.setToolTip(production_location.shown(location))
        action.setStatusTip(production_location.shown(location))
        action.triggered.connect(lambda _checked=False, p=location: opener(p))
    if not locations:
        menu.addAction("(none)").setEnabled(False)
    menu.addSeparator()
    menu.addAction("Clear the list", clear)


def show_shortcuts(parent: QWidget) -> None:
    rows = "".join(f"<tr><td><b>{k}</b>&nbsp;&nbsp;</td><td>{v}</td></tr>" for k, v in SHORTCUTS)
    box = QMessageBox(
        QMessageBox.Icon.NoIcon,
        "Keyboard shortcuts",
        f"<table>{rows}</table>",
        QMessageBox.StandardButton.Close,
        parent,
    )
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()


def show_about(parent: QWidget) -> None:
    QMessageBox.about(
        parent, "PostProject Monitor", f"PostProject Monitor {__version__}\nWatch and steer production work."
    )
