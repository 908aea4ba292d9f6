"""The job actions, declared once and shared by the menu, toolbar, context menu, detail
panel and diagram: request, cancel, copy id, copy as CLI command, export the job list.

Reads and writes go through the session's service in background tasks; failures reach the
error presenter through the session's task runner. Dialogs are never opened inside a
running task (a modal dialog's nested event loop would re-enter asyncio): a task that needs
the user's answer hands over to a plain loop callback, which asks and then starts the next
task.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QFileDialog, QWidget

from postproject import Action, JobId
from postproject_gui import cli_command
from postproject_gui.dialogs.cancel_dialog import CancelDialog, CancelPlan
from postproject_gui.dialogs.request_job_dialog import RequestJobDialog
from postproject_gui.models.columns import short_id
from postproject_gui.services.types import CancelOutcome, JobRow, RequestChoices, RequestSpec
from postproject_gui.session import MonitorSession
from postproject_gui.theme import ThemeManager

MAX_CLI_JOBS = 100


class JobActions(QObject):
    """Signals: job_requested(str job id), status(str message for the status bar),
    exported(str path, int jobs)."""

    job_requested = Signal(str)
    status = Signal(str)
    exported = Signal(str, int)  # path, jobs written

    def __init__(
        self,
        window: QWidget,
        theme: ThemeManager,
        session: Callable[[], MonitorSession | None],
        selection: Callable[[], list[JobRow]],
    ) -> None:
        super().__init__(window)
        self._window, self._theme, self._session, self._selection = window, theme, session, selection
        self.request = self._action(
            "Request job…", "request", "Ctrl+N", "Request a new job", self.request_job
        )
        self.cancel = self._action(
            "Cancel jobs…",
            "cancel",
            QKeySequence.StandardKey.Delete,
            "Cancel the selected jobs (confirms first)",
            self.cancel_selected,
        )
        self.copy_id = self._action(
            "Copy job ID", "copy", "Ctrl+C", "Copy the selected job ids", self.copy_ids
        )
        self.copy_cli = self._action(
            "Copy as CLI command",
            "terminal",
            "Ctrl+Shift+C",
            "Copy the postproject command that requests the selected jobs",
            self.copy_cli_command,
        )
        self.export_list = self._action(
            "Export job list…",
            "export",
            "Ctrl+Shift+E",
            "Export every job the current filters list (not only the loaded rows) to CSV or JSON",
            self.export_jobs,
        )
        self.update_enabled()

    def _action(self, text: str, icon: str, key: object, tip: str, slot: Callable[[], None]) -> QAction:
        action = QAction(self._theme.icon(icon), text, self._window)
        action.setShortcut(QKeySequence(key))  # type: ignore[call-overload]
        action.setToolTip(f"{tip} ({QKeySequence(key).toString()})")  # type: ignore[call-overload]
        action.setStatusTip(tip)
        action.triggered.connect(lambda _checked=False: slot())
        self._window.addAction(action)
        return action

    def retheme(self) -> None:
        for action, icon in (
            (self.request, "request"),
            (self.cancel, "cancel"),
            (self.copy_id, "copy"),
            (self.copy_cli, "terminal"),
            (self.export_list, "export"),
        ):
            action.setIcon(self._theme.icon(icon))

    def update_enabled(self) -> None:
        session = self._session()
        rows = self._selection()
        self.request.setEnabled(session is not None and session.info is not None)
        self.cancel.setEnabled(session is not None and bool(rows))
        self.copy_id.setEnabled(bool(rows))
        self.copy_cli.setEnabled(bool(rows) and session is not None)
        self.export_list.setEnabled(session is not None and session.info is not None)

    # --- export ------------------------------------------------------------------------

    def export_jobs(self) -> None:
        """Ask where, then write every job the current filters list (paged from the store)."""
        session = self._session()
        if session is None:
            return
        start = str(session.service.path.with_name(f"{session.service.path.stem}-jobs.csv"))
        path, _ = QFileDialog.getSaveFileName(
            self._window, "Export job list", start, "CSV (*.csv);;JSON (*.json)"
        )
        if path:
            self.export_to(session, Path(path))

    def export_to(self, session: MonitorSession, path: Path) -> None:
        what = session.filter.describe()
        self.status.emit(f"Exporting {what} to {path.name}…")
        session.spawn(self._export(session, path, what), "Exporting the job list")

    async def _export(self, session: MonitorSession, path: Path, what: str) -> None:
        count = await session.service.export_jobs(session.filter, path)
        self.status.emit(f"Exported {count:,} job{'s' if count != 1 else ''} ({what}) to {path}")
        self.exported.emit(str(path), count)

    # --- request -----------------------------------------------------------------------

    def request_job(self, initial: RequestSpec | None = None) -> None:
        session = self._session()
        if session is not None:
            session.spawn(self._load_choices(session, initial), "Preparing the request")

    async def _load_choices(self, session: MonitorSession, initial: RequestSpec | None) -> None:
        choices = await session.service.request_choices()
        session.service.loop.call_soon(self._ask_request, session, choices, initial)

    def _ask_request(
        self, session: MonitorSession, choices: RequestChoices, initial: RequestSpec | None
    ) -> None:
        spec = RequestJobDialog.ask(self._window, choices, session.service.path, initial)
        if spec is not None:
            session.spawn_retryable(lambda: self._submit(session, spec), "Requesting the job")

    async def _submit(self, session: MonitorSession, spec: RequestSpec) -> None:
        job_id, revision = await session.service.request_job(spec)
        self.status.emit(f"Requested job {short_id(str(job_id))} ({spec.kind}) in revision {revision}")
        self.job_requested.emit(str(job_id))

    # --- cancel ------------------------------------------------------------------------

    def cancel_selected(self) -> None:
        self.cancel_rows(self._selection())

    def cancel_rows(self, rows: Sequence[JobRow]) -> None:
        session = self._session()
        if session is None or not rows:
            return
        now = session.now()
        if not CancelPlan.of(rows, now).cancellable:
            self.status.emit("Nothing to cancel: the selected jobs already finished.")
            return
        if CancelDialog.ask(self._window, rows, now):
            ids = [r.id for r in CancelPlan.of(rows, session.now()).cancellable]
            n = len(ids)
            session.spawn_retryable(
                lambda: self._cancel(session, ids), f"Cancelling {n} job{'s' if n != 1 else ''}"
            )

    async def _cancel(self, session: MonitorSession, ids: list[JobId]) -> None:
        outcome = await session.service.cancel_jobs(ids)
        self.status.emit(describe_cancel(outcome))

    def on_diagram_action(self, action: str) -> None:
        """A clickable transition in the diagram was clicked."""
        session = self._session()
        if action == Action.REQUEST.value:
            self.request_job()
        elif action == Action.CANCEL.value and session is not None and session.detail is not None:
            self.cancel_rows([session.detail.row])

    # --- copy --------------------------------------------------------------------------

    def copy_shown(self, what: str) -> None:
        """Copy the id ("id") or the request command ("cli") of the job in the detail panel."""
        session = self._session()
        detail = session.detail if session else None
        if session is None or detail is None:
            return
        if what == "id":
            QGuiApplication.clipboard().setText(str(detail.job.id))
            self.status.emit(f"Copied job id {detail.job.id}")
        else:
            QGuiApplication.clipboard().setText(
                cli_command.request(session.service.path, detail.job, detail.parameters)
            )
            self.status.emit("Copied the postproject command that requests this job")

    def copy_ids(self) -> None:
        rows = self._selection()
        if rows:
            QGuiApplication.clipboard().setText("\n".join(str(r.id) for r in rows))
            self.status.emit(f"Copied {len(rows)} job id{'s' if len(rows) != 1 else ''}")

    def copy_cli_command(self) -> None:
        session, rows = self._session(), self._selection()
        if session is not None and rows:
            session.spawn(self._copy_cli(session, [r.id for r in rows[:MAX_CLI_JOBS]]), "Copying the command")

    async def _copy_cli(self, session: MonitorSession, ids: list[JobId]) -> None:
        lines = []
        for job_id in ids:
            detail = await session.service.job_detail(job_id)
            lines.append(cli_command.request(session.service.path, detail.job, detail.parameters))
        QGuiApplication.clipboard().setText("\n".join(lines))
        self.status.emit(f"Copied {len(lines)} postproject command{'s' if len(lines) != 1 else ''}")


def describe_cancel(outcome: CancelOutcome) -> str:
    n = len(outcome.cancelled)
    text = f"Cancelled {n} job{'s' if n != 1 else ''}"
    if outcome.revision is not None:
        text += f" in revision {outcome.revision}"
    if outcome.skipped:
        text += f"; {len(outcome.skipped)} had already finished"
    return text
