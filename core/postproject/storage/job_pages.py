"""What both adapters' job searches share: a page's filters, keyset position and order.

Only the placeholder (``?`` or ``%s``) and how an id is bound differ between the engines,
so each adapter passes its own; the term matching and the statement around it stay in the
adapter (:mod:`.sqlite.search`, :mod:`.postgresql.search`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from postproject.engine import JOB_SORTS, JobKey, JobQuery


def filters_and_order(
    query: JobQuery, after: JobKey | None, mark: str, bind_id: Callable[[bytes], Any]
) -> tuple[list[str], list[Any], str]:
    """(the WHERE clauses on ``jobs j`` other than the terms, their parameters, the ORDER BY)
    of one page of ``query`` strictly after the keyset position ``after``."""
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
    column = JOB_SORTS[query.sort]
    direction = "DESC" if query.descending else "ASC"
    compare = "<" if query.descending else ">"
    if after is not None:
        if column == "id":
            where.append(f"j.id {compare} {mark}")
            params.append(bind_id(after[1]))
        else:
            where.append(f"(j.{column}, j.id) {compare} ({mark}, {mark})")
            params.extend([after[0], bind_id(after[1])])
    order = f"j.id {direction}" if column == "id" else f"j.{column} {direction}, j.id {direction}"
    return where, params, order
