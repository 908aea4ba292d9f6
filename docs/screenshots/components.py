"""Render what snapshot mode does not open: the request, cancel and regeneration dialogs of a
production, and the provenance graph at 60 and 500 nodes (synthetic neighbourhoods).

    .venv/bin/python docs/screenshots/components.py PRODUCTION OUT_DIR

``make.py`` runs it on the demo production.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # for tests.gui.provenance_fixtures

import qasync
from PySide6.QtWidgets import QApplication, QWidget
from tests.gui.provenance_fixtures import synthetic_graph

from postproject import (
    EXECUTOR_VOCABULARY,
    JobState,
    Production,
    Property,
    RepresentationKind,
    StringValue,
)
from postproject.knowledge.provenance import ProvenanceGraph, RepresentationNode
from postproject_gui.diagram.provenance_scene import ProvenanceScene
from postproject_gui.dialogs.cancel_dialog import CancelDialog, CancelPlan
from postproject_gui.dialogs.regeneration_dialog import RegenerationDialog
from postproject_gui.dialogs.request_job_dialog import RequestJobDialog
from postproject_gui.look.theme import THEMES, ThemeManager, ThemeMode
from postproject_gui.services.production_service import ProductionService
from postproject_gui.services.types import JobRow, RegenerationPreview, RequestChoices, RequestSpec
from postproject_gui.views.provenance_view import ProvenanceView


def grab(widget: QWidget, path: Path) -> None:
    widget.show()
    QApplication.processEvents()
    widget.grab().save(str(path))
    widget.close()


def read(production: Path, loop: qasync.QEventLoop) -> tuple[RequestChoices, RegenerationPreview]:
    """The request dialog's choices, and a regeneration preview of the stale artifacts plus
    their original (which nothing produced, so it cannot be planned)."""
    service = ProductionService(production, loop=loop)
    try:
        loop.run_until_complete(service.open())
        choices = loop.run_until_complete(service.request_choices())
        with Production.open(production, read_only=True) as p:
            stale = [k.representation_id for k in p.stale_artifacts(limit=1000).items]
            original = next(
                n.id
                for n in p.provenance(stale[0], downstream=0).nodes
                if isinstance(n, RepresentationNode) and n.kind is RepresentationKind.ORIGINAL
            )
        preview = loop.run_until_complete(service.plan_regeneration([*stale, original]))
    finally:
        service.close()
    return choices, preview


def dialogs(production: Path, out: Path, loop: qasync.QEventLoop) -> None:
    choices, preview = read(production, loop)
    with Production.open(production, read_only=True) as p:
        claimed = p.jobs(state=JobState.CLAIMED, limit=3).items
        requested = p.jobs(state=JobState.REQUESTED, limit=2).items
        failed = p.jobs(state=JobState.FAILED, limit=1).items
        rows = [JobRow(j, p.asset(j.output_asset_id).name) for j in (*claimed, *requested, *failed)]
        now = p.clock.now()
    first = choices.representations[0]
    spec = RequestSpec(
        "org.postproject:generate-proxy",
        (first.id,),
        first.asset_id,
        RepresentationKind.PROXY,
        "proxies",
        ((Property(EXECUTOR_VOCABULARY, "profile"), StringValue("proxy-1080p")),),
    )
    for mode in (ThemeMode.LIGHT, ThemeMode.DARK):
        ThemeManager(mode).apply()
        request = RequestJobDialog(choices, production)
        request.set_spec(spec)
        request.resize(720, 560)
        grab(request, out / f"request-dialog-{mode.value}.png")
        cancel = CancelDialog(CancelPlan.of(rows, now), now)
        cancel.resize(760, 330)
        grab(cancel, out / f"cancel-dialog-{mode.value}.png")
    ThemeManager(ThemeMode.LIGHT).apply()
    regeneration = RegenerationDialog(preview.plans, preview.unplannable, preview.rows)
    regeneration.anyway.setChecked(True)
    grab(regeneration, out / "regeneration-dialog.png")


def graphs(out: Path) -> None:
    """The graph view alone (1400 x 860): 60 nodes at 100 %; 500 (truncated) fitted (the
    zoomed-out level of detail) and with an original focused (its lineage, the rest faint),
    light and dark."""
    for name, size, theme, fitted in (
        ("provenance-60-light", 60, "light", False),
        ("provenance-500-overview-light", 500, "light", True),
        ("provenance-500-overview-dark", 500, "dark", True),
        ("provenance-500-focus-light", 500, "light", False),
        ("provenance-500-dark", 500, "dark", False),
    ):
        ThemeManager(ThemeMode(theme)).apply()
        graph = synthetic_graph(size, truncated=size == 500)
        scene = ProvenanceScene(THEMES[theme])
        view = ProvenanceView(scene)
        view.resize(1400, 860)
        view.show()
        scene.show_graph(graph)
        QApplication.processEvents()
        if fitted:
            view.fit_to_view()
            scene.select(str(graph.focus))
        elif size < 500:
            view.set_zoom(1.0)
            scene.select(str(graph.focus))
            view.center_on_node(str(graph.focus))
        else:
            view.focus_node(str(focused_original(graph)))
        grab(view, out / f"{name}.png")
        view.deleteLater()
    ThemeManager(ThemeMode.LIGHT).apply()


def focused_original(graph: ProvenanceGraph) -> object:
    """An original of ``graph`` with the most derived from it (a lineage worth showing)."""
    edges = [(str(e.source), str(e.target)) for e in graph.edges]
    best, most = graph.focus, -1
    for node in graph.nodes:
        if isinstance(node, RepresentationNode) and node.kind is RepresentationKind.ORIGINAL:
            made = sum(1 for source, _ in edges if source == str(node.id))
            if made > most:
                best, most = node.id, made
    return best


def main() -> None:
    production, out = Path(sys.argv[1]), Path(sys.argv[2])
    app = QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        dialogs(production, out, loop)
        graphs(out)
    finally:
        loop.close()


if __name__ == "__main__":
    main()
