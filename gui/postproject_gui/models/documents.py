"""JSON documents of what the views show (no Qt): a provenance graph, one of its nodes, and
the Artifacts view's rows.

:func:`graph_document` and :func:`artifacts_document` turn the values the views were given
into the JSON that snapshot mode writes; :func:`node_document` is also what the Provenance
tab's detail panel shows about the selected node.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from postproject import ArtifactKnowledge, RepresentationId
from postproject.knowledge.provenance import ActivityNode, ProvenanceGraph, ProvenanceNode, RepresentationNode
from postproject_gui.look.artifact_states import (
    Labeller,
    graph_labeller,
    node_label,
    reason_text,
    representation_look,
)
from postproject_gui.services.artifact_rows import ArtifactRow


def graph_document(
    graph: ProvenanceGraph, knowledge: Mapping[RepresentationId, ArtifactKnowledge] | None = None
) -> dict[str, Any]:
    """Nodes (with knowledge state, what the graph shows for it and the reasons), edges, focus."""
    known, label = knowledge or {}, graph_labeller(graph)
    produced = frozenset(e.target for e in graph.edges if e.relation == "generated")
    edges = [
        {"source": str(e.source), "target": str(e.target), "relation": e.relation, "role": e.role}
        for e in graph.edges
    ]
    nodes = [node_document(n, graph.focus, known, label, n.id in produced) for n in graph.nodes]
    return {"focus": str(graph.focus), "truncated": graph.truncated, "nodes": nodes, "edges": edges}


def node_document(
    node: ProvenanceNode,
    focus: RepresentationId,
    knowledge: Mapping[RepresentationId, ArtifactKnowledge],
    label: Labeller | None = None,
    produced: bool = True,
) -> dict[str, Any]:
    """One node as JSON-ready values (also what a detail panel shows about it)."""
    entry: dict[str, Any] = {"id": str(node.id), "label": node_label(node)}
    if isinstance(node, RepresentationNode):
        k = knowledge.get(node.id)
        state, look = representation_look(node, k, produced)
        entry.update(
            type="representation",
            asset_id=str(node.asset_id),
            asset_name=node.asset_name,
            kind=node.kind.value,
            root=node.root,
            path=node.path.as_posix(),
            availability=node.availability.value if node.availability is not None else None,
            state=state.value,
            shown_as=look.label.lower(),
            reasons=[{"code": r.code, "text": reason_text(r, label)} for r in (k.reasons if k else ())],
            focus=node.id == focus,
        )
    elif isinstance(node, ActivityNode):
        entry.update(
            type="activity",
            kind=node.kind,
            tool=str(node.tool) if node.tool is not None else None,
            agent=str(node.agent) if node.agent is not None else None,
            started_at=node.started_at.isoformat() if node.started_at else None,
            finished_at=node.finished_at.isoformat() if node.finished_at else None,
        )
    else:
        entry.update(type="job", kind=node.kind, state=node.state.value, activity_id=str(node.activity_id))
    return entry


def artifacts_document(rows: Iterable[ArtifactRow]) -> dict[str, Any]:
    """The Artifacts view's rows (``items``) and its stale count."""
    items = []
    for row in rows:
        items.append(
            {
                "id": str(row.id),
                "asset_id": str(row.asset_id),
                "asset_name": row.asset_name,
                "kind": row.representation.kind.value,
                "path": row.display_path,
                "availability": row.availability.value if row.availability is not None else None,
                "state": row.state.value if row.state is not None else None,
                "reasons": [r.code for r in row.knowledge.reasons] if row.knowledge is not None else [],
            }
        )
    stale = sum(1 for item in items if item["state"] in ("stale", "diverged"))
    return {"items": items, "stale_count": stale}
