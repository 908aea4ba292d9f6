"""The detail panel: the selected job (facts, failure, attempts, parameters, history,
lifecycle, and what can be done to it now: retry, requeue, change priority, cancel, request
similar) or, with nothing selected, the production's lifecycle with live counts."""

from __future__ import annotations

import html
from datetime import datetime

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QResizeEvent, QTextOption
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from postproject import Action, JobState
from postproject.model.jobs import AttemptOutcome
from postproject.model.pending import NoOnlineWorker, NotBefore, PendingExplanation
from postproject_gui.diagram import lifecycle_layout as lay
from postproject_gui.diagram.lifecycle_scene import LifecycleScene
from postproject_gui.look.states import STATE_LOOKS, ClaimHealth
from postproject_gui.look.theme import Theme, set_style_property, state_icon
from postproject_gui.models.record_model import RecordTableModel
from postproject_gui.services.types import ClaimOutlook, JobCounts, JobDetail, ProductionInfo
from postproject_gui.text import attempts as attempts_text
from postproject_gui.text import cli_command, params, timefmt
from postproject_gui.text import location as production_location
from postproject_gui.views.job_facts import JobFacts
from postproject_gui.views.lifecycle_view import LifecycleView
from postproject_gui.views.widgets import WrappedText, detail_scroll, section_label, title_row, tool_button

GUI_ACTIONS = (Action.CANCEL, Action.REQUEUE, Action.PRIORITIZE)  # what the monitor can do to a job
RETRY, SIMILAR = "retry_job", "request_similar"  # actions that make a new job (not transitions)
FARM_BUTTON = {  # the state-dependent action button: text, action, tooltip
    JobState.FAILED: ("Retry…", RETRY, "Request this job again, linked to it (Ctrl+Shift+Y)"),
    JobState.CANCELLED: ("Retry…", RETRY, "Request this job again, linked to it (Ctrl+Shift+Y)"),
    JobState.CLAIMED: (
        "Requeue…",
        Action.REQUEUE.value,
        "Return the claim to requested; its lease is fenced (Ctrl+Shift+U)",
    ),
    JobState.REQUESTED: ("Priority…", Action.PRIORITIZE.value, "Change its priority (Ctrl+Shift+P)"),
}
PRODUCTION_ACTIONS = (Action.REQUEST,)
FAILURE_HEIGHT = 96  # px at most for "why it failed" (it scrolls beyond); less when it is shorter


def by_whom(origin: str | None, message: str | None) -> str:
    """``postproject-monitor 0.1.0 · Cancel 1 job``: who made a revision, and why."""
    return " · ".join(x for x in (origin, message) if x) or "—"


def small_table(model: RecordTableModel, name: str, parent: QWidget) -> QTableView:
    view = QTableView(parent)
    view.setObjectName(name)
    view.setAccessibleName(name)
    view.setModel(model)
    view.verticalHeader().hide()
    view.verticalHeader().setDefaultSectionSize(20)
    view.horizontalHeader().setStretchLastSection(True)
    view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setShowGrid(False)
    view.setAlternatingRowColors(True)
    view.setWordWrap(False)
    view.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    return view


def pending_text(pending: PendingExplanation, now: datetime) -> str:
    """The "why is this job still requested?" rich text: a head that never contradicts the
    reasons below it ("Claimable now" only when nothing holds it back and a worker for its
    kind is online), each job named a link to it, a not-before time as "in 2h 10m (17:13)"."""
    lines = []
    for reason in pending.reasons:
        if isinstance(reason, NotBefore):
            lines.append(f"• not before: {html.escape(when_text(reason.at, now))}")
            continue
        text = html.escape(reason.message)
        job_id = getattr(reason, "job_id", None)
        if job_id is not None:
            text = text.replace(
                html.escape(str(job_id)), f'<a href="job:{job_id}">{html.escape(str(job_id))}</a>', 1
            )
        lines.append(f"• {text}")
    if not pending.claimable:
        head = "Held back:"
    elif any(isinstance(r, NoOnlineWorker) for r in pending.reasons):
        head = "Nothing holds it back, but no worker for its kind is online:"
    else:
        head = "Claimable now:"
    return f"<b>{head}</b><br>" + "<br>".join(lines)


def when_text(at: datetime, now: datetime) -> str:
    """``in 2h 10m (17:13)`` in local time (with the date when it is not today's)."""
    local, today = at.astimezone(), now.astimezone()
    clock = local.strftime("%H:%M") if local.date() == today.date() else local.strftime("%Y-%m-%d %H:%M")
    return f"{timefmt.relative(at, now)} ({clock})"


class JobDetailPanel(QFrame):
    """Signals: action_requested(str Action value), copy_requested(str "id" or "cli"),
    state_clicked(str JobState value), link_activated(str), provenance_requested(str job id)."""

    provenance_requested = Signal(str)
    action_requested = Signal(str)
    copy_requested = Signal(str)
    state_clicked = Signal(str)
    link_activated = Signal(str)

    def __init__(self, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("jobDetail")
        self.setAccessibleName("Job detail")
        self.setMinimumWidth(380)
        self._theme = theme
        self._detail: JobDetail | None = None
        self._production: str | None = None
        self._now: datetime | None = None
        self._health: ClaimHealth | None = None
        self.scene = LifecycleScene(theme, self)
        self.scene.action_requested.connect(self.action_requested)
        self.scene.state_clicked.connect(self.state_clicked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 10, 6, 8)
        layout.setSpacing(6)
        layout.addLayout(self._build_header())
        scroll = detail_scroll(self, self._build_body)
        layout.addWidget(scroll, 1)
        self.show_overview(None, None, None, None, None)

    # --- building ----------------------------------------------------------------------

    def _build_header(self) -> QVBoxLayout:
        box = QVBoxLayout()
        box.setContentsMargins(0, 0, 6, 0)
        box.setSpacing(2)
        row, self.glyph, self.title = title_row(self, "detailTitle")
        box.addLayout(row)
        self.subtitle = QLabel(self)
        self.subtitle.setObjectName("detailSubtitle")
        self.subtitle.setProperty("role", "muted")
        self.subtitle.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        box.addWidget(self.subtitle)
        row = QHBoxLayout()
        row.setSpacing(4)
        row.setContentsMargins(0, 4, 0, 0)
        self.copy_id = tool_button(self, "Copy ID", "Copy the job id", lambda: self.copy_requested.emit("id"))
        self.copy_cli = tool_button(
            self,
            "Copy CLI",
            "Copy the postproject command that requests this job",
            lambda: self.copy_requested.emit("cli"),
        )
        self.provenance = tool_button(
            self,
            "Provenance",
            "Draw the provenance of what this job produced, else of its input (Ctrl+G)",
            self._provenance_clicked,
        )
        self.similar = tool_button(
            self,
            "Similar…",
            "Request a job like this one, to edit first (Ctrl+Shift+N)",
            lambda: self.action_requested.emit(SIMILAR),
        )
        self.similar.setObjectName("detailSimilar")
        self.farm = QPushButton("Retry…", self)
        self.farm.setObjectName("detailFarm")
        self.farm.clicked.connect(self._farm_clicked)
        self.cancel = QPushButton("Cancel job…", self)
        self.cancel.setObjectName("detailCancel")
        set_style_property(self.cancel, "danger", True)
        self.cancel.clicked.connect(lambda: self.action_requested.emit(Action.CANCEL.value))
        self.request = QPushButton("Request job…", self)
        self.request.setObjectName("detailRequest")
        self.request.setToolTip("Request a new job (Ctrl+N)")
        self.request.clicked.connect(lambda: self.action_requested.emit(Action.REQUEST.value))
        row.addWidget(self.copy_id)
        row.addWidget(self.copy_cli)
        row.addWidget(self.provenance)
        row.addWidget(self.similar)
        row.addStretch(1)
        # The action buttons sit beside the tools when the panel is wide enough, else on a
        # row of their own below them (see resizeEvent).
        self._actions = QWidget(self)
        actions = QHBoxLayout(self._actions)
        actions.setContentsMargins(0, 0, 0, 0)
        actions.setSpacing(4)
        actions.addWidget(self.farm)
        actions.addWidget(self.cancel)
        actions.addWidget(self.request)
        self._tools_row = row
        self._actions_row = QHBoxLayout()
        self._actions_row.setContentsMargins(0, 2, 0, 0)
        self._actions_row.addStretch(1)
        row.addWidget(self._actions)
        box.addLayout(row)
        box.addLayout(self._actions_row)
        return box

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._place_actions()
        self._fit_failure()

    def _fit_failure(self) -> None:
        """ "Why it failed" is as tall as its wrapped lines (at most FAILURE_HEIGHT), so that a
        short diagnostic leaves the lifecycle diagram below it in view."""
        box = self.failure
        lines = box.document().size().height()  # a plain text layout counts lines
        chrome = 2 * (box.frameWidth() + box.document().documentMargin())
        wanted = int(lines * box.fontMetrics().lineSpacing() + chrome) + 2
        height = max(box.fontMetrics().lineSpacing() * 2, min(FAILURE_HEIGHT, wanted))
        if box.height() != height:
            box.setFixedHeight(height)

    def _place_actions(self) -> None:
        """Tools and actions on one row when they fit, else the actions on a row below."""
        tools = sum(
            w.sizeHint().width() + 4 for w in (self.copy_id, self.copy_cli, self.provenance, self.similar)
        )
        wide = tools + self._actions.sizeHint().width() + 40 <= self.width()
        target = self._tools_row if wide else self._actions_row
        if target.indexOf(self._actions) < 0:
            (self._actions_row if wide else self._tools_row).removeWidget(self._actions)
            target.addWidget(self._actions)

    def _farm_clicked(self) -> None:
        if self._detail is not None and self._detail.job.state in FARM_BUTTON:
            self.action_requested.emit(FARM_BUTTON[self._detail.job.state][1])

    def _provenance_clicked(self) -> None:
        if self._detail is not None:
            self.provenance_requested.emit(str(self._detail.job.id))

    def _build_body(self, parent: QWidget) -> QWidget:
        body = QWidget(parent)
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 0, 6, 0)
        layout.setSpacing(4)
        self.failure_title = section_label("Why it failed", body)
        self.failure = QPlainTextEdit(body)
        self.failure.setObjectName("failureDiagnostic")
        self.failure.setAccessibleName("Failure diagnostic")
        self.failure.setReadOnly(True)
        self.failure.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)  # a long path too
        self.failure.setFixedHeight(FAILURE_HEIGHT)
        self.failure.document().documentLayout().documentSizeChanged.connect(
            lambda _size: self._fit_failure()
        )
        self.diagram = LifecycleView(self.scene, body)
        self.legend = QLabel(body)
        self.legend.setProperty("role", "muted")
        self.legend.setWordWrap(True)
        self.overview = QLabel(body)
        self.overview.setObjectName("overviewText")
        self.overview.setWordWrap(True)
        self.overview.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.facts_title = section_label("Facts", body)
        self.facts = JobFacts(body)
        self.facts.link_activated.connect(self.link_activated)
        self.attempt_model = RecordTableModel(
            ("#", "Outcome", "By", "Tool", "Claimed", "Ended", "Diagnostic"), self
        )
        self.attempts_title = section_label("Attempts", body)
        self.attempts_view = small_table(self.attempt_model, "jobAttempts", body)
        self.param_model = RecordTableModel(("Parameter", "Type", "Value"), self)
        self.params_title = section_label("Parameters", body)
        self.params_view = small_table(self.param_model, "jobParameters", body)
        self.history_model = RecordTableModel(("Rev", "Time", "Event", "By"), self)
        self.history_title = section_label("History", body)
        self.history_view = small_table(self.history_model, "jobHistory", body)
        self.why_title = section_label("Why is this job still requested?", body)
        self.why = QLabel(body)
        self.why.setObjectName("pendingReasons")
        self.why.setAccessibleName("Why is this job still requested?")
        self.why.setWordWrap(True)
        self.why.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.LinksAccessibleByMouse
        )
        self.why.linkActivated.connect(self.link_activated)
        self.log_title = section_label("Log", body)
        self.log_source = WrappedText(body)  # the log file's path: wraps, never widens the panel
        self.log_source.setObjectName("attemptLogSource")
        self.log_source.setAccessibleName("Log file")
        self.log_source.setProperty("role", "muted")
        self.log = QPlainTextEdit(body)
        self.log.setObjectName("attemptLog")
        self.log.setAccessibleName("Attempt log")
        self.log.setReadOnly(True)
        self.log.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.log.setProperty("role", "mono")
        self.log.setFixedHeight(160)
        self.cli_title = section_label("Command line", body)
        self.cli = QLabel(body)
        self.cli.setObjectName("cliLine")
        self.cli.setProperty("role", "mono")
        self.cli.setWordWrap(True)
        self.cli.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._job_only = (
            self.facts_title,
            self.facts,
            self.attempts_title,
            self.attempts_view,
            self.params_title,
            self.params_view,
            self.history_title,
            self.history_view,
            self.log_title,
            self.log_source,
            self.log,
            self.cli_title,
            self.cli,
        )
        for widget in (
            self.failure_title,
            self.failure,
            self.why_title,
            self.why,
            self.diagram,
            self.legend,
            self.overview,
            *self._job_only,
        ):
            layout.addWidget(widget)
        layout.addStretch(1)
        return body

    # --- showing -----------------------------------------------------------------------

    @property
    def mode(self) -> str:
        return "job" if self._detail is not None else "production"

    @property
    def detail(self) -> JobDetail | None:
        return self._detail

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        self.scene.set_theme(theme)
        self.facts.set_palette(theme.states)
        if self._detail is not None and self._now is not None:
            self._set_glyph(self._detail.job.state, self._now)

    def show_overview(
        self,
        info: ProductionInfo | None,
        counts: JobCounts | None,
        outlook: ClaimOutlook | None,
        now: datetime | None,
        highlighted: JobState | None,
    ) -> None:
        self._detail = None
        for widget in (
            self.copy_id,
            self.copy_cli,
            self.provenance,
            self.similar,
            self.farm,
            self.cancel,
            self.failure_title,
            self.failure,
            self.why_title,
            self.why,
            *self._job_only,
        ):
            widget.hide()
        self.overview.show()
        self.request.setVisible(info is not None)
        self.glyph.clear()
        self.glyph.hide()
        self.title.setText(production_location.name(info.location) if info else "No production open")
        self.subtitle.setText(
            info.shown if info else "Open a production (Ctrl+O) or drop a .pproj file here."
        )
        stuck = len(outlook.stuck(now, counts.kind if counts else None)) if outlook and now else 0
        expiring = len(outlook.expiring(now, counts.kind if counts else None)) if outlook and now else 0
        offered = lay.offered(None, PRODUCTION_ACTIONS) if info else ()
        self.scene.show_production(
            counts.by_state if counts else {},
            stuck=stuck,
            expiring=expiring,
            highlighted=highlighted,
            offered=offered,
        )
        self.legend.setText(
            "Live counts per state. Click a state to list its jobs; click “request” to request a job."
        )
        self.overview.setText(self._overview_text(info, counts))
        self._place_actions()

    def _overview_text(self, info: ProductionInfo | None, counts: JobCounts | None) -> str:
        if info is None:
            return ""
        total = (
            f"{counts.total:,} jobs" + (f" of kind {counts.kind}" if counts and counts.kind else "")
            if counts
            else "…"
        )
        return (
            f"<p><b>{total}</b> · production {info.id}</p>"
            "<p>Select a job to see every fact about it: inputs, output, claim and lease, "
            "why it failed, its parameters, its history and the path it took through the lifecycle.</p>"
        )

    def show_detail(self, detail: JobDetail, now: datetime, production: str | None) -> None:
        self._detail, self._production = detail, production
        job = detail.job
        self.request.hide()
        self.overview.hide()
        for widget in (
            self.copy_id,
            self.copy_cli,
            self.provenance,
            self.similar,
            self.cancel,
            *self._job_only,
        ):
            widget.show()
        farm = FARM_BUTTON.get(job.state)
        self.farm.setVisible(farm is not None and not (farm[1] == RETRY and job.retried_as is not None))
        if farm is not None:
            self.farm.setText(farm[0])
            self.farm.setToolTip(farm[2])
        self._show_attempts(detail, now)
        self._place_actions()
        self.title.setText(job.kind)
        self.subtitle.setText(str(job.id))
        self.facts.set_palette(self._theme.states)
        self.facts.show_detail(detail, now)
        diagnostic = job.failure.diagnostic if job.failure else None
        self.failure_title.setVisible(diagnostic is not None)
        self.failure.setVisible(diagnostic is not None)
        self.failure.setPlainText(diagnostic or "")
        self._fit_failure()
        self._show_pending(detail, now)
        self._show_log(detail)
        rows = [(a.property.name, *params.display(a.value)) for a in detail.parameters]
        tips = [(str(a.property), "", "") for a in detail.parameters]
        self.param_model.set_rows(rows, tips)
        self.params_title.setText("Parameters" if rows else "Parameters — none")
        self._fit_table(self.params_view, len(rows))
        history = [
            (str(h.sequence), timefmt.stamp(h.committed_at), h.event, by_whom(h.origin, h.message))
            for h in detail.history
        ]
        history_tips = [
            ("", "", "", "\n".join(x for x in (h.origin, h.message) if x)) for h in detail.history
        ]
        self.history_model.set_rows(history, history_tips)
        self._fit_table(self.history_view, len(history))
        self.cli.setText(cli_command.show(production, job.id) if production else "")
        offered = lay.offered(job.state, GUI_ACTIONS)
        self.cancel.setEnabled(any(t.action is Action.CANCEL for t in offered))
        self.cancel.setToolTip(
            "Cancel this job (Del). A live claim is fenced at once."
            if self.cancel.isEnabled()
            else f"A {job.state.value} job cannot be cancelled: it already finished."
        )
        self._health = detail.row.health(now)
        self.scene.show_job(job.state, lay.path_taken(h.event for h in detail.history), offered, self._health)
        self.legend.setText(
            "Blue arrows: the path this job took (×n: more than once). Bold box: where it is now. "
            "Buttons on arrows: what you can do now."
        )
        self.refresh_time(now)

    def _show_pending(self, detail: JobDetail, now: datetime) -> None:
        """Why it is still requested (``explain_pending``), each job named a link to it."""
        pending = detail.pending
        shown = pending is not None and detail.job.state is JobState.REQUESTED
        self.why_title.setVisible(shown)
        self.why.setVisible(shown)
        if pending is None or not shown:
            self.why.setText("")
            return
        self.why.setText(pending_text(pending, now))

    def _show_log(self, detail: JobDetail) -> None:
        """The newest attempt's log, kept scrolled to its end while the attempt runs."""
        log = detail.log
        self.log_title.setText(
            "Log — none yet" if log is None else f"Log — attempt {log.attempt}{' (live)' if log.live else ''}"
        )
        self.log_source.setText(log.source if log is not None else "")
        self.log_source.setVisible(log is not None)
        self.log.setVisible(log is not None)
        text = log.text if log is not None else ""
        if text != self.log.toPlainText():
            bar = self.log.verticalScrollBar()
            at_end = bar.value() >= bar.maximum() - 2
            self.log.setPlainText(text)
            if at_end or (log is not None and log.live):
                bar.setValue(bar.maximum())

    def _show_attempts(self, detail: JobDetail, now: datetime) -> None:
        rows, tips = [], []
        claim = detail.job.claim
        for a in reversed(detail.job.attempts):  # the newest first
            by = a.worker or (str(a.agent) if a.agent else "—")
            expires = claim.expires_at if claim is not None and claim.attempt == a.number else None
            outcome = attempts_text.outcome_text(a, expires, now)
            if a.stopping:
                outcome = "cancelling…" if a.outcome is AttemptOutcome.CANCELLED else "stopping…"
            elif outcome == "running" and a.progress is not None and a.progress.fraction is not None:
                outcome = f"running · {a.progress.fraction * 100:.0f}%"
            ended = timefmt.stamp(a.ended_at) if a.ended_at else ""
            diagnostic = attempts_text.diagnostic_text(a)
            first = diagnostic.strip().splitlines()[0] if diagnostic.strip() else ""
            rows.append((str(a.number), outcome, by, str(a.tool), timefmt.stamp(a.claimed_at), ended, first))
            who = f"worker {a.worker}" if a.worker else f"agent {a.agent or 'not given'}"
            tips.append(("", "", f"{who}\n{a.agent or ''}".strip(), "", "", "", diagnostic[:2000]))
        self.attempt_model.set_rows(rows, tips)
        limit = detail.job.max_attempts
        self.attempts_title.setText(
            (f"Attempts — {len(rows)} of at most {limit}" if limit is not None else f"Attempts — {len(rows)}")
            if rows
            else "Attempts — none yet"
        )
        self._fit_table(self.attempts_view, len(rows))

    def show_missing(self, job_id: str) -> None:
        self.show_overview(None, None, None, None, None)
        self.title.setText("Job not found")
        self.subtitle.setText(job_id)

    def refresh_time(self, now: datetime) -> None:
        self._now = now
        if self._detail is None:
            return
        self.facts.refresh_time(now)
        self._show_pending(self._detail, now)  # "in 2h 10m" moves with the clock
        health = self._detail.row.health(now)
        if health is not self._health:  # the lease ran out (or is about to): redraw the badge
            state = self.scene.state
            self._health = health
            self.scene.show_job(
                self._detail.job.state,
                lay.path_taken(h.event for h in self._detail.history),
                state.offered,
                health,
            )
        self._set_glyph(self._detail.job.state, now)

    def _set_glyph(self, state: JobState, now: datetime) -> None:
        assert self._detail is not None
        self.glyph.show()
        health = self._detail.row.health(now)
        self.glyph.setPixmap(state_icon(state, health, self._theme.states).pixmap(18, 18))
        self.glyph.setToolTip(STATE_LOOKS[state].label)

    def _fit_table(self, view: QTableView, rows: int) -> None:
        view.setVisible(rows > 0)
        view.setFixedHeight(view.horizontalHeader().sizeHint().height() + rows * 20 + 4)
