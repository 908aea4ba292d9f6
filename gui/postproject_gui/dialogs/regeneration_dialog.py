"""Preview regeneration before anything is requested.

The dialog lists each proposed job (which artifact it replaces, its kind, inputs, output,
target root and parameters) and the artifacts that cannot be planned with the reason. When
some cannot be planned, "Enqueue" stays disabled until the user ticks "Enqueue the
plannable ones anyway", so a partial regeneration is always a deliberate choice.

Jobs are listed in dependency order (steps): an input that another listed plan regenerates
is bound to that plan's job output (``plan_bindings``), so its job waits for that step and
works from what it made; the Inputs column says so ("output of step 1 ...").

``ask`` returns exactly the plans to enqueue (all of the previewed ones, in step order) or
None; the caller enqueues them as one dependency graph (``Transaction.enqueue_plans``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from postproject import DownstreamRegeneration, RegenerationPlan, RepresentationId, Unplannable
from postproject.knowledge.regeneration import plan_bindings
from postproject_gui.look.artifact_states import kind_name, short_id
from postproject_gui.models.record_model import RecordTableModel
from postproject_gui.services.artifact_rows import ArtifactRow
from postproject_gui.text import params

PLAN_HEADERS = ("Step", "Replaces", "Job kind", "Inputs", "Output", "Target root", "Parameters")
MAX_COLUMN = 280  # px; longer cells are elided in the middle (full text in the tooltip)
UNPLANNABLE_HEADERS = ("Artifact", "Why it cannot be planned")
WHY = {
    "producing_activity_missing": "No recorded activity produced it, so there is nothing to repeat",
    "producing_activity_ambiguous": "Several activities produced it; which one to repeat is ambiguous",
    "not_found": "It no longer exists",
}
Rows = Mapping[RepresentationId, ArtifactRow]


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def representation_text(rep_id: RepresentationId, rows: Rows, *, with_path: bool = False) -> str:
    """``A001_C002.mov (original)``, or with ``with_path`` ``A001_C002 · proxy`` over its path
    on a second line; the short id when the representation is not in ``rows``."""
    row = rows.get(rep_id)
    if row is None:
        return f"representation {short_id(rep_id)}"
    return (
        f"{row.label}\n{row.display_path}"
        if with_path
        else f"{row.file_name} ({row.representation.kind.value})"
    )


def parameters_text(plan: RegenerationPlan) -> tuple[str, str]:
    """(one ``name = value`` line per parameter, a tooltip with vocabularies and types)."""
    if not plan.parameters:
        return "none recorded", "The producing activity recorded no parameters"
    short, full = [], []
    for assertion in plan.parameters:
        kind, text = params.display(assertion.value)
        short.append(f"{assertion.property.name} = {text}")
        full.append(f"{assertion.property} = {text}  ({kind})")
    return "\n".join(short), "\n".join(full)


def dependency_order(plans: Sequence[RegenerationPlan]) -> tuple[RegenerationPlan, ...]:
    """``plans`` with each plan after the plans whose output it is bound to (stable: plans
    that do not depend on each other keep their order; a cycle keeps the rest in order)."""
    bindings = plan_bindings(plans)
    index = {plan.artifact_id: n for n, plan in enumerate(plans)}
    done: set[int] = set()
    order: list[int] = []
    remaining = list(range(len(plans)))
    while remaining:
        ready = [n for n in remaining if all(index[i] in done for i in bindings[n])] or remaining[:1]
        first = ready[0]
        order.append(first)
        done.add(first)
        remaining.remove(first)
    return tuple(plans[n] for n in order)


def plan_record(
    plan: RegenerationPlan, rows: Rows, step: int = 1, steps: Mapping[RepresentationId, int] | None = None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The table cells of a plan (``step`` in dependency order; ``steps``: the step that
    regenerates each artifact regenerated with it), and their tooltips."""
    job = plan.job
    steps = steps or {}
    artifact = rows.get(plan.artifact_id)
    asset = artifact.asset_name if artifact is not None and artifact.asset_id == job.output_asset_id else None
    output = f"{asset or short_id(job.output_asset_id)} · {job.output_representation_kind.value}"
    superseded = {s.input_id: s.current_id for s in plan.superseded_inputs}

    def input_text(rep_id: RepresentationId) -> str:
        if rep_id in steps and rep_id != plan.artifact_id:
            row = rows.get(rep_id)
            kind = row.representation.kind.value if row is not None else "artifact"
            return f"output of step {steps[rep_id]} (new {kind})"
        if rep_id in superseded:
            return f"{representation_text(rep_id, rows)} — superseded"
        return representation_text(rep_id, rows)

    def input_tip(rep_id: RepresentationId) -> str:
        text = f"{representation_text(rep_id, rows, with_path=True)}\n  {rep_id}"
        if rep_id in steps and rep_id != plan.artifact_id:
            text += f"\n  bound to step {steps[rep_id]}'s output: this job waits for it"
        elif rep_id in superseded:
            text += f"\n  superseded by {superseded[rep_id]}"
        return text

    inputs = "\n".join(input_text(i) for i in job.representation_inputs) or "none"
    waits = sorted({steps[i] for i in job.representation_inputs if i in steps and i != plan.artifact_id})
    parameters, parameters_tip = parameters_text(plan)
    cells = (
        str(step) + (f" ← {', '.join(map(str, waits))}" if waits else ""),
        representation_text(plan.artifact_id, rows, with_path=True),
        kind_name(job.kind),
        inputs,
        output,
        job.target_root or "—",
        parameters,
    )
    tips = (
        f"Step {step}" + (f": runs after step {', '.join(map(str, waits))}" if waits else ": runs first"),
        f"Replaces representation {plan.artifact_id}",
        f"{job.kind}\nRepeats activity {plan.activity_id}",
        "\n".join(input_tip(i) for i in job.representation_inputs) or "No inputs",
        f"A new {job.output_representation_kind.value} of asset {job.output_asset_id}",
        "The media root the output is written under"
        if job.target_root
        else "No target root: the worker decides",
        parameters_tip,
    )
    return cells, tips


class RegenerationDialog(QDialog):
    """The preview; see the module docstring."""

    def __init__(
        self,
        plans: Sequence[RegenerationPlan],
        unplannable: Sequence[Unplannable] = (),
        rows: Rows | None = None,
        *,
        truncated: bool = False,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("regenerationDialog")
        self.setWindowTitle("Regenerate " + plural(len(plans) + len(unplannable), "artifact"))
        self.setMinimumWidth(980)
        self.plans, self.unplannable = dependency_order(plans), tuple(unplannable)
        rows = rows or {}
        self.summary = QLabel(self._summary(truncated), self)
        self.summary.setObjectName("regenerationSummary")
        self.summary.setWordWrap(True)
        steps = {p.artifact_id: n for n, p in enumerate(self.plans, start=1)}
        records = [plan_record(p, rows, n, steps) for n, p in enumerate(self.plans, start=1)]
        self.plan_model = RecordTableModel(PLAN_HEADERS, self)
        self.plan_model.set_rows([cells for cells, _ in records], [tips for _, tips in records])
        self.plan_table = self._table("regenerationPlans", "Jobs that will be requested", self.plan_model)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.plan_table)
        self.unplannable_model = RecordTableModel(UNPLANNABLE_HEADERS, self)
        self.anyway = QCheckBox("Enqueue the &plannable ones anyway", self)
        self.anyway.setObjectName("enqueueAnyway")
        if self.unplannable:
            caption = QLabel("Cannot be planned", self)
            caption.setProperty("role", "warning")
            self.unplannable_model.set_rows(
                [(representation_text(u.artifact_id, rows, with_path=True), WHY.get(u.code, u.message))
                 for u in self.unplannable],
                [(str(u.artifact_id), f"{u.code}: {u.message}") for u in self.unplannable],
            )  # fmt: skip
            self.unplannable_table = self._table(
                "unplannableArtifacts", "Artifacts that cannot be planned", self.unplannable_model
            )
            layout.addWidget(caption)
            layout.addWidget(self.unplannable_table)
            layout.addWidget(self.anyway)
        else:
            self.anyway.hide()
        self.buttons = QDialogButtonBox(self)
        self.cancel = self.buttons.addButton("Cancel", QDialogButtonBox.ButtonRole.RejectRole)
        self.enqueue = self.buttons.addButton(
            "Enqueue " + plural(len(self.plans), "job"), QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.enqueue.setObjectName("enqueueButton")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.anyway.toggled.connect(self._update_buttons)
        layout.addStretch(1)
        layout.addWidget(self.buttons)
        wanted = sum(self.plan_table.columnWidth(c) for c in range(len(PLAN_HEADERS))) + 40
        self.resize(max(self.minimumWidth(), min(wanted, 1400)), layout.minimumSize().height())
        self._update_buttons()
        (self.anyway if self.unplannable and self.plans else self.enqueue).setFocus()

    def _summary(self, truncated: bool) -> str:
        n = len(self.plans)
        if n:
            text = (
                f"{plural(n, 'job')} will be requested in one transaction, in the order of their steps. Each "
                "repeats the activity that made the artifact: same kind, inputs, output asset and kind, "
                "target root and parameters; an input regenerated by an earlier step is that step's new "
                "output (the job waits for it)."
            )
        else:
            text = "Nothing can be planned."
        if self.unplannable:
            text += f"\n{plural(len(self.unplannable), 'artifact')} cannot be planned (listed below)."
            if n:
                text += " Tick “Enqueue the plannable ones anyway” to go ahead without them."
        if truncated:
            text += "\nThe stale descendants were too many to list in full; plan again once these have run."
        return text

    def _table(self, name: str, accessible: str, model: RecordTableModel) -> QTableView:
        table = QTableView(self)
        table.setObjectName(name)
        table.setAccessibleName(accessible)
        table.setModel(model)
        table.verticalHeader().hide()
        table.setWordWrap(False)
        table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setShowGrid(False)
        table.setAlternatingRowColors(True)
        table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        header = table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        table.resizeColumnsToContents()
        for column in range(model.columnCount()):
            table.setColumnWidth(column, min(table.columnWidth(column) + 16, MAX_COLUMN))
        table.resizeRowsToContents()
        for row in range(model.rowCount()):
            table.setRowHeight(row, table.rowHeight(row) + 6)
        rows = sum(table.rowHeight(r) for r in range(min(model.rowCount(), 12)))
        table.setFixedHeight(min(420, header.sizeHint().height() + rows + 2 * table.frameWidth() + 2))
        return table

    def _update_buttons(self) -> None:
        allowed = self.selected_plans() is not None
        self.enqueue.setEnabled(allowed)
        self.enqueue.setDefault(allowed)
        self.cancel.setDefault(not allowed)

    def selected_plans(self) -> tuple[RegenerationPlan, ...] | None:
        """The plans "Enqueue" would return now (None while it is disabled)."""
        if not self.plans or (self.unplannable and not self.anyway.isChecked()):
            return None
        return self.plans

    @classmethod
    def ask(
        cls,
        parent: QWidget | None,
        plans: Sequence[RegenerationPlan],
        unplannable: Sequence[Unplannable] = (),
        *,
        rows: Rows | None = None,
        truncated: bool = False,
    ) -> tuple[RegenerationPlan, ...] | None:
        """Preview ``plans``; the plans to enqueue, or None when the user cancels.

        ``rows`` name the artifacts and inputs (else short ids are shown); ``truncated``
        says the downstream walk was cut off.
        """
        dialog = cls(plans, unplannable, rows, truncated=truncated, parent=parent)
        try:
            if dialog.exec() != QDialog.DialogCode.Accepted:
                return None
            return dialog.selected_plans()
        finally:
            dialog.deleteLater()

    @classmethod
    def ask_downstream(
        cls, parent: QWidget | None, downstream: DownstreamRegeneration, *, rows: Rows | None = None
    ) -> tuple[RegenerationPlan, ...] | None:
        """``ask`` for "everything stale downstream of this changed original"."""
        return cls.ask(
            parent, downstream.plans, downstream.unplannable, rows=rows, truncated=downstream.truncated
        )
