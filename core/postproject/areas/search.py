"""Finding jobs at any size: store-side search, time ranges, sorts and failure groups.

``Production.jobs(search=..., requested_after=..., sort=...)`` pages a :class:`JobQuery`
through the engine (``Reads.search_jobs``, indexed and never capped: when every term may be
common, naming a kind, an agent or many assets, a search first walks a window of 20 jobs per
row of the page in order, which fills the page of a term that every 20th job or more matches;
when it does not, every match is gathered through the term indexes, so none is missed), and
``Production.failure_groups()`` groups failed jobs by a normalised diagnostic so that "37
failed: unsupported profile #" is one line; each group's ``search`` text lists its jobs.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from postproject.base.handle import ProductionHandle
from postproject.engine import JOB_SORTS, JobKey, JobQuery
from postproject.model import clock as clocks
from postproject.model import names
from postproject.model.errors import InvalidArgumentError
from postproject.model.ids import JobId
from postproject.model.jobs import Job
from postproject.model.lifecycle import JobState
from postproject.model.pages import Page

SORTS: tuple[str, ...] = tuple(JOB_SORTS)
MAX_SEARCH_BYTES = 1024
MAX_TERMS = 16
FAMILY = "jobsearch"
REASON_CHARS = 96
MAX_DIAGNOSTICS = 100_000  # distinct diagnostics read to build the groups
WINDOW_PER_ROW = 20  # jobs walked in order per row of a page before the indexed gather


@dataclass(frozen=True, slots=True)
class FailureGroup:
    """Failed jobs whose diagnostics share a normalised first line.

    ``reason`` is that line with quoted text, ids, paths, hex and numbers replaced (``<text>``,
    ``<id>``, ``<path>``, ``<hex>``, ``#``); ``search`` is its longest literal run, the text that lists the group's
    jobs with ``Production.jobs(state=JobState.FAILED, search=group.search)`` (it may also
    list a few failures of another group that contain the same words).
    """

    reason: str
    count: int
    search: str
    example: str  # one full diagnostic of the group (the most frequent)
    latest_job: JobId
    latest_at: datetime | None

    def summary(self) -> str:
        return f"{self.count} failed: {self.reason}"


_PLACEHOLDERS = (
    (re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`"), "<text>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.IGNORECASE), "<id>"),
    (re.compile(r"(?:\b[A-Za-z]:)?(?:[\\/][^\s'\"`,;:()\[\]]+){2,}"), "<path>"),
    (re.compile(r"\b0x[0-9a-f]+\b|\b(?=[0-9a-f]*\d)[0-9a-f]{8,}\b", re.IGNORECASE), "<hex>"),
    (re.compile(r"\d+(?:[.,:]\d+)*"), "#"),
)
_SPACES = re.compile(r"\s+")
_LITERAL = re.compile(r"[^<>#]+")


def normalise(diagnostic: str) -> str:
    """The group key of a diagnostic: its first non-empty line with variable parts replaced."""
    line = next((part.strip() for part in diagnostic.splitlines() if part.strip()), "")
    for pattern, placeholder in _PLACEHOLDERS:
        line = pattern.sub(placeholder, line)
    line = _SPACES.sub(" ", line)
    return line if len(line) <= REASON_CHARS else line[: REASON_CHARS - 1] + "…"


def literal(reason: str) -> str:
    """The longest literal run of a normalised reason (the text that finds its jobs)."""
    runs = [run.strip(" .,;:'\"-()[]…") for run in _LITERAL.findall(reason)]
    return max(runs, key=len, default="")


def terms(search: object) -> tuple[str, ...]:
    """The whitespace-separated terms of a search text (validated)."""
    if search is None:
        return ()
    text = names.bounded_text("search", search, MAX_SEARCH_BYTES, min_bytes=0)
    found = tuple(dict.fromkeys(text.split()))
    if len(found) > MAX_TERMS:
        raise InvalidArgumentError(f"search must have at most {MAX_TERMS} terms; got {len(found)}")
    return found


def _micros(field: str, value: datetime | None) -> int | None:
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise InvalidArgumentError(f"{field} must be a datetime; got {type(value).__name__}")
    return clocks.to_micros(value)


def query(
    state: JobState | None,
    kind: str | None,
    *,
    search: str | None,
    requested_after: datetime | None,
    requested_before: datetime | None,
    finished_after: datetime | None,
    finished_before: datetime | None,
    sort: str,
    descending: bool,
) -> JobQuery:
    """A validated :class:`JobQuery` (invalid_argument naming the option that is wrong)."""
    if sort not in JOB_SORTS:
        raise InvalidArgumentError(f"sort must be one of {', '.join(SORTS)}; got {sort!r}")
    found = JobQuery(
        state=state.code if state is not None else None,
        kind=kind,
        terms=terms(search),
        requested_after=_micros("requested_after", requested_after),
        requested_before=_micros("requested_before", requested_before),
        finished_after=_micros("finished_after", finished_after),
        finished_before=_micros("finished_before", finished_before),
        sort=sort,
        descending=bool(descending),
    )
    for low, high, what in (
        (found.requested_after, found.requested_before, "requested"),
        (found.finished_after, found.finished_before, "finished"),
    ):
        if low is not None and high is not None and low > high:
            raise InvalidArgumentError(f"{what}_after must not be later than {what}_before")
    return found


def _params(q: JobQuery) -> tuple[str, ...]:
    terms_digest = hashlib.blake2b("\x00".join(q.terms).encode(), digest_size=8).hexdigest()
    times = (q.requested_after, q.requested_before, q.finished_after, q.finished_before)
    return (
        str(q.state or 0),
        (q.kind or "*").encode().hex(),
        terms_digest,
        ",".join("" if t is None else str(t) for t in times),
        q.sort,
        "desc" if q.descending else "asc",
    )


def _key(q: JobQuery, job: Job) -> tuple[str, str]:
    """The cursor's fields of a page's last row: its sort value ("" when it has none) and id."""
    value = ""
    if q.sort == "kind":
        value = job.kind.encode().hex()
    elif q.sort == "state":
        value = str(job.state.code)
    elif q.sort == "priority":
        value = str(job.priority)
    elif q.sort == "finished" and job.finished_at is not None:
        value = str(clocks.to_micros(job.finished_at))
    elif q.sort == "worker" and job.claim is not None and job.claim.worker is not None:
        value = job.claim.worker.encode().hex()
    return value, job.id.bytes.hex()


def _position(q: JobQuery, fields: Sequence[str]) -> JobKey:
    value_text, id_text = fields
    try:
        job_id = bytes.fromhex(id_text)
        value: str | int | None = None
        if q.sort in ("kind", "worker") and value_text:
            value = bytes.fromhex(value_text).decode()
        elif q.sort in ("state", "priority", "finished") and value_text:
            value = int(value_text)
        elif q.sort in ("kind", "state", "priority"):
            raise ValueError("a value is required")
    except ValueError:
        raise InvalidArgumentError("query cursor does not match this query and its parameters") from None
    return value, job_id


def page(handle: ProductionHandle, q: JobQuery, limit: int, cursor: str | None) -> Page[Job]:
    """One keyset page of ``q``; the cursor carries the last row's (sort value, id)."""
    params = _params(q)
    after = None
    if cursor is not None:
        after = _position(q, handle.cursors.decode(cursor, FAMILY, params, 2))
    items: list[Job] = []
    if q.terms and WINDOW_PER_ROW:
        # A term many jobs match (a kind, a common asset or agent) fills the page within the
        # first few jobs in order: walk a bounded window of the sort index first, and gather
        # every match through the term indexes only when that window did not fill the page.
        items = handle.reads.search_jobs(q, after, limit + 1, window=WINDOW_PER_ROW * (limit + 1))
    if len(items) <= limit:
        items = handle.reads.search_jobs(q, after, limit + 1)
    more = len(items) > limit
    items = items[:limit]
    next_cursor = handle.cursors.encode(FAMILY, params, _key(q, items[-1])) if more else None
    return Page(tuple(items), next_cursor)


@dataclass(slots=True)
class _Group:
    count: int
    example: str
    job: bytes
    finished: int | None


def failure_groups(handle: ProductionHandle, kind: str | None, limit: int) -> tuple[FailureGroup, ...]:
    """Failed jobs grouped by :func:`normalise`, largest group first."""
    groups: dict[str, _Group] = {}
    for text, count, job, finished in handle.reads.failure_diagnostics(kind, MAX_DIAGNOSTICS):
        reason = normalise(text)
        group = groups.get(reason)
        if group is None:
            groups[reason] = _Group(count, text, job, finished)
            continue
        group.count += count
        if (finished or 0) > (group.finished or 0):
            group.job, group.finished = job, finished
    found = [
        FailureGroup(
            reason=reason,
            count=group.count,
            search=literal(reason),
            example=group.example,
            latest_job=JobId(group.job),
            latest_at=clocks.from_micros(group.finished) if group.finished is not None else None,
        )
        for reason, group in groups.items()
    ]
    found.sort(key=lambda g: (-g.count, g.reason))
    return tuple(found[:limit])
