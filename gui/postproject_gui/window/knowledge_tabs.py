"""The Artifacts and Provenance tabs of the main window, their actions and their wiring.

Data flows from the session's :class:`~postproject_gui.session.knowledge_session.KnowledgeSession`
into the tabs; intents (open a graph, plan, export) flow from the tabs and the
:class:`~postproject_gui.actions.provenance_actions.ProvenanceActions` to the session.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QTabWidget, QWidget

from postproject import JobId, RepresentationId
from postproject_gui.actions.provenance_actions import ProvenanceActions
from postproject_gui.dialogs.error_presenter import ErrorPresenter
from postproject_gui.look.artifact_states import ArtifactPalette, palette_for
from postproject_gui.look.theme import ThemeManager
from postproject_gui.services.types import GraphRead, JobRow
from postproject_gui.session.monitor_session import MonitorSession
from postproject_gui.views.artifacts_tab import ArtifactsTab
from postproject_gui.views.provenance_tab import ProvenanceTab
from postproject_gui.views.widgets import tab_page_parent

JOBS, ARTIFACTS, PROVENANCE = 0, 1, 2


class KnowledgeTabs(QObject):
    """Signals: job_wanted(str job id) (click-through from the graph), status(str),
    attention_changed(bool) (the Artifacts tab lists only stale or diverged artifacts)."""

    job_wanted = Signal(str)
    status = Signal(str)
    attention_changed = Signal(bool)

    def __init__(
        self,
        window: QWidget,
        tabs: QTabWidget,
        theme: ThemeManager,
        presenter: ErrorPresenter,
        session: Callable[[], MonitorSession | None],
        selected_jobs: Callable[[], list[JobRow]],
    ) -> None:
        super().__init__(window)
        self._tabs, self._theme, self._session, self._selected_jobs = tabs, theme, session, selected_jobs
        self.artifacts = ArtifactsTab(tab_page_parent(tabs))
        self.provenance = ProvenanceTab(theme.theme, tab_page_parent(tabs))
        self.actions = ProvenanceActions(
            window, theme, presenter, session, self.targets, self.provenance.view, self.show_selected
        )
        self.actions.status.connect(self.status)
        a = self.actions
        self.artifacts.add_action_buttons([a.show, a.plan, a.export])
        self.artifacts.table.row_actions = [a.show, None, a.plan, a.downstream, a.reread, None, a.export]
        self.provenance.add_action_buttons([a.plan, a.downstream, a.save_image, a.export])
        self.provenance.detail.add_action_buttons([a.plan, a.reread])
        self.artifacts.artifact_activated.connect(lambda text: self.show_graph(RepresentationId.parse(text)))
        self.artifacts.table.selection_changed_rows.connect(lambda _n: self.update_enabled())
        self.artifacts.attention_toggled.connect(self._attention)
        self.provenance.representation_activated.connect(
            lambda text: self.show_graph(RepresentationId.parse(text))
        )
        self.provenance.job_activated.connect(self.job_wanted)
        self.provenance.selection_changed.connect(lambda _id: self.update_enabled())
        self.provenance.detail.copy_requested.connect(self._copy)

    # --- session -------------------------------------------------------------------------

    def connect_session(self, session: MonitorSession) -> None:
        knowledge = session.knowledge
        self.artifacts.table.set_models(knowledge.proxy)
        knowledge.artifacts.set_look(_palette(self._theme))
        knowledge.graph_loaded.connect(self._graph_loaded)
        knowledge.graph_failed.connect(self._graph_failed)
        knowledge.job_shown.connect(self.provenance.focus_node)
        model = knowledge.artifacts
        for signal in (
            model.status_changed,
            model.stale_count_changed,
            model.rowsInserted,
            model.rowsRemoved,
        ):
            signal.connect(lambda *_: self.refresh_status())
        knowledge.proxy.rowsInserted.connect(lambda *_: self.refresh_status())
        knowledge.proxy.rowsRemoved.connect(lambda *_: self.refresh_status())
        self._attention(self.artifacts.attention.isChecked())
        if self._tabs.currentIndex() == ARTIFACTS:
            knowledge.load_artifacts()
        self.refresh_status()

    def disconnect_session(self) -> None:
        self.artifacts.table.setModel(None)
        self.provenance.clear()
        self.refresh_status()
        self.update_enabled()

    def tab_changed(self, index: int) -> None:
        session = self._session()
        if index == ARTIFACTS and session is not None:
            session.knowledge.load_artifacts()
        self.attention_changed.emit(index == ARTIFACTS and self.artifacts.attention.isChecked())
        self.update_enabled()

    # --- intents -------------------------------------------------------------------------

    def targets(self) -> list[RepresentationId]:
        """The representations the artifact actions are about (depends on the tab shown)."""
        index = self._tabs.currentIndex()
        if index == ARTIFACTS:
            return self.artifacts.table.selected_ids()
        if index == PROVENANCE:
            selected = self.provenance.selected_representation()
            return [selected] if selected is not None else []
        return []

    def show_selected(self) -> None:
        """ "Show provenance": of the selected job, artifact or graph node."""
        session = self._session()
        if session is None or session.info is None:
            return
        if self._tabs.currentIndex() == JOBS:
            rows = self._selected_jobs()
            detail = session.detail
            job = rows[0].id if rows else (detail.job.id if detail is not None else None)
            if job is None:
                self.status.emit("Select a job first.")
                return
            self.show_job_graph(job)
            return
        targets = self.targets()
        if targets:
            self.show_graph(targets[0])
        else:
            self.status.emit("Select an artifact first.")

    def show_graph(self, rep_id: RepresentationId) -> None:
        session = self._session()
        if session is not None:
            self._tabs.setCurrentIndex(PROVENANCE)
            session.knowledge.show_graph(rep_id)

    def show_job_graph(self, job_id: JobId) -> None:
        session = self._session()
        if session is not None:
            self._tabs.setCurrentIndex(PROVENANCE)
            session.knowledge.show_job_graph(job_id)

    def show_stale(self) -> None:
        """The stale card: the Artifacts tab, only stale or diverged artifacts, the list focused
        (Ctrl+A selects them all for Plan regeneration)."""
        self._tabs.setCurrentIndex(ARTIFACTS)
        self.artifacts.set_attention(True)
        self.artifacts.table.setFocus()
        self.attention_changed.emit(True)

    # --- session -> views ----------------------------------------------------------------

    def refresh_status(self) -> None:
        session = self._session()
        model = session.knowledge.artifacts if session is not None else None
        self.artifacts.show_status(model, self._theme.theme.ui.muted)

    def update_enabled(self) -> None:
        session = self._session()
        self.actions.update_enabled(can_show=self._can_show(session))

    def retheme(self) -> None:
        self.provenance.set_theme(self._theme.theme)
        self.artifacts.set_theme(self._theme.theme)
        self.actions.retheme()
        session = self._session()
        if session is not None:
            session.knowledge.artifacts.set_look(_palette(self._theme))
        self.refresh_status()

    def _can_show(self, session: MonitorSession | None) -> bool:
        if session is None or session.info is None:
            return False
        if self._tabs.currentIndex() == JOBS:
            return bool(self._selected_jobs()) or session.detail is not None
        return bool(self.targets())

    def _graph_loaded(self, read: GraphRead) -> None:
        self.provenance.show_read(read)
        self.update_enabled()

    def _graph_failed(self, message: str) -> None:
        self.provenance.show_failure(message)
        self.status.emit(f"The provenance graph could not be read: {message}")

    def _attention(self, on: bool) -> None:
        session = self._session()
        if session is not None:
            session.knowledge.proxy.set_attention_only(on)
            session.knowledge.artifacts.set_fill_attention(on)
        self.attention_changed.emit(on and self._tabs.currentIndex() == ARTIFACTS)
        self.refresh_status()

    def _copy(self, text: str) -> None:
        QGuiApplication.clipboard().setText(text)
        self.status.emit(f"Copied {text}")


def _palette(theme: ThemeManager) -> ArtifactPalette:
    return palette_for(theme.theme.name)
