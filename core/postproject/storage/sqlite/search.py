"""The SQL of job search (``Reads.search_jobs``): trigram full-text terms, time ranges and a
keyset over (sort column, id). See ``migrations/0005_job_search.sql`` for the index."""

from __future__ import annotations

from typing import Any

from postproject.engine import JOB_SORTS, JobKey, JobQuery
from postproject.storage.sqlite import rows

TRIGRAM = 3  # shorter terms cannot use the trigram index: they scan the documents with LIKE


def _phrase(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _like(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def job_search(query: JobQuery, after: JobKey | None, limit: int) -> tuple[str, list[Any]]:
    """The statement and parameters of one page of ``query``."""
    where: list[str] = []
    params: list[Any] = []
    if query.state is not None:
        where.append("j.state = ?")
        params.append(query.state)
    if query.kind is not None:
        where.append("j.kind = ?")
        params.append(query.kind)
    for term in query.terms:
        if len(term) >= TRIGRAM:
            where.append("j.id IN (SELECT job FROM job_search WHERE job_search MATCH ?)")
            params.append(_phrase(term))
        else:
            where.append("j.id IN (SELECT job FROM job_search WHERE body LIKE ? ESCAPE '\\')")
            params.append(_like(term))
    for column, low, high in (
        ("requested_at", query.requested_after, query.requested_before),
        ("finished_at", query.finished_after, query.finished_before),
    ):
        if low is not None:
            where.append(f"j.{column} >= ?")
            params.append(low)
        if high is not None:
            where.append(f"j.{column} < ?")
            params.append(high)
    column = JOB_SORTS[query.sort]
    direction = "DESC" if query.descending else "ASC"
    compare = "<" if query.descending else ">"
    if after is not None:
        if column == "id":
            where.append(f"j.id {compare} ?")
            params.append(after[1])
        else:
            where.append(f"(j.{column}, j.id) {compare} (?, ?)")
            params.extend(after)
    order = f"j.id {direction}" if column == "id" else f"j.{column} {direction}, j.id {direction}"
    sql = (
        f"SELECT {rows.JOB_COLUMNS} FROM jobs j"
        + (f" WHERE {' AND '.join(where)}" if where else "")
        + f" ORDER BY {order} LIMIT ?"
    )
    params.append(limit)
    return sql, params


def failure_diagnostics(kind: str | None, limit: int) -> tuple[str, list[Any]]:
    sql = (
        "SELECT failure_diagnostic, count(*), max(id), max(finished_at) FROM jobs WHERE state = 4"
        + (" AND kind = ?" if kind is not None else "")
        + " GROUP BY failure_diagnostic ORDER BY count(*) DESC, failure_diagnostic LIMIT ?"
    )
    return sql, [*([kind] if kind is not None else []), limit]
