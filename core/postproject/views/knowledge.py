"""Artifact knowledge, reproducibility, regeneration plans and provenance graphs as JSON views.

Reasons and issues are ``{"code", "description"?, ...their fields}``; bytes are lowercase
hex, ids canonical text, enums their value, datetimes ``*_unix_micros``.
"""

from __future__ import annotations

import dataclasses
import enum
import uuid
from collections.abc import Iterable
from datetime import datetime
from pathlib import PurePath
from typing import Any

from postproject.knowledge import ArtifactKnowledge, StalePage, describe
from postproject.knowledge.provenance import ActivityNode, JobNode, ProvenanceGraph, RepresentationNode
from postproject.knowledge.regeneration import (
    DownstreamRegeneration,
    RegenerationPlan,
    Reproducibility,
    Unplannable,
    plan_bindings,
)
from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.model.ids import RepresentationId
from postproject.model.jobs import JobRequest
from postproject.views import View, assertion_view, micros, tool_view

_NODE_TYPES = {RepresentationNode: "representation", ActivityNode: "activity", JobNode: "job"}


def _value(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, PurePath):
        return value.as_posix()
    if isinstance(value, ToolIdentity):
        return tool_view(value)
    if isinstance(value, AgentIdentity):
        return {"name": value.name}
    return str(value)


def fields_view(value: Any) -> View:
    """A flat dataclass as a view (datetimes become ``<name>_unix_micros``)."""
    out: View = {}
    for field in dataclasses.fields(value):
        item = getattr(value, field.name)
        if isinstance(item, datetime):
            out[f"{field.name}_unix_micros"] = micros(item)
        else:
            out[field.name] = _value(item)
    return out


def knowledge_view(knowledge: ArtifactKnowledge) -> View:
    return {
        "representation_id": str(knowledge.representation_id),
        "state": knowledge.state.value,
        "reasons": [
            {"code": r.code, "description": describe(r), **fields_view(r)} for r in knowledge.reasons
        ],
        "visited_representations": knowledge.visited_representations,
        "truncated": knowledge.truncated,
    }


def stale_page_view(page: StalePage) -> View:
    return {
        "items": [knowledge_view(k) for k in page.items],
        "next_cursor": page.next_cursor,
        "truncated": page.truncated,
    }


def reproducibility_view(report: Reproducibility) -> View:
    return {
        "representation_id": str(report.representation_id),
        "reproducible": report.reproducible,
        "activity_id": _value(report.activity_id),
        "activity_kind": report.activity_kind,
        "issues": [{"code": issue.code, **fields_view(issue)} for issue in report.issues],
    }


def request_view(request: JobRequest) -> View:
    return {
        "kind": request.kind,
        "inputs": [str(i) for i in request.representation_inputs],
        "output_asset_id": str(request.output_asset_id),
        "output_kind": request.output_representation_kind.value,
        "target_root": request.target_root,
        "regenerates": _value(request.regenerates),
    }


def plan_view(plan: RegenerationPlan, bound: Iterable[RepresentationId] = ()) -> View:
    """A plan; ``bound_inputs`` are the inputs another plan of the same batch regenerates
    (enqueued together, each becomes that plan's job output)."""
    return {
        "artifact_representation_id": str(plan.artifact_id),
        "activity_id": str(plan.activity_id),
        "job": request_view(plan.job),
        "parameters": [assertion_view(a) for a in plan.parameters],
        "superseded_inputs": [
            {"input_id": str(s.input_id), "current_id": str(s.current_id)} for s in plan.superseded_inputs
        ],
        "bound_inputs": [str(i) for i in bound],
    }


def unplannable_view(item: Unplannable) -> View:
    return {"artifact_representation_id": str(item.artifact_id), "code": item.code, "message": item.message}


def plans_view(plans: Iterable[RegenerationPlan], downstream: DownstreamRegeneration | None = None) -> View:
    """``{plans, unplannable, truncated}`` for either kind of planning."""
    plans = tuple(plans)
    return {
        "plans": [plan_view(p, bound) for p, bound in zip(plans, plan_bindings(plans), strict=True)],
        "unplannable": [unplannable_view(u) for u in downstream.unplannable] if downstream else [],
        "truncated": downstream.truncated if downstream else False,
    }


def graph_view(graph: ProvenanceGraph) -> View:
    return {
        "focus": str(graph.focus),
        "nodes": [{"type": _NODE_TYPES[type(n)], **fields_view(n)} for n in graph.nodes],
        "edges": [fields_view(e) for e in graph.edges],
        "truncated": graph.truncated,
    }
