"""The provenance graph read model the monitor draws.

:func:`provenance` returns a bounded neighbourhood of one representation: representations
(with asset, kind, availability and knowledge state), the activities between them (kind,
tool, agent, times; every edge of an included activity is included) and the jobs those
activities completed. Edges point the way data flows: representation -> activity (used),
activity -> representation (generated), job -> activity (completed).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePath
from typing import Literal

from postproject.base.handle import ProductionHandle
from postproject.engine import GraphFacts
from postproject.knowledge.evaluation import ArtifactState, evaluate_many
from postproject.model.assets import Availability, RepresentationKind
from postproject.model.errors import InvalidArgumentError, NotFoundError
from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.model.ids import ActivityId, AssetId, JobId, RepresentationId
from postproject.model.jobs import Job
from postproject.model.lifecycle import JobState
from postproject.model.pages import check_limit

MAX_HOPS = 64
MAX_NODES = 5000


@dataclass(frozen=True, slots=True)
class RepresentationNode:
    """A representation in the graph; ``availability`` is None when files were not checked.

    ``superseded_by`` names the representation that replaced it (its state is then
    ``superseded``); the replacement may lie outside the graph.
    """

    id: RepresentationId
    asset_id: AssetId
    asset_name: str | None
    kind: RepresentationKind
    path: PurePath
    root: str | None
    availability: Availability | None
    state: ArtifactState
    superseded_by: RepresentationId | None = None


@dataclass(frozen=True, slots=True)
class ActivityNode:
    """An activity in the graph."""

    id: ActivityId
    kind: str
    tool: ToolIdentity | None
    agent: AgentIdentity | None
    started_at: datetime | None
    finished_at: datetime | None


@dataclass(frozen=True, slots=True)
class JobNode:
    """A job that completed one of the graph's activities (workflow context, not provenance)."""

    id: JobId
    kind: str
    state: JobState
    activity_id: ActivityId


ProvenanceNode = RepresentationNode | ActivityNode | JobNode
NodeId = RepresentationId | ActivityId | JobId


@dataclass(frozen=True, slots=True)
class ProvenanceEdge:
    """A directed edge in data-flow direction; ``role`` is the activity edge's role, if any."""

    source: NodeId
    target: NodeId
    relation: Literal["used", "generated", "completed"]
    role: str | None = None


@dataclass(frozen=True, slots=True)
class ProvenanceGraph:
    """A bounded provenance neighbourhood of ``focus``; ``truncated`` when the node limit cut it."""

    focus: RepresentationId
    nodes: tuple[ProvenanceNode, ...]
    edges: tuple[ProvenanceEdge, ...]
    truncated: bool

    def node(self, node_id: NodeId) -> ProvenanceNode:
        """The node with this id (KeyError when it is not in the graph)."""
        for node in self.nodes:
            if node.id == node_id:
                return node
        raise KeyError(node_id)


def provenance(
    handle: ProductionHandle,
    representation_id: RepresentationId,
    *,
    upstream: int = 3,
    downstream: int = 3,
    limit: int = 500,
    check_files: bool = True,
) -> ProvenanceGraph:
    """See :meth:`Production.provenance`."""
    handle.check_open()
    if type(representation_id) is not RepresentationId:
        raise InvalidArgumentError(
            f"representation_id must be a RepresentationId; got {type(representation_id).__name__}"
        )
    for name, hops in (("upstream", upstream), ("downstream", downstream)):
        if isinstance(hops, bool) or not isinstance(hops, int):
            raise TypeError(f"{name} must be an int; got {type(hops).__name__}")
        if not 0 <= hops <= MAX_HOPS:
            raise InvalidArgumentError(f"{name} must be between 0 and {MAX_HOPS}; got {hops}")
    check_limit(limit, maximum=MAX_NODES)
    with handle.engine.graph.snapshot() as graph:
        if not graph.exists(representation_id.bytes):
            raise NotFoundError(f"representation {representation_id} does not exist")
        found = neighbourhood(graph, representation_id.bytes, upstream, downstream, limit)
        representations = graph.representations(found.representations)
        activities = graph.activities(sorted(found.edges))
        states = {k.representation_id: k.state for k in evaluate_many(graph, sorted(found.representations))}
    nodes: list[ProvenanceNode] = []
    for rep, asset_name in representations:
        availability = None
        if check_files:
            path = handle.resolve(rep)
            availability = (
                Availability.ONLINE if path is not None and path.is_file() else Availability.OFFLINE
            )
        nodes.append(
            RepresentationNode(
                rep.id,
                rep.asset_id,
                asset_name,
                rep.kind,
                rep.path,
                rep.root,
                availability,
                states[rep.id],
                rep.superseded_by,
            )
        )
    edges: list[ProvenanceEdge] = []
    for activity in activities:
        nodes.append(
            ActivityNode(
                activity.id,
                activity.kind,
                activity.tool,
                activity.agent,
                activity.started_at,
                activity.finished_at,
            )
        )
        edges.extend(
            ProvenanceEdge(e.representation_id, activity.id, "used", e.role) for e in activity.inputs
        )
        edges.extend(
            ProvenanceEdge(activity.id, e.representation_id, "generated", e.role) for e in activity.outputs
        )
    for job in found.jobs:
        assert job.completion is not None
        nodes.append(JobNode(job.id, job.kind, job.state, job.completion.activity_id))
        edges.append(ProvenanceEdge(job.id, job.completion.activity_id, "completed"))
    return ProvenanceGraph(representation_id, tuple(nodes), tuple(edges), found.truncated)


@dataclass(frozen=True, slots=True)
class Neighbourhood:
    """A bounded piece of the provenance graph around one representation (ids as bytes)."""

    representations: list[bytes]
    edges: dict[bytes, list[tuple[int, bytes, str]]]  # activity -> (direction, representation, role)
    jobs: list[Job]
    truncated: bool


def neighbourhood(
    graph: GraphFacts, focus: bytes, upstream: int, downstream: int, limit: int
) -> Neighbourhood:
    """Representations, activities (with all their edges) and completing jobs around ``focus``.

    Walks ``upstream`` activity hops towards inputs and ``downstream`` hops towards outputs, an
    activity at a time in id order (each with every edge, its new representations in id
    order); stops adding once ``limit`` nodes are reached (``truncated``). Jobs come last, as
    room allows. Call it inside one graph snapshot.
    """
    reps: dict[bytes, None] = {focus: None}
    edges: dict[bytes, list[tuple[int, bytes, str]]] = {}
    truncated = False
    for hops, near in ((upstream, 1), (downstream, 0)):
        frontier = [focus]
        for _ in range(hops):
            new = [a for a in graph.activities_of(frontier, near) if a not in edges]
            frontier = []
            for activity, activity_edges in graph.activity_edges(new).items():
                fresh = {rep for _, rep, _ in activity_edges if rep not in reps}
                if len(reps) + len(edges) + 1 + len(fresh) > limit:
                    truncated = True
                    break
                edges[activity] = activity_edges
                reps.update((rep, None) for rep in sorted(fresh))
                frontier.extend(rep for direction, rep, _ in activity_edges if direction != near)
            if truncated or not frontier:
                break
        if truncated:
            break
    jobs = graph.completing_jobs(sorted(edges))
    room = max(0, limit - len(reps) - len(edges))
    return Neighbourhood(list(reps), edges, jobs[:room], truncated or len(jobs) > room)
