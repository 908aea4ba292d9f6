"""Exports: the graph as PNG and SVG, provenance as W3C PROV (JSON and PROV-N)."""

from __future__ import annotations

import json
from pathlib import Path

import prov.model
import pytest
from prov import read as prov_read
from PySide6.QtGui import QImage
from pytestqt.qtbot import QtBot

from postproject import Production
from postproject_gui.diagram.provenance_scene import ProvenanceScene
from postproject_gui.look.theme import THEMES
from postproject_gui.models.documents import graph_document
from postproject_gui.services.provenance_export import export_prov
from postproject_gui.views.provenance_view import ProvenanceView
from tests.gui.provenance_fixtures import Chain, synthetic_graph


@pytest.fixture
def chain(production: Production, tmp_path: Path) -> Chain:
    return Chain(production, tmp_path / "media")


@pytest.fixture
def view(qtbot: QtBot) -> ProvenanceView:
    widget = ProvenanceView(ProvenanceScene(THEMES["light"]))
    qtbot.addWidget(widget)
    widget.resize(900, 400)
    widget.show()
    return widget


def test_graph_exports_as_png_and_svg(view: ProvenanceView, chain: Chain, tmp_path: Path) -> None:
    chain.change_original()
    graph = chain.graph()
    scene = view.scene()
    assert isinstance(scene, ProvenanceScene)
    scene.show_graph(graph, chain.knowledge(graph))
    rect = scene.sceneRect()

    png = view.export_image(tmp_path / "graph.png")
    svg = view.export_image(tmp_path / "graph.SVG")

    image = QImage(str(png))
    assert not image.isNull() and (image.width(), image.height()) == (
        round(rect.width()),
        round(rect.height()),
    )
    text = svg.read_text(encoding="utf-8")
    assert text.lstrip().startswith("<?xml") and "<svg" in text and "Stale" in text and "A001_C002" in text
    with pytest.raises(ValueError, match=r"\.png or \.svg"):
        view.export_image(tmp_path / "graph.jpg")


def test_large_graph_png_is_scaled_down_and_keeps_the_banner(view: ProvenanceView, tmp_path: Path) -> None:
    scene = view.scene()
    assert isinstance(scene, ProvenanceScene)
    scene.show_graph(synthetic_graph(500, truncated=True))
    png = view.export_image(tmp_path / "big.png")
    image = QImage(str(png))
    assert not image.isNull() and max(image.width(), image.height()) <= 12_000
    assert scene.banner is not None and view.mapToScene(8, 6) == scene.banner.pos()  # pinned again


@pytest.mark.parametrize("fmt", ["json", "provn"])
def test_prov_export_of_the_render_lineage(chain: Chain, tmp_path: Path, fmt: str) -> None:
    out = export_prov(
        chain.production.path,
        [chain.render],
        "json" if fmt == "json" else "provn",
        tmp_path / f"render.{fmt}",
    )
    assert out.stat().st_size > 0
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".render")] == []  # no temporary left
    text = out.read_text(encoding="utf-8")
    if fmt == "provn":
        assert text.startswith("document") and text.rstrip().endswith("endDocument")
        assert f"uuid:{chain.render}" in text
        return
    document = prov_read(str(out), format="json")
    assert isinstance(document, prov.model.ProvDocument)
    entities = {str(r.identifier) for r in document.get_records(prov.model.ProvEntity)}
    assert {f"uuid:{r}" for r in (chain.original, chain.proxy, chain.render)} <= entities
    assert f"uuid:{chain.thumbnail}" not in entities  # not in the render's lineage
    activities = {str(r.identifier) for r in document.get_records(prov.model.ProvActivity)}
    assert {f"uuid:{chain.proxy_activity}", f"uuid:{chain.render_activity}"} <= activities


def test_prov_export_rejects_an_unknown_format(chain: Chain, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'json' or 'provn'"):
        export_prov(chain.production.path, None, "xml", tmp_path / "x.xml")  # type: ignore[arg-type]
    assert not (tmp_path / "x.xml").exists()


def test_graph_document_is_json(chain: Chain) -> None:
    chain.change_original()
    graph = chain.graph()
    document = graph_document(graph, chain.knowledge(graph))
    assert json.loads(json.dumps(document)) == document
    assert {n["type"] for n in document["nodes"]} == {"representation", "activity", "job"}
