"""Confirmations of the farm actions (retry, requeue, finalise lost work) and the priority
dialog: what will happen, to which jobs, and the equivalent ``postproject`` command (with a
button that copies it). ``ask`` returns True (or the priority) to go ahead."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from postproject.model.jobs import MAX_PRIORITY, MIN_PRIORITY
from postproject_gui.look.theme import set_style_property
from postproject_gui.models.columns import short_id
from postproject_gui.services.types import JobRow

MAX_LISTED = 8  # jobs named in a confirmation before "and N more"


def job_list(rows: Sequence[JobRow]) -> str:
    """``…a1b2c3d4 (generate-proxy), …`` for the first few rows."""
    named = [
        f"{short_id(str(r.id))} ({r.job.kind.partition(':')[2] or r.job.kind})" for r in rows[:MAX_LISTED]
    ]
    more = f" and {len(rows) - MAX_LISTED:,} more" if len(rows) > MAX_LISTED else ""
    return ", ".join(named) + more


class _CommandDialog(QDialog):
    """A heading, a message, the equivalent command (selectable, copyable) and two buttons."""

    def __init__(
        self,
        name: str,
        title: str,
        message: str,
        command: str,
        go: str,
        *,
        danger: bool = False,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setWindowTitle(title)
        self.setMinimumWidth(560)
        self.heading = QLabel(title, self)
        self.heading.setStyleSheet("font-size: 12pt; font-weight: 600;")
        self.message = QLabel(message, self)
        self.message.setObjectName(f"{name}Message")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.form = QFormLayout()
        self.command = QLabel(command, self)
        self.command.setObjectName(f"{name}Command")
        self.command.setProperty("role", "muted")
        self.command.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.command.setWordWrap(True)
        self.command.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.buttons = QDialogButtonBox(self)
        self.copy = self.buttons.addButton("Copy command", QDialogButtonBox.ButtonRole.ActionRole)
        self.copy.setObjectName("copyCommand")
        self.copy.setToolTip("Copy the equivalent postproject command")
        self.copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.command.text()))
        self.keep = self.buttons.addButton("Cancel", QDialogButtonBox.ButtonRole.RejectRole)
        self.go = self.buttons.addButton(go, QDialogButtonBox.ButtonRole.AcceptRole)
        self.go.setObjectName(f"{name}Confirm")
        if danger:
            set_style_property(self.go, "danger", True)
            self.keep.setDefault(True)  # Enter keeps; a disruptive action needs a deliberate click
        else:
            self.go.setDefault(True)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(self.message)
        layout.addLayout(self.form)
        layout.addWidget(self.command)
        layout.addWidget(self.buttons)


class ConfirmDialog(_CommandDialog):
    @classmethod
    def ask(
        cls,
        parent: QWidget | None,
        name: str,
        title: str,
        message: str,
        command: str,
        go: str,
        danger: bool = False,
    ) -> bool:
        dialog = cls(name, title, message, command, go, danger=danger, parent=parent)
        try:
            return dialog.exec() == QDialog.DialogCode.Accepted
        finally:
            dialog.deleteLater()


class PriorityDialog(_CommandDialog):
    """Choose a priority for requested jobs (-1000 to 1000, higher is claimed first)."""

    def __init__(self, rows: Sequence[JobRow], command: str, parent: QWidget | None = None) -> None:
        n = len(rows)
        current = sorted({r.job.priority for r in rows})
        now = f"now {current[0]}" if len(current) == 1 else f"now {current[0]} to {current[-1]}"
        super().__init__(
            "priorityDialog",
            f"Change the priority of {n} job{'s' if n != 1 else ''}",
            f"Requested jobs are claimed highest priority first, then the longest waiting; {now}. "
            f"Jobs: {job_list(rows)}.",
            command,
            "Set priority",
            parent=parent,
        )
        self._template = command
        self.priority = QSpinBox(self)
        self.priority.setObjectName("prioritySpin")
        self.priority.setAccessibleName("Priority")
        self.priority.setRange(MIN_PRIORITY, MAX_PRIORITY)
        self.priority.setValue(current[-1])
        self.priority.setToolTip(
            f"{MIN_PRIORITY} to {MAX_PRIORITY}; 0 is the default, higher is claimed first"
        )
        self.priority.valueChanged.connect(self._preview)
        self.form.addRow("&Priority", self.priority)
        self._preview(self.priority.value())
        self.priority.setFocus()
        self.priority.selectAll()

    def _preview(self, value: int) -> None:
        self.command.setText(self._template.replace("{PRIORITY}", str(value)))

    @classmethod
    def ask(cls, parent: QWidget | None, rows: Sequence[JobRow], command: str) -> int | None:
        """The priority chosen, or None when cancelled (``{PRIORITY}`` in ``command`` is
        replaced by the value as it changes)."""
        dialog = cls(rows, command, parent)
        try:
            return dialog.priority.value() if dialog.exec() == QDialog.DialogCode.Accepted else None
        finally:
            dialog.deleteLater()
