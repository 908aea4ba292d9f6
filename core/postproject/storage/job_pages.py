"""What both adapters' job searches share: a page's filters, keyset position and order.

Only the placeholder (``?`` or ``%s``) and how an id is bound differ between the engines,
so each adapter passes its own; the term matching and the statement around it stay in the
adapter (:mod:`.sqlite.search`, :mod:`.postgresql.search`).

A sort by a column that some jobs have no value in (finished: jobs not finished yet; worker:
jobs no registered worker holds) is read in two *phases*, one statement each: the jobs
without a value, by id, and those with one, by (value, id), each through an index of its
own. Jobs without a value come first in ascending order for "finished" (not finished yet
sorts before any finish time, so newest-finished first lists them last) and last for
"worker" (A to Z, then the rest); descending order is exactly the reverse, so a list can be
read from either end. A keyset position with no value (``None``) lies in the phase without.
A bounded walk (a search's window) goes on into the next phase only when it covered the whole
of the one before (:func:`walked`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from postproject.engine import JOB_SORTS, JobKey, JobQuery

# The sort value of "worker": the name of the registered worker holding the claim.
WORKER_JOIN = " JOIN workers sw ON sw.id = j.claim_worker_id"
WORKER_NAME = "sw.name"


@dataclass(frozen=True, slots=True)
class Phase:
    """One statement's part of a page: ``join`` (appended after the job source, aliased
    ``j``), the WHERE clauses on it other than the terms and their parameters, and the ORDER BY."""

    join: str
    where: list[str]
    params: list[Any]
    order: str


def phases(query: JobQuery, after: JobKey | None, mark: str, bind_id: Callable[[bytes], Any]) -> list[Phase]:
    """The phases of one page of ``query`` strictly after the keyset position ``after``, in
    order (a phase before the position's is left out)."""
    where: list[str] = []
    params: list[Any] = []
    if query.state is not None:
        where.append(f"j.state = {mark}")
        params.append(query.state)
    if query.kind is not None:
        where.append(f"j.kind = {mark}")
        params.append(query.kind)
    for column, low, high in (
        ("requested_at", query.requested_after, query.requested_before),
        ("finished_at", query.finished_after, query.finished_before),
    ):
        if low is not None:
            where.append(f"j.{column} >= {mark}")
            params.append(low)
        if high is not None:
            where.append(f"j.{column} < {mark}")
            params.append(high)
    direction = "DESC" if query.descending else "ASC"
    compare = "<" if query.descending else ">"
    column = JOB_SORTS[query.sort]

    def keyed(join: str, condition: str, value: str | None, position: JobKey | None) -> Phase:
        clauses, values = [*where, *([condition] if condition else [])], list(params)
        if position is not None and value is None:
            clauses.append(f"j.id {compare} {mark}")
            values.append(bind_id(position[1]))
        elif position is not None:
            clauses.append(f"({value}, j.id) {compare} ({mark}, {mark})")
            values.extend([position[0], bind_id(position[1])])
        order = f"j.id {direction}" if value is None else f"{value} {direction}, j.id {direction}"
        return Phase(join, clauses, values, order)

    if query.sort == "finished":
        without = ("", "j.finished_at IS NULL", None)
        valued = ("", "j.finished_at IS NOT NULL", "j.finished_at")
        ordered = [valued, without] if query.descending else [without, valued]
    elif query.sort == "worker":
        without = ("", "j.claim_worker_id IS NULL", None)
        valued = (WORKER_JOIN, "", WORKER_NAME)
        ordered = [without, valued] if query.descending else [valued, without]
    else:
        return [keyed("", "", None if column == "id" else f"j.{column}", after)]
    if after is not None:
        start = 1 if (after[0] is None) == (ordered[1][2] is None) else 0
        first = keyed(*ordered[start], after)
        return [first] if start == 1 else [first, keyed(*ordered[1], None)]
    return [keyed(*phase, None) for phase in ordered]


def walked(phase: Phase, mark: str, window: int) -> tuple[str, list[Any]]:
    """How many jobs ``phase`` holds, counted up to ``window + 1``: a walk of ``window`` jobs
    covered the whole phase when at most ``window`` (then its matches are all of the phase's,
    and a walk may go on into the next phase)."""
    where = f" WHERE {' AND '.join(phase.where)}" if phase.where else ""
    return f"SELECT count(*) FROM (SELECT 1 FROM jobs j{phase.join}{where} LIMIT {mark}) c", [
        *phase.params,
        window + 1,
    ]
