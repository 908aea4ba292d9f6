"""Upstream facts of representations, loaded level by level and cached for one snapshot."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from postproject.engine import EdgeFacts, Fingerprints, GraphFacts


@dataclass(slots=True)
class Upstream:
    """``producers[rep]`` lists the activities that output ``rep``; for a representation with
    exactly one producer, ``outputs[rep]`` holds its output edges and ``inputs[rep]`` the
    producer's input edges; ``current[rep]`` holds its recorded fingerprints;
    ``replaced[rep]`` the representation that superseded it, when one did.
    """

    graph: GraphFacts
    producers: dict[bytes, tuple[bytes, ...]] = field(default_factory=dict)
    outputs: dict[bytes, tuple[EdgeFacts, ...]] = field(default_factory=dict)
    inputs: dict[bytes, tuple[EdgeFacts, ...]] = field(default_factory=dict)
    current: dict[bytes, Fingerprints] = field(default_factory=dict)
    replaced: dict[bytes, bytes] = field(default_factory=dict)
    _activity_inputs: dict[bytes, tuple[EdgeFacts, ...]] = field(default_factory=dict)
    _loaded: set[bytes] = field(default_factory=set)

    def ensure_producers(self, reps: Iterable[bytes]) -> None:
        """Load the producing activities (and output edges) of ``reps`` not loaded yet."""
        todo = sorted({r for r in reps if r not in self.producers})
        edges: dict[bytes, dict[bytes, list[EdgeFacts]]] = {r: {} for r in todo}
        for rep, activity, snapshot in self.graph.output_edges(todo):
            edges[rep].setdefault(activity, []).append(EdgeFacts(rep, snapshot))
        for rep, by_activity in edges.items():
            self.producers[rep] = tuple(by_activity)
            if len(by_activity) == 1:
                self.outputs[rep] = tuple(next(iter(by_activity.values())))

    def load(self, reps: Iterable[bytes]) -> list[bytes]:
        """Load everything needed to judge ``reps`` locally; return their inputs (the next level)."""
        wanted = [r for r in dict.fromkeys(reps) if r not in self._loaded]
        self.ensure_producers(wanted)
        activities = sorted(
            {self.producers[r][0] for r in wanted if len(self.producers[r]) == 1} - set(self._activity_inputs)
        )
        found: dict[bytes, list[EdgeFacts]] = {a: [] for a in activities}
        for activity, rep, snapshot in self.graph.input_edges(activities):
            found[activity].append(EdgeFacts(rep, snapshot))
        self._activity_inputs.update((a, tuple(e)) for a, e in found.items())
        upstream: dict[bytes, None] = {}
        for rep in wanted:
            if len(self.producers[rep]) == 1:
                edges = self._activity_inputs[self.producers[rep][0]]
                self.inputs[rep] = edges
                upstream.update((e.representation_id, None) for e in edges)
        need = sorted({*wanted, *upstream} - self.current.keys())
        fingerprints: dict[bytes, Fingerprints] = {r: {} for r in need}
        for rep, algorithm, version, value in self.graph.fingerprints(need):
            fingerprints[rep][(algorithm, version)] = value
        self.current.update(fingerprints)
        self.replaced.update(self.graph.supersessions(wanted))
        self._loaded.update(wanted)
        return list(upstream)

    def loaded(self, rep: bytes) -> bool:
        return rep in self._loaded

    def prefetch(self, roots: Iterable[bytes], levels: int, cap: int) -> None:
        """Load ``levels`` + 1 levels upstream of ``roots`` breadth-first, stopping once ``cap`` are loaded."""
        frontier = list(roots)
        for _ in range(levels + 1):
            frontier = [r for r in frontier if r not in self._loaded]
            if not frontier or len(self._loaded) >= cap:
                return
            frontier = self.load(frontier)
