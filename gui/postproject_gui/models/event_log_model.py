"""The event log: one row per revision as it arrives from the feed, newest first.

Rows keep a compact summary of each revision, not its events: one bulk request can carry
tens of thousands of events, and the log only shows what and how many. Older revisions
(the first rows, and more as the view scrolls to the bottom) come from
``Production.revisions`` summaries, which carry event counts per kind and no events.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, Qt

from postproject import Revision, RevisionSummary
from postproject_gui.models import roles
from postproject_gui.models.columns import short_id
from postproject_gui.models.flat_table import AnyIndex, FlatTableModel
from postproject_gui.text import timefmt

MAX_ROWS = 5000
OLDER_PAGE = 50  # revisions read per scroll to the bottom
OlderLoader = Callable[[int], None]  # asks for the revisions before this sequence
HEADERS = ("Rev", "Time", "Events", "Subject", "Origin")
TIPS = (
    "Revision sequence",
    "When it was committed (local time)",
    "What changed",
    "The object it changed, when there is one",
    "Application that made the change, its message, and who it acted for (a service token's name)",
)


@dataclass(frozen=True, slots=True)
class LogEntry:
    """What the log shows of one revision."""

    sequence: int
    committed_at: datetime
    origin: str | None
    message: str | None
    summary: str
    subject: str | None  # the one object all events are about, if there is one
    job: str | None  # that subject, when every event is a job event
    events: int
    detail: str  # the first events, for the tooltip
    principal: str | None = None  # who the change was made for (the service's token name)

    @classmethod
    def of(cls, revision: Revision | RevisionSummary) -> LogEntry:
        if isinstance(revision, RevisionSummary):
            return cls.of_summary(revision)
        about = subject(revision)
        jobs_only = all(e.kind.startswith("job_") for e in revision.events)
        detail = "\n".join(f"{e.kind} {e.subject or ''}" for e in revision.events[:30])
        return cls(
            revision.sequence,
            revision.committed_at,
            revision.origin,
            revision.message,
            summary(revision),
            about,
            about if about and jobs_only else None,
            len(revision.events),
            detail,
            revision.principal,
        )

    @classmethod
    def of_summary(cls, revision: RevisionSummary) -> LogEntry:
        counts = revision.event_counts
        jobs_only = bool(counts) and all(kind.startswith("job_") for kind in counts)
        return cls(
            revision.sequence,
            revision.committed_at,
            revision.origin,
            revision.message,
            counted(counts),
            revision.subject,
            revision.subject if jobs_only else None,
            sum(counts.values()),
            "\n".join(f"{kind} ×{n:,}" for kind, n in counts.items()),
            revision.principal,
        )


def summary(revision: Revision) -> str:
    """``job_claimed ×3, job_failed``."""
    return counted(Counter(event.kind for event in revision.events))


def counted(counts: Mapping[str, int]) -> str:
    return ", ".join(kind if n == 1 else f"{kind} ×{n:,}" for kind, n in counts.items()) or "(no events)"


def subject(revision: Revision) -> str | None:
    """The one object all events are about, if there is exactly one."""
    subjects = {event.subject for event in revision.events}
    return next(iter(subjects)) if len(subjects) == 1 else None


class EventLogModel(FlatTableModel):
    """Revisions, newest first, capped at :data:`MAX_ROWS`; older ones load on scrolling
    through the loader (:meth:`set_loader`, answered by :meth:`older_loaded`)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(HEADERS, TIPS, parent)
        self._revisions: list[LogEntry] = []
        self._loader: OlderLoader | None = None
        self._loading = False
        self._oldest_read = False

    def set_loader(self, loader: OlderLoader | None) -> None:
        self._loader = loader

    def canFetchMore(self, parent: AnyIndex = QModelIndex()) -> bool:  # noqa: B008
        bottom = self._revisions[-1].sequence if self._revisions else 0
        return (
            not parent.isValid()
            and self._loader is not None
            and not self._loading
            and not self._oldest_read
            and bottom > 1
            and len(self._revisions) < MAX_ROWS
        )

    def fetchMore(self, parent: AnyIndex = QModelIndex()) -> None:  # noqa: B008
        if self.canFetchMore(parent) and self._loader is not None:
            self._loading = True
            self._loader(self._revisions[-1].sequence)

    def older_loaded(self, revisions: Sequence[RevisionSummary], asked: int) -> None:
        """The loader's answer: up to :data:`OLDER_PAGE` revisions before ``asked``."""
        self._loading = False
        self._oldest_read = len(revisions) < OLDER_PAGE or asked <= 1
        self.add(revisions)

    def older_failed(self) -> None:
        self._loading = False

    def add(self, revisions: Sequence[Revision | RevisionSummary]) -> None:
        """Add revisions (any order): newer ones go on top, older ones at the bottom."""
        top = self._revisions[0].sequence if self._revisions else -1
        bottom = self._revisions[-1].sequence if self._revisions else -1
        newer = sorted((LogEntry.of(r) for r in revisions if r.sequence > top), key=lambda r: -r.sequence)
        older = sorted(
            (LogEntry.of(r) for r in revisions if 0 <= r.sequence < bottom), key=lambda r: -r.sequence
        )
        if newer:
            self.beginInsertRows(QModelIndex(), 0, len(newer) - 1)
            self._revisions[:0] = newer
            self.endInsertRows()
        if older:
            end = len(self._revisions)
            self.beginInsertRows(QModelIndex(), end, end + len(older) - 1)
            self._revisions.extend(older)
            self.endInsertRows()
        if len(self._revisions) > MAX_ROWS:
            self.beginRemoveRows(QModelIndex(), MAX_ROWS, len(self._revisions) - 1)
            del self._revisions[MAX_ROWS:]
            self.endRemoveRows()

    def clear(self) -> None:
        self.beginResetModel()
        self._revisions.clear()
        self._oldest_read = False
        self.endResetModel()

    def entry(self, row: int) -> LogEntry:
        return self._revisions[row]

    def row_total(self) -> int:
        return len(self._revisions)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self._revisions):
            return None
        revision = self._revisions[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(revision, index.column())
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tip(revision, index.column())
        if role == Qt.ItemDataRole.TextAlignmentRole and index.column() == 0:
            return Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        if role == roles.SEQUENCE_ROLE:
            return revision.sequence
        if role == roles.JOB_ID_ROLE:
            return revision.job
        return None

    def _text(self, revision: LogEntry, column: int) -> str:
        if column == 0:
            return str(revision.sequence)
        if column == 1:
            return timefmt.clock_time(revision.committed_at)
        if column == 2:
            return revision.summary
        if column == 3:
            if revision.subject:
                return short_id(revision.subject)
            return "—" if not revision.events else "several"
        by = f"by {revision.principal}" if revision.principal else None
        return " · ".join(x for x in (revision.origin, revision.message, by) if x)

    def _tip(self, revision: LogEntry, column: int) -> str | None:
        if column == 1:
            return timefmt.stamp(revision.committed_at)
        if column == 3:
            return revision.subject
        if column == 2 and revision.events > 1:
            more = f"\n… {revision.events - 30:,} more" if revision.events > 30 else ""
            return revision.detail + more
        return None
