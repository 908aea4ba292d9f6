"""The knowledge reads of a production (:class:`KnowledgeReads` is one part of ``Production``)."""

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

    _handle: ProductionHandle

    def evaluate_artifact(
        self,
        representation_id: RepresentationId,
        *,
        max_depth: int = 64,
        max_representations: int = 1000,
    ) -> ArtifactKnowledge:
        """Whether an artifact still matches its recorded inputs: current, stale, indeterminate, diverged.

        Read-only (one snapshot, no file I/O, no revision); recurses upstream only through
        inputs that have a producer; truncation yields indeterminate, never current.

        Args:
            max_depth: upstream levels to follow (1-64).
            max_representations: representations to evaluate at most (1-1000).

        Raises:
            NotFoundError: (not_found) the representation does not exist.
            InvalidArgumentError: (invalid_argument) a bad id type or a bound out of range.
        """
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
        """A page of stale or diverged artifacts, examining ``limit`` candidates in id order.

        Candidates are activity outputs, or the provenance descendants of ``source``; a page
        may hold fewer items than ``limit`` (even none) and still have a ``next_cursor``.
        Superseded artifacts (replaced by a regeneration) are left out unless
        ``include_superseded``.

        Raises:
            NotFoundError: (not_found) ``source`` does not exist.
            InvalidArgumentError: (invalid_argument) bad limit, or a cursor from another query.
        """
        return evaluation.stale_artifacts(
            self._handle, limit, cursor, source, include_superseded=include_superseded
        )

    def reproducibility(self, representation_id: RepresentationId) -> Reproducibility:
        """Every condition missing to reproduce an artifact (no producer, ambiguous producer,
        tool identity, parameters, an input).

        Raises:
            NotFoundError: (not_found) the representation does not exist.
        """
        return regeneration.reproducibility(self._handle, representation_id)

    def plan_regeneration(
        self, artifact_ids: Iterable[RepresentationId], *, current_inputs: bool = False
    ) -> tuple[RegenerationPlan, ...]:
        """Propose one requested job per distinct artifact, ordered by artifact id (read-only).

        A plan repeats the producing activity's inputs and lists those that were superseded
        in ``plan.superseded_inputs``; with ``current_inputs`` it takes each superseded input's
        current replacement instead. Each plan's job records the artifact it regenerates.
        All or nothing: the first artifact that cannot be planned fails the call.

        Raises:
            InvalidArgumentError: (invalid_argument) more than 100 000 ids, or a non-id.
            NotFoundError: (not_found) an artifact does not exist.
            ConflictError: (conflict) an artifact has no or several producing activities
                (reason ``producing_activity_missing`` / ``producing_activity_ambiguous``).
        """
        return regeneration.plan_regeneration(self._handle, artifact_ids, current_inputs=current_inputs)

    def plan_downstream_regeneration(
        self, representation_id: RepresentationId, *, current_inputs: bool = True
    ) -> DownstreamRegeneration:
        """Plans for every stale or diverged descendant of a changed representation, inputs first.

        Superseded descendants need no plan. Plans use the current replacement of every
        superseded input (``current_inputs=False`` repeats the recorded inputs instead);
        enqueue them with ``transaction.enqueue_plans`` so each plan's inputs that another
        plan regenerates are bound to that job's output. Descendants that cannot be planned
        are listed in ``unplannable`` instead of failing.

        Raises:
            NotFoundError: (not_found) the representation does not exist.
        """
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
        """A bounded provenance graph around a representation, for drawing.

        Args:
            upstream: activity hops towards inputs (0-64).
            downstream: activity hops towards outputs (0-64).
            limit: nodes at most (1-5000); ``truncated`` tells when it cut the graph.
            check_files: fill each representation's availability (stats files) or leave it None.

        Raises:
            NotFoundError: (not_found) the representation does not exist.
            InvalidArgumentError: (invalid_argument) a bound out of range.
        """
        return provenance.provenance(
            self._handle,
            representation_id,
            upstream=upstream,
            downstream=downstream,
            limit=limit,
            check_files=check_files,
        )
