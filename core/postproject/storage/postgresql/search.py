"""The SQL of job search (``Reads.search_jobs``), as SQLite's (:mod:`postproject.storage.sqlite.search`).

Terms match case-insensitively with ``ILIKE``; asset names and diagnostics through their GIN
trigram indexes (``migrations/0007_baseline.sql``).
"""

from __future__ import annotations

import re
from typing import Any

from postproject.engine import JobKey, JobQuery
from postproject.model.lifecycle import JobState
from postproject.storage import job_pages
from postproject.storage.postgresql.types import Id

TRIGRAM = 3  # shorter terms cannot use a trigram index
TAIL_HEX = 6  # an id tail this long (or longer) is found through jobs_by_tail
_HEX = re.compile(r"[0-9a-f]+")
FAILED = JobState.FAILED.code


def _like(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _term(term: str) -> tuple[str, list[Any]]:
    """One term: the job's kind, output asset name, an agent or worker of its attempts, a
    diagnostic, a parameter's value, or its id (whole, or a tail of 6+ hex digits) contains
    it (the clause of a bounded walk: a parameter is looked up per job, job_parameters_by_job;
    as a scalar subquery, which the planner runs per row, where it may turn an EXISTS into one
    scan of every parameter value, hashed: 53 ms at 200,000 jobs for a term shorter than a
    trigram, which no index can find)."""
    like = _like(term)
    parts = [
        "j.kind IN (SELECT kind FROM job_counts WHERE kind ILIKE %s)",
        "j.output_asset_id IN (SELECT asset FROM asset_search WHERE name ILIKE %s)",
        "j.id IN (SELECT job_id FROM job_attempts WHERE agent_name IN "
        "(SELECT name FROM job_agents WHERE name ILIKE %s))",
        "j.id IN (SELECT job_id FROM job_attempts WHERE worker_id IN "
        "(SELECT id FROM workers WHERE name ILIKE %s))",
        "j.id IN (SELECT job FROM job_diagnostics WHERE body ILIKE %s)",
        "(SELECT true FROM job_parameters p WHERE p.job = j.id AND p.value ILIKE %s LIMIT 1)",
    ]
    params: list[Any] = [like] * 6
    digits = term.lower().lstrip("…").replace("-", "")
    if len(digits) >= TAIL_HEX and _HEX.fullmatch(digits):
        if len(digits) == 32:
            parts.append("j.id = %s")
            params.append(Id(bytes.fromhex(digits)))
        else:
            parts.append("(substring(uuid_send(j.id) FROM 14) = %s AND replace(j.id::text, '-', '') LIKE %s)")
            params.extend([bytes.fromhex(digits[-TAIL_HEX:]), f"%{digits}"])
    return "(" + " OR ".join(parts) + ")", params


def _term_ids(term: str, state: int | None) -> tuple[str, list[Any]]:
    """The ids of the jobs :func:`_term` matches, as a union of index lookups (for the
    gather: one OR of hashed subplans can only be tested row by row, along the whole table
    when the term is rare). A term shorter than a trigram has no index into the parameters:
    with a state, only that state's jobs have theirs looked up (job_parameters_by_job), as on
    SQLite, instead of every value scanned."""
    like = _like(term)
    parameters = "SELECT job FROM job_parameters WHERE value ILIKE %s"
    params: list[Any] = [like] * 5
    if len(term) < TRIGRAM and state is not None:
        parameters = (
            "SELECT s.id FROM jobs s CROSS JOIN LATERAL (SELECT 1 FROM job_parameters p"
            " WHERE p.job = s.id AND p.value ILIKE %s LIMIT 1) p WHERE s.state = %s"
        )
        params += [like, state]
    else:
        params.append(like)
    parts = [
        "SELECT id FROM jobs WHERE kind IN (SELECT kind FROM job_counts WHERE kind ILIKE %s)",
        "SELECT id FROM jobs WHERE output_asset_id IN (SELECT asset FROM asset_search WHERE name ILIKE %s)",
        "SELECT job_id FROM job_attempts WHERE agent_name IN (SELECT name FROM job_agents WHERE name ILIKE %s)",
        "SELECT job_id FROM job_attempts WHERE worker_id IN (SELECT id FROM workers WHERE name ILIKE %s)",
        "SELECT job FROM job_diagnostics WHERE body ILIKE %s",
        parameters,
    ]
    digits = term.lower().lstrip("…").replace("-", "")
    if len(digits) >= TAIL_HEX and _HEX.fullmatch(digits):
        if len(digits) == 32:
            parts.append("SELECT id FROM jobs WHERE id = %s")
            params.append(Id(bytes.fromhex(digits)))
        else:
            parts.append(
                "SELECT id FROM jobs WHERE substring(uuid_send(id) FROM 14) = %s"
                " AND replace(id::text, '-', '') LIKE %s"
            )
            params.extend([bytes.fromhex(digits[-TAIL_HEX:]), f"%{digits}"])
    return " UNION ".join(parts), params


COMMON = (
    25  # a term naming this many assets (or found in this many parameters) may match a good share of the jobs
)


def _common(term: str) -> tuple[str, list[Any]]:
    """Whether ``term`` may match many jobs (a kind, an agent, 25+ asset names, or the
    parameters of 25+ jobs): only then is a window of jobs walked in order
    (``Reads.search_jobs``, :func:`may_be_common`). A term shorter than a trigram may always
    be: the trigram indexes cannot tell, and telling would scan every parameter value."""
    if len(term) < TRIGRAM:
        return "TRUE", []
    like = _like(term)
    sql = (
        "(EXISTS (SELECT 1 FROM job_counts WHERE kind ILIKE %s)"
        " OR EXISTS (SELECT 1 FROM job_agents WHERE name ILIKE %s)"
        " OR (SELECT count(*) FROM (SELECT 1 FROM asset_search WHERE name ILIKE %s LIMIT %s) a) = %s"
        " OR (SELECT count(*) FROM (SELECT 1 FROM job_parameters WHERE value ILIKE %s LIMIT %s) p) = %s)"
    )
    return sql, [like, like, like, COMMON, COMMON, like, COMMON, COMMON]


def may_be_common(terms: tuple[str, ...]) -> tuple[str, list[Any]]:
    """One row, one boolean: whether every term may match many jobs (see :func:`_common`);
    asked before a window walk (a query planned in well under a millisecond, where the walk's
    statement takes a few to plan)."""
    guards = [_common(term) for term in terms]
    return "SELECT " + " AND ".join(sql for sql, _ in guards), [v for _, values in guards for v in values]


def job_search(
    query: JobQuery, after: JobKey | None, limit: int, columns: str, window: int | None = None
) -> list[tuple[str, list[Any], tuple[str, list[Any]] | None]]:
    """The statements and parameters of one page of ``query`` (``columns``: what a job row
    reads), one per phase of its sort (:func:`postproject.storage.job_pages.phases`; the
    reader runs them in order until the page is full). With ``window``, only the first
    ``window`` jobs of a phase in the page's order that pass the other filters are tested
    against the terms (see ``Reads.search_jobs``), and each statement comes with the count
    (:func:`~postproject.storage.job_pages.walked`) that says whether the walk covered its
    phase: only then may it go on into the next one."""
    statements = []
    for phase in job_pages.phases(query, after, "%s", Id):
        where, params, order, join = list(phase.where), list(phase.params), phase.order, phase.join
        if window is None and query.terms:
            # Each term's matching ids are gathered through the indexes (a union of lookups),
            # intersected, and only then joined to their rows, one primary-key probe each (the
            # LATERAL ... LIMIT 1 keeps that order: the planner cannot turn it into a walk of
            # the whole table in sort order, filtered row by row, as an OR of subplans would be).
            unions = [_term_ids(term, query.state) for term in query.terms]
            matched = " INTERSECT ".join(f"SELECT id FROM ({sql}) t{n}" for n, (sql, _) in enumerate(unions))
            params = [value for _, values in unions for value in values] + params
            source = (
                f"({matched}) m CROSS JOIN LATERAL (SELECT * FROM jobs j WHERE j.id = m.id LIMIT 1) j{join}"
            )
        elif window is None:
            source = f"jobs j{join}"
        else:
            source = (
                f"(SELECT j.* FROM jobs j{join}"
                + (f" WHERE {' AND '.join(where)}" if where else "")
                + f" ORDER BY {order} LIMIT %s) j{join}"
            )
            terms = [_term(term) for term in query.terms]
            where = [clause for clause, _ in terms]
            params += [window, *(value for _, values in terms for value in values)]
        sql = (
            f"SELECT {columns} FROM {source}"
            + (f" WHERE {' AND '.join(where)}" if where else "")
            + f" ORDER BY {order} LIMIT %s"
        )
        params.append(limit)
        statements.append((sql, params, None if window is None else job_pages.walked(phase, "%s", window)))
    if statements:  # nothing follows the last phase
        statements[-1] = (*statements[-1][:2], None)
    return statements


def failure_diagnostics(kind: str | None, limit: int) -> tuple[str, list[Any]]:
    sql = (
        "SELECT failure_diagnostic, count(*), (array_agg(id ORDER BY id DESC))[1], max(finished_at) "
        f"FROM jobs WHERE state = {FAILED}"
        + (" AND kind = %s" if kind is not None else "")
        + ' GROUP BY failure_diagnostic ORDER BY count(*) DESC, failure_diagnostic COLLATE "C" LIMIT %s'
    )
    return sql, [*([kind] if kind is not None else []), limit]
