"""Artifact knowledge, regeneration, provenance graphs and W3C PROV export, in one family.

- :mod:`.evaluation`: is a derived representation still what its recorded inputs made?
- :mod:`.regeneration`: reproducibility and regeneration plans (one job per artifact).
- :mod:`.provenance`: bounded provenance graphs for drawing.
- :mod:`.prov`: W3C PROV-JSON / PROV-N export.

All of them read provenance facts through the engine interface
(:class:`postproject.engine.GraphFacts`), one read snapshot per operation.
"""

from __future__ import annotations

from postproject.knowledge.evaluation import (
    MAX_DEPTH,
    MAX_DESCENDANTS,
    MAX_REPRESENTATIONS,
    ArtifactKnowledge,
    ArtifactState,
    Evaluator,
    FingerprintChanged,
    FingerprintEvidenceMissing,
    ProducingActivityAmbiguous,
    ProducingActivityMissing,
    SnapshotAbsent,
    StalenessReason,
    StalePage,
    Superseded,
    TraversalTruncated,
    UpstreamNotCurrent,
    check_bounds,
    compare,
    describe,
    evaluate,
    evaluate_many,
    stale_artifacts,
    worst,
)

__all__ = [
    "MAX_DEPTH",
    "MAX_DESCENDANTS",
    "MAX_REPRESENTATIONS",
    "ArtifactKnowledge",
    "ArtifactState",
    "Evaluator",
    "FingerprintChanged",
    "FingerprintEvidenceMissing",
    "ProducingActivityAmbiguous",
    "ProducingActivityMissing",
    "SnapshotAbsent",
    "StalePage",
    "StalenessReason",
    "Superseded",
    "TraversalTruncated",
    "UpstreamNotCurrent",
    "check_bounds",
    "compare",
    "describe",
    "evaluate",
    "evaluate_many",
    "stale_artifacts",
    "worst",
]
