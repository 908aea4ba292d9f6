"""Confirm a cancel: list what will be cancelled, which live claims will be fenced, and what
is skipped because it already finished. ``ask`` returns True to go ahead."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from postproject import Action, JobState
from postproject.model.lifecycle import sources
from postproject_gui.look.states import ClaimHealth
from postproject_gui.look.theme import set_style_property
from postproject_gui.models.columns import short_id
from postproject_gui.models.record_model import RecordTableModel
from postproject_gui.services.types import JobRow
from postproject_gui.text import timefmt

MAX_SHOWN = 14  # rows listed without scrolling


@dataclass(frozen=True, slots=True)
class CancelPlan:
    """Which selected jobs can be cancelled, which hold live claims, which are skipped."""

    cancellable: tuple[JobRow, ...]
    fenced: tuple[JobRow, ...]  # claimed with a live (unexpired) lease
    skipped: tuple[JobRow, ...]  # already finished

    @classmethod
    def of(cls, rows: Sequence[JobRow], now: datetime) -> CancelPlan:
        legal = sources(Action.CANCEL)
        cancellable = tuple(r for r in rows if r.job.state in legal)
        fenced = tuple(r for r in cancellable if r.health(now) in (ClaimHealth.LIVE, ClaimHealth.EXPIRING))
        skipped = tuple(r for r in rows if r.job.state not in legal)
        return cls(cancellable, fenced, skipped)


def summary(plan: CancelPlan) -> str:
    n = len(plan.cancellable)
    text = f"{n} job{'s' if n != 1 else ''} will be cancelled in one transaction."
    if plan.fenced:
        holders = sorted({str(r.job.claim.agent or r.job.claim.tool) for r in plan.fenced if r.job.claim})
        text += (
            f"\n{len(plan.fenced)} {'is' if len(plan.fenced) == 1 else 'are'} claimed with a live lease "
            f"(held by {', '.join(holders)}): the lease is fenced at once and the worker's later writes will fail."
        )
    if plan.skipped:
        text += f"\n{len(plan.skipped)} already finished and will be left as they are."
    return text


class CancelDialog(QDialog):
    def __init__(self, plan: CancelPlan, now: datetime, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("cancelDialog")
        n = len(plan.cancellable)
        self.setWindowTitle(f"Cancel {n} job{'s' if n != 1 else ''}?")
        self.setMinimumWidth(640)
        self.plan = plan
        self.heading = QLabel(self.windowTitle(), self)
        self.heading.setObjectName("cancelHeading")
        self.heading.setStyleSheet("font-size: 12pt; font-weight: 600;")
        self.message = QLabel(summary(plan), self)
        self.message.setObjectName("cancelSummary")
        self.message.setWordWrap(True)
        self.model = RecordTableModel(("Job", "Kind", "State", "Held by", "Lease"), self)
        rows = []
        for row in (*plan.cancellable, *plan.skipped):
            claim = row.job.claim if row.job.state is JobState.CLAIMED else None
            held = ((f"{claim.agent} · " if claim.agent else "") + str(claim.tool)) if claim else ""
            lease = timefmt.countdown(claim.expires_at, now) if claim else ""
            verdict = row.state_text(now) + ("" if row in plan.cancellable else " — skipped")
            rows.append((short_id(str(row.id)), row.job.kind, verdict, held, lease))
        self.model.set_rows(rows, [(str(r.id),) for r in (*plan.cancellable, *plan.skipped)])
        self.table = QTableView(self)
        self.table.setObjectName("cancelList")
        self.table.setAccessibleName("Jobs to cancel")
        self.table.setModel(self.model)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(20)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setShowGrid(False)
        self._fit_rows(len(rows))
        buttons = QDialogButtonBox(self)
        self.keep = buttons.addButton("Keep them", QDialogButtonBox.ButtonRole.RejectRole)
        self.confirm = buttons.addButton(
            f"Cancel {n} job{'s' if n != 1 else ''}", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.confirm.setObjectName("confirmCancel")
        set_style_property(self.confirm, "danger", True)
        self.keep.setDefault(True)  # Enter keeps; cancelling needs a deliberate click
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(self.message)
        layout.addWidget(self.table)
        layout.addWidget(buttons)

    def _fit_rows(self, count: int) -> None:
        """As tall as its rows (up to MAX_SHOWN of them), so a short list shows every row with
        no scroll bar; a longer one scrolls."""
        table = self.table
        shown = min(count, MAX_SHOWN)
        height = (
            table.horizontalHeader().sizeHint().height()
            + shown * table.verticalHeader().defaultSectionSize()
            + 2 * table.frameWidth()
        )
        if count <= MAX_SHOWN:
            table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
            table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
            table.setFixedHeight(height)
        else:
            table.setMinimumHeight(height // 2)
            table.setMaximumHeight(height)

    @classmethod
    def ask(cls, parent: QWidget | None, rows: Sequence[JobRow], now: datetime) -> bool:
        """Confirm cancelling ``rows``; False when the user keeps them or nothing can be cancelled."""
        plan = CancelPlan.of(rows, now)
        if not plan.cancellable:
            return False
        dialog = cls(plan, now, parent)
        try:
            return dialog.exec() == QDialog.DialogCode.Accepted
        finally:
            dialog.deleteLater()
