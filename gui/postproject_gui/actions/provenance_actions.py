"""The artifact and provenance actions, shared by the menu, the tabs and the context menus:
show provenance, plan regeneration, regenerate everything stale downstream, re-read a
representation's file (record a re-delivered original), save the graph image, export W3C PROV.

Like :mod:`postproject_gui.actions.job_actions`: reads and writes go through the session's
service in background tasks, and a dialog is never opened inside a running task (the task
hands over to a plain loop callback, which asks and then starts the next task).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QWidget

from postproject import RegenerationPlan, RepresentationId
from postproject_gui.diagram.provenance_scene import ProvenanceScene
from postproject_gui.dialogs.error_presenter import ErrorPresenter
from postproject_gui.dialogs.regeneration_dialog import RegenerationDialog, plural
from postproject_gui.look.theme import ThemeManager
from postproject_gui.services.provenance_export import ProvFormat
from postproject_gui.services.types import RegenerationPreview
from postproject_gui.session.monitor_session import MonitorSession
from postproject_gui.views.provenance_view import ProvenanceView

Targets = Callable[[], list[RepresentationId]]
IMAGE_FILTERS = {"PNG image (*.png)": ".png", "SVG drawing (*.svg)": ".svg"}
PROV_FILTERS: dict[str, tuple[ProvFormat, str]] = {
    "PROV-JSON (*.json)": ("json", ".json"),
    "PROV-N (*.provn)": ("provn", ".provn"),
}


class ProvenanceActions(QObject):
    """Signals: status(str), jobs_enqueued(list[str] job ids).

    ``targets`` names the representations an action is about (the selected artifacts, or
    the selected graph node); ``source`` the representation whose stale descendants
    "regenerate downstream" plans; ``show`` is what "Show provenance" does.
    """

    status = Signal(str)
    jobs_enqueued = Signal(list)

    def __init__(
        self,
        window: QWidget,
        theme: ThemeManager,
        presenter: ErrorPresenter,
        session: Callable[[], MonitorSession | None],
        targets: Targets,
        view: ProvenanceView,
        show: Callable[[], None],
    ) -> None:
        super().__init__(window)
        self._window, self._theme, self._presenter = window, theme, presenter
        self._session, self._targets, self._view = session, targets, view
        self.show = self._action(
            "Show provenance",
            "diagram",
            "Ctrl+G",
            "Draw the provenance of the selected job or artifact",
            show,
        )
        self.plan = self._action(
            "Plan regeneration…",
            "refresh",
            "Ctrl+Shift+R",
            "Preview the jobs that would regenerate the selected artifacts",
            self.plan_selected,
        )
        self.downstream = self._action(
            "Regenerate stale downstream…",
            "downstream",
            "Ctrl+Shift+D",
            "Preview jobs for everything stale or diverged made from the selected representation",
            self.plan_downstream,
        )
        self.reread = self._action(
            "Re-read file",
            "refresh",
            "Ctrl+Shift+O",
            "Read the selected representations' files again and record a changed content "
            "(a re-delivered original: what was made from it turns stale)",
            self.reread_selected,
        )
        self.save_image = self._action(
            "Save graph image…", "image", "", "Save the provenance graph as PNG or SVG", self.save_graph_image
        )
        self.export = self._action(
            "Export PROV…",
            "export",
            "",
            "Export the provenance of the selected representations as W3C PROV (JSON or PROV-N)",
            self.export_prov,
        )
        self.update_enabled()

    def _action(self, text: str, icon: str, key: str, tip: str, slot: Callable[[], None]) -> QAction:
        action = QAction(self._theme.icon(icon), text, self._window)
        if key:
            action.setShortcut(QKeySequence(key))
        action.setToolTip(f"{tip} ({key})" if key else tip)
        action.setStatusTip(tip)
        action.setData(icon)
        action.triggered.connect(lambda _checked=False: slot())
        self._window.addAction(action)
        return action

    def retheme(self) -> None:
        for action in (self.show, self.plan, self.downstream, self.reread, self.save_image, self.export):
            action.setIcon(self._theme.icon(str(action.data())))

    def update_enabled(self, *, can_show: bool = True) -> None:
        session = self._session()
        open_ = session is not None and session.info is not None
        targets = self._targets() if open_ else []
        self.show.setEnabled(open_ and can_show)
        self.plan.setEnabled(bool(targets))
        self.downstream.setEnabled(len(targets) == 1)
        self.reread.setEnabled(bool(targets))
        self.export.setEnabled(bool(targets))
        self.save_image.setEnabled(open_ and self._drawn())

    def _drawn(self) -> bool:
        scene = self._view.scene()
        return isinstance(scene, ProvenanceScene) and scene.graph is not None

    # --- regeneration --------------------------------------------------------------------

    def plan_selected(self) -> None:
        session, ids = self._session(), self._targets()
        if session is None or not ids:
            self.status.emit("Select the artifacts to regenerate first (Artifacts tab or the graph).")
            return
        session.spawn(self._plan(session, ids, downstream=False), "Planning the regeneration")

    def plan_downstream(self) -> None:
        session, ids = self._session(), self._targets()
        if session is None or len(ids) != 1:
            self.status.emit("Select the one changed representation whose descendants to regenerate.")
            return
        session.spawn(self._plan(session, ids, downstream=True), "Planning the regeneration")

    async def _plan(self, session: MonitorSession, ids: list[RepresentationId], *, downstream: bool) -> None:
        service = session.service
        preview = await (service.plan_downstream(ids[0]) if downstream else service.plan_regeneration(ids))
        if not preview.plans and not preview.unplannable:
            self.status.emit("Nothing to regenerate: nothing downstream is stale or diverged.")
            return
        service.loop.call_soon(self._ask, session, preview)

    def _ask(self, session: MonitorSession, preview: RegenerationPreview) -> None:
        plans = RegenerationDialog.ask(
            self._window, preview.plans, preview.unplannable, rows=preview.rows, truncated=preview.truncated
        )
        if plans:
            session.spawn_retryable(lambda: self._enqueue(session, plans), "Requesting the regeneration jobs")

    async def _enqueue(self, session: MonitorSession, plans: Sequence[RegenerationPlan]) -> None:
        outcome = await session.service.enqueue_plans(plans)
        self.status.emit(
            f"Requested {plural(len(outcome.job_ids), 'regeneration job')} in revision {outcome.revision}"
        )
        self.jobs_enqueued.emit([str(j) for j in outcome.job_ids])

    # --- observing files -----------------------------------------------------------------

    def reread_selected(self) -> None:
        session, ids = self._session(), self._targets()
        if session is None or not ids:
            self.status.emit("Select the representations whose files to read again.")
            return
        session.spawn_retryable(lambda: self._reread(session, ids), "Re-reading files")

    async def _reread(self, session: MonitorSession, ids: list[RepresentationId]) -> None:
        outcome = await session.service.observe(ids)
        if outcome.changed:
            self.status.emit(
                f"Re-read {plural(len(ids), 'file')}: {len(outcome.changed)} changed, recorded in "
                f"revision {outcome.revision} (what was made from them is now stale)"
            )
        else:
            self.status.emit(f"Re-read {plural(len(ids), 'file')}: unchanged")

    # --- export --------------------------------------------------------------------------

    def save_graph_image(self) -> None:
        if not self._drawn():
            self.status.emit("Draw a provenance graph first.")
            return
        path, chosen = QFileDialog.getSaveFileName(
            self._window, "Save graph image", str(Path.home() / "provenance.png"), ";;".join(IMAGE_FILTERS)
        )
        if not path:
            return
        target = Path(path)
        if target.suffix.lower() not in IMAGE_FILTERS.values():
            target = target.with_suffix(IMAGE_FILTERS.get(chosen, ".png"))
        try:
            self._view.export_image(target)
        except (OSError, ValueError) as exc:
            self._presenter.present(exc, "Saving the graph image")
            return
        self.status.emit(f"Saved the graph as {target}")

    def export_prov(self) -> None:
        session, ids = self._session(), self._targets()
        if session is None or not ids:
            self.status.emit("Select the representations whose provenance to export.")
            return
        path, chosen = QFileDialog.getSaveFileName(
            self._window, "Export W3C PROV", str(Path.home() / "provenance.json"), ";;".join(PROV_FILTERS)
        )
        if not path:
            return
        target = Path(path)
        by_suffix = {suffix: fmt for fmt, suffix in PROV_FILTERS.values()}
        fmt = by_suffix.get(target.suffix.lower())
        if fmt is None:
            fmt, suffix = PROV_FILTERS.get(chosen, ("json", ".json"))
            target = target.with_suffix(suffix)
        session.spawn(self._export(session, ids, fmt, target), "Exporting provenance")

    async def _export(
        self, session: MonitorSession, ids: list[RepresentationId], fmt: ProvFormat, target: Path
    ) -> None:
        written = await session.service.export_prov(ids, fmt, target)
        self.status.emit(f"Exported the provenance of {plural(len(ids), 'representation')} to {written}")
