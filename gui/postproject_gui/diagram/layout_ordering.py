"""The two iterative steps of :mod:`graph_layout`: ordering the nodes within each layer to
reduce edge crossings (alternating barycenter sweeps) and placing them vertically (weighted
averaging sweeps with minimum separation). Pure Python, free of Qt."""

from __future__ import annotations

import itertools
from bisect import bisect_right

_ORDER_SWEEPS = 12  # max barycenter sweeps (down and up alternate)
_ORDER_PATIENCE = 4  # stop after this many sweeps without fewer crossings
_COORD_SWEEPS = 4  # down+up rounds of the y averaging
_BIG = 40_000  # virtual nodes beyond which both steps get a third of the sweeps
_DUMMY_WEIGHT = 4.0  # long edges pull harder so they stay straight
_FREE_WEIGHT = 1e-3  # nodes without neighbours on the swept side barely resist
_SETTLED = 0.25  # stop the y sweeps once no centre moves further than this


def reduce_crossings(layers: list[list[int]], up: list[list[int]], down: list[list[int]]) -> list[list[int]]:
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


def assign_y(
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
