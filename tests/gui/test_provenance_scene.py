"""The provenance graph scene and view on a real production (original -> proxy -> render)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QRectF, Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from postproject import (
    ArtifactState,
    JobId,
    JobState,
    Production,
)
from postproject_gui.diagram import provenance_items as items
from postproject_gui.diagram.provenance_scene import ProvenanceScene
from postproject_gui.look.artifact_states import KNOWLEDGE_LOOKS, SOURCE_LOOK
from postproject_gui.look.theme import THEMES
from postproject_gui.views.provenance_view import ProvenanceView, nearest
from tests.gui.provenance_fixtures import PICTURE, Chain, complete_thumbnail_of_proxy, synthetic_graph


@pytest.fixture
def chain(production: Production, tmp_path: Path) -> Chain:
    return Chain(production, tmp_path / "media")


@pytest.fixture
def scene(qapp: QApplication) -> ProvenanceScene:
    return ProvenanceScene(THEMES["light"])


@pytest.fixture
def view(qtbot: QtBot, scene: ProvenanceScene) -> ProvenanceView:
    widget = ProvenanceView(scene)
    qtbot.addWidget(widget)
    widget.resize(1300, 420)
    widget.show()
    return widget


def rep_item(scene: ProvenanceScene, rep_id: object) -> items.RepresentationItem:
    item = scene.nodes[str(rep_id)]
    assert isinstance(item, items.RepresentationItem)
    return item


def shown(scene: ProvenanceScene, rep_id: object) -> str:
    look = rep_item(scene, rep_id).knowledge_look
    assert look is not None
    return look.label


def test_chain_is_drawn_with_every_node_edge_and_role(scene: ProvenanceScene, chain: Chain) -> None:
    graph = chain.graph()
    scene.show_graph(graph, chain.knowledge(graph))

    assert set(scene.nodes) == {str(n.id) for n in graph.nodes}
    types = {node_id: item.node_type for node_id, item in scene.nodes.items()}
    assert types[str(chain.original)] == types[str(chain.render)] == "representation"
    assert types[str(chain.proxy_activity)] == types[str(chain.render_activity)] == "activity"
    assert types[str(chain.job)] == "job"
    assert {(str(e.source), str(e.target)) for e in graph.edges} == set(scene.edges)
    assert scene.edges[(str(chain.job), str(chain.proxy_activity))].relation == "completed"
    assert scene.edges[(str(chain.proxy), str(chain.render_activity))].label == "picture"
    assert scene.edges[(str(chain.proxy), str(chain.render_activity))].role == PICTURE
    assert rep_item(scene, chain.proxy).focus and not rep_item(scene, chain.render).focus
    assert (shown(scene, chain.original), shown(scene, chain.proxy), shown(scene, chain.render)) == (
        SOURCE_LOOK.label,
        "Current",
        "Current",
    )
    assert rep_item(scene, chain.proxy).texts[:2] == ("A001_C002", "proxy")
    assert scene.banner is None
    # layers run left to right in data-flow order
    x = {name: scene.nodes[str(getattr(chain, name))].pos().x() for name in ("original", "proxy", "render")}
    assert x["original"] < x["proxy"] < x["render"]


def test_changed_original_shows_stale_proxy_and_render_keeping_selection_and_view(
    qtbot: QtBot, scene: ProvenanceScene, view: ProvenanceView, chain: Chain, tmp_path: Path
) -> None:
    graph = chain.graph()
    scene.show_graph(graph, chain.knowledge(graph))
    scene.select(str(chain.render))
    view.set_zoom(1.4)
    view.center_on_node(str(chain.render))
    transform, h, v = view.transform(), view.horizontalScrollBar().value(), view.verticalScrollBar().value()
    chain.change_original()

    fresh = chain.graph()
    with qtbot.assertNotEmitted(scene.selection_changed):
        relaid = scene.update_graph(fresh, chain.knowledge(fresh))

    assert relaid is False  # same nodes: restyled in place
    assert shown(scene, chain.proxy) == shown(scene, chain.render) == "Stale"
    assert rep_item(scene, chain.render).knowledge_look is KNOWLEDGE_LOOKS[ArtifactState.STALE]
    assert "Why:" in scene.tooltip(str(chain.render))
    assert "A001_C002 · original (A001_C002.mov) changed" in scene.tooltip(str(chain.proxy))
    assert "upstream A001_C002 · proxy (A001_C002_proxy.mov) is stale" in scene.tooltip(str(chain.render))
    assert scene.selected_id() == str(chain.render)
    assert view.transform() == transform
    assert (view.horizontalScrollBar().value(), view.verticalScrollBar().value()) == (h, v)
    view.grab().save(str(tmp_path / "stale.png"))
    assert not QImage(str(tmp_path / "stale.png")).isNull()


def test_live_completion_adds_nodes_without_losing_zoom_or_selection(
    qtbot: QtBot, scene: ProvenanceScene, view: ProvenanceView, chain: Chain
) -> None:
    graph = chain.graph()
    scene.show_graph(graph, chain.knowledge(graph))
    scene.select(str(chain.render))
    view.set_zoom(1.25)
    view.center_on_node(str(chain.proxy))
    before = view.mapFromScene(scene.nodes[str(chain.render)].centre)
    zoom = view.zoom()

    job, rep = complete_thumbnail_of_proxy(chain)
    fresh = chain.graph()
    with qtbot.waitSignal(scene.relayout_finished):
        assert scene.update_graph(fresh, chain.knowledge(fresh)) is True

    assert {str(job), str(rep)} <= set(scene.nodes)
    job_item = scene.nodes[str(job)]
    assert isinstance(job_item, items.JobItem) and "succeeded" in job_item.text
    assert scene.selected_id() == str(chain.render)
    assert scene.nodes[str(chain.render)].isSelected()
    assert view.zoom() == pytest.approx(zoom)
    after = view.mapFromScene(scene.nodes[str(chain.render)].centre)
    assert abs(after.x() - before.x()) <= 1 and abs(after.y() - before.y()) <= 1
    assert production_state(chain, job) is JobState.SUCCEEDED


def production_state(chain: Chain, job: JobId) -> JobState:
    return chain.production.job(job).state


def test_keyboard_moves_selection_and_enter_activates(
    qtbot: QtBot, scene: ProvenanceScene, view: ProvenanceView, chain: Chain
) -> None:
    graph = chain.graph()
    scene.show_graph(graph, chain.knowledge(graph))
    view.setFocus()
    bot = qtbot

    bot.keyClick(view, Qt.Key.Key_Tab)
    assert scene.selected_id() == scene.reading_order()[0]
    scene.select(str(chain.original))
    bot.keyClick(view, Qt.Key.Key_Right)
    assert scene.selected_id() == str(chain.proxy_activity)
    bot.keyClick(view, Qt.Key.Key_Right)
    assert scene.selected_id() == str(chain.proxy)
    with bot.waitSignal(scene.representation_activated) as activated:
        bot.keyClick(view, Qt.Key.Key_Return)
    assert activated.args == [str(chain.proxy)]
    assert "Selected: A001_C002 · proxy" in view.accessibleDescription()
    bot.keyClick(view, Qt.Key.Key_Left)
    bot.keyClick(view, Qt.Key.Key_Left)
    assert scene.selected_id() in (str(chain.original), str(chain.job))
    scene.select(str(chain.original))
    bot.keyClick(view, Qt.Key.Key_Down)
    assert scene.selected_id() == str(chain.job)
    with bot.waitSignal(scene.job_activated) as activated:
        bot.keyClick(view, Qt.Key.Key_Enter)
    assert activated.args == [str(chain.job)]
    with bot.waitSignal(scene.selection_changed) as cleared:
        bot.keyClick(view, Qt.Key.Key_Escape)
    assert cleared.args == [""] and scene.selected_id() is None
    assert view.accessibleDescription().endswith("Selected: nothing selected")


def test_zoom_keys_fit_and_double_click(
    qtbot: QtBot, scene: ProvenanceScene, view: ProvenanceView, chain: Chain
) -> None:
    graph = chain.graph()
    scene.show_graph(graph, chain.knowledge(graph))
    start = view.zoom()
    qtbot.keyClick(view, Qt.Key.Key_Plus)
    assert view.zoom() == pytest.approx(start * 1.2)
    qtbot.keyClick(view, Qt.Key.Key_Minus)
    qtbot.keyClick(view, Qt.Key.Key_Minus)
    assert view.zoom() == pytest.approx(start / 1.2)
    qtbot.keyClick(view, Qt.Key.Key_0, Qt.KeyboardModifier.ControlModifier)
    assert view.zoom() <= 1.0
    assert view.mapToScene(view.viewport().rect()).boundingRect().contains(scene.graph_rect())
    point = view.mapFromScene(scene.nodes[str(chain.render_activity)].centre)
    with qtbot.waitSignal(scene.activity_activated) as activated:
        qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(point))
    assert activated.args == [str(chain.render_activity)]


def test_five_hundred_nodes_build_without_overlap_and_say_truncated(
    scene: ProvenanceScene, view: ProvenanceView, tmp_path: Path
) -> None:
    graph = synthetic_graph(500, truncated=True)
    scene.show_graph(graph)

    assert len(scene.nodes) == 500
    assert scene.banner is not None
    assert scene.banner.text == "Neighbourhood truncated at 500 nodes — showing the nearest"
    boxes = [item.sceneBoundingRect().adjusted(4, 4, -4, -4) for item in scene.nodes.values()]
    assert not any(a.intersects(b) for a, b in itertools.combinations(boxes, 2))
    labels = [e.label_rect for e in scene.edges.values() if e.label]
    assert labels and not any(a.intersects(b) for a, b in itertools.combinations(labels, 2))
    # too big to read when fitted: still opened fitted (the zoomed-out level of detail), into
    # the part of the view below the banner, not the whole viewport
    assert view.zoom() < items.SIMPLE_LOD
    uncovered = QRectF(view.uncovered_rect())
    assert uncovered.top() > view.mapFromScene(scene.banner.sceneBoundingRect()).boundingRect().bottom()
    assert uncovered.contains(view.mapFromScene(scene.graph_rect()).boundingRect().toRectF())
    assert scene.describe()["banner"] == scene.banner.text
    image = view.grab()
    assert not image.isNull() and image.width() == view.width()


def test_banner_goes_when_the_graph_is_no_longer_truncated(scene: ProvenanceScene) -> None:
    graph = synthetic_graph(40, truncated=True)
    scene.show_graph(graph)
    assert scene.banner is not None
    scene.update_graph(synthetic_graph(40, truncated=False))
    assert scene.banner is None


def test_describe_matches_the_production(scene: ProvenanceScene, chain: Chain) -> None:
    chain.change_original()
    graph = chain.graph()
    scene.show_graph(graph, chain.knowledge(graph))
    scene.select(str(chain.proxy))
    document = scene.describe()

    assert document["focus"] == str(chain.proxy) and document["selected"] == str(chain.proxy)
    by_id = {n["id"]: n for n in document["nodes"]}
    assert set(by_id) == {str(n.id) for n in graph.nodes}
    for rep in (chain.original, chain.proxy, chain.render):
        assert by_id[str(rep)]["state"] == chain.production.evaluate_artifact(rep).state.value
    assert by_id[str(chain.original)]["shown_as"] == "source"
    entry = {k: v for k, v in by_id[str(chain.render)].items() if k not in ("x", "y")}
    assert scene.node_document(str(chain.render)) == entry
    assert scene.node_document("nope") is None
    assert [r["code"] for r in by_id[str(chain.proxy)]["reasons"]] == ["fingerprint_changed"]
    assert by_id[str(chain.job)] | {"state": "succeeded", "type": "job"} == by_id[str(chain.job)]
    assert sorted((e["source"], e["target"], e["relation"], e["role"]) for e in document["edges"]) == sorted(
        (str(e.source), str(e.target), e.relation, e.role) for e in graph.edges
    )


def test_theme_switch_keeps_selection(scene: ProvenanceScene, chain: Chain) -> None:
    scene.show_graph(chain.graph())
    scene.select(str(chain.proxy))
    scene.set_theme(THEMES["dark"])
    assert scene.selected_id() == str(chain.proxy)
    assert rep_item(scene, chain.proxy).style.background.name() == scene.backgroundBrush().color().name()


@pytest.mark.parametrize(
    ("direction", "expected"), [("right", "b"), ("left", None), ("down", "c"), ("up", None)]
)
def test_nearest_prefers_the_closest_node_that_way(direction: str, expected: str | None) -> None:
    centres = {"a": (0.0, 0.0), "b": (300.0, 10.0), "c": (0.0, 80.0), "d": (300.0, 400.0)}
    assert nearest(centres, "a", direction) == expected
