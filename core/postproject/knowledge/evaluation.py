"""Artifact knowledge: is a derived representation still what its recorded inputs made?

Knowledge is computed, never stored (notes §5.1). A representation with exactly one
producing activity is compared with the fingerprints its edges snapshotted at commit: a
changed output means ``diverged``, a changed input ``stale``, missing evidence
``indeterminate``. Inputs that have a producer are evaluated recursively (memoized per
representation, bounded by ``max_depth`` and ``max_representations``); a non-current
upstream makes the artifact stale (stale, diverged or superseded upstream) or indeterminate,
with an ``upstream_not_current`` reason followed by the upstream's reasons. A representation
that a regeneration job's output replaced is ``superseded`` whatever its edges say, with
the replacement as its reason. Source media (no
producer) never make an artifact indeterminate. Truncation never yields ``current``.

Evaluation is read-only: one read snapshot, no file I/O, no revision. Batches (a stale
page, a provenance graph) share loaded facts but evaluate each root on its own, so every
item equals what :func:`evaluate` says about it.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from postproject.base.handle import ProductionHandle
from postproject.engine import EdgeFacts, Fingerprints, GraphFacts
from postproject.knowledge.upstream import Upstream
from postproject.model.errors import InvalidArgumentError, NotFoundError
from postproject.model.ids import RepresentationId
from postproject.model.pages import Page, check_limit

MAX_DEPTH = 64
MAX_REPRESENTATIONS = 1000
MAX_DESCENDANTS = 100_000
Edge = Literal["input", "output"]


class ArtifactState(enum.Enum):
    """Knowledge state of an artifact; combine with :func:`worst` (by ``severity``)."""

    CURRENT = "current"
    INDETERMINATE = "indeterminate"
    STALE = "stale"
    DIVERGED = "diverged"
    SUPERSEDED = "superseded"

    @property
    def severity(self) -> int:
        """0 current < 1 indeterminate < 2 stale < 3 diverged < 4 superseded (a replaced
        artifact is superseded whatever else is true of it)."""
        return _SEVERITY[self]


_SEVERITY = {
    ArtifactState.CURRENT: 0,
    ArtifactState.INDETERMINATE: 1,
    ArtifactState.STALE: 2,
    ArtifactState.DIVERGED: 3,
    ArtifactState.SUPERSEDED: 4,
}
# An upstream in one of these states makes its consumers stale.
_STALE_UPSTREAM = frozenset((ArtifactState.STALE, ArtifactState.DIVERGED, ArtifactState.SUPERSEDED))


def worst(*states: ArtifactState) -> ArtifactState:
    """The most severe of ``states`` (current for none)."""
    return max(states, key=_SEVERITY.__getitem__, default=ArtifactState.CURRENT)


@dataclass(frozen=True, slots=True)
class FingerprintChanged:
    """An edge's representation has another value in a domain than its snapshot recorded."""

    edge: Edge
    representation_id: RepresentationId
    algorithm: str
    version: int
    snapshot: bytes
    current: bytes
    code: ClassVar[str] = "fingerprint_changed"


@dataclass(frozen=True, slots=True)
class FingerprintEvidenceMissing:
    """A domain is known on one side only (``present_in``), or neither side has any fingerprint."""

    edge: Edge
    representation_id: RepresentationId
    algorithm: str | None = None
    version: int | None = None
    present_in: Literal["snapshot", "current"] | None = None
    code: ClassVar[str] = "fingerprint_evidence_missing"


@dataclass(frozen=True, slots=True)
class SnapshotAbsent:
    """The edge was recorded without a snapshot (so nothing can be compared)."""

    edge: Edge
    representation_id: RepresentationId
    code: ClassVar[str] = "snapshot_absent"


@dataclass(frozen=True, slots=True)
class ProducingActivityMissing:
    """No activity outputs the representation (source media, or an unrecorded derivation)."""

    representation_id: RepresentationId
    code: ClassVar[str] = "producing_activity_missing"


@dataclass(frozen=True, slots=True)
class ProducingActivityAmbiguous:
    """Several activities output the representation."""

    representation_id: RepresentationId
    activity_count: int
    code: ClassVar[str] = "producing_activity_ambiguous"


@dataclass(frozen=True, slots=True)
class UpstreamNotCurrent:
    """An input that has a producer is itself not current."""

    representation_id: RepresentationId
    upstream_state: ArtifactState
    code: ClassVar[str] = "upstream_not_current"


@dataclass(frozen=True, slots=True)
class Superseded:
    """The output of a job that regenerated the representation replaced it."""

    representation_id: RepresentationId
    superseded_by: RepresentationId
    code: ClassVar[str] = "superseded"


@dataclass(frozen=True, slots=True)
class TraversalTruncated:
    """Evaluation stopped at ``max_depth`` or ``max_representations``."""

    limit: Literal["depth", "representations"]
    code: ClassVar[str] = "traversal_truncated"


StalenessReason = (
    FingerprintChanged
    | FingerprintEvidenceMissing
    | SnapshotAbsent
    | ProducingActivityMissing
    | ProducingActivityAmbiguous
    | UpstreamNotCurrent
    | Superseded
    | TraversalTruncated
)


@dataclass(frozen=True, slots=True)
class ArtifactKnowledge:
    """What is known about one artifact: state, typed reasons, how far evaluation looked."""

    representation_id: RepresentationId
    state: ArtifactState
    reasons: tuple[StalenessReason, ...]
    visited_representations: int
    truncated: bool


@dataclass(frozen=True, slots=True)
class StalePage(Page[ArtifactKnowledge]):
    """A stale-artifact page; ``truncated`` when the descendants of ``source`` were cut off."""

    truncated: bool = False


def describe(reason: StalenessReason) -> str:
    """A one-line, human explanation of a reason (for tooltips and reports)."""
    match reason:
        case FingerprintChanged():
            return (
                f"{reason.edge} {reason.representation_id} changed ({reason.algorithm}/{reason.version}: "
                f"{reason.snapshot.hex()[:12]}… is now {reason.current.hex()[:12]}…)"
            )
        case FingerprintEvidenceMissing(algorithm=None):
            return f"{reason.edge} {reason.representation_id} has no fingerprints to compare"
        case FingerprintEvidenceMissing():
            return (
                f"{reason.edge} {reason.representation_id} has a {reason.algorithm}/{reason.version} "
                f"fingerprint only in its {reason.present_in} value"
            )
        case SnapshotAbsent():
            return f"{reason.edge} {reason.representation_id} was recorded without a snapshot"
        case ProducingActivityMissing():
            return f"no activity produced {reason.representation_id}"
        case ProducingActivityAmbiguous():
            return f"{reason.activity_count} activities produced {reason.representation_id}"
        case UpstreamNotCurrent():
            return f"upstream {reason.representation_id} is {reason.upstream_state.value}"
        case Superseded():
            return f"{reason.representation_id} was superseded by {reason.superseded_by}"
        case TraversalTruncated():
            return f"evaluation stopped at its {reason.limit} limit"


def compare(
    edge: Edge, rep: bytes, snapshot: Fingerprints | None, current: Fingerprints
) -> tuple[ArtifactState, list[StalenessReason]]:
    """Compare one edge's snapshot with the representation's current fingerprints."""
    rep_id = RepresentationId(rep)
    if snapshot is None:
        return ArtifactState.INDETERMINATE, [SnapshotAbsent(edge, rep_id)]
    if not snapshot and not current:
        return ArtifactState.INDETERMINATE, [FingerprintEvidenceMissing(edge, rep_id)]
    if snapshot == current:
        return ArtifactState.CURRENT, []
    changed = ArtifactState.DIVERGED if edge == "output" else ArtifactState.STALE
    state = ArtifactState.CURRENT
    reasons: list[StalenessReason] = []
    for domain in sorted(snapshot.keys() | current.keys()):
        old, new = snapshot.get(domain), current.get(domain)
        if old is not None and new is not None:
            if old != new:
                state = worst(state, changed)
                reasons.append(FingerprintChanged(edge, rep_id, domain[0], domain[1], old, new))
        else:
            state = worst(state, ArtifactState.INDETERMINATE)
            side: Literal["snapshot", "current"] = "snapshot" if new is None else "current"
            reasons.append(FingerprintEvidenceMissing(edge, rep_id, domain[0], domain[1], side))
    return state, reasons


@dataclass(frozen=True, slots=True)
class _Local:
    """What a node's own edges say, and which of its inputs to evaluate upstream."""

    state: ArtifactState
    reasons: tuple[StalenessReason, ...]
    upstream: tuple[bytes, ...]


class Evaluator:
    """Evaluates artifacts over one :class:`Upstream` cache (inside one read snapshot)."""

    def __init__(self, upstream: Upstream, max_depth: int, max_representations: int) -> None:
        self._up = upstream
        self._max_depth = max_depth
        self._max_reps = max_representations
        self._local: dict[bytes, _Local] = {}

    def evaluate(self, rep: bytes) -> ArtifactKnowledge:
        run = _Run()
        state, reasons = self._visit(rep, 0, run)
        return ArtifactKnowledge(RepresentationId(rep), state, reasons, run.visited, run.truncated)

    def _visit(self, rep: bytes, depth: int, run: _Run) -> tuple[ArtifactState, tuple[StalenessReason, ...]]:
        known = run.memo.get(rep)
        if known is not None:
            return known
        limit: Literal["depth", "representations"] | None = None
        if depth > self._max_depth:
            limit = "depth"
        elif run.visited >= self._max_reps:
            limit = "representations"
        if limit is not None:
            run.truncated = True
            result: tuple[ArtifactState, tuple[StalenessReason, ...]] = (
                ArtifactState.INDETERMINATE,
                (TraversalTruncated(limit),),
            )
        else:
            run.visited += 1
            local = self._judge(rep)
            state, reasons = local.state, list(local.reasons)
            for parent in local.upstream:
                parent_state, parent_reasons = self._visit(parent, depth + 1, run)
                if parent_state is ArtifactState.CURRENT:
                    continue
                stale = parent_state in _STALE_UPSTREAM
                state = worst(state, ArtifactState.STALE if stale else ArtifactState.INDETERMINATE)
                reasons.append(UpstreamNotCurrent(RepresentationId(parent), parent_state))
                reasons.extend(parent_reasons)
            result = (state, tuple(dict.fromkeys(reasons)))
        run.memo[rep] = result
        return result

    def _judge(self, rep: bytes) -> _Local:
        local = self._local.get(rep)
        if local is not None:
            return local
        up = self._up
        if not up.loaded(rep):
            up.load([rep])
        producers = up.producers[rep]
        replacement = up.replaced.get(rep)
        if replacement is not None:
            local = _Local(
                ArtifactState.SUPERSEDED,
                (Superseded(RepresentationId(rep), RepresentationId(replacement)),),
                (),
            )
        elif len(producers) != 1:
            reason: StalenessReason = (
                ProducingActivityMissing(RepresentationId(rep))
                if not producers
                else ProducingActivityAmbiguous(RepresentationId(rep), len(producers))
            )
            local = _Local(ArtifactState.INDETERMINATE, (reason,), ())
        else:
            state, reasons = ArtifactState.CURRENT, []
            edges: list[tuple[Edge, EdgeFacts]] = [("output", e) for e in up.outputs[rep]]
            edges.extend(("input", e) for e in up.inputs[rep])
            for side, edge in edges:
                found, why = compare(
                    side, edge.representation_id, edge.snapshot, up.current[edge.representation_id]
                )
                state = worst(state, found)
                reasons.extend(why)
            inputs = list(dict.fromkeys(e.representation_id for e in up.inputs[rep]))
            up.ensure_producers(inputs)
            upstream = tuple(r for r in inputs if up.producers[r])
            local = _Local(state, tuple(dict.fromkeys(reasons)), upstream)
        self._local[rep] = local
        return local


class _Run:
    """The memo and counters of one root's evaluation."""

    __slots__ = ("memo", "truncated", "visited")

    def __init__(self) -> None:
        self.memo: dict[bytes, tuple[ArtifactState, tuple[StalenessReason, ...]]] = {}
        self.visited = 0
        self.truncated = False


def check_bounds(max_depth: object, max_representations: object) -> tuple[int, int]:
    """Validate the traversal bounds: ``max_depth`` 1-64, ``max_representations`` 1-1000.

    Raises:
        TypeError: a bound is not an int (bool included).
        InvalidArgumentError: (invalid_argument) a bound is out of range.
    """
    return _bound("max_depth", max_depth, MAX_DEPTH), _bound(
        "max_representations", max_representations, MAX_REPRESENTATIONS
    )


def _bound(field: str, value: object, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{field} must be an int; got {type(value).__name__}")
    if not 1 <= value <= maximum:
        raise InvalidArgumentError(f"{field} must be between 1 and {maximum}; got {value}")
    return value


def evaluate_many(
    graph: GraphFacts,
    rep_ids: Sequence[bytes],
    *,
    max_depth: int = MAX_DEPTH,
    max_representations: int = MAX_REPRESENTATIONS,
) -> list[ArtifactKnowledge]:
    """Evaluate existing representations inside the caller's snapshot, sharing loaded facts."""
    upstream = Upstream(graph)
    upstream.prefetch(rep_ids, max_depth, max(max_representations, min(20_000, 20 * len(rep_ids))))
    evaluator = Evaluator(upstream, max_depth, max_representations)
    return [evaluator.evaluate(rep) for rep in rep_ids]


def evaluate(
    handle: ProductionHandle,
    representation_id: RepresentationId,
    *,
    max_depth: int = MAX_DEPTH,
    max_representations: int = MAX_REPRESENTATIONS,
) -> ArtifactKnowledge:
    """See :meth:`Production.evaluate_artifact`."""
    handle.check_open()
    _typed_rep(representation_id)
    depth, reps = check_bounds(max_depth, max_representations)
    with handle.engine.graph.snapshot() as graph:
        if not graph.exists(representation_id.bytes):
            raise NotFoundError(f"representation {representation_id} does not exist")
        return evaluate_many(graph, [representation_id.bytes], max_depth=depth, max_representations=reps)[0]


def stale_artifacts(
    handle: ProductionHandle,
    limit: int = 100,
    cursor: str | None = None,
    source: RepresentationId | None = None,
    *,
    include_superseded: bool = False,
) -> StalePage:
    """See :meth:`Production.stale_artifacts`."""
    handle.check_open()
    check_limit(limit)
    if source is not None:
        _typed_rep(source)
    if not isinstance(include_superseded, bool):
        raise InvalidArgumentError(f"include_superseded must be a bool; got {include_superseded!r}")
    params: tuple[str, ...] = (str(source) if source is not None else "*",)
    if include_superseded:  # old cursors (without the flag) stay valid
        params = (*params, "superseded")
    after = handle.after("stale", params, cursor)
    truncated = False
    with handle.engine.graph.snapshot() as graph:
        if source is None:
            candidates = graph.output_candidates(after, limit + 1)
        else:
            if not graph.exists(source.bytes):
                raise NotFoundError(f"representation {source} does not exist")
            descendants, truncated = graph.walk([source.bytes], downstream=True, cap=MAX_DESCENDANTS)
            candidates = sorted(d for d in descendants if after is None or d > after)[: limit + 1]
        examined = candidates[:limit]
        found = evaluate_many(graph, examined)
    wanted = {ArtifactState.STALE, ArtifactState.DIVERGED}
    if include_superseded:
        wanted.add(ArtifactState.SUPERSEDED)
    items = tuple(k for k in found if k.state in wanted)
    more = len(candidates) > limit
    next_cursor = handle.cursors.encode("stale", params, (examined[-1].hex(),)) if more else None
    return StalePage(items, next_cursor, truncated)


def _typed_rep(value: object) -> None:
    if type(value) is not RepresentationId:
        raise InvalidArgumentError(
            f"representation_id must be a RepresentationId; got {type(value).__name__}"
        )
