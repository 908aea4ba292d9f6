"""The Workers tab's tables: registered workers, and the attempts of one of them.

Both adapt values the service read (:class:`~postproject_gui.services.types.WorkerList`,
:class:`~postproject_gui.services.types.WorkerAttempt`); neither reads anything. Liveness
and "last seen" ages are derived from the last read and the clock, so a 1 Hz
:meth:`WorkerTableModel.tick` keeps them current between reads.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QColor, QIcon

from postproject import Job, JobId, JobState
from postproject.model.jobs import Attempt, AttemptOutcome
from postproject.model.workers import Worker, WorkerState
from postproject_gui.look.states import LIGHT, Glyph, Palette
from postproject_gui.models import roles
from postproject_gui.models.columns import first_line, short_id
from postproject_gui.models.flat_table import AnyIndex, FlatTableModel
from postproject_gui.services.types import WorkerAttempt, WorkerList, liveness, used
from postproject_gui.text import attempts as attempts_text
from postproject_gui.text import progress_text, timefmt

DISPLAY, TOOLTIP, DECORATION, FOREGROUND, ALIGNMENT = (
    Qt.ItemDataRole.DisplayRole,
    Qt.ItemDataRole.ToolTipRole,
    Qt.ItemDataRole.DecorationRole,
    Qt.ItemDataRole.ForegroundRole,
    Qt.ItemDataRole.TextAlignmentRole,
)
RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
GlyphIcons = Callable[[Glyph, str], QIcon]


@dataclass(frozen=True, slots=True)
class WorkerLook:
    """How a worker's liveness looks: text, glyph and colour."""

    text: str
    glyph: Glyph
    colour: str
    tip: str


def worker_look(worker: Worker, now: datetime, palette: Palette) -> WorkerLook:
    """Online (green disc); offline holding claims (amber warning: its work will be lost unless
    it comes back); offline and idle (grey ring)."""
    if liveness(worker, now) is WorkerState.ONLINE:
        return WorkerLook("Online", Glyph.DISC, palette.states[JobState.SUCCEEDED], "Heartbeats arrive")
    if worker.running:
        return WorkerLook(
            "Offline",
            Glyph.WARNING,
            palette.stuck,
            "No heartbeat, yet it holds claims: they get stuck when their leases run out",
        )
    return WorkerLook("Offline", Glyph.RING, palette.muted, "No heartbeat recently")


WORKER_COLUMNS = (
    ("state", "State", "Online while its heartbeats arrive, offline 30 s after the last one"),
    ("name", "Worker", "The registered worker's name"),
    ("host", "Host", "The machine it registered from"),
    ("last_seen", "Last seen", "Time since its last heartbeat"),
    ("running", "Running", "Jobs it holds an unexpired claim on"),
    ("capacity", "Used", "Claims held / capacity"),
    ("succeeded", "Succeeded", "Attempts that succeeded"),
    ("failed", "Failed", "Attempts that failed"),
    ("kinds", "Kinds", "The job kinds it claims (any when empty)"),
)
WORKER_KEYS = tuple(key for key, _t, _d in WORKER_COLUMNS)
_NUMERIC = frozenset({"capacity", "succeeded", "failed"})
_LIVE = (WORKER_KEYS.index("state"), WORKER_KEYS.index("last_seen"), WORKER_KEYS.index("running"))


class WorkerTableModel(FlatTableModel):
    """Registered workers by name, updated in place as reads arrive."""

    def __init__(self, now: Callable[[], datetime], parent: QObject | None = None) -> None:
        super().__init__([t for _k, t, _d in WORKER_COLUMNS], [d for _k, _t, d in WORKER_COLUMNS], parent)
        self._now = now
        self._workers: list[Worker] = []
        self._jobs: dict[JobId, Job] = {}
        self._palette: Palette = LIGHT
        self._icons: GlyphIcons = lambda glyph, colour: QIcon()

    def set_look(self, palette: Palette, icons: GlyphIcons) -> None:
        self._palette, self._icons = palette, icons
        self.tick()

    def set_list(self, workers: WorkerList | None) -> None:
        """Take a new read: rows of workers still registered are updated in place."""
        fresh = sorted(workers.workers if workers else (), key=lambda w: w.name)
        self._jobs = dict(workers.jobs) if workers else {}
        if [w.name for w in fresh] == [w.name for w in self._workers]:
            self._workers = fresh
            if fresh:
                self.dataChanged.emit(self.index(0, 0), self.index(len(fresh) - 1, len(WORKER_COLUMNS) - 1))
            return
        self.beginResetModel()
        self._workers = fresh
        self.endResetModel()

    def tick(self) -> None:
        """Ages and liveness move with the clock."""
        if self._workers:
            last = len(self._workers) - 1
            for col in _LIVE:
                self.dataChanged.emit(self.index(0, col), self.index(last, col))

    def worker(self, row: int) -> Worker:
        return self._workers[row]

    def workers(self) -> list[Worker]:
        return list(self._workers)

    def row_of(self, name: str) -> int | None:
        return next((i for i, w in enumerate(self._workers) if w.name == name), None)

    def row_total(self) -> int:
        return len(self._workers)

    def _running(self, job_id: JobId, now: datetime, *, full: bool = False) -> str:
        """A running job's id and progress: ``…1a2b3c4d 42% · encode · 12s left``."""
        name = str(job_id) if full else short_id(str(job_id))
        job = self._jobs.get(job_id)
        progress = progress_text.progress_text(job, now) if job is not None else ""
        return f"{name} {progress}" if progress else name

    def data(self, index: AnyIndex, role: int = DISPLAY) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._workers):
            return None
        worker, key = self._workers[index.row()], WORKER_KEYS[index.column()]
        if role == DISPLAY:
            return self.text(worker, key)
        if role == roles.WORKER_ROLE:
            return worker.name
        if role == TOOLTIP:
            return self._tip(worker, key)
        if role == ALIGNMENT:
            return RIGHT if key in _NUMERIC else None
        if key == "state" and role in (DECORATION, FOREGROUND):
            look = worker_look(worker, self._now(), self._palette)
            return self._icons(look.glyph, look.colour) if role == DECORATION else QColor(look.colour)
        return None

    def text(self, worker: Worker, key: str) -> str:
        now = self._now()
        if key == "state":
            return worker_look(worker, now, self._palette).text
        if key == "name":
            return worker.name
        if key == "host":
            return worker.host or "—"
        if key == "last_seen":
            return f"{timefmt.age(worker.last_seen, now)} ago"
        if key == "running":
            return ", ".join(self._running(j, now) for j in worker.running[:4]) + (
                f" +{len(worker.running) - 4}" if len(worker.running) > 4 else ""
            )
        if key == "capacity":
            return f"{used(worker)}/{worker.capacity}"
        if key == "succeeded":
            return f"{worker.succeeded:,}"
        if key == "failed":
            return f"{worker.failed:,}"
        return ", ".join(k.partition(":")[2] or k for k in worker.kinds) if worker.kinds else "any"

    def _tip(self, worker: Worker, key: str) -> str | None:
        if key == "state":
            return worker_look(worker, self._now(), self._palette).tip
        if key == "last_seen":
            return f"Last heartbeat {timefmt.stamp(worker.last_seen)}"
        if key == "running":
            return "\n".join(self._running(j, self._now(), full=True) for j in worker.running) or "Idle"
        if key in ("succeeded", "failed"):
            outcomes = ", ".join(f"{o.value} {n:,}" for o, n in worker.outcomes.items())
            return f"Attempts by outcome: {outcomes or 'none yet'}"
        if key == "kinds":
            return "\n".join(worker.kinds) if worker.kinds else "Any kind"
        return None


OUTCOME_LOOKS: dict[AttemptOutcome | None, tuple[str, Glyph]] = {
    None: ("running", Glyph.HALF),
    AttemptOutcome.SUCCEEDED: ("succeeded", Glyph.DISC),
    AttemptOutcome.FAILED: ("failed", Glyph.CROSS),
    AttemptOutcome.RELEASED: ("released", Glyph.RING),
    AttemptOutcome.LOST: ("lost", Glyph.WARNING),
    AttemptOutcome.CANCELLED: ("cancelled", Glyph.SLASH),
}


def outcome_colour(outcome: AttemptOutcome | None, palette: Palette) -> str:
    return {
        None: palette.states[JobState.CLAIMED],
        AttemptOutcome.SUCCEEDED: palette.states[JobState.SUCCEEDED],
        AttemptOutcome.FAILED: palette.states[JobState.FAILED],
        AttemptOutcome.RELEASED: palette.states[JobState.REQUESTED],
        AttemptOutcome.LOST: palette.stuck,
        AttemptOutcome.CANCELLED: palette.states[JobState.CANCELLED],
    }[outcome]


def attempt_took(attempt: Attempt, now: datetime) -> str:
    end = attempt.ended_at or now
    return timefmt.span(max(end - attempt.claimed_at, timedelta(0)))


ATTEMPT_COLUMNS = (
    ("outcome", "Outcome", "How the attempt ended (running while it holds the claim)"),
    ("job", "Job", "The job (double-click to show it in the Jobs tab)"),
    ("kind", "Kind", "The job's kind"),
    ("number", "#", "The attempt's number for its job"),
    ("tool", "Tool", "The tool that claimed it"),
    ("claimed", "Claimed", "When the attempt claimed the job"),
    ("took", "Took", "From the claim to its end (so far, while running)"),
    ("diagnostic", "Diagnostic", "Why it failed or was lost"),
)
ATTEMPT_KEYS = tuple(key for key, _t, _d in ATTEMPT_COLUMNS)


class AttemptTableModel(FlatTableModel):
    """The attempts of one worker, newest first."""

    def __init__(self, now: Callable[[], datetime], parent: QObject | None = None) -> None:
        super().__init__([t for _k, t, _d in ATTEMPT_COLUMNS], [d for _k, _t, d in ATTEMPT_COLUMNS], parent)
        self._now = now
        self._rows: list[WorkerAttempt] = []
        self._palette: Palette = LIGHT
        self._icons: GlyphIcons = lambda glyph, colour: QIcon()
        self.worker: str | None = None

    def set_look(self, palette: Palette, icons: GlyphIcons) -> None:
        self._palette, self._icons = palette, icons
        if self._rows:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._rows) - 1, len(ATTEMPT_COLUMNS) - 1))

    def set_attempts(self, worker: str | None, attempts: Sequence[WorkerAttempt]) -> None:
        self.beginResetModel()
        self.worker, self._rows = worker, list(attempts)
        self.endResetModel()

    def attempt(self, row: int) -> WorkerAttempt:
        return self._rows[row]

    def attempts(self) -> list[WorkerAttempt]:
        return list(self._rows)

    def row_total(self) -> int:
        return len(self._rows)

    def data(self, index: AnyIndex, role: int = DISPLAY) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        item, key = self._rows[index.row()], ATTEMPT_KEYS[index.column()]
        attempt = item.attempt
        if role == roles.JOB_ID_ROLE:
            return str(item.job_id)
        if role == DISPLAY:
            return self._text(item, key)
        if role == TOOLTIP:
            if key == "job":
                return str(item.job_id)
            if key == "diagnostic":
                return attempts_text.diagnostic_text(attempt)[:2000] or None
            if key == "outcome" and self._expired(item):
                assert item.lease_expires is not None
                return attempts_text.expired_tip(item.lease_expires, self._now())
            if key in ("claimed", "took"):
                ended = (
                    f"\nEnded {timefmt.stamp(attempt.ended_at)}" if attempt.ended_at else "\nStill running"
                )
                return f"Claimed {timefmt.stamp(attempt.claimed_at)}{ended}"
            return self._text(item, key) or None
        if role == ALIGNMENT:
            return RIGHT if key in ("number", "took") else None
        if key == "outcome" and role in (DECORATION, FOREGROUND):
            expired = self._expired(item)  # drawn as a lost one: nobody works on it
            outcome = AttemptOutcome.LOST if expired else attempt.outcome
            colour = outcome_colour(outcome, self._palette)
            glyph = OUTCOME_LOOKS[outcome][1]
            return self._icons(glyph, colour) if role == DECORATION else QColor(colour)
        return None

    def _expired(self, item: WorkerAttempt) -> bool:
        return attempts_text.expired(item.attempt, item.lease_expires, self._now())

    def _text(self, item: WorkerAttempt, key: str) -> str:
        attempt = item.attempt
        if key == "outcome":
            return attempts_text.outcome_text(attempt, item.lease_expires, self._now())
        if key == "job":
            return short_id(str(item.job_id))
        if key == "kind":
            return (item.kind or "(unreadable)").partition(":")[2] or (item.kind or "")
        if key == "number":
            return str(attempt.number)
        if key == "tool":
            return str(attempt.tool)
        if key == "claimed":
            return timefmt.stamp(attempt.claimed_at)
        if key == "took":
            return attempt_took(attempt, self._now())
        diagnostic = attempts_text.diagnostic_text(attempt)
        return first_line(diagnostic) if diagnostic else ""
