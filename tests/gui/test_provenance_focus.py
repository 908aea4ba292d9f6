"""A large provenance graph stays readable: level of detail when zoomed out, framing in the
part of the view nothing covers, focusing a node at a readable zoom, lineage dimming."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QApplication, QStyleOptionGraphicsItem
from pytestqt.qtbot import QtBot

from postproject.knowledge.provenance import ProvenanceGraph
from postproject_gui.diagram import provenance_edges as edges_
from postproject_gui.diagram import provenance_items as items
from postproject_gui.diagram.provenance_scene import ProvenanceScene
from postproject_gui.look.theme import THEMES
from postproject_gui.services.types import GraphRead
from postproject_gui.views.provenance_tab import ProvenanceTab
from postproject_gui.views.provenance_view import READABLE, ProvenanceView
from tests.gui.provenance_fixtures import synthetic_graph


@pytest.fixture
def big() -> ProvenanceGraph:
    return synthetic_graph(500, truncated=True)


@pytest.fixture
def view(qtbot: QtBot, qapp: QApplication, big: ProvenanceGraph) -> ProvenanceView:
    widget = ProvenanceView(ProvenanceScene(THEMES["light"]))
    qtbot.addWidget(widget)
    widget.resize(1100, 520)
    widget.show()
    widget.scene().show_graph(big)  # type: ignore[attr-defined]
    return widget


def scene_of(view: ProvenanceView) -> ProvenanceScene:
    scene = view.scene()
    assert isinstance(scene, ProvenanceScene)
    return scene


def on_screen(view: ProvenanceView, node_id: str) -> QRectF:
    item = scene_of(view).nodes[node_id]
    return view.mapFromScene(item.sceneBoundingRect()).boundingRect().toRectF()


def corner_node(view: ProvenanceView) -> str:
    """The node nearest the graph's top-left corner (under the banner when centred naively)."""
    scene = scene_of(view)
    linked = {n for pair in scene.edges for n in pair}
    return min(linked, key=lambda i: scene.nodes[i].pos().x() + scene.nodes[i].pos().y())


def assert_in_the_middle(view: ProvenanceView, node_id: str) -> None:
    uncovered = QRectF(view.uncovered_rect())
    box = on_screen(view, node_id)
    assert uncovered.contains(box), (box, uncovered)
    offset = box.center() - uncovered.center()
    assert abs(offset.x()) <= 2 and abs(offset.y()) <= 2, offset


def test_a_large_graph_opens_fitted_below_the_banner(view: ProvenanceView) -> None:
    scene = scene_of(view)
    uncovered = QRectF(view.uncovered_rect())
    assert scene.banner is not None
    banner = view.mapFromScene(scene.banner.sceneBoundingRect()).boundingRect()
    assert uncovered.top() > banner.bottom()  # the banner's band is not part of the uncovered area
    assert view.zoom() < items.SIMPLE_LOD  # zoomed out: the simple level of detail
    graph = view.mapFromScene(scene.graph_rect()).boundingRect().toRectF()
    assert uncovered.contains(graph), (graph, uncovered)


def test_focus_node_centres_it_in_the_uncovered_area_at_a_readable_zoom(view: ProvenanceView) -> None:
    scene, node_id = scene_of(view), corner_node(view)
    view.focus_node(node_id)

    assert scene.selected_id() == node_id
    assert READABLE <= view.zoom() <= 1.0
    assert_in_the_middle(view, node_id)
    # the rest of the graph is faint, the node's lineage is not
    lineage = scene.lineage(node_id)
    assert scene.dimming and 1 < len(lineage) < len(scene.nodes)
    assert all(scene.nodes[i].dimmed == (i not in lineage) for i in scene.nodes)
    assert any(e.dimmed for e in scene.edges.values())
    assert not any(e.dimmed for (s, t), e in scene.edges.items() if s == node_id or t == node_id)


def test_keys_fit_all_and_focus_the_selection(qtbot: QtBot, view: ProvenanceView) -> None:
    scene = scene_of(view)
    order = scene.reading_order()
    node_id = order[len(order) - 1]  # the last column's bottom node: a corner
    view.set_zoom(1.0)
    view.setFocus()
    scene.select(node_id)
    qtbot.keyClick(view, Qt.Key.Key_F)
    assert READABLE <= view.zoom() <= 1.0 and scene.dimming
    assert_in_the_middle(view, node_id)

    qtbot.keyClick(view, Qt.Key.Key_Home)
    assert view.zoom() < items.SIMPLE_LOD and not scene.dimming
    graph = view.mapFromScene(scene.graph_rect()).boundingRect().toRectF()
    assert QRectF(view.uncovered_rect()).contains(graph)
    assert scene.selected_id() == node_id and not any(i.dimmed for i in scene.nodes.values())


def test_a_selection_off_screen_comes_to_the_middle_not_to_an_edge(view: ProvenanceView) -> None:
    scene = scene_of(view)
    view.set_zoom(1.0)
    view.center_on_node(corner_node(view))
    far = max(scene.nodes, key=lambda i: scene.nodes[i].pos().x() + scene.nodes[i].pos().y())
    assert not QRectF(view.uncovered_rect()).intersects(on_screen(view, far))

    scene.select(far)  # as the arrow keys, Tab or the detail panel do

    assert view.zoom() == pytest.approx(1.0)  # the user's zoom is kept
    assert_in_the_middle(view, far)


def test_a_node_selected_inside_the_view_does_not_move(view: ProvenanceView) -> None:
    scene = scene_of(view)
    view.set_zoom(1.0)
    view.center_on_node(corner_node(view))
    centre = QRectF(view.uncovered_rect()).center()
    near = min(
        (i for i in scene.nodes if i != corner_node(view)),
        key=lambda i: (on_screen(view, i).center() - centre).manhattanLength(),
    )
    before = on_screen(view, near)
    scene.select(near)
    assert on_screen(view, near) == before


def paint_item(item: items.NodeItem | edges_.EdgeItem, scale: float, box: QRectF) -> QImage:
    """``item`` painted at ``scale`` (its level of detail) onto the graph background."""
    image = QImage(
        round(box.width() * scale) + 2, round(box.height() * scale) + 2, QImage.Format.Format_ARGB32
    )
    image.fill(item.style.background)
    painter = QPainter(image)
    painter.scale(scale, scale)
    painter.translate(-box.topLeft())
    item.paint(painter, QStyleOptionGraphicsItem(), None)
    painter.end()
    return image


def colours(image: QImage, box: QRectF, scale: float) -> set[str]:
    found = set()
    for fx in (0.3, 0.5, 0.7):
        for fy in (0.3, 0.5, 0.7):
            point = QPointF(box.left() + box.width() * fx, box.top() + box.height() * fy) - box.topLeft()
            found.add(image.pixelColor((point * scale).toPoint()).name())
    return found


def test_zoomed_out_a_node_is_its_state_colour_without_text(view: ProvenanceView) -> None:
    scene = scene_of(view)
    rep = next(i for i in scene.nodes.values() if isinstance(i, items.RepresentationItem))
    job = next(i for i in scene.nodes.values() if isinstance(i, items.JobItem))
    for item, state in ((rep, rep.knowledge_colour), (job, job.colour)):
        box = QRectF(0, 0, item.width, item.height)
        below, above = items.SIMPLE_LOD * 0.9, items.SIMPLE_LOD * 1.1
        simple = colours(paint_item(item, below, box), box, below)
        detailed = colours(paint_item(item, above, box), box, above)
        assert simple == {QColor(state).name()}  # one flat state colour: no text, no card
        assert QColor(state).name() not in detailed or len(detailed) > 1  # text and card from here up


def test_zoomed_out_edges_drop_their_role_labels(view: ProvenanceView) -> None:
    scene = scene_of(view)
    edge = next(e for e in scene.edges.values() if e.label)
    box = edge.label_rect
    background = edge.style.background.name()
    inked = {}
    for scale in (items.SIMPLE_LOD * 0.9, items.SIMPLE_LOD * 1.1):
        image = paint_item(edge, scale, box)
        inked[scale] = sum(
            image.pixelColor(x, y).name() != background
            for x in range(image.width())
            for y in range(image.height())
        )
        width = image.width()
    # below the threshold only the thin line crosses the label's place; from it up, the label box
    # (its border all round) and its text are drawn
    assert inked[items.SIMPLE_LOD * 0.9] <= 2 * width
    assert inked[items.SIMPLE_LOD * 1.1] >= 3 * width


def test_the_tab_opens_a_large_graph_on_its_focus_beside_the_detail_panel(
    qtbot: QtBot, big: ProvenanceGraph
) -> None:
    tab = ProvenanceTab(THEMES["dark"])
    qtbot.addWidget(tab)
    tab.resize(1024, 700)
    tab.show()
    tab.show_read(GraphRead(big, {}, 1))
    focus = str(big.focus)

    assert tab.scene.selected_id() == focus
    assert READABLE <= tab.view.zoom() <= 1.0
    assert_in_the_middle(tab.view, focus)
    view_box = tab.view.geometry().translated(
        tab.view.parentWidget().mapTo(tab, tab.view.pos()) - tab.view.pos()
    )
    detail_box = tab.detail.geometry().translated(
        tab.detail.parentWidget().mapTo(tab, tab.detail.pos()) - tab.detail.pos()
    )
    assert not view_box.intersects(detail_box)  # the detail panel covers no part of the graph
    qtbot.mouseClick(tab.fit, Qt.MouseButton.LeftButton)
    assert tab.view.zoom() < items.SIMPLE_LOD
    qtbot.mouseClick(tab.focus_button, Qt.MouseButton.LeftButton)
    assert_in_the_middle(tab.view, focus)


def test_find_in_graph_and_a_jobs_node_are_focused(qtbot: QtBot, big: ProvenanceGraph) -> None:
    tab = ProvenanceTab(THEMES["light"])
    qtbot.addWidget(tab)
    tab.resize(1024, 700)
    tab.show()
    tab.show_read(GraphRead(big, {}, 1))
    label = tab.scene.tooltip(tab.scene.reading_order()[-1]).splitlines()[0].split(" · ")[0]

    tab.find_field.setText(label.lower())
    qtbot.keyClick(tab.find_field, Qt.Key.Key_Return)
    first = tab.scene.selected_id()
    assert first is not None and label in tab.scene.tooltip(first)
    assert_in_the_middle(tab.view, first)
    total = tab.find_status.text().split(" of ")[1]
    assert tab.find_status.text() == f"1 of {total}"
    if int(total) > 1:
        qtbot.keyClick(tab.find_field, Qt.Key.Key_Return)
        assert tab.scene.selected_id() != first and tab.find_status.text() == f"2 of {total}"
    assert tab.find_node("no-such-node-anywhere") is None
    assert tab.find_status.text() == "no node matches"

    job = next(i for i, item in tab.scene.nodes.items() if item.node_type == "job")
    tab.view.fit_to_view()
    tab.focus_node(job)  # what a job's "Show provenance" asks for once its graph is shown
    assert tab.scene.selected_id() == job
    assert READABLE <= tab.view.zoom() <= 1.0
    assert_in_the_middle(tab.view, job)


def test_an_export_while_focused_draws_nothing_faint(view: ProvenanceView, tmp_path: Path) -> None:
    scene = scene_of(view)
    view.focus_node(corner_node(view))
    assert any(i.dimmed for i in scene.nodes.values())
    painted: list[bool] = []
    item = next(i for i in scene.nodes.values() if i.dimmed)
    original = item.paint

    def spy(painter: QPainter, option: QStyleOptionGraphicsItem, widget: object = None) -> None:
        painted.append(item.dimmed)
        original(painter, option, widget)  # type: ignore[arg-type]

    item.paint = spy  # type: ignore[method-assign]
    view.export_image(tmp_path / "graph.png")
    assert painted and not any(painted)  # drawn, and not faint
    assert item.dimmed and scene.dimming  # the view is still focused afterwards


def test_moving_the_selection_in_the_overview_keeps_it_still(qtbot: QtBot, view: ProvenanceView) -> None:
    scene = scene_of(view)
    transform = view.transform()
    h, v = view.horizontalScrollBar().value(), view.verticalScrollBar().value()
    view.setFocus()
    for node_id in (corner_node(view), scene.reading_order()[-1]):  # two corners of the graph
        scene.select(node_id)
        assert QRectF(view.uncovered_rect()).contains(on_screen(view, node_id))
    qtbot.keyClick(view, Qt.Key.Key_Up)
    assert view.transform() == transform
    assert (view.horizontalScrollBar().value(), view.verticalScrollBar().value()) == (h, v)


def test_a_graph_readable_when_fitted_opens_whole_with_its_focus_selected(qtbot: QtBot) -> None:
    small = synthetic_graph(8, depth=1)
    tab = ProvenanceTab(THEMES["light"])
    qtbot.addWidget(tab)
    tab.resize(1600, 900)
    tab.show()
    tab.show_read(GraphRead(small, {}, 1))

    assert tab.scene.selected_id() == str(small.focus)
    assert tab.view.zoom() >= READABLE
    graph = tab.view.mapFromScene(tab.scene.graph_rect()).boundingRect().toRectF()
    assert QRectF(tab.view.uncovered_rect()).contains(graph)  # all of it, not re-centred on the focus
