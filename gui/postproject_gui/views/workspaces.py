"""Workspaces: one click switches the window between the Producer, Editor and Supervisor
layouts (the *Workspace* toolbar, View ▸ Workspace, or Ctrl+Alt+1/2/3). Each remembers, in
the settings, its job filter (for the production it was set on: another production opens with
the role's default filter, never with one that may list nothing there), its table columns
(which, their order and widths) and its tab; the first visit starts from the role's defaults:

- Producer: the Jobs tab, every job, when each finished and why it failed first, then who
  holds claims and the inputs (what waits and what broke, and why);
- Editor: the Artifacts tab (stale ones first to hand), jobs with outputs and inputs;
- Supervisor: the Workers tab (who is alive and what each worker does), the Dashboard, and
  in the Jobs tab the stuck claims with who holds them, their lease, progress and output.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMainWindow, QToolBar

from postproject_gui.services.filters import JobFilter
from postproject_gui.settings import Settings
from postproject_gui.text import location as production_location


@dataclass(frozen=True, slots=True)
class Workspace:
    key: str
    title: str
    tip: str
    tab: int  # the tab it opens on the first visit
    filter: JobFilter
    hidden: tuple[str, ...]  # job table columns hidden by default
    tabs: tuple[int, ...] = ()  # the tabs that belong to the role
    order: tuple[str, ...] = ()  # job table columns first, in this order, by default


PRODUCER = Workspace(
    "producer",
    "Producer",
    "Pending and failed work, and why it failed",
    0,
    JobFilter(),
    ("requested", "target_root", "revision", "job_id", "priority"),
    (0,),
    # When each job finished and why it failed in view beside what it makes (at 1,440 px they
    # were past the right edge, behind Claimed by, Lease and Progress).
    ("state", "id", "kind", "output", "finished", "diagnostic"),
)
EDITOR = Workspace(
    "editor",
    "Editor",
    "Artifacts, provenance and what is stale",
    1,
    JobFilter(),
    ("claimed_by", "lease", "diagnostic", "requested", "revision", "job_id", "priority"),
    (1, 2),
)
SUPERVISOR = Workspace(
    "supervisor",
    "Supervisor",
    "Workers, stuck claims and who holds them, and the dashboard",
    4,
    JobFilter(stuck=True),
    ("inputs", "requested", "target_root", "revision", "job_id", "priority"),
    (4, 3, 0),
    # Who holds what and how far it got first: Progress within the right edge, then Output.
    ("state", "id", "claimed_by", "lease", "progress", "kind", "output"),
)
WORKSPACES = (PRODUCER, EDITOR, SUPERVISOR)


REMEMBERED_PRODUCTIONS = 20  # a workspace remembers its filter for this many productions


def filter_to_text(flt: JobFilter) -> str:
    return json.dumps(flt.to_json())


def filter_from_text(text: str | None, default: JobFilter) -> JobFilter:
    try:
        data = json.loads(text) if text else None
    except ValueError:
        return default
    return JobFilter.from_json(data) or default


@dataclass(frozen=True, slots=True)
class Hooks:
    """What the manager reads and changes in the window."""

    current_filter: Callable[[], JobFilter]
    apply_filter: Callable[[JobFilter], None]
    current_tab: Callable[[], int]
    apply_tab: Callable[[int], None]
    save_columns: Callable[[str], None]  # settings key prefix
    restore_columns: Callable[[str, tuple[str, ...], tuple[str, ...]], None]  # prefix, hidden, order


class WorkspaceManager(QObject):
    """Signal: switched(str workspace key)."""

    switched = Signal(str)

    def __init__(self, window: QMainWindow, settings: Settings, hooks: Hooks) -> None:
        super().__init__(window)
        self._settings, self._hooks = settings, hooks
        saved = settings.text("workspace/current")
        self.current = next((w for w in WORKSPACES if w.key == saved), PRODUCER)
        self.production: str | None = None  # where the production open lives (see set_production)
        self.toolbar = QToolBar("Workspace", window)
        self.toolbar.setObjectName("workspaceToolbar")
        self.toolbar.setMovable(False)
        self.toolbar.setAccessibleName("Workspace")
        group = QActionGroup(self)
        group.setExclusive(True)
        self.actions: dict[str, QAction] = {}
        for number, space in enumerate(WORKSPACES, start=1):
            action = QAction(space.title, window)
            action.setCheckable(True)
            action.setChecked(space is self.current)
            action.setShortcut(QKeySequence(f"Ctrl+Alt+{number}"))
            action.setToolTip(f"{space.title} workspace: {space.tip} (Ctrl+Alt+{number})")
            action.setStatusTip(space.tip)
            action.triggered.connect(lambda _checked=False, s=space: self.switch(s.key))
            group.addAction(action)
            self.toolbar.addAction(action)
            window.addAction(action)
            self.actions[space.key] = action

    def prefix(self, space: Workspace | None = None) -> str:
        return f"workspace/{(space or self.current).key}"

    def initial_filter(self) -> JobFilter:
        """The current workspace's filter for the production open (:attr:`production`): the one
        remembered for it, else the role's default (a kind or search of another production
        opened a new window on "0 of 0 shown")."""
        remembered = self._filters().get(self.production) if self.production is not None else None
        return JobFilter.from_json(remembered) or self.current.filter

    def _filters(self) -> dict[str, object]:
        """The current workspace's filter per production (the newest last)."""
        try:
            found = json.loads(self._settings.text(f"{self.prefix()}/filters") or "{}")
        except ValueError:
            return {}
        return found if isinstance(found, dict) else {}

    def set_production(self, location: str | None) -> None:
        """The production the window shows (its filters are remembered for it)."""
        if location is None:
            self.production = None
            return
        shown = production_location.shown(location)
        self.production = shown if production_location.is_database(location) else os.path.abspath(shown)

    def save(self) -> None:
        """Remember the current workspace's filter (for the production open), columns and tab."""
        prefix = self.prefix()
        if self.production is not None:
            filters = self._filters()
            filters.pop(self.production, None)
            filters[self.production] = self._hooks.current_filter().to_json()
            kept = dict(list(filters.items())[-REMEMBERED_PRODUCTIONS:])
            self._settings.set_text(f"{prefix}/filters", json.dumps(kept))
        self._settings.set_text(f"{prefix}/tab", str(self._hooks.current_tab()))
        self._hooks.save_columns(prefix)
        self._settings.set_text("workspace/current", self.current.key)

    def restore_columns(self) -> None:
        self._hooks.restore_columns(self.prefix(), self.current.hidden, self.current.order)

    def restore_tab(self) -> None:
        """Open on the tab the current workspace was left on (its default at first)."""
        tab = self._settings.text(f"{self.prefix()}/tab")
        self._hooks.apply_tab(int(tab) if tab and tab.isdigit() else self.current.tab)

    def switch(self, key: str) -> None:
        """Leave the current workspace (remembering it) for ``key`` (as it was left)."""
        target = next(w for w in WORKSPACES if w.key == key)
        self.actions[key].setChecked(True)
        if target is self.current:
            return
        self.save()
        self.current = target
        self._settings.set_text("workspace/current", key)
        prefix = self.prefix()
        self._hooks.restore_columns(prefix, target.hidden, target.order)
        self._hooks.apply_filter(self.initial_filter())
        self.restore_tab()
        self.switched.emit(key)
