"""Provenance graph: layout, scene build and painting at 100, 500 and 2,000 nodes (median of 5).

Figures per size, on a graph shaped like real provenance (``synthetic_graph`` of the GUI
tests: representations, activities, the jobs that completed them, ~1.3 edges per node):

  layout       ``graph_layout.layout_graph`` alone (pure Python, no Qt)
  build        ``ProvenanceScene.show_graph``: layout + items + edge routes + role labels
  first_paint  build + rendering the view (1400 x 860) into a QImage, offscreen: what the
               user waits for; a new graph opens fitted, so a large one paints zoomed out
               (state-coloured shapes, thin edges, no text)
  zoomed_out   repainting the fitted (zoomed-out) view: panning or a live update at overview
  focus_paint  ``ProvenanceView.focus_node`` on the focus + rendering: the readable
               neighbourhood (text, labels, the rest of the graph dimmed)
  update       ``update_graph`` with the same nodes and new states (a live feed update)

each also as a ratio to the layout time of the same run (how much Qt adds on top of it).

Then, on a real production (a camera original that 300 renders were made from, then
re-delivered, so every render is stale), what the monitor's reader thread does before the
scene gets a graph:

  service_read the Provenance tab's read (``knowledge_reads.provenance``): the 500-node
               neighbourhood and the knowledge, with reasons, of each representation
  stale_count  the summary bar's bounded stale count
  change       the representations a re-observed original touches (rows to read again)

Absolute numbers move with the machine (this VM is shared); the ratios are the figures to
compare. Nothing is asserted.

Usage:
  QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_provenance_graph.py [--json PATH]
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.gui.provenance_fixtures

from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QApplication
from tests.gui.provenance_fixtures import synthetic_graph

from postproject import ActivitySpec, ArtifactState, Production, RepresentationKind, ToolIdentity
from postproject.knowledge.provenance import ProvenanceGraph, RepresentationNode
from postproject_gui.diagram import provenance_items as items
from postproject_gui.diagram.graph_layout import LayoutEdge, LayoutNode, layout_graph
from postproject_gui.diagram.provenance_scene import LAYER_GAP, NODE_GAP, ProvenanceScene
from postproject_gui.look.theme import THEMES
from postproject_gui.services import knowledge_reads
from postproject_gui.views.provenance_view import ProvenanceView

SIZES = (100, 500, 2000)
RUNS = 5
VIEW = (1400, 860)


def median_ms(run: Callable[[], object], setup: Callable[[], object] | None = None) -> float:
    times = []
    for _ in range(RUNS):
        if setup is not None:
            setup()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def layout_only(graph: ProvenanceGraph) -> None:
    sizes = {
        "RepresentationNode": items.REP_SIZE,
        "ActivityNode": items.ACTIVITY_SIZE,
        "JobNode": items.JOB_SIZE,
    }
    layout_graph(
        [LayoutNode(str(n.id), *sizes[type(n).__name__]) for n in graph.nodes],
        [LayoutEdge(str(e.source), str(e.target)) for e in graph.edges],
        layer_gap=LAYER_GAP,
        node_gap=NODE_GAP,
    )


def paint(view: ProvenanceView) -> None:
    image = QImage(view.viewport().size(), QImage.Format.Format_ARGB32_Premultiplied)
    painter = QPainter(image)
    view.render(painter)
    painter.end()


def restated(graph: ProvenanceGraph) -> ProvenanceGraph:
    """The same graph with every derived representation's state moved on (a live update)."""
    order = list(ArtifactState)
    nodes = tuple(
        dataclasses.replace(n, state=order[(order.index(n.state) + 1) % len(order)])
        if isinstance(n, RepresentationNode)
        else n
        for n in graph.nodes
    )
    return dataclasses.replace(graph, nodes=nodes)


def measure(size: int) -> dict[str, float]:
    graph = synthetic_graph(size, truncated=size >= 500)
    other = restated(graph)
    scene = ProvenanceScene(THEMES["light"])
    view = ProvenanceView(scene)
    view.resize(*VIEW)
    view.show()
    QApplication.processEvents()
    figures = {"nodes": float(len(graph.nodes)), "edges": float(len(graph.edges))}
    figures["layout"] = median_ms(lambda: layout_only(graph))
    figures["build"] = median_ms(lambda: scene.show_graph(graph))

    def build_and_paint() -> None:
        scene.show_graph(graph)
        paint(view)

    figures["first_paint"] = median_ms(build_and_paint)
    figures["fit_zoom"] = view.zoom()
    figures["zoomed_out"] = median_ms(lambda: paint(view))

    def focus_and_paint() -> None:
        view.focus_node(str(graph.focus))
        paint(view)

    figures["focus_paint"] = median_ms(focus_and_paint, view.fit_to_view)
    figures["focus_zoom"] = view.zoom()
    states = itertools.cycle([other, graph])  # every call changes every representation's state
    figures["update"] = median_ms(lambda: scene.update_graph(next(states)))
    for key in ("first_paint", "zoomed_out", "focus_paint"):
        figures[f"{key}_per_layout"] = figures[key] / figures["layout"]
    view.close()
    return figures


def measure_reads(renders: int = 300) -> dict[str, float]:
    """The reader-thread side, on a real production (see the module docstring)."""
    with tempfile.TemporaryDirectory() as folder:
        media = Path(folder)
        original = media / "A001_C001.mov"
        original.write_bytes(b"camera original" * 64)
        with Production.create(media / "bench.pproj") as production:
            with production.edit() as tx:
                asset = tx.create_asset("A001_C001")
                source = tx.add_representation(asset, RepresentationKind.ORIGINAL, original)
                for n in range(renders):
                    out = media / f"A001_C001_render_{n:03d}.mov"
                    out.write_bytes(b"render %d" % n)
                    rep = tx.add_representation(asset, RepresentationKind.DERIVED, out)
                    tx.create_activity(
                        ActivitySpec(
                            "org.example:render",
                            inputs=(source,),
                            outputs=(rep,),
                            tool=ToolIdentity("r", "1"),
                        )
                    )
                tx.commit()
            original.write_bytes(b"re-delivered original" * 64)
            with production.edit() as tx:
                tx.observe_representation(source)
                tx.commit()
        with Production.open(media / "bench.pproj", read_only=True) as production:
            read = knowledge_reads.provenance(production, source)
            return {
                "nodes": float(len(read.graph.nodes)),
                "service_read": median_ms(lambda: knowledge_reads.provenance(production, source)),
                "stale_count": median_ms(lambda: knowledge_reads.stale_count(production)),
                "change": median_ms(lambda: knowledge_reads.knowledge_change(production, [source], [], [])),
            }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    parser.add_argument("sizes", nargs="*", type=int, default=list(SIZES))
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    results: dict[str, dict[str, float]] = {}
    for size in args.sizes:
        figures = measure(size)
        results[str(size)] = figures
        n, e = int(figures["nodes"]), int(figures["edges"])
        for key in ("layout", "build", "first_paint", "zoomed_out", "focus_paint", "update"):
            print(f"n={n} edges={e} {key}: {figures[key]:.1f} ms (median of {RUNS})")
        print(
            f"n={n} per layout: first paint {figures['first_paint_per_layout']:.2f}x (zoom "
            f"{figures['fit_zoom']:.2f}), zoomed-out repaint {figures['zoomed_out_per_layout']:.2f}x, "
            f"focus {figures['focus_paint_per_layout']:.2f}x (zoom {figures['focus_zoom']:.2f})"
        )
    reads = measure_reads()
    results["reads"] = reads
    for key in ("service_read", "stale_count", "change"):
        print(
            f"real production, {int(reads['nodes'])}-node graph: {key}: {reads[key]:.1f} ms (median of {RUNS})"
        )
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        document = {
            "benchmark": "provenance_graph",
            "runs": RUNS,
            "view": list(VIEW),
            "python": platform.python_version(),
            "qt_platform": os.environ.get("QT_QPA_PLATFORM"),
            "results": results,
        }
        args.json.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    del app


if __name__ == "__main__":
    main()
