"""Provenance exports without Qt: W3C PROV files, and JSON documents of what the views show.

:func:`export_prov` opens the production read-only and writes PROV-JSON or PROV-N through
:mod:`postproject.knowledge.prov`; the service calls it on a reader thread (it reads the database and
writes a file). :func:`graph_document` and :func:`artifacts_document` turn the values the
views were given into the JSON that snapshot mode writes.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from postproject import ArtifactKnowledge, Production, RepresentationId
from postproject.knowledge import prov as pp_prov
from postproject.knowledge.provenance import ActivityNode, ProvenanceGraph, ProvenanceNode, RepresentationNode
from postproject_gui.artifact_rows import ArtifactRow
from postproject_gui.artifact_states import (
    Labeller,
    graph_labeller,
    node_label,
    reason_text,
    representation_look,
)

ProvFormat = Literal["json", "provn"]
SUFFIXES: dict[ProvFormat, str] = {"json": ".json", "provn": ".provn"}


def export_prov(
    production_path: str | os.PathLike[str],
    rep_ids: Iterable[RepresentationId] | None,
    fmt: ProvFormat,
    out_path: str | os.PathLike[str],
) -> Path:
    """Write the provenance of ``rep_ids`` (their whole upstream lineage; None: everything)
    as PROV-JSON (``fmt="json"``) or PROV-N (``"provn"``) to ``out_path``; returns the path.

    The file is written next to its destination and renamed into place, so a failed export
    never leaves half a file. Raises the core's errors (``not_found``, ``unsupported``, ...).
    """
    if fmt not in SUFFIXES:
        raise ValueError(f"fmt must be 'json' or 'provn'; got {fmt!r}")
    out = Path(out_path)
    with Production.open(production_path, read_only=True) as production:
        document = pp_prov.export(production, list(rep_ids) if rep_ids is not None else None)
    text = pp_prov.serialize(document, fmt)
    fd, temporary = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        Path(temporary).replace(out)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return out


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
