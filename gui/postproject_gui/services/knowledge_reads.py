"""Artifact and provenance reads the service runs on its reader threads (never the GUI thread).

Plain functions of (production, arguments), like :mod:`postproject_gui.services.reads`.
Bounds, so that no call scans an unbounded production:

- :func:`provenance` reads at most :data:`GRAPH_LIMIT` nodes, three activity hops each way;
- :func:`stale_count` examines at most :data:`STALE_SCAN` candidates (activity outputs, in
  id order) and says when it stopped early, so the summary shows "N+" for a production with
  more derived artifacts than that;
- :func:`knowledge_change` follows at most :data:`AFFECTED_LIMIT` descendants of at most
  :data:`AFFECTED_ROOTS` changed representations, and otherwise says it is incomplete;
- :func:`plan_regeneration` names at most :data:`MAX_NAMED` representations in the preview.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from postproject import (
    ActivityId,
    ConflictError,
    JobId,
    NotFoundError,
    Production,
    RegenerationPlan,
    RepresentationId,
    Unplannable,
)
from postproject.knowledge.provenance import RepresentationNode
from postproject_gui.services.artifact_rows import ArtifactRow, read_page, read_rows
from postproject_gui.services.types import (
    ArtifactPage,
    GraphRead,
    KnowledgeChange,
    RegenerationPreview,
    StaleCount,
)

GRAPH_HOPS = 3  # activity hops upstream and downstream of the focus
GRAPH_LIMIT = 500  # nodes at most (the graph says when it was truncated)
STALE_SCAN = 5000  # candidates the stale count examines at most
STALE_PAGE = 500
AFFECTED_ROOTS = 200  # changed representations followed downstream at most (else: incomplete)
AFFECTED_LIMIT = 5000  # nodes per downstream walk
MAX_NAMED = 500  # representations named in a regeneration preview


def provenance(production: Production, rep_id: RepresentationId) -> GraphRead:
    """The neighbourhood of a representation and the knowledge (with reasons) of its nodes."""
    revision = production.latest_sequence()
    graph = production.provenance(rep_id, upstream=GRAPH_HOPS, downstream=GRAPH_HOPS, limit=GRAPH_LIMIT)
    knowledge = {
        node.id: production.evaluate_artifact(node.id)
        for node in graph.nodes
        if isinstance(node, RepresentationNode)
    }
    return GraphRead(graph, knowledge, revision)


def job_focus(production: Production, job_id: JobId) -> RepresentationId:
    """The representation whose graph shows a job: what it produced, else its first input."""
    job = production.job(job_id)
    if job.completion is not None:
        return job.completion.representation_id
    if job.inputs:
        return job.inputs[0]
    raise NotFoundError(f"job {job_id} has neither an output nor an input to show the provenance of")


def provenance_for_job(production: Production, job_id: JobId) -> GraphRead:
    """:func:`provenance` of :func:`job_focus`."""
    return provenance(production, job_focus(production, job_id))


def artifact_page(production: Production, cursor: str | None, limit: int) -> ArtifactPage:
    rows, next_cursor = read_page(production, limit, cursor)
    return ArtifactPage(rows, next_cursor)


def artifact_rows(
    production: Production, ids: Iterable[RepresentationId]
) -> dict[RepresentationId, ArtifactRow | None]:
    return read_rows(production, ids)


def stale_count(production: Production) -> StaleCount:
    """Stale or diverged artifacts among the first :data:`STALE_SCAN` candidates."""
    count = examined = 0
    cursor: str | None = None
    while True:
        page = production.stale_artifacts(limit=STALE_PAGE, cursor=cursor)
        count += len(page.items)
        examined += STALE_PAGE
        cursor = page.next_cursor
        if cursor is None:
            return StaleCount(count, examined, True)
        if examined >= STALE_SCAN:
            return StaleCount(count, examined, False)


def knowledge_change(
    production: Production,
    representations: Iterable[RepresentationId],
    activities: Iterable[ActivityId],
    jobs: Iterable[JobId],
) -> KnowledgeChange:
    """The representations whose knowledge may have changed after these were added or
    observed, these activities created and these jobs completed: their outputs and every
    descendant."""
    roots = set(representations)
    for activity_id in activities:
        try:
            roots.update(edge.representation_id for edge in production.activity(activity_id).outputs)
        except NotFoundError:
            continue
    for job_id in jobs:
        try:
            done = production.job(job_id).completion
        except NotFoundError:
            continue
        if done is not None:
            roots.add(done.representation_id)
    if len(roots) > AFFECTED_ROOTS:
        return KnowledgeChange(frozenset(roots), complete=False)
    found, complete = set(roots), True
    for rep_id in roots:
        try:
            graph = production.provenance(
                rep_id, upstream=0, downstream=64, limit=AFFECTED_LIMIT, check_files=False
            )
        except NotFoundError:
            continue
        found.update(n.id for n in graph.nodes if isinstance(n, RepresentationNode))
        complete = complete and not graph.truncated
    return KnowledgeChange(frozenset(found), complete)


def plan_regeneration(production: Production, ids: Sequence[RepresentationId]) -> RegenerationPreview:
    """One plan per artifact, each planned on its own so that one artifact that cannot be
    planned (no producer, several producers, gone) is listed instead of failing the rest."""
    plans: list[RegenerationPlan] = []
    unplannable: list[Unplannable] = []
    for rep_id in sorted(set(ids), key=lambda r: r.int):
        try:
            plans.extend(production.plan_regeneration([rep_id]))
        except (ConflictError, NotFoundError) as error:
            unplannable.append(Unplannable(rep_id, error.reason or error.code.value, error.message))
    return RegenerationPreview(tuple(plans), tuple(unplannable), _named(production, plans, unplannable))


def plan_downstream(production: Production, rep_id: RepresentationId) -> RegenerationPreview:
    """Plans for everything stale or diverged downstream of a changed representation."""
    found = production.plan_downstream_regeneration(rep_id)
    return RegenerationPreview(
        found.plans,
        found.unplannable,
        _named(production, found.plans, found.unplannable),
        found.truncated,
    )


def _named(
    production: Production, plans: Sequence[RegenerationPlan], unplannable: Sequence[Unplannable]
) -> dict[RepresentationId, ArtifactRow]:
    """Rows for the artifacts and inputs a preview names (files are not checked)."""
    wanted: dict[RepresentationId, None] = {}
    for plan in plans:
        wanted[plan.artifact_id] = None
        wanted.update(dict.fromkeys(plan.job.representation_inputs))
    wanted.update(dict.fromkeys(u.artifact_id for u in unplannable))
    ids = list(wanted)[:MAX_NAMED]
    rows = read_rows(production, ids, check_files=False)
    return {rep_id: row for rep_id, row in rows.items() if row is not None}
