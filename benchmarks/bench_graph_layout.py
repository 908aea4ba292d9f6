"""Time ``layout_graph`` on provenance-like graphs (median of 5 runs per size).

Run with the GUI package importable, e.g. ``PYTHONPATH=gui python benchmarks/bench_graph_layout.py``.
Pass sizes as arguments to override the default ``100 500``. Nothing is asserted.
"""

from __future__ import annotations

import random
import statistics
import sys
import time

from postproject_gui.diagram.graph_layout import LayoutEdge, LayoutNode, layout_graph

SIZES = (100, 500)
RUNS = 5


def provenance_graph(n: int, seed: int = 7) -> tuple[list[LayoutNode], list[LayoutEdge]]:
    """Representations, activities and jobs (~1.4 edges per node); activities read 1-3 recent representations."""
    rng = random.Random(seed)
    nodes: list[LayoutNode] = []
    edges: list[LayoutEdge] = []
    reps: list[str] = []
    while len(nodes) < n:
        if len(reps) < 3 or rng.random() < 0.1:
            rep = f"rep{len(nodes):05d}"
            nodes.append(LayoutNode(rep, 160.0, 48.0))
            reps.append(rep)
            continue
        act = f"act{len(nodes):05d}"
        nodes.append(LayoutNode(act, 120.0, 36.0))
        for src in rng.sample(reps[-12:], rng.randint(1, 3)):
            edges.append(LayoutEdge(src, act))
        if rng.random() < 0.5 and len(nodes) < n:
            job = f"job{len(nodes):05d}"
            nodes.append(LayoutNode(job, 100.0, 30.0))
            edges.append(LayoutEdge(job, act))
        for _ in range(rng.randint(1, 2)):
            if len(nodes) >= n:
                break
            out = f"rep{len(nodes):05d}"
            nodes.append(LayoutNode(out, 160.0, 48.0))
            edges.append(LayoutEdge(act, out))
            reps.append(out)
    return nodes, edges


def random_dag(n: int, m: int, seed: int = 7) -> tuple[list[LayoutNode], list[LayoutEdge]]:
    """Uniformly random DAG: many long edges, so many dummy nodes (a harder case)."""
    rng = random.Random(seed)
    nodes = [
        LayoutNode(
            f"n{i:05d}",
            rng.choice((100.0, 120.0, 160.0)),
            rng.choice((30.0, 36.0, 48.0)),
        )
        for i in range(n)
    ]
    pairs: set[tuple[int, int]] = set()
    while len(pairs) < m:
        a, b = sorted(rng.sample(range(n), 2))
        pairs.add((a, b))
    return nodes, [LayoutEdge(nodes[a].id, nodes[b].id) for a, b in sorted(pairs)]


def median_ms(nodes: list[LayoutNode], edges: list[LayoutEdge]) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        layout_graph(nodes, edges)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    sizes = [int(arg) for arg in sys.argv[1:]] or list(SIZES)
    for n in sizes:
        nodes, edges = provenance_graph(n)
        print(f"provenance n={n} edges={len(edges)}: {median_ms(nodes, edges):.1f} ms (median of {RUNS})")
        nodes, edges = random_dag(n, round(n * 1.4))
        print(f"random-dag n={n} edges={len(edges)}: {median_ms(nodes, edges):.1f} ms (median of {RUNS})")


if __name__ == "__main__":
    main()
