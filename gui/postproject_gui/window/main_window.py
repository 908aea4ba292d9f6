"""The main window: wiring only. Data flows from the session into the views; user intents
(signals of the views) flow into the session (filters, selection) and the actions. The
window never builds a service or a session: ``open_session`` (given by ``app.py``) opens a
production and returns its session.

Under the summary bar, four tabs (Ctrl+1/2/3/4): Jobs (the default: filters, job table and
detail panel), Artifacts and Provenance (see :mod:`postproject_gui.window.knowledge_tabs`) and
the Dashboard (:mod:`postproject_gui.views.dashboard_tab`), and Workers (Ctrl+5, registered
workers and their attempts: :mod:`postproject_gui.views.workers_tab`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, QUrl
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDesktopServices,
    QDragEnterEvent,
    QDropEvent,
    QGuiApplication,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QFileDialog,
    QMainWindow,
    QSystemTrayIcon,
    QTabWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from postproject import FailureGroup, JobId, JobState
from postproject_gui.actions.job_actions import JobActions
from postproject_gui.dialogs.error_presenter import ErrorPresenter
from postproject_gui.look import theme as themes
from postproject_gui.look.theme import ThemeManager, ThemeMode
from postproject_gui.services.filters import JobFilter
from postproject_gui.services.types import ClaimOutlook, JobCounts, JobDetail, ProductionInfo
from postproject_gui.session.monitor_session import MonitorSession
from postproject_gui.settings import Settings
from postproject_gui.text import location as production_location
from postproject_gui.views.busy_banner import BusyBanner
from postproject_gui.views.dashboard_tab import DashboardTab
from postproject_gui.views.event_log import EventLogDock
from postproject_gui.views.jobs_page import JobsPage
from postproject_gui.views.notifications import NoticeBar, Notifier
from postproject_gui.views.state_summary import StateSummary, card_order
from postproject_gui.views.status import StatusBar
from postproject_gui.views.widgets import tab_page_parent
from postproject_gui.views.workers_tab import WorkersTab
from postproject_gui.views.workspaces import Hooks, WorkspaceManager
from postproject_gui.window import menus
from postproject_gui.window.fitting import LOG_HEIGHT, ToolbarFit, first_geometry
from postproject_gui.window.knowledge_tabs import JOBS, KnowledgeTabs
from postproject_gui.window.opening import FirstRows, polish_shown, prepare_first_paint

SUFFIX = ".pproj"
DASHBOARD = 3
WORKERS = 4  # the Workers tab

OpenSession = Callable[[str], MonitorSession]
"""Opens a production (a ``.pproj`` path or a ``postgresql://`` URI): its session, not yet started."""


class MainWindow(QMainWindow):
    def __init__(
        self,
        settings: Settings,
        theme: ThemeManager,
        presenter: ErrorPresenter,
        open_session: OpenSession,
    ) -> None:
        super().__init__()
        self.setObjectName("mainWindow")
        self.setWindowTitle("PostProject Monitor")
        self.setWindowIcon(themes.icon("app", "#000000"))
        self.setAcceptDrops(True)
        self.setGeometry(first_geometry(self.screen().availableGeometry()))
        self.settings, self.theme, self.presenter = settings, theme, presenter
        self._open_session = open_session
        presenter.set_widget(self)
        self.session: MonitorSession | None = None
        self._build()
        self._first_rows = FirstRows(
            self._held_while_opening, self.table.viewport(), self._held_until_the_rows_are_painted
        )
        self.jobs = JobActions(self, theme, lambda: self.session, self.table.selected_rows)
        self.jobs.status.connect(self.status.message)
        self.jobs.job_requested.connect(lambda text: self._select_when_loaded([text]))
        knowledge, jobs = self.knowledge.actions, self.jobs
        self.table.row_actions = [
            jobs.cancel,
            jobs.retry,
            jobs.requeue,
            jobs.priority,
            jobs.request_similar,
            None,
            jobs.copy_id,
            jobs.copy_cli,
            None,
            knowledge.show,
        ]
        self.jobs.jobs_requested.connect(self._select_when_loaded)
        self.workers.finalize_requested.connect(self.jobs.finalize_lost_work)
        self.actions_ = menus.build(self, theme, self.jobs, knowledge, self._hooks())
        self.actions_.view_menu.addAction(self.log.toggleViewAction()) if self.actions_.view_menu else None
        self.log.toggleViewAction().setShortcut("Ctrl+E")
        presenter.presented.connect(self.status.message)
        theme.changed.connect(self._retheme)
        self.workspaces = WorkspaceManager(
            self,
            settings,
            Hooks(
                self._filter,
                self._apply_workspace_filter,
                self.tabs.currentIndex,
                self.tabs.setCurrentIndex,
                self._save_columns,
                self._restore_columns,
            ),
        )
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, self.workspaces.toolbar)
        self._toolbar_fit = ToolbarFit()
        if self.actions_.view_menu is not None:
            menus.add_workspaces(self.actions_.view_menu, list(self.workspaces.actions.values()))
        tray = QSystemTrayIcon(self.windowIcon(), self)
        tray.setToolTip("PostProject Monitor")
        self.notifier = Notifier(tray, self)
        self.notifier.in_window.connect(self.notice_bar.show_notice)
        self.notice_bar.show_requested.connect(self._show_notice_topic)
        self.notify_action = QAction(
            "Desktop &notifications"
            if self.notifier.uses_tray
            else "&Notifications (in the window: no system tray)",
            self,
        )
        self.notify_action.setCheckable(True)
        self.notify_action.setToolTip(
            "Tell when jobs fail, claims get stuck or workers go offline (grouped, at most once a minute)"
            + (
                ""
                if self.notifier.uses_tray
                else ", in a bar above the tabs: this desktop has no system tray"
            )
        )
        self.notify_action.setStatusTip(self.notify_action.toolTip())
        self.notify_action.toggled.connect(self._notifications_toggled)
        self.notify_action.setChecked(settings.text("notifications") == "on")
        if self.actions_.view_menu is not None:
            self.actions_.view_menu.addSeparator()
            self.actions_.view_menu.addAction(self.notify_action)
        self.workspaces.switched.connect(
            lambda key: self.status.message(f"Workspace: {self.workspaces.current.title}")
        )
        self.workspaces.switched.connect(self._show_failure_groups)
        self._show_failure_groups(self.workspaces.current.key)
        self.filters.attach_settings(settings)
        self._refresh_recent()
        self._restore_layout()
        if settings.text("workspace/current"):
            self.workspaces.restore_tab()
        self._retheme()
        self._show_overview()
        self.table.setFocus()
        prepare_first_paint(self.table, self.theme.state_icon)
        polish_shown(self)

    # --- construction ------------------------------------------------------------------

    def _build(self) -> None:
        central = QWidget(self)
        layout = QVBoxLayout(central)
        layout.setContentsMargins(8, 6, 8, 4)
        layout.setSpacing(6)
        self.summary = StateSummary(central)
        self.busy = BusyBanner(central)
        self.notice_bar = NoticeBar(central)
        self.tabs = QTabWidget(central)
        self.tabs.setObjectName("mainTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.tabBar().setDrawBase(False)  # Fusion draws it in the palette's light colour
        self.jobs_page = jobs = JobsPage(self.theme.theme, tab_page_parent(self.tabs))
        self.filters, self.table, self.detail, self.splitter = (
            jobs.filters,
            jobs.table,
            jobs.detail,
            jobs.splitter,
        )
        self.knowledge = KnowledgeTabs(
            self, self.tabs, self.theme, self.presenter, lambda: self.session, self.table.selected_rows
        )
        self.dashboard = DashboardTab(self.theme.theme, tab_page_parent(self.tabs))
        self.workers = WorkersTab(self.theme.theme, tab_page_parent(self.tabs))
        pages: tuple[tuple[QWidget, str, str], ...] = (
            (jobs, "Jobs", "Jobs: requested, claimed and finished work (Ctrl+1)"),
            (
                self.knowledge.artifacts,
                "Artifacts",
                "Artifacts: representations and their knowledge (Ctrl+2)",
            ),
            (self.knowledge.provenance, "Provenance", "Provenance: where an artifact came from (Ctrl+3)"),
            (self.dashboard, "Dashboard", "Dashboard: throughput, failures and backlog over time (Ctrl+4)"),
            (self.workers, "Workers", "Workers: registered workers, their liveness and attempts (Ctrl+5)"),
        )
        for page, title, tip in pages:
            self.tabs.setTabToolTip(self.tabs.addTab(page, title), tip)
        layout.addWidget(self.summary)
        layout.addWidget(self.busy)
        layout.addWidget(self.notice_bar)
        layout.addWidget(self.tabs, 1)
        self.setCentralWidget(central)
        self.log = EventLogDock(self)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.log)
        self.resizeDocks([self.log], [LOG_HEIGHT], Qt.Orientation.Vertical)
        self.status = StatusBar(self)
        self.setStatusBar(self.status)
        self.summary.filter_requested.connect(self._summary_filter)
        self.summary.stale_requested.connect(self.knowledge.show_stale)
        self.tabs.currentChanged.connect(self.knowledge.tab_changed)
        self.tabs.currentChanged.connect(self._tab_changed)
        self.workers.job_wanted.connect(self._job_wanted)
        self.knowledge.attention_changed.connect(self.summary.set_stale_active)
        self.knowledge.job_wanted.connect(self._job_wanted)
        self.knowledge.status.connect(self.status.message)
        self.knowledge.actions.jobs_enqueued.connect(self._select_when_loaded)
        self.detail.provenance_requested.connect(
            lambda text: self.knowledge.show_job_graph(JobId.parse(text))
        )
        self.filters.filter_requested.connect(self._set_filter)
        self.jobs_page.failures.group_chosen.connect(self._list_failure_group)
        self.table.order_requested.connect(
            lambda sort, descending: self._set_filter(
                self._filter().with_(sort=sort, newest_first=descending)
            )
        )
        self.table.current_job_changed.connect(self._current_changed)
        self.table.selection_changed_rows.connect(lambda _n: self._selection_changed())
        self.detail.action_requested.connect(lambda action: self.jobs.on_diagram_action(action))
        self.detail.copy_requested.connect(lambda what: self.jobs.copy_shown(what))
        self.detail.state_clicked.connect(self._state_clicked)
        self.detail.link_activated.connect(self._link)
        self.log.job_activated.connect(lambda text: self.select_job(JobId.parse(text)))

    def _hooks(self) -> dict[str, Callable[[], object]]:
        return {
            "open": self.ask_open,
            "refresh": lambda: self.session.refresh() if self.session else None,
            "find": self._focus_search,
            "filter": self._focus_state,
            "stuck": lambda: self._set_filter(self._filter().with_(stuck=not self._filter().stuck)),
            "clear": lambda: self._set_filter(JobFilter()),
            "cycle_theme": self._cycle_theme,
            "shortcuts": lambda: menus.show_shortcuts(self),
            "close": self.close_production,
            "about": lambda: menus.show_about(self),
            "tab_jobs": lambda: self.tabs.setCurrentIndex(0),
            "tab_artifacts": lambda: self.tabs.setCurrentIndex(1),
            "tab_provenance": lambda: self.tabs.setCurrentIndex(2),
            "tab_dashboard": lambda: self.tabs.setCurrentIndex(DASHBOARD),
            "tab_workers": lambda: self.tabs.setCurrentIndex(WORKERS),
        }

    def _focus_search(self) -> None:
        self.filters.search.setFocus()
        self.filters.search.selectAll()

    def _focus_state(self) -> None:
        self.filters.state.setFocus()
        self.filters.state.showPopup()

    # --- opening -----------------------------------------------------------------------

    def ask_open(self) -> None:
        files = [p for p in self.settings.recent() if not production_location.is_database(p)]
        start = str(Path(files[0]).parent) if files else ""
        path, _ = QFileDialog.getOpenFileName(
            self, "Open production", start, f"Productions (*{SUFFIX});;All files (*)"
        )
        if path:
            self.open_production(path)

    def open_production(self, location: str | Path) -> MonitorSession:
        """Close the current production (if any) and open ``location``: a ``.pproj`` path or a
        ``postgresql://`` URI (the title and status bar show it without its password).

        The first rows first (see :mod:`postproject_gui.window.opening`): the window holds its
        paints and the session starts reading as soon as the table has its model; the rest of
        the wiring runs while a reader opens the production and reads the first page."""
        self.close_production()
        location = production_location.of(location)
        session = self._open_session(location)
        session.begin_open()  # first: the connection is made while the window gets ready
        session.setParent(self)
        self.session = session
        self._first_rows.begin(networked=production_location.is_database(location))
        session.table.set_look(self.theme.theme.states, self.theme.state_icon)
        self.table.set_table_model(session.table)
        self.workspaces.set_production(location)
        session.set_initial_filter(self.workspaces.initial_filter())
        self.workspaces.restore_columns()
        session.start(paced=True)
        session.table.status_changed.connect(self._first_page_in)
        session.opened.connect(self._opened)
        session.open_failed.connect(lambda _path: self._first_rows.release())
        session.open_failed.connect(lambda _path: QTimer.singleShot(0, self._open_failed))
        session.counts_changed.connect(self._counts_changed)
        session.outlook_changed.connect(self._outlook_changed)
        session.kinds_changed.connect(self.filters.set_kinds)
        session.failure_groups_changed.connect(self.jobs_page.failures.set_groups)
        session.filter_changed.connect(self._filter_changed)
        session.detail_loaded.connect(self._detail_loaded)
        session.detail_missing.connect(self.detail.show_missing)
        session.applied.connect(self._applied)
        session.live_changed.connect(self.status.set_live)
        session.feed_stalled.connect(self.status.set_stalled)
        session.revisions_arrived.connect(self.notifier.on_revisions)
        session.workers.went_offline.connect(self.notifier.workers_offline)
        session.waiter.changed.connect(self._waiting_changed)
        self.busy.retry_requested.connect(session.waiter.retry)
        self.busy.give_up_requested.connect(session.waiter.give_up)
        session.knowledge.stale_changed.connect(self.summary.set_stale)
        session.table.status_changed.connect(self._table_status)
        session.table.ticked.connect(self._ticked)
        self.log.set_log_model(session.events)
        if not self._first_rows.defer("tabs", lambda: self._connect_tabs(session)):
            self._connect_tabs(session)
        self._tab_changed(self.tabs.currentIndex())
        self.status.set_production(location)
        self.setWindowTitle(f"{production_location.title(location)} — PostProject Monitor")
        self._filter_changed(session.filter)
        self._selection_changed()
        return session

    def _held_while_opening(self) -> list[QWidget]:
        """What does not paint while a production opens: the central widget (the job table's
        first paint has the rows)."""
        central = self.centralWidget()
        assert central is not None  # set in _build
        return [central]

    def _held_until_the_rows_are_painted(self) -> list[QWidget]:
        """What paints only after the first rows have (the central widget, with the job table,
        is held until the page is in): the detail panel and the summary (they show what the
        opening reads after the page), and the rest of the window around the table's rows (the
        filter bar, the failure groups, the tab bar, the table's scroll bars, the splitters'
        handles, menus, toolbars, the event log, the status bar: the rows' paint does not draw
        them too)."""
        bars = self.findChildren(QToolBar, options=Qt.FindChildOption.FindDirectChildrenOnly)  # (fast)
        page, table = self.jobs_page, self.table
        scrollbars = [bar.parentWidget() for bar in (table.horizontalScrollBar(), table.verticalScrollBar())]
        handles = [s.handle(i) for s in (page.splitter, page.vertical) for i in range(1, s.count())]
        return [
            *(self.detail, self.summary, page.filters, page.failures, self.tabs.tabBar()),
            *(w for w in (*scrollbars, *handles) if w is not None),
            *(self.menuBar(), *bars, self.log, self.statusBar()),
        ]

    def _connect_tabs(self, session: MonitorSession) -> None:
        """The other tabs follow the session once the first rows are painted (before the rest
        of its opening: their signals come after it)."""
        if session is not self.session:
            return
        self.knowledge.connect_session(session)
        self.dashboard.connect_session(session)
        self.workers.connect_session(session)
        self._tab_changed(self.tabs.currentIndex())
        session.first_rows_shown()

    def _first_page_in(self) -> None:
        """The first page is in (or could not be read): paint, the table laid out for its rows
        first, whether or not the hold is still on (a page after it ended, on a slow server or a
        loaded machine, would otherwise be painted before its layout, then again after it)."""
        if self.session is not None and not self.session.table.loading:
            self.table.lay_out_now()
            self._first_rows.release()

    def close_production(self) -> None:
        self._first_rows.end()
        if self.session is not None:
            self.workspaces.save()  # while the session still says what the filter is
        session, self.session = self.session, None
        if session is None:
            return
        self.busy.retry_requested.disconnect(session.waiter.retry)
        self.busy.give_up_requested.disconnect(session.waiter.give_up)
        session.close()
        self._waiting_changed(None)
        self.table.setModel(None)
        self.log.view.setModel(None)
        self.knowledge.disconnect_session()
        self.dashboard.disconnect_session()
        self.workers.disconnect_session()
        self.summary.set_stale(None)
        session.deleteLater()
        self.workspaces.set_production(None)
        self.status.set_production(None)
        self.setWindowTitle("PostProject Monitor")
        self._show_overview()
        self._selection_changed()

    def _tab_changed(self, index: int) -> None:
        """The Workers tab and the dashboard (worker utilisation) read the workers every few
        seconds while one of them is shown; a job card looks selected only in the Jobs tab."""
        self.summary.set_jobs_shown(index == JOBS)
        self.workers.set_visible_tab(index == WORKERS)
        if self.session is not None:
            self.session.workers.set_polling(index in (WORKERS, DASHBOARD))

    def _notifications_toggled(self, on: bool) -> None:
        self.notifier.set_enabled(on)
        self.settings.set_text("notifications", "on" if on else "off")
        if not on:
            self.notice_bar.hide()

    def _show_notice_topic(self, topic: str) -> None:
        """An in-window notification's *Show*: the failed jobs, the stuck claims or the workers."""
        if topic == "offline":
            self.tabs.setCurrentIndex(WORKERS)
        else:
            self._summary_filter(
                card_order(JobFilter(state=JobState.FAILED), JobState.FAILED)
                if topic == "failed"
                else JobFilter(stuck=True)
            )

    def _apply_workspace_filter(self, flt: JobFilter) -> None:
        if self.session is not None:
            self.session.set_filter(flt)

    def _save_columns(self, prefix: str) -> None:
        if self.table.model() is not None:
            self.settings.set_blob(f"{prefix}/jobTableHeader", self.table.header_state())
            self.settings.set_strings(f"{prefix}/jobTableHidden", self.table.hidden_columns())

    def _restore_columns(self, prefix: str, default_hidden: tuple[str, ...], order: tuple[str, ...]) -> None:
        if self.table.model() is None:
            return
        header = self.settings.blob(f"{prefix}/jobTableHeader")
        if header is not None:
            self.table.restore_header(header)
        else:
            self.table.reset_columns(order)
        hidden = self.settings.strings(f"{prefix}/jobTableHidden")
        self.table.set_hidden_columns(list(default_hidden) if hidden is None else hidden)

    def _waiting_changed(self, state: object) -> None:
        self.busy.show_state(state)  # type: ignore[arg-type]
        self.status.set_waiting(state is not None)

    def _open_failed(self) -> None:
        if self.session is not None and self.session.info is None:
            self.close_production()

    def _opened(self, info: ProductionInfo) -> None:
        self._refresh_recent(self.settings.add_recent(info.location))
        self._show_overview()
        self._selection_changed()  # the actions that need an open production (the first page came first)
        if info.possibly_stale:  # a banner that stays: what the window shows may be behind
            self.statusBar().showMessage(production_location.STALE_VIEW, 0)

    # --- session -> views --------------------------------------------------------------

    def _filter(self) -> JobFilter:
        return self.session.filter if self.session else JobFilter()

    def _set_filter(self, flt: JobFilter) -> None:
        if self.session is not None:
            self.session.set_filter(flt)

    def _show_failure_groups(self, workspace: str) -> None:
        """The Failure groups panel belongs to the Producer workspace."""
        self.jobs_page.failures.setVisible(workspace == "producer")

    def _list_failure_group(self, group: FailureGroup) -> None:
        """A failure group lists its jobs: failed, with the group's search, in the table."""
        self.tabs.setCurrentIndex(JOBS)
        self._set_filter(JobFilter(state=JobState.FAILED, kind=self._filter().kind, text=group.search))

    def _state_clicked(self, value: str) -> None:
        """A state of the lifecycle diagram lists its jobs, in the order its card would."""
        state = JobState(value)
        self._set_filter(card_order(self._filter().with_(state=state, stuck=False), state))

    def _summary_filter(self, flt: JobFilter) -> None:
        """A job count card lists its jobs: in the Jobs tab."""
        self.tabs.setCurrentIndex(JOBS)
        self._set_filter(flt)

    def _selection_changed(self) -> None:
        self.jobs.update_enabled()
        self.knowledge.update_enabled()

    def _filter_changed(self, flt: JobFilter) -> None:
        self.summary.set_filter(flt)
        self.filters.set_filter(flt)
        self.table.apply_filter(flt.newest_first, flt.state, flt.stuck, flt.sort)
        self._table_status()
        if self.detail.mode == "production":
            self._show_overview()

    def _counts_changed(self, counts: JobCounts) -> None:
        self.summary.set_counts(counts)
        self._table_status()
        if self.detail.mode == "production":
            self._show_overview()

    def _outlook_changed(self, outlook: ClaimOutlook) -> None:
        if self.session is not None:
            self.notifier.on_outlook(outlook, self.session.now())
            self.summary.set_outlook(outlook, self.session.now(), self.session.filter.kind)
        if self.detail.mode == "production":
            self._show_overview()

    def _show_overview(self) -> None:
        """The production's lifecycle diagram and counts in the detail panel (once the first
        rows are painted, while a production opens)."""
        if not self._first_rows.defer("overview", self._show_overview_now):
            self._show_overview_now()

    def _show_overview_now(self) -> None:
        s = self.session
        if s is None:
            self.summary.set_counts(None)
            self.summary.set_outlook(None, None, None)  # type: ignore[arg-type]
            self.detail.show_overview(None, None, None, None, None)
            return
        highlighted = JobState.CLAIMED if s.filter.stuck else s.filter.state
        self.detail.show_overview(s.info, s.counts, s.outlook, s.now(), highlighted)

    def _current_changed(self, job_id: str) -> None:
        self._selection_changed()
        if self.session is None:
            return
        self.session.show_job(JobId.parse(job_id) if job_id else None)
        if not job_id:
            self._show_overview()

    def _detail_loaded(self, detail: JobDetail) -> None:
        if self.session is not None:
            self.detail.show_detail(detail, self.session.now(), self.session.service.location)

    def _ticked(self) -> None:
        if self.session is not None:
            self.detail.refresh_time(self.session.now())

    def _table_status(self) -> None:
        self.jobs_page.show_status(self.session, self.theme.theme.ui.muted)

    def select_job(self, job_id: JobId) -> None:
        """Select a job in the table if loaded; show its detail either way."""
        if not self.table.select_job(job_id) and self.session is not None:
            self.table.clearSelection()
            self.session.show_job(job_id)

    def _job_wanted(self, job_id: str) -> None:
        """Click-through from the graph: the job in the Jobs tab (its detail if not listed)."""
        self.tabs.setCurrentIndex(JOBS)
        self.select_job(JobId.parse(job_id))

    def _select_when_loaded(self, job_ids: list[str]) -> None:
        """Select jobs that were just requested: now if their rows are here, else as the feed
        brings them in. A filter that would hide requested jobs is cleared first."""
        wanted = {JobId.parse(text) for text in job_ids}
        flt = self._filter()
        if flt.stuck or flt.text.strip() or flt.state not in (None, JobState.REQUESTED):
            self._set_filter(JobFilter(newest_first=flt.newest_first))
        self.tabs.setCurrentIndex(JOBS)
        listed = self.session is not None and self.jobs_page.select_when_listed(self.session, wanted)
        if not listed and len(wanted) == 1 and self.session is not None:
            self.session.show_job(next(iter(wanted)))

    def _applied(self, revision: int) -> None:
        self.status.set_revision(revision)
        self.jobs_page.select_pending(self.session)

    # --- small actions -----------------------------------------------------------------

    def _link(self, href: str) -> None:
        kind, _, value = href.partition(":")
        if kind == "job":
            self.select_job(JobId.parse(value))
            return
        if kind == "file" and Path(value).exists():
            QDesktopServices.openUrl(QUrl.fromLocalFile(value))
            return
        QGuiApplication.clipboard().setText(value)
        self.status.message(f"Copied {value}")

    def _cycle_theme(self) -> None:
        order = [ThemeMode.SYSTEM, ThemeMode.LIGHT, ThemeMode.DARK]
        mode = order[(order.index(self.theme.mode) + 1) % len(order)]
        self.theme.set_mode(mode)
        self.status.message(f"Theme: {mode.value}")

    def _retheme(self, _name: str = "") -> None:
        current = self.theme.theme
        self.settings.set_theme(self.theme.mode)
        for mode, action in self.actions_.themes.items():
            action.setChecked(mode is self.theme.mode)
        self.summary.set_theme(current)
        self.detail.set_theme(current)
        self.status.set_theme(current)
        self.dashboard.set_theme(current)
        self.workers.set_theme(current)
        self.actions_.retheme(self.theme)
        self.jobs.retheme()
        self.knowledge.retheme()
        if self.session is not None:
            self.session.table.set_look(current.states, self.theme.state_icon)
        self._table_status()

    # --- layout, drops, closing --------------------------------------------------------

    def _refresh_recent(self, paths: list[str] | None = None) -> None:
        def clear() -> None:
            self.settings.clear_recent()
            self._refresh_recent([])

        menus.fill_recent(
            self.actions_.recent_menu,
            self.settings.recent() if paths is None else paths,
            self.open_production,
            clear,
        )

    def _restore_layout(self) -> None:
        for key, restore in (
            ("window", self.restoreGeometry),
            ("windowState", self.restoreState),
            ("splitter", self.splitter.restoreState),
        ):
            blob = self.settings.blob(key)
            if blob is not None:
                restore(blob)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._toolbar_fit.fit(self.width(), self.findChild(QToolBar, "mainToolbar"), self.workspaces.toolbar)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if any(u.isLocalFile() and u.toLocalFile().endswith(SUFFIX) for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = [
            Path(u.toLocalFile())
            for u in event.mimeData().urls()
            if u.isLocalFile() and u.toLocalFile().endswith(SUFFIX)
        ]
        if paths:
            event.acceptProposedAction()
            self.open_production(paths[0])

    def closeEvent(self, event: QCloseEvent) -> None:
        self.settings.set_blob("window", self.saveGeometry())
        self.settings.set_blob("windowState", self.saveState())
        self.settings.set_blob("splitter", self.splitter.saveState())
        self.close_production()
        self.filters.shutdown()
        self.notifier.stop()
        self.settings.sync()
        super().closeEvent(event)
