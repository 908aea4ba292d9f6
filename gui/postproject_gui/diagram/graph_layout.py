"""Layered (Sugiyama-style) left-to-right layout of provenance graphs, free of Qt.

Own compact implementation rather than grandalf 0.8: grandalf needed ~500 ms for a
500-node/700-edge DAG (budget 200 ms), lays out top-to-bottom only and is rarely maintained.
Here every step iterates over ids sorted once up front, so output is independent of input order.
"""

from __future__ import annotations

import itertools
import math
from bisect import bisect_right
from collections import deque
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

Point = tuple[float, float]

_ORDER_SWEEPS = 12  # max barycenter sweeps (down and up alternate)
_ORDER_PATIENCE = 4  # stop after this many sweeps without fewer crossings
_COORD_SWEEPS = 4  # down+up rounds of the y averaging
_BIG = 40_000  # virtual nodes beyond which both steps get a third of the sweeps
_DUMMY_WEIGHT = 4.0  # long edges pull harder so they stay straight
_FREE_WEIGHT = 1e-3  # nodes without neighbours on the swept side barely resist
_SETTLED = 0.25  # stop the y sweeps once no centre moves further than this


@dataclass(frozen=True)
class LayoutNode:
    """A box to place; ``width``/``height`` in scene units."""

    id: str
    width: float
    height: float


@dataclass(frozen=True)
class LayoutEdge:
    """A directed edge from the producer side to the consumer side."""

    source: str
    target: str


@dataclass(frozen=True)
class NodePosition:
    """Placement of one node: ``x``/``y`` is the top-left corner; ``layer`` is the column."""

    x: float
    y: float
    width: float
    height: float
    layer: int
    order: int  # index within its layer, top to bottom (real nodes only)


@dataclass(frozen=True)
class GraphLayout:
    """Result of :func:`layout_graph`.

    ``edge_routes`` maps each distinct ``(source, target)`` to a polyline from the source's
    right-middle to the target's left-middle; intermediate points keep it out of node columns.
    Edges in ``back_edges`` closed a cycle: their route is the reverse of the forward route
    (so it starts at the source's left-middle), self-loops get a small loop below the node.
    """

    positions: Mapping[str, NodePosition]
    edge_routes: Mapping[tuple[str, str], tuple[Point, ...]]
    width: float
    height: float
    back_edges: frozenset[tuple[str, str]] = field(default_factory=frozenset)


def layout_graph(
    nodes: Sequence[LayoutNode],
    edges: Sequence[LayoutEdge],
    *,
    layer_gap: float = 80.0,
    node_gap: float = 24.0,
) -> GraphLayout:
    """Lay out ``nodes`` left to right; raises ``ValueError`` on bad ids, sizes or gaps."""
    for name, gap in (("layer_gap", layer_gap), ("node_gap", node_gap)):
        if not (math.isfinite(gap) and gap >= 0):
            raise ValueError(f"{name} must be a finite number >= 0, got {gap!r}")
    ids, widths, heights = _index_nodes(nodes)
    n = len(ids)
    if n == 0:
        return GraphLayout(MappingProxyType({}), MappingProxyType({}), 0.0, 0.0)
    pairs = _index_edges(edges, {node_id: i for i, node_id in enumerate(ids)})

    succ: list[list[int]] = [[] for _ in range(n)]
    for u, v in pairs:
        if u != v:
            succ[u].append(v)
    back = _back_edges(succ)
    dag = sorted({(v, u) if (u, v) in back else (u, v) for u, v in pairs if u != v})
    layer = _assign_layers(n, dag)

    vlayer, up, down, chains = _split_long_edges(layer, dag)
    layers: list[list[int]] = [[] for _ in range(max(layer) + 1)]
    for v, lay_index in enumerate(vlayer):
        layers[lay_index].append(v)

    layers = _reduce_crossings(layers, up, down)
    sizes = [heights[v] if v < n else 0.0 for v in range(len(vlayer))]
    cy = _assign_y(layers, up, down, sizes, n, node_gap)

    col_w = [max((widths[v] for v in lay if v < n), default=0.0) for lay in layers]
    col_x: list[float] = []
    x = 0.0
    for w in col_w:
        col_x.append(x)
        x += w + layer_gap
    left = [col_x[vlayer[v]] + (col_w[vlayer[v]] - widths[v]) / 2 for v in range(n)]

    def route(u: int, v: int) -> list[Point]:
        lu, lv = layer[u], layer[v]
        pts: list[Point] = [
            (left[u] + widths[u], cy[u]),
            (col_x[lu] + col_w[lu], cy[u]),
        ]
        for d in chains[(u, v)][1:-1]:
            pts += [
                (col_x[vlayer[d]], cy[d]),
                (col_x[vlayer[d]] + col_w[vlayer[d]], cy[d]),
            ]
        pts += [(col_x[lv], cy[v]), (left[v], cy[v])]
        return pts

    routes: dict[tuple[int, int], list[Point]] = {}
    for u, v in pairs:
        if u == v:
            s = min(layer_gap / 4, 12.0)
            r, lft, y = left[u] + widths[u], left[u], cy[u]
            below = y + heights[u] / 2 + node_gap / 2
            routes[(u, v)] = [
                (r, y),
                (r + s, y),
                (r + s, below),
                (lft - s, below),
                (lft - s, y),
                (lft, y),
            ]
        elif (u, v) in back:
            routes[(u, v)] = route(v, u)[::-1]
        else:
            routes[(u, v)] = route(u, v)

    # Normalise so that nodes and routes start at (0, 0).
    xs = [left[v] for v in range(n)] + [p[0] for pts in routes.values() for p in pts]
    ys = [cy[v] - heights[v] / 2 for v in range(n)] + [p[1] for pts in routes.values() for p in pts]
    x0, y0 = min(xs), min(ys)
    width = max(max(left[v] + widths[v] for v in range(n)), max(xs)) - x0
    height = max(max(cy[v] + heights[v] / 2 for v in range(n)), max(ys)) - y0

    order = [0] * n
    for lay in layers:
        for k, v in enumerate(w for w in lay if w < n):
            order[v] = k
    positions = {
        ids[v]: NodePosition(
            left[v] - x0,
            cy[v] - heights[v] / 2 - y0,
            widths[v],
            heights[v],
            layer[v],
            order[v],
        )
        for v in range(n)
    }
    edge_routes = {
        (ids[u], ids[v]): _dedupe([(px - x0, py - y0) for px, py in pts]) for (u, v), pts in routes.items()
    }
    back_ids = frozenset((ids[u], ids[v]) for u, v in back) | frozenset(
        (ids[u], ids[u]) for u, v in pairs if u == v
    )
    return GraphLayout(
        MappingProxyType(positions),
        MappingProxyType(edge_routes),
        width,
        height,
        back_ids,
    )


def _index_nodes(
    nodes: Sequence[LayoutNode],
) -> tuple[list[str], list[float], list[float]]:
    by_id: dict[str, LayoutNode] = {}
    for node in nodes:
        if node.id in by_id:
            raise ValueError(f"duplicate node id {node.id!r}")
        for name, size in (("width", node.width), ("height", node.height)):
            if not (math.isfinite(size) and size >= 0):
                raise ValueError(f"node {node.id!r}: {name} must be finite and >= 0, got {size!r}")
        by_id[node.id] = node
    ids = sorted(by_id)
    return (
        ids,
        [float(by_id[i].width) for i in ids],
        [float(by_id[i].height) for i in ids],
    )


def _index_edges(edges: Sequence[LayoutEdge], index: Mapping[str, int]) -> list[tuple[int, int]]:
    pairs: set[tuple[int, int]] = set()
    for edge in edges:
        unknown = [end for end in (edge.source, edge.target) if end not in index]
        if unknown:
            raise ValueError(
                f"edge {edge.source!r} -> {edge.target!r} references unknown node id(s): "
                + ", ".join(repr(u) for u in dict.fromkeys(unknown))
            )
        pairs.add((index[edge.source], index[edge.target]))
    return sorted(pairs)


def _back_edges(succ: list[list[int]]) -> set[tuple[int, int]]:
    """Edges closing a cycle in an iterative DFS that visits nodes and successors in id order.

    Roots are the sources first (so the natural flow direction wins), then the rest.
    """
    state = [0] * len(succ)  # 0 unseen, 1 on the DFS stack, 2 finished
    back: set[tuple[int, int]] = set()
    has_pred = [False] * len(succ)
    for vs in succ:
        for v in vs:
            has_pred[v] = True
    roots = [v for v in range(len(succ)) if not has_pred[v]] + [v for v in range(len(succ)) if has_pred[v]]
    for root in roots:
        if state[root]:
            continue
        state[root] = 1
        stack = [(root, 0)]
        while stack:
            u, k = stack[-1]
            if k < len(succ[u]):
                stack[-1] = (u, k + 1)
                v = succ[u][k]
                if state[v] == 1:
                    back.add((u, v))
                elif state[v] == 0:
                    state[v] = 1
                    stack.append((v, 0))
            else:
                state[u] = 2
                stack.pop()
    return back


def _assign_layers(n: int, dag: list[tuple[int, int]]) -> list[int]:
    """Longest path from the sources, then pull nodes right toward their consumers."""
    succ: list[list[int]] = [[] for _ in range(n)]
    indeg = [0] * n
    for u, v in dag:
        succ[u].append(v)
        indeg[v] += 1
    npred = list(indeg)
    queue = deque(v for v in range(n) if indeg[v] == 0)
    topo: list[int] = []
    while queue:
        u = queue.popleft()
        topo.append(u)
        for v in succ[u]:
            indeg[v] -= 1
            if indeg[v] == 0:
                queue.append(v)
    layer = [0] * n
    for u in topo:
        for v in succ[u]:
            layer[v] = max(layer[v], layer[u] + 1)
    # Moving u right lengthens its in-edges and shortens its out-edges by the same amount.
    for u in reversed(topo):
        if succ[u] and len(succ[u]) > npred[u]:
            layer[u] = max(layer[u], min(layer[v] for v in succ[u]) - 1)
    used = {lay: k for k, lay in enumerate(sorted(set(layer)))}
    return [used[lay] for lay in layer]


def _split_long_edges(
    layer: list[int], dag: list[tuple[int, int]]
) -> tuple[list[int], list[list[int]], list[list[int]], dict[tuple[int, int], list[int]]]:
    """Proper layering: an edge spanning k layers gets k-1 dummy nodes (ids >= n).

    Returns the layer of every virtual node, its neighbours one layer up/down, and each
    DAG edge's chain of virtual nodes (endpoints included).
    """
    vlayer = list(layer)
    up: list[list[int]] = [[] for _ in layer]
    down: list[list[int]] = [[] for _ in layer]
    chains: dict[tuple[int, int], list[int]] = {}
    for u, v in dag:
        chain = [u]
        for lay in range(layer[u] + 1, layer[v]):
            chain.append(len(vlayer))
            vlayer.append(lay)
            up.append([])
            down.append([])
        chain.append(v)
        for a, b in itertools.pairwise(chain):
            down[a].append(b)
            up[b].append(a)
        chains[(u, v)] = chain
    return vlayer, up, down, chains


def _reduce_crossings(layers: list[list[int]], up: list[list[int]], down: list[list[int]]) -> list[list[int]]:
    """Alternating barycenter sweeps; ties broken by index (= id order); keep the best order."""
    pos = [0] * len(up)
    for lay in layers:
        for k, v in enumerate(lay):
            pos[v] = k
    best = [list(lay) for lay in layers]
    best_count = _count_crossings(layers, down, pos)
    stale = 0
    for sweep in range(_ORDER_SWEEPS if len(up) <= _BIG else _ORDER_SWEEPS // 3):
        if best_count == 0 or stale >= _ORDER_PATIENCE:
            break
        if sweep % 2 == 0:
            for i in range(1, len(layers)):
                _sort_layer(layers[i], up, pos, len(layers[i - 1]))
        else:
            for i in range(len(layers) - 2, -1, -1):
                _sort_layer(layers[i], down, pos, len(layers[i + 1]))
        count = _count_crossings(layers, down, pos)
        if count < best_count:
            best, best_count, stale = [list(lay) for lay in layers], count, 0
        else:
            stale += 1
    return best


def _sort_layer(lay: list[int], nbrs: list[list[int]], pos: list[int], fixed_len: int) -> None:
    """Sort by barycenter of the neighbours in the fixed layer, then by index.

    Nodes without such neighbours keep their relative place (scaled to the fixed layer).
    """
    scale = fixed_len / len(lay)
    keyed: list[tuple[float, int]] = []
    for k, v in enumerate(lay):
        ns = nbrs[v]
        if len(ns) == 1:
            keyed.append((pos[ns[0]], v))
        elif ns:
            keyed.append((sum([pos[u] for u in ns]) / len(ns), v))
        else:
            keyed.append((k * scale, v))
    keyed.sort()
    for k, (_, v) in enumerate(keyed):
        lay[k] = v
        pos[v] = k


def _count_crossings(layers: list[list[int]], down: list[list[int]], pos: list[int]) -> int:
    """Sum of bilayer crossings, counted as inversions of the lower endpoints (bisect)."""
    total = 0
    for lay in layers[:-1]:
        seen: list[int] = []  # lower endpoints of the edges so far, sorted
        for u in lay:
            ds = down[u]
            for p in (pos[ds[0]],) if len(ds) == 1 else sorted([pos[v] for v in ds]):
                j = bisect_right(seen, p)
                total += len(seen) - j
                seen.insert(j, p)
    return total


def _assign_y(
    layers: list[list[int]],
    up: list[list[int]],
    down: list[list[int]],
    sizes: list[float],
    n: int,
    node_gap: float,
) -> list[float]:
    """Centre y of every (virtual) node: pull towards neighbours, never overlap."""
    cy = [0.0] * len(sizes)
    offsets: list[list[float]] = []  # least distance of each centre from the layer's first
    for lay in layers:
        off = [0.0]
        for a, b in itertools.pairwise(lay):
            off.append(off[-1] + (sizes[a] + sizes[b]) / 2 + (node_gap if a < n or b < n else node_gap / 2))
        offsets.append(off)
        for v, o in zip(lay, off, strict=True):
            cy[v] = o - off[-1] / 2

    def weights(nbrs: list[list[int]]) -> list[float]:
        return [
            len(ns) * (_DUMMY_WEIGHT if v >= n else 1.0) if ns else _FREE_WEIGHT for v, ns in enumerate(nbrs)
        ]

    def place(i: int, nbrs: list[list[int]], weight: list[float]) -> float:
        lay = layers[i]
        want: list[float] = []
        for v in lay:
            ns = nbrs[v]
            if len(ns) == 1:
                want.append(cy[ns[0]])
            elif ns:
                want.append(sum([cy[u] for u in ns]) / len(ns))
            else:
                want.append(cy[v])
        moved = 0.0
        for v, y in zip(lay, _separated_fit(want, [weight[v] for v in lay], offsets[i]), strict=True):
            moved = max(moved, abs(y - cy[v]))
            cy[v] = y
        return moved

    last = len(layers) - 1
    w_up, w_down = weights(up), weights(down)
    for _ in range(_COORD_SWEEPS if len(cy) <= _BIG else _COORD_SWEEPS // 3):
        moved = max([place(i, up, w_up) for i in range(1, last + 1)], default=0.0)
        moved = max([moved] + [place(i, down, w_down) for i in range(last - 1, -1, -1)])
        if moved < _SETTLED:
            break
    both = [u + d for u, d in zip(up, down, strict=True)]
    w_both = weights(both)
    for i in range(last + 1):
        place(i, both, w_both)
    return cy


def _separated_fit(want: list[float], weight: list[float], offsets: list[float]) -> list[float]:
    """Weighted least squares fit to ``want`` with ``y[k] - y[j] >= offsets[k] - offsets[j]`` (j < k).

    Substituting ``z[k] = y[k] - offsets[k]`` turns it into isotonic regression,
    solved exactly in O(n) by pool-adjacent-violators.
    """
    block_w: list[float] = []  # per block: weight sum, weighted target sum, member count
    block_s: list[float] = []
    block_c: list[int] = []
    for w, t, off in zip(weight, want, offsets, strict=True):
        bw, bs, bc = w, w * (t - off), 1
        while block_w and block_s[-1] * bw >= bs * block_w[-1]:
            bw += block_w.pop()
            bs += block_s.pop()
            bc += block_c.pop()
        block_w.append(bw)
        block_s.append(bs)
        block_c.append(bc)
    out: list[float] = []
    for bw, bs, bc in zip(block_w, block_s, block_c, strict=True):
        z = bs / bw
        for _ in range(bc):
            out.append(z + offsets[len(out)])
    return out


def _dedupe(points: list[Point]) -> tuple[Point, ...]:
    out = [points[0]]
    for p in points[1:]:
        if p != out[-1]:
            out.append(p)
    if len(out) == 1:  # zero-size node pair at the same spot: keep a two-point polyline
        out.append(points[-1])
    return tuple(out)
