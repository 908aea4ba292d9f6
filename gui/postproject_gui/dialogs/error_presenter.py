"""The one place errors from actions end up: error code -> title, text, severity.

Everything that can fail in the background (service calls started from slots) reports here
through :meth:`ErrorPresenter.present`; nothing else catches broad exceptions. Messages
come from the core's errors (which name the offending field and value and never contain a
lease token); unexpected exceptions are shown as bugs with their traceback as details.
"""

from __future__ import annotations

import enum
import logging
import traceback
from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QMessageBox, QWidget

from postproject import ErrorCode, PostProjectError, Reason

log = logging.getLogger(__name__)


class Severity(enum.Enum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class Presentation:
    title: str
    text: str
    severity: Severity
    detail: str = ""
    retry: bool = False  # trying again later may work (a busy database)


_BY_CODE: dict[ErrorCode, tuple[str, str, Severity]] = {
    ErrorCode.INVALID_ARGUMENT: ("Not a valid request", "Check the highlighted values.", Severity.WARNING),
    ErrorCode.NOT_FOUND: (
        "Not found",
        "It may refer to something that does not exist here.",
        Severity.WARNING,
    ),
    ErrorCode.ALREADY_EXISTS: ("Already exists", "Nothing was changed.", Severity.WARNING),
    ErrorCode.CONFLICT: (
        "Changed meanwhile",
        "The job changed before your action reached it. Nothing was changed; the list shows its current state.",
        Severity.WARNING,
    ),
    ErrorCode.IO: ("File problem", "A file could not be read or written.", Severity.ERROR),
    ErrorCode.STORAGE: ("Production unavailable", "The production file could not be used.", Severity.ERROR),
    ErrorCode.MIGRATION: ("Cannot upgrade", "The production's schema could not be migrated.", Severity.ERROR),
    ErrorCode.UNSUPPORTED: ("Not supported", "This version cannot do that.", Severity.WARNING),
    ErrorCode.INTERNAL: ("Internal error", "PostProject hit an internal error.", Severity.ERROR),
}
_BY_REASON: dict[Reason, tuple[str, str, bool]] = {
    Reason.BUSY: ("Production busy", "Another program is writing to it. Try again in a moment.", True),
    Reason.READ_ONLY: ("Read-only production", "This production cannot be changed from here.", False),
    Reason.LEASE_LOST: ("Lease lost", "The worker's lease ended before the change landed.", False),
    Reason.JOB_FINISHED: ("Already finished", "The job finished before your action reached it.", False),
    Reason.CLOCK_REGRESSED: ("Clock moved backward", "Retry when the system clock has caught up.", True),
    Reason.NOT_A_PRODUCTION: ("Not a production", "The file is not a PostProject production.", False),
}


def describe(exc: BaseException, action: str) -> Presentation:
    """How to tell the user that ``action`` failed with ``exc``."""
    if isinstance(exc, PostProjectError):
        title, hint, severity = _BY_CODE[exc.code]
        retry = False
        if exc.reason is not None and exc.reason in _BY_REASON:
            title, hint, retry = _BY_REASON[exc.reason]
        return Presentation(
            f"{action} failed: {title.lower()}", f"{exc.message}\n\n{hint}", severity, "", retry
        )
    if isinstance(exc, OSError):
        return Presentation(f"{action} failed: file problem", str(exc), Severity.ERROR)
    detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return Presentation(
        f"{action} failed: unexpected error",
        f"{type(exc).__name__}: {exc}\n\nThis is a bug in PostProject Monitor; the details help to fix it.",
        Severity.ERROR,
        detail,
    )


class ErrorPresenter(QObject):
    """Shows failures to the user (dialogs) or on stderr (headless snapshot runs).

    Signals:
        presented(str): the one-line summary of each failure shown (the status bar shows it).
    """

    presented = Signal(str)

    def __init__(self, parent_widget: QWidget | None = None, *, interactive: bool = True) -> None:
        super().__init__(parent_widget)
        self._widget = parent_widget
        self._interactive = interactive
        self.last: Presentation | None = None

    def set_widget(self, widget: QWidget | None) -> None:
        self._widget = widget

    def present(self, exc: BaseException, action: str) -> Presentation:
        shown = describe(exc, action)
        self.last = shown
        # Expected failures are shown to the user (or, headless, reported by the snapshot);
        # only the unexpected ones are logged as errors, with their traceback, for a bug report.
        expected = isinstance(exc, PostProjectError)
        log.log(
            logging.INFO if expected else logging.ERROR, "%s: %s", shown.title, exc, exc_info=not expected
        )
        self.presented.emit(f"{shown.title}: {shown.text.splitlines()[0]}")
        if self._interactive:
            self.show(self._widget, shown)
        return shown

    @classmethod
    def show(cls, parent: QWidget | None, shown: Presentation) -> None:
        """Open a non-blocking message box (tests replace this)."""
        icons = {
            Severity.INFO: QMessageBox.Icon.Information,
            Severity.WARNING: QMessageBox.Icon.Warning,
            Severity.ERROR: QMessageBox.Icon.Critical,
        }
        box = QMessageBox(
            icons[shown.severity], shown.title, shown.text, QMessageBox.StandardButton.Ok, parent
        )
        box.setObjectName("errorMessage")
        if shown.detail:
            box.setDetailedText(shown.detail)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
