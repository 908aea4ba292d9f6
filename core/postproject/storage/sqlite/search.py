"""The SQL of job search (``Reads.search_jobs``): terms, time ranges and a keyset over (sort
column, id). ``migrations/0007_baseline.sql`` (job search) says where each term is looked up."""

from __future__ import annotations

import re
from typing import Any

from postproject.engine import JobKey, JobQuery
from postproject.model.lifecycle import JobState
from postproject.storage import job_pages, rows

TRIGRAM = 3  # shorter terms cannot use a trigram index: they scan the small tables with LIKE
TAIL_HEX = 6  # an id tail this long (or longer) is found through jobs_by_tail
_HEX = re.compile(r"[0-9a-f]+")
FAILED = JobState.FAILED.code


def _phrase(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _like(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _term(term: str, walk: bool) -> tuple[str, list[Any]]:
    """One term: the job's kind, output asset name, an agent or worker of its attempts, a
    diagnostic, a parameter's value, or its id (whole, or a tail of 6+ hex digits) contains
    it. ``walk``: the clause tests the jobs of a bounded walk one by one, so a parameter is
    looked up per job (job_parameters_by_job) instead of gathering every job whose
    parameters match (which may be all of them)."""
    like = _like(term)
    fts = len(term) >= TRIGRAM
    parts = [
        "j.kind IN (SELECT kind FROM job_counts WHERE kind LIKE ? ESCAPE '\\')",
        "j.output_asset_id IN (SELECT asset FROM asset_search WHERE "
        + ("asset_search MATCH ?)" if fts else "name LIKE ? ESCAPE '\\')"),
        "j.id IN (SELECT job_id FROM job_attempts WHERE agent_name IN "
        "(SELECT name FROM job_agents WHERE name LIKE ? ESCAPE '\\'))",
        "j.id IN (SELECT job_id FROM job_attempts WHERE worker_id IN "
        "(SELECT id FROM workers WHERE name LIKE ? ESCAPE '\\'))",
        "j.id IN (SELECT job FROM job_diagnostics WHERE "
        + ("job_diagnostics MATCH ?)" if fts else "body LIKE ? ESCAPE '\\')"),
    ]
    params: list[Any] = [like, _phrase(term) if fts else like, like, like, _phrase(term) if fts else like]
    if walk:
        parts.append(
            "EXISTS (SELECT 1 FROM job_parameters p WHERE p.job = j.id AND p.value LIKE ? ESCAPE '\\')"
        )
        params.append(like)
    elif fts:
        parts.append("j.id IN (SELECT job FROM job_parameter_search WHERE job_parameter_search MATCH ?)")
        params.append(_phrase(term))
    else:
        parts.append("j.id IN (SELECT job FROM job_parameters WHERE value LIKE ? ESCAPE '\\')")
        params.append(like)
    digits = term.lower().lstrip("…").replace("-", "")
    if len(digits) >= TAIL_HEX and _HEX.fullmatch(digits):
        if len(digits) == 32:
            parts.append("j.id = ?")
            params.append(bytes.fromhex(digits))
        else:
            parts.append("(substr(j.id, 14) = ? AND lower(hex(j.id)) LIKE ?)")
            params.extend([bytes.fromhex(digits[-TAIL_HEX:]), f"%{digits}"])
    return "(" + " OR ".join(parts) + ")", params


COMMON = (
    25  # a term naming this many assets (or found in this many parameters) may match a good share of the jobs
)


def _common(term: str) -> tuple[str, list[Any]]:
    """Whether ``term`` may match many jobs (a kind, an agent, 25+ asset names, or the
    parameters of 25+ jobs): only then is a window of jobs walked in order (``Reads.search_jobs``).
    A term shorter than a trigram may always be: telling would scan every parameter value (a
    million at a million jobs, 100+ ms), where the walk tests a window of jobs one by one."""
    if len(term) < TRIGRAM:
        return "1", []
    like = _like(term)
    sql = (
        "(EXISTS (SELECT 1 FROM job_counts WHERE kind LIKE ? ESCAPE '\\')"
        " OR EXISTS (SELECT 1 FROM job_agents WHERE name LIKE ? ESCAPE '\\')"
        " OR (SELECT count(*) FROM (SELECT 1 FROM asset_search WHERE asset_search MATCH ? LIMIT ?)) = ?"
        " OR (SELECT count(*) FROM (SELECT 1 FROM job_parameter_search WHERE job_parameter_search MATCH ?"
        " LIMIT ?)) = ?)"
    )
    match = _phrase(term)
    return sql, [like, like, match, COMMON, COMMON, match, COMMON, COMMON]


def job_search(
    query: JobQuery, after: JobKey | None, limit: int, window: int | None = None
) -> list[tuple[str, list[Any], tuple[str, list[Any]] | None]]:
    """The statements and parameters of one page of ``query``, one per phase of its sort
    (:func:`postproject.storage.job_pages.phases`; the reader runs them in order until the
    page is full). With ``window``, only the first ``window`` jobs of a phase in the page's
    order that pass the other filters are tested against the terms (a bounded walk of the
    sort index: see ``Reads.search_jobs``), and each statement comes with the count
    (:func:`~postproject.storage.job_pages.walked`) that says whether the walk covered its
    phase: only then may it go on into the next one."""
    statements = []
    for phase in job_pages.phases(query, after, "?", bytes):
        where, params, order, join = list(phase.where), list(phase.params), phase.order, phase.join
        matching: list[str] = []
        term_params: list[Any] = []
        for term in query.terms:
            # A term shorter than a trigram has no index into the parameters: among the jobs of
            # one state (a share of them) each job's own are looked up, not every value scanned.
            per_job = window is not None or (len(term) < TRIGRAM and query.state is not None)
            clause, values = _term(term, walk=per_job)
            matching.append(clause)
            term_params.extend(values)
        if window is None:
            where += matching
            params += term_params
            source = f"jobs j{join}"
        else:
            # The guards sit in the LIMIT, evaluated once before the walk: when a term cannot
            # be common the window is empty (a guard in WHERE would be tested on every row).
            guards = [_common(term) for term in query.terms]
            source = (
                f"(SELECT j.* FROM jobs j{join}"
                + (f" WHERE {' AND '.join(where)}" if where else "")
                + f" ORDER BY {order} LIMIT CASE WHEN {' AND '.join(sql for sql, _ in guards)}"
                + f" THEN ? ELSE 0 END) j{join}"
            )
            where = matching
            params += [value for _, values in guards for value in values]
            params += [window, *term_params]
        sql = (
            f"SELECT {rows.JOB_COLUMNS} FROM {source}"
            + (f" WHERE {' AND '.join(where)}" if where else "")
            + f" ORDER BY {order} LIMIT ?"
        )
        params.append(limit)
        statements.append((sql, params, None if window is None else job_pages.walked(phase, "?", window)))
    if statements:  # nothing follows the last phase
        statements[-1] = (*statements[-1][:2], None)
    return statements


def failure_diagnostics(kind: str | None, limit: int) -> tuple[str, list[Any]]:
    sql = (
        f"SELECT failure_diagnostic, count(*), max(id), max(finished_at) FROM jobs WHERE state = {FAILED}"
        + (" AND kind = ?" if kind is not None else "")
        + " GROUP BY failure_diagnostic ORDER BY count(*) DESC, failure_diagnostic LIMIT ?"
    )
    return sql, [*([kind] if kind is not None else []), limit]
