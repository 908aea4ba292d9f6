"""Tests for the Qt-free layered layout of provenance graphs."""

from __future__ import annotations

import itertools
import os
import random
import subprocess
import sys
from collections import defaultdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from postproject_gui.diagram.graph_layout import (
    GraphLayout,
    LayoutEdge,
    LayoutNode,
    NodePosition,
    layout_graph,
)

EPS = 1e-6
LAYER_GAP = 80.0
NODE_GAP = 24.0

REP = (160.0, 48.0)
ACT = (120.0, 36.0)
JOB = (100.0, 30.0)


def node(node_id: str, size: tuple[float, float] = REP) -> LayoutNode:
    return LayoutNode(node_id, *size)


def edges_of(*pairs: tuple[str, str]) -> list[LayoutEdge]:
    return [LayoutEdge(s, t) for s, t in pairs]


def centre_y(p: NodePosition) -> float:
    return p.y + p.height / 2


def check_invariants(
    layout: GraphLayout,
    nodes: list[LayoutNode],
    edges: list[LayoutEdge],
    *,
    layer_gap: float = LAYER_GAP,
    node_gap: float = NODE_GAP,
) -> None:
    pos = layout.positions
    assert set(pos) == {n.id for n in nodes}
    for n in nodes:
        assert (pos[n.id].width, pos[n.id].height) == (n.width, n.height)

    # No overlaps: any two boxes are a layer gap apart horizontally or a node gap apart vertically.
    items = sorted(pos.values(), key=lambda p: (p.x, p.y))
    for i, a in enumerate(items):
        for b in items[i + 1 :]:
            x_apart = b.x >= a.x + a.width + layer_gap - EPS or a.x >= b.x + b.width + layer_gap - EPS
            y_apart = b.y >= a.y + a.height + node_gap - EPS or a.y >= b.y + b.height + node_gap - EPS
            assert x_apart or y_apart, (a, b)

    # Layers are 0..L-1, none empty, placed left to right in order; order follows y.
    by_layer: dict[int, list[NodePosition]] = defaultdict(list)
    for p in pos.values():
        by_layer[p.layer].append(p)
    if pos:
        assert sorted(by_layer) == list(range(len(by_layer)))
    for k in range(len(by_layer) - 1):
        right = max(p.x + p.width for p in by_layer[k])
        assert min(p.x for p in by_layer[k + 1]) >= right + layer_gap - EPS
    for members in by_layer.values():
        members.sort(key=lambda p: p.order)
        assert [p.order for p in members] == list(range(len(members)))
        assert all(a.y + a.height + node_gap <= b.y + EPS for a, b in itertools.pairwise(members))

    # Every distinct edge is routed; forward edges go strictly rightwards in layers.
    distinct = {(e.source, e.target) for e in edges}
    assert set(layout.edge_routes) == distinct
    assert layout.back_edges <= distinct
    for s, t in distinct:
        route = layout.edge_routes[(s, t)]
        assert len(route) >= 2
        ps, pt = pos[s], pos[t]
        if (s, t) in layout.back_edges:
            assert s == t or ps.layer > pt.layer
            continue
        assert ps.layer < pt.layer
        assert pt.x >= ps.x + ps.width + layer_gap - EPS
        assert route[0] == pytest.approx((ps.x + ps.width, centre_y(ps)))
        assert route[-1] == pytest.approx((pt.x, centre_y(pt)))
        xs = [x for x, _ in route]
        assert xs == sorted(xs)

    # The bounding box starts at the origin and holds all boxes and route points.
    points = [pt for route in layout.edge_routes.values() for pt in route]
    for p in pos.values():
        points += [(p.x, p.y), (p.x + p.width, p.y + p.height)]
    if points:
        assert min(x for x, _ in points) == pytest.approx(0.0, abs=EPS)
        assert min(y for _, y in points) == pytest.approx(0.0, abs=EPS)
        assert max(x for x, _ in points) == pytest.approx(layout.width)
        assert max(y for _, y in points) == pytest.approx(layout.height)


def random_dag(rng: random.Random, n: int, m: int) -> tuple[list[LayoutNode], list[LayoutEdge]]:
    sizes = (REP, ACT, JOB)
    nodes = [node(f"n{i:04d}", rng.choice(sizes)) for i in range(n)]
    order = list(range(n))
    rng.shuffle(order)  # ids do not follow the topological order
    pairs: set[tuple[int, int]] = set()
    while len(pairs) < m:
        a, b = sorted(rng.sample(range(n), 2))
        pairs.add((order[a], order[b]))
    return nodes, [LayoutEdge(nodes[a].id, nodes[b].id) for a, b in sorted(pairs)]


# --- examples ---------------------------------------------------------------------------


def test_empty_graph() -> None:
    layout = layout_graph([], [])
    assert layout.positions == {}
    assert layout.edge_routes == {}
    assert (layout.width, layout.height) == (0.0, 0.0)


def test_single_node() -> None:
    layout = layout_graph([node("a")], [])
    assert layout.positions["a"] == NodePosition(0.0, 0.0, *REP, layer=0, order=0)
    assert (layout.width, layout.height) == REP


def test_chain_gives_five_layers_in_order() -> None:
    nodes = [
        node("original"),
        node("transcode", ACT),
        node("proxy"),
        node("grade", ACT),
        node("render"),
    ]
    edges = edges_of(
        ("original", "transcode"),
        ("transcode", "proxy"),
        ("proxy", "grade"),
        ("grade", "render"),
    )
    layout = layout_graph(nodes, edges)
    check_invariants(layout, nodes, edges)
    chain = ["original", "transcode", "proxy", "grade", "render"]
    assert [layout.positions[n].layer for n in chain] == [0, 1, 2, 3, 4]
    xs = [layout.positions[n].x for n in chain]
    assert xs == sorted(xs)
    # A straight chain: all centred on one line, every route a two-point segment.
    assert len({centre_y(layout.positions[n]) for n in chain}) == 1
    assert all(len(route) == 2 for route in layout.edge_routes.values())


def test_job_is_pulled_next_to_its_activity() -> None:
    nodes = [
        node("a0"),
        node("act1", ACT),
        node("a1"),
        node("act2", ACT),
        node("job", JOB),
    ]
    edges = edges_of(("a0", "act1"), ("act1", "a1"), ("a1", "act2"), ("job", "act2"))
    layout = layout_graph(nodes, edges)
    check_invariants(layout, nodes, edges)
    assert layout.positions["job"].layer == layout.positions["act2"].layer - 1


def test_fan_out_centres_the_producer() -> None:
    outputs = [f"out{i}" for i in range(4)]
    nodes = [node("act", ACT)] + [node(o) for o in outputs]
    edges = edges_of(*[("act", o) for o in outputs])
    layout = layout_graph(nodes, edges)
    check_invariants(layout, nodes, edges)
    assert {layout.positions[o].layer for o in outputs} == {1}
    mean = sum(centre_y(layout.positions[o]) for o in outputs) / len(outputs)
    assert centre_y(layout.positions["act"]) == pytest.approx(mean)


def test_fan_in_centres_the_consumer() -> None:
    inputs = [f"in{i}" for i in range(5)]
    nodes = [node(i) for i in inputs] + [node("act", ACT), node("job", JOB)]
    edges = edges_of(*[(i, "act") for i in inputs], ("job", "act"))
    layout = layout_graph(nodes, edges)
    check_invariants(layout, nodes, edges)
    sources = [*inputs, "job"]
    mean = sum(centre_y(layout.positions[s]) for s in sources) / len(sources)
    assert centre_y(layout.positions["act"]) == pytest.approx(mean)


def test_diamond_has_no_crossings_and_is_symmetric() -> None:
    nodes = [node("src"), node("left", ACT), node("right", ACT), node("sink")]
    edges = edges_of(("src", "left"), ("src", "right"), ("left", "sink"), ("right", "sink"))
    layout = layout_graph(nodes, edges)
    check_invariants(layout, nodes, edges)
    pos = layout.positions
    assert centre_y(pos["src"]) == pytest.approx(centre_y(pos["sink"]))
    assert centre_y(pos["src"]) == pytest.approx((centre_y(pos["left"]) + centre_y(pos["right"])) / 2)


def test_long_edge_gets_intermediate_points() -> None:
    nodes = [node("a"), node("b", ACT), node("c"), node("d", ACT)]
    edges = edges_of(("a", "b"), ("b", "c"), ("c", "d"), ("a", "d"))
    layout = layout_graph(nodes, edges)
    check_invariants(layout, nodes, edges)
    route = layout.edge_routes[("a", "d")]
    assert len(route) > 2
    # The polyline passes the columns of b and c beside them, not through them.
    for mid in ("b", "c"):
        p = layout.positions[mid]
        crossing = [y for x, y in route if p.x <= x <= p.x + p.width]
        assert crossing
        assert all(y <= p.y - NODE_GAP + EPS or y >= p.y + p.height + NODE_GAP - EPS for y in crossing)


def test_duplicate_edges_are_collapsed() -> None:
    nodes = [node("a"), node("b")]
    layout = layout_graph(nodes, edges_of(("a", "b"), ("a", "b"), ("a", "b")))
    assert list(layout.edge_routes) == [("a", "b")]


def test_isolated_nodes_are_placed() -> None:
    nodes = [node("a"), node("b"), node("lonely", JOB), node("alone", ACT)]
    edges = edges_of(("a", "b"))
    layout = layout_graph(nodes, edges)
    check_invariants(layout, nodes, edges)


def test_custom_gaps_are_respected() -> None:
    rng = random.Random(3)
    nodes, edges = random_dag(rng, 30, 45)
    layout = layout_graph(nodes, edges, layer_gap=10.0, node_gap=0.0)
    check_invariants(layout, nodes, edges, layer_gap=10.0, node_gap=0.0)


def test_cycle_terminates_and_is_routed() -> None:
    nodes = [node("a"), node("b", ACT), node("c"), node("d", ACT)]
    edges = edges_of(("a", "b"), ("b", "c"), ("c", "d"), ("d", "a"), ("c", "c"), ("b", "a"))
    layout = layout_graph(nodes, edges)
    check_invariants(layout, nodes, edges)
    assert ("c", "c") in layout.back_edges
    assert ("d", "a") in layout.back_edges
    assert ("b", "a") in layout.back_edges
    assert [layout.positions[n].layer for n in "abcd"] == [0, 1, 2, 3]


def test_cycle_breaking_does_not_depend_on_input_order() -> None:
    nodes = [node(c) for c in "pqrs"]
    pairs = [("p", "q"), ("q", "r"), ("r", "s"), ("s", "q"), ("r", "p")]
    first = layout_graph(nodes, edges_of(*pairs))
    second = layout_graph(nodes[::-1], edges_of(*pairs[::-1]))
    assert first == second


@pytest.mark.parametrize(
    ("edges", "missing"),
    [
        (edges_of(("a", "ghost")), "'ghost'"),
        (edges_of(("ghost", "a")), "'ghost'"),
        (edges_of(("x", "y")), "'x', 'y'"),
    ],
)
def test_unknown_ids_raise(edges: list[LayoutEdge], missing: str) -> None:
    with pytest.raises(ValueError, match=f"unknown node id\\(s\\): {missing}"):
        layout_graph([node("a")], edges)


@pytest.mark.parametrize(
    ("nodes", "kwargs", "message"),
    [
        ([node("a"), node("a")], {}, "duplicate node id 'a'"),
        ([LayoutNode("a", -1.0, 10.0)], {}, "width"),
        ([LayoutNode("a", 10.0, float("nan"))], {}, "height"),
        ([node("a")], {"layer_gap": -1.0}, "layer_gap"),
        ([node("a")], {"node_gap": float("inf")}, "node_gap"),
    ],
)
def test_invalid_input_raises(nodes: list[LayoutNode], kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        layout_graph(nodes, [], **kwargs)


def test_500_node_random_dag() -> None:
    rng = random.Random(500)
    nodes, edges = random_dag(rng, 500, 700)
    layout = layout_graph(nodes, edges)
    check_invariants(layout, nodes, edges)
    assert not layout.back_edges


def test_2000_node_random_dag_works() -> None:
    rng = random.Random(2000)
    nodes, edges = random_dag(rng, 2000, 2800)
    layout = layout_graph(nodes, edges)
    assert len(layout.positions) == 2000
    assert len(layout.edge_routes) == 2800


def test_module_imports_no_qt() -> None:
    code = (
        "import sys, postproject_gui.diagram.graph_layout\n"
        "bad = [m for m in sys.modules if m.startswith(('PySide6', 'shiboken6', 'qasync'))]\n"
        "assert not bad, bad\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


# --- properties ---------------------------------------------------------------------------

IDS = st.text(alphabet="abcxyzAB_-0189é", min_size=1, max_size=4)
SIZES = st.tuples(
    st.floats(min_value=0.0, max_value=300.0, allow_nan=False),
    st.floats(min_value=0.0, max_value=120.0, allow_nan=False),
)


@st.composite
def graphs(draw: st.DrawFn, *, acyclic: bool) -> tuple[list[LayoutNode], list[LayoutEdge]]:
    ids = draw(st.lists(IDS, min_size=0, max_size=25, unique=True))
    nodes = [LayoutNode(i, *draw(SIZES)) for i in ids]
    if len(ids) < 2 and acyclic:
        return nodes, []
    if not ids:
        return nodes, []
    index = st.integers(min_value=0, max_value=len(ids) - 1)
    pairs = draw(st.lists(st.tuples(index, index), max_size=60))
    if acyclic:  # orient along the list order, which is unrelated to id order
        pairs = [(min(a, b), max(a, b)) for a, b in pairs if a != b]
    return nodes, [LayoutEdge(ids[a], ids[b]) for a, b in pairs]


@settings(deadline=None)
@given(graphs(acyclic=True))
def test_dag_invariants(graph: tuple[list[LayoutNode], list[LayoutEdge]]) -> None:
    nodes, edges = graph
    layout = layout_graph(nodes, edges)
    check_invariants(layout, nodes, edges)
    assert not layout.back_edges


@settings(deadline=None)
@given(graphs(acyclic=False))
def test_any_digraph_invariants(
    graph: tuple[list[LayoutNode], list[LayoutEdge]],
) -> None:
    nodes, edges = graph
    layout = layout_graph(nodes, edges)
    check_invariants(layout, nodes, edges)


@settings(deadline=None)
@given(graphs(acyclic=False), st.randoms(use_true_random=False))
def test_deterministic_under_shuffled_input(
    graph: tuple[list[LayoutNode], list[LayoutEdge]], rnd: random.Random
) -> None:
    nodes, edges = graph
    shuffled_nodes, shuffled_edges = (
        list(nodes),
        list(edges) + list(edges[: len(edges) // 2]),
    )
    rnd.shuffle(shuffled_nodes)
    rnd.shuffle(shuffled_edges)
    first = layout_graph(nodes, edges)
    second = layout_graph(shuffled_nodes, shuffled_edges)
    assert first == second
    assert list(first.positions) == list(second.positions)
    assert list(first.edge_routes) == list(second.edge_routes)
