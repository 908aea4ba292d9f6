"""The knowledge area of a production: artifact evaluation, regeneration plans, provenance graphs.

``Production`` builds one :class:`KnowledgeReads`, given its handle, and delegates its
knowledge reads to it (their public docstrings are on
:class:`postproject.production.Production`); the rules live in :mod:`postproject.knowledge`.
"""

from __future__ import annotations

from collections.abc import Iterable

from postproject.base.handle import ProductionHandle
from postproject.knowledge import evaluation, provenance, regeneration
from postproject.knowledge.evaluation import ArtifactKnowledge, StalePage
from postproject.knowledge.provenance import ProvenanceGraph
from postproject.knowledge.regeneration import DownstreamRegeneration, RegenerationPlan, Reproducibility
from postproject.model.ids import RepresentationId


class KnowledgeReads:
    """Artifact knowledge, regeneration plans and provenance graphs (read-only)."""

    def __init__(self, handle: ProductionHandle) -> None:
        self._handle = handle

    def evaluate_artifact(
        self,
        representation_id: RepresentationId,
        *,
        max_depth: int = 64,
        max_representations: int = 1000,
    ) -> ArtifactKnowledge:
        """Whether an artifact still matches its recorded inputs: current, stale, indeterminate, diverged."""
        return evaluation.evaluate(
            self._handle, representation_id, max_depth=max_depth, max_representations=max_representations
        )

    def stale_artifacts(
        self,
        limit: int = 100,
        cursor: str | None = None,
        source: RepresentationId | None = None,
        *,
        include_superseded: bool = False,
    ) -> StalePage:
        """A page of stale or diverged artifacts, examining ``limit`` candidates in id order."""
        return evaluation.stale_artifacts(
            self._handle, limit, cursor, source, include_superseded=include_superseded
        )

    def reproducibility(self, representation_id: RepresentationId) -> Reproducibility:
        """Every condition missing to reproduce an artifact (no producer, ambiguous producer, tool
        identity, parameters, an input)."""
        return regeneration.reproducibility(self._handle, representation_id)

    def plan_regeneration(
        self, artifact_ids: Iterable[RepresentationId], *, current_inputs: bool = False
    ) -> tuple[RegenerationPlan, ...]:
        """Propose one requested job per distinct artifact, ordered by artifact id (read-only)."""
        return regeneration.plan_regeneration(self._handle, artifact_ids, current_inputs=current_inputs)

    def plan_downstream_regeneration(
        self, representation_id: RepresentationId, *, current_inputs: bool = True
    ) -> DownstreamRegeneration:
        """Plans for every stale or diverged descendant of a changed representation, inputs first."""
        return regeneration.plan_downstream_regeneration(
            self._handle, representation_id, current_inputs=current_inputs
        )

    def provenance(
        self,
        representation_id: RepresentationId,
        *,
        upstream: int = 3,
        downstream: int = 3,
        limit: int = 500,
        check_files: bool = True,
    ) -> ProvenanceGraph:
        """A bounded provenance graph around a representation, for drawing."""
        return provenance.provenance(
            self._handle,
            representation_id,
            upstream=upstream,
            downstream=downstream,
            limit=limit,
            check_files=check_files,
        )
