"""The job table's columns, declared once (no Qt): title, width, text, tooltip, and which
store sort a header click asks for.

The store pages jobs by a keyset over indexes: by id (ids are UUIDv7, time-ordered, so the
Age, Requested and Job ID columns sort newest-first or oldest-first), and by kind, state,
priority, finished time or the worker holding the claim (ties by id; jobs not finished, or
held by no worker, come as one block: see ``postproject.storage.job_pages``). Other columns
(progress among them) do not sort; sorting a partly loaded million-row table client-side
would lie.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from postproject import JobState
from postproject_gui.look.states import STATE_LOOKS
from postproject_gui.services.types import JobRow
from postproject_gui.text import progress_text, timefmt


def short_id(text: str) -> str:
    """The random tail of a UUIDv7 (its head is a timestamp shared by neighbours)."""
    return "…" + text[-8:]


def first_line(text: str, limit: int = 160) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _state(row: JobRow, now: datetime) -> str:
    return row.state_text(now)


def _state_tip(row: JobRow, now: datetime) -> str:
    health = row.health(now)
    text = f"{STATE_LOOKS[row.job.state].label}: {STATE_LOOKS[row.job.state].description}"
    if health is not None and row.job.claim is not None:
        text += f"\nLease {timefmt.countdown(row.job.claim.expires_at, now)} ({health.value})"
    return text


def _output(row: JobRow, now: datetime) -> str:
    name = row.output_name or short_id(str(row.job.output_asset_id))
    return f"{name} · {row.job.output_representation_kind.value}"


def _inputs(row: JobRow, now: datetime) -> str:
    count = len(row.job.inputs)
    if count == 0:
        return "—"
    first = row.first_input or short_id(str(row.job.inputs[0]))
    return first if count == 1 else f"{first} +{count - 1}"


def _claimed_by(row: JobRow, now: datetime) -> str:
    claim = row.job.claim
    if claim is None:
        return ""
    holder = claim.worker or (str(claim.agent) if claim.agent else None)
    return f"{holder} · {claim.tool}" if holder else str(claim.tool)


def _claimed_by_tip(row: JobRow, now: datetime) -> str:
    claim = row.job.claim
    if claim is None:
        return ""
    uri = f"\n{claim.tool.uri}" if claim.tool.uri else ""
    worker = f"Worker: {claim.worker}\n" if claim.worker else ""
    return f"{worker}Agent: {claim.agent or 'not given'}\nTool: {claim.tool}{uri}\nAttempt {claim.attempt}"


def _priority_tip(row: JobRow, now: datetime) -> str:
    job = row.job
    tip = f"Priority {job.priority} (-1000 to 1000; higher is claimed first)"
    if job.not_before is not None:
        tip += f"\nNot before {timefmt.stamp(job.not_before)}"
    return tip


def _lease(row: JobRow, now: datetime) -> str:
    claim = row.job.claim
    if row.job.state is not JobState.CLAIMED or claim is None:
        return ""
    return timefmt.countdown(claim.expires_at, now)


def _lease_tip(row: JobRow, now: datetime) -> str:
    claim = row.job.claim
    if claim is None:
        return ""
    return f"Claimed {timefmt.stamp(claim.claimed_at)}\nLease ends {timefmt.stamp(claim.expires_at)}"


def _diagnostic(row: JobRow, now: datetime) -> str:
    return first_line(row.job.failure.diagnostic) if row.job.failure else ""


def _diagnostic_tip(row: JobRow, now: datetime) -> str:
    return row.job.failure.diagnostic[:2000] if row.job.failure else ""


@dataclass(frozen=True, slots=True)
class Column:
    """One column of the job table."""

    key: str
    title: str
    width: int
    text: Callable[[JobRow, datetime], str]
    tip: Callable[[JobRow, datetime], str] | None = None
    visible: bool = True  # shown by default
    sorts_by_id: bool = False  # clicking it toggles newest-first/oldest-first
    sort: str | None = None  # the store sort (kind, state, priority, finished, worker) a click asks for
    ascending_is_newest: bool = False  # for sorts_by_id: what an ascending click means
    time_dependent: bool = False  # its text changes as time passes
    mono: bool = False
    align_right: bool = False
    elide: str = "right"  # where long text is cut: "left", "middle" or "right"
    states: frozenset[JobState] | None = None  # only jobs in these states have content here
    description: str = ""


CLAIMED = frozenset({JobState.CLAIMED})
FAILED = frozenset({JobState.FAILED})
CLAIMED_OR_STOPPING = frozenset({JobState.CLAIMED, JobState.CANCELLED, JobState.REQUESTED})

COLUMNS: tuple[Column, ...] = (
    Column(
        "state",
        "State",
        152,
        _state,
        _state_tip,
        time_dependent=True,
        sort="state",
        description="Lifecycle state",
    ),
    Column(
        "id",
        "Job",
        96,
        lambda r, n: short_id(str(r.id)),
        lambda r, n: str(r.id),
        sorts_by_id=True,
        mono=True,
        description="Job id (its tail; hover or copy for the full id)",
    ),
    Column(
        "kind",
        "Kind",
        150,
        lambda r, n: r.job.kind.partition(":")[2],  # the namespace rarely tells jobs apart
        lambda r, n: r.job.kind,
        sort="kind",
        description="Job kind (its name; hover for the namespaced kind)",
    ),
    Column(
        "output",
        "Output",
        172,
        _output,
        lambda r, n: str(r.job.output_asset_id),
        description="Output asset · representation kind",
    ),
    Column(
        "claimed_by",
        "Claimed by",
        172,
        _claimed_by,
        _claimed_by_tip,
        states=CLAIMED,
        sort="worker",
        description="Worker (or agent) and tool holding the claim",
    ),
    Column(
        "lease",
        "Lease",
        136,
        _lease,
        _lease_tip,
        time_dependent=True,
        states=CLAIMED,
        description="Lease countdown",
    ),
    Column(
        "progress",
        "Progress",
        236,
        lambda r, n: progress_text.progress_text(r.job, n),
        lambda r, n: progress_text.progress_tip(r.job, n),
        time_dependent=True,
        states=CLAIMED_OR_STOPPING,
        description="Progress of the running attempt: fraction, stage, time left",
    ),
    Column(
        "age",
        "Age",
        54,
        lambda r, n: timefmt.age(r.job.requested_at, n),
        lambda r, n: f"Requested {timefmt.stamp(r.job.requested_at)}",
        sorts_by_id=True,
        ascending_is_newest=True,
        time_dependent=True,
        align_right=True,
        description="Time since it was requested",
    ),
    Column(
        "diagnostic",
        "Diagnostic",
        300,
        _diagnostic,
        _diagnostic_tip,
        states=FAILED,
        description="Why it failed (first line)",
    ),
    Column(
        "inputs",
        "Inputs",
        130,
        _inputs,
        lambda r, n: "\n".join(map(str, r.job.inputs[:20])),
        elide="middle",
        description="Input representations",
    ),
    Column(
        "requested",
        "Requested",
        140,
        lambda r, n: timefmt.stamp(r.job.requested_at),
        visible=False,
        sorts_by_id=True,
        description="When it was requested",
    ),
    Column("target_root", "Target root", 110, lambda r, n: r.job.target_root or "", visible=False),
    Column(
        "revision",
        "Rev",
        56,
        lambda r, n: str(r.job.updated_sequence),
        visible=False,
        align_right=True,
        description="Revision that last changed it",
    ),
    Column("job_id", "Job ID", 270, lambda r, n: str(r.id), visible=False, sorts_by_id=True, mono=True),
    Column(
        "priority",
        "Priority",
        64,
        lambda r, n: str(r.job.priority),
        _priority_tip,
        visible=False,
        sort="priority",
        align_right=True,
        description="Priority: higher is claimed first",
    ),
    Column(
        "finished",
        "Finished",
        140,
        lambda r, n: timefmt.stamp(r.job.finished_at) if r.job.finished_at else "",
        visible=False,
        sort="finished",
        description="When it succeeded, failed or was cancelled",
    ),
)

COLUMN_KEYS: tuple[str, ...] = tuple(c.key for c in COLUMNS)


def column(key: str) -> int:
    """The index of the column named ``key``."""
    return COLUMN_KEYS.index(key)


def relevant(col: Column, state: JobState | None, stuck: bool) -> bool:
    """Whether a column can have content when the table lists ``state`` (or stuck claims)."""
    if col.states is None:
        return True
    if stuck:
        return JobState.CLAIMED in col.states
    return state is None or state in col.states


def newest_first_for(index: int, ascending: bool) -> bool | None:
    """The store order a header click on an id column asks for (None: not an id column)."""
    col = COLUMNS[index]
    if not col.sorts_by_id:
        return None
    return ascending if col.ascending_is_newest else not ascending


def sort_for(index: int, ascending: bool) -> tuple[str, bool] | None:
    """(store sort, descending) a header click asks for (None: the column does not sort)."""
    newest = newest_first_for(index, ascending)
    if newest is not None:
        return "requested", newest
    col = COLUMNS[index]
    return (col.sort, not ascending) if col.sort is not None else None


def sorted_column(sort: str, descending: bool) -> tuple[int, bool]:
    """(column, ascending indicator) that shows a store sort."""
    if sort == "requested":
        return column("age"), descending
    return next(i for i, c in enumerate(COLUMNS) if c.sort == sort), not descending
