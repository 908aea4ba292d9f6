"""Compatibility name: provenance graphs live in :mod:`postproject.knowledge.provenance`."""

from __future__ import annotations

from postproject.knowledge.provenance import (
    MAX_HOPS,
    MAX_NODES,
    ActivityNode,
    JobNode,
    NodeId,
    ProvenanceEdge,
    ProvenanceGraph,
    ProvenanceNode,
    RepresentationNode,
)

__all__ = [
    "MAX_HOPS",
    "MAX_NODES",
    "ActivityNode",
    "JobNode",
    "NodeId",
    "ProvenanceEdge",
    "ProvenanceGraph",
    "ProvenanceNode",
    "RepresentationNode",
]
