"""The job actions, declared once and shared by the menu, toolbar, context menu, detail
panel and diagram: request, request similar, cancel, retry (request again), requeue a claim,
change priority, finalise lost work, copy id, copy as CLI command, export the job list.

Each write is one transaction through the service's writer thread, confirmed first (with the
equivalent ``postproject`` command) where it disrupts work, and waits for a busy database
like every other write (``spawn_retryable``).

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

from postproject import Action, JobId, JobState
from postproject_gui.dialogs.cancel_dialog import CancelDialog, CancelPlan
from postproject_gui.dialogs.farm_dialogs import ConfirmDialog, PriorityDialog, job_list
from postproject_gui.dialogs.request_job_dialog import RequestJobDialog
from postproject_gui.look.states import ClaimHealth
from postproject_gui.look.theme import ThemeManager
from postproject_gui.models.columns import short_id
from postproject_gui.services import writes
from postproject_gui.services.types import CancelOutcome, JobDetail, JobRow, RequestChoices, RequestSpec
from postproject_gui.session.monitor_session import MonitorSession
from postproject_gui.text import cli_command
from postproject_gui.text import location as production_location

MAX_CLI_JOBS = 100


class JobActions(QObject):
    """Signals: job_requested(str job id), jobs_requested(list[str] job ids), status(str
    message for the status bar), exported(str path, int jobs)."""

    job_requested = Signal(str)
    jobs_requested = Signal(list)
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
        self.request_similar = self._action(
            "Request similar…",
            "request",
            "Ctrl+Shift+N",
            "Request a job like the selected one (its kind, inputs, output, parameters and scheduling, to edit)",
            self.request_similar_selected,
        )
        self.retry = self._action(
            "Retry (request again)…",
            "refresh",
            "Ctrl+Shift+Y",
            "Request the selected failed or cancelled jobs again, linked to the originals",
            self.retry_selected,
        )
        self.requeue = self._action(
            "Requeue claim…",
            "stuck",
            "Ctrl+Shift+U",
            "Return the selected claims to requested; their leases are fenced (asks first)",
            self.requeue_selected,
        )
        self.priority = self._action(
            "Change priority…",
            "filter",
            "Ctrl+Shift+P",
            "Change the priority of the selected requested jobs (higher is claimed first)",
            self.prioritize_selected,
        )
        self.finalize_lost = self._action(
            "Finalize lost work…",
            "cancel",
            "Ctrl+Shift+L",
            "End expired, unrenewed claims as lost: back to requested, or failed when out of attempts",
            self.finalize_lost_work,
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
            (self.request_similar, "request"),
            (self.retry, "refresh"),
            (self.requeue, "stuck"),
            (self.priority, "filter"),
            (self.finalize_lost, "cancel"),
            (self.cancel, "cancel"),
            (self.copy_id, "copy"),
            (self.copy_cli, "terminal"),
            (self.export_list, "export"),
        ):
            action.setIcon(self._theme.icon(icon))

    def update_enabled(self) -> None:
        session = self._session()
        rows = self._selection()
        opened = session is not None and session.info is not None
        self.request.setEnabled(opened)
        self.request_similar.setEnabled(opened and len(rows) == 1)
        self.retry.setEnabled(opened and bool(retryable(rows)))
        self.requeue.setEnabled(opened and bool(of_state(rows, JobState.CLAIMED)))
        self.priority.setEnabled(opened and bool(of_state(rows, JobState.REQUESTED)))
        self.finalize_lost.setEnabled(opened)
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
        location = session.service.location
        start = str(production_location.beside(location, f"{production_location.stem(location)}-jobs.csv"))
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
        spec = RequestJobDialog.ask(self._window, choices, session.service.location, initial)
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
        """A clickable transition in the diagram (or a button of the detail panel) was clicked."""
        session = self._session()
        if action == Action.REQUEST.value:
            self.request_job()
            return
        if session is None or session.detail is None:
            return
        rows = [session.detail.row]
        if action == Action.CANCEL.value:
            self.cancel_rows(rows)
        elif action == Action.REQUEUE.value:
            self.requeue_rows(rows)
        elif action == Action.PRIORITIZE.value:
            self.prioritize_rows(rows)
        elif action == "retry_job":
            self.retry_rows(rows)
        elif action == "request_similar":
            self.request_similar_to(rows[0].id)

    # --- farm actions ------------------------------------------------------------------

    def request_similar_selected(self) -> None:
        rows = self._selection()
        if len(rows) == 1:
            self.request_similar_to(rows[0].id)

    def request_similar_to(self, job_id: JobId) -> None:
        """Open the request dialog filled in from a job (its parameters read first)."""
        session = self._session()
        if session is not None:
            session.spawn(self._similar(session, job_id), "Preparing the request")

    async def _similar(self, session: MonitorSession, job_id: JobId) -> None:
        detail = await session.service.job_detail(job_id)
        choices = await session.service.request_choices()
        session.service.loop.call_soon(self._ask_request, session, choices, similar_spec(detail))

    def retry_selected(self) -> None:
        self.retry_rows(self._selection())

    def retry_rows(self, rows: Sequence[JobRow]) -> None:
        session = self._session()
        if session is None:
            return
        chosen = retryable(rows)
        if not chosen:
            self.status.emit("Nothing to retry: only failed or cancelled jobs not retried yet can be.")
            return
        n = len(chosen)
        skipped = len(rows) - n
        message = (
            f"{_jobs(n)} will be requested again in one transaction, each with the same kind, inputs, "
            "output, root, priority, attempt limit and parameters, and linked to the original "
            f"(retry of / retried as): {job_list(chosen)}."
        )
        if skipped:
            message += f"\n{_jobs(skipped)} cannot be retried (not failed or cancelled, or retried already)."
        command = cli_command.retry(session.service.location, [r.id for r in chosen])
        if ConfirmDialog.ask(self._window, "retryDialog", f"Retry {_jobs(n)}?", message, command, "Retry"):
            ids = [r.id for r in chosen]
            session.spawn_retryable(lambda: self._retry(session, ids), f"Retrying {_jobs(n)}")

    async def _retry(self, session: MonitorSession, ids: list[JobId]) -> None:
        outcome = await session.service.retry_jobs(ids)
        self.status.emit(f"Requested {_jobs(len(outcome.jobs))} again in revision {outcome.revision}")
        self.jobs_requested.emit([str(j) for j in outcome.jobs])

    def requeue_selected(self) -> None:
        self.requeue_rows(self._selection())

    def requeue_rows(self, rows: Sequence[JobRow]) -> None:
        session = self._session()
        if session is None:
            return
        chosen = of_state(rows, JobState.CLAIMED)
        if not chosen:
            self.status.emit("Nothing to requeue: only claimed jobs can be requeued.")
            return
        n, now = len(chosen), session.now()
        live = [r for r in chosen if r.health(now) is not ClaimHealth.STUCK]
        message = (
            f"{_jobs(n)} will return to requested in one transaction, for any worker to claim again: "
            f"{job_list(chosen)}. Each lease is fenced and its attempt ends as released."
        )
        if live:
            holders = sorted({holder(r) for r in live})
            message += (
                f"\n{_jobs(len(live))} {'is' if len(live) == 1 else 'are'} still held by a live lease "
                f"({', '.join(holders)}): that worker's later renewals and results will be refused."
            )
        command = cli_command.requeue(session.service.location, [r.id for r in chosen])
        title = f"Requeue {n} claim{'s' if n != 1 else ''}?"
        if ConfirmDialog.ask(self._window, "requeueDialog", title, message, command, "Requeue", danger=True):
            ids = [r.id for r in chosen]
            session.spawn_retryable(lambda: self._requeue(session, ids), f"Requeueing {_jobs(n)}")

    async def _requeue(self, session: MonitorSession, ids: list[JobId]) -> None:
        outcome = await session.service.requeue_jobs(ids)
        self.status.emit(f"Requeued {_jobs(len(outcome.jobs))} in revision {outcome.revision}")

    def prioritize_selected(self) -> None:
        self.prioritize_rows(self._selection())

    def prioritize_rows(self, rows: Sequence[JobRow]) -> None:
        session = self._session()
        if session is None:
            return
        chosen = of_state(rows, JobState.REQUESTED)
        if not chosen:
            self.status.emit("Only requested jobs change priority.")
            return
        command = cli_command.priority(session.service.location, [r.id for r in chosen], "{PRIORITY}")
        value = PriorityDialog.ask(self._window, chosen, command)
        if value is not None:
            ids = [r.id for r in chosen]
            session.spawn_retryable(
                lambda: self._prioritize(session, ids, value), f"Changing the priority of {_jobs(len(ids))}"
            )

    async def _prioritize(self, session: MonitorSession, ids: list[JobId], value: int) -> None:
        outcome = await session.service.set_priority(ids, value)
        self.status.emit(f"Priority {value} for {_jobs(len(outcome.jobs))} in revision {outcome.revision}")

    def finalize_lost_work(self) -> None:
        session = self._session()
        if session is None or session.info is None:
            return
        outlook, now = session.outlook, session.now()
        known = len(outlook.stuck(now)) if outlook is not None else 0
        plus = "+" if outlook is not None and outlook.capped else ""
        message = (
            "Every claim whose lease expired without renewal ends its attempt as lost, then returns "
            "to requested while it has attempts left, or fails (naming the attempt, its worker and "
            f"when the lease expired). Stuck claims now: {known:,}{plus}; at most "
            f"{writes.SWEEP_LIMIT} are finalised in this transaction. A worker that re-claims one "
            "first wins."
        )
        command = cli_command.sweep(session.service.location, writes.SWEEP_LIMIT)
        if ConfirmDialog.ask(
            self._window, "finalizeDialog", "Finalize lost work?", message, command, "Finalize", danger=True
        ):
            session.spawn_retryable(lambda: self._finalize(session), "Finalizing lost work")

    async def _finalize(self, session: MonitorSession) -> None:
        outcome = await session.service.finalize_lost(writes.SWEEP_LIMIT)
        if not outcome.count:
            self.status.emit("Nothing to finalize: no claim has expired unrenewed.")
            return
        noun = "claim" if outcome.count == 1 else "claims"
        self.status.emit(f"Finalized {outcome.count:,} lost {noun} in revision {outcome.revision}")

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
                cli_command.request(session.service.location, detail.job, detail.parameters)
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
            lines.append(cli_command.request(session.service.location, detail.job, detail.parameters))
        QGuiApplication.clipboard().setText("\n".join(lines))
        self.status.emit(f"Copied {len(lines)} postproject command{'s' if len(lines) != 1 else ''}")


def _jobs(count: int) -> str:
    return f"{count:,} job{'s' if count != 1 else ''}"


def of_state(rows: Sequence[JobRow], state: JobState) -> list[JobRow]:
    return [r for r in rows if r.job.state is state]


def retryable(rows: Sequence[JobRow]) -> list[JobRow]:
    """Failed or cancelled jobs not requested again yet."""
    return [
        r for r in rows if r.job.state in (JobState.FAILED, JobState.CANCELLED) and r.job.retried_as is None
    ]


def holder(row: JobRow) -> str:
    claim = row.job.claim
    if claim is None:
        return "nobody"
    return claim.worker or (str(claim.agent) if claim.agent else str(claim.tool))


def similar_spec(detail: JobDetail) -> RequestSpec:
    """A request like ``detail``'s job (kind, inputs, output, root, parameters, scheduling);
    without its idempotency key, which would return the job itself."""
    job = detail.job
    return RequestSpec(
        job.kind,
        job.inputs,
        job.output_asset_id,
        job.output_representation_kind,
        job.target_root,
        tuple((a.property, a.value) for a in detail.parameters),
        job.priority,
        job.not_before,
        job.max_attempts,
    )


def describe_cancel(outcome: CancelOutcome) -> str:
    n = len(outcome.cancelled)
    text = f"Cancelled {n} job{'s' if n != 1 else ''}"
    if outcome.revision is not None:
        text += f" in revision {outcome.revision}"
    if outcome.skipped:
        text += f"; {len(outcome.skipped)} had already finished"
    return text
