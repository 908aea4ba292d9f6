"""Where the lifecycle diagram puts things, derived from ``postproject.model.lifecycle.TRANSITIONS``.

No Qt. Drawn top to bottom so it fits a side panel: states get a rank (a row of the
picture) by the longest forward path from "not yet requested"; transitions back to an
earlier rank (release) are back arrows, a state's transitions to itself (renew, reclaim)
form one loop, and arrows that skip a rank curve around the states between. States within
a rank are placed left to right in the table's order. Changing the table changes the
picture; nothing here names a particular state.
"""

from __future__ import annotations

import enum
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from postproject import TRANSITIONS, Action, JobState, Transition
from postproject.model.lifecycle import Holder

NODE_W, NODE_H = 108.0, 44.0
RANK_GAP, ROW_GAP = 50.0, 26.0  # vertical gap between ranks, horizontal gap within one
START_RADIUS = 6.0
MARGIN = 44.0  # room left and right for back arrows and loops


ACTION_LABELS = {Action.FINALIZE_LOST: "sweep"}  # short names on arrows (tooltips say more)


class ArrowShape(enum.Enum):
    STRAIGHT = "straight"  # to the next rank
    SKIP = "skip"  # over one or more ranks
    BACK = "back"  # to an earlier rank
    LOOP = "loop"  # to itself


@dataclass(frozen=True, slots=True)
class NodeBox:
    """A state's box: top-left corner, rank (row of the picture) and place in its rank."""

    state: JobState
    x: float
    y: float
    rank: int
    row: int

    @property
    def cx(self) -> float:
        return self.x + NODE_W / 2

    @property
    def cy(self) -> float:
        return self.y + NODE_H / 2


@dataclass(frozen=True, slots=True)
class Arrow:
    """All transitions between one pair of states (source None: the start)."""

    source: JobState | None
    target: JobState
    transitions: tuple[Transition, ...]
    shape: ArrowShape

    @property
    def actions(self) -> tuple[Action, ...]:
        return tuple(dict.fromkeys(t.action for t in self.transitions))

    @property
    def label(self) -> str:
        """The actions' names; stacked one per line when there are more than two."""
        names = [ACTION_LABELS.get(a, a.value) for a in self.actions]
        return ("\n" if len(names) > 2 else " · ").join(names)

    @property
    def tooltip(self) -> str:
        lines = []
        for t in self.transitions:
            who = "needs the worker's lease" if t.holder is Holder.LEASE else "anyone may"
            note = f"; {t.note}" if t.note else ""
            lines.append(f"{t.action.value}: {who}{note} (event {t.event})")
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class LifecycleLayout:
    nodes: dict[JobState, NodeBox]
    arrows: tuple[Arrow, ...]
    start: tuple[float, float]  # centre of the start dot (above the first rank)
    width: float
    height: float


def ranks(transitions: Iterable[Transition] = TRANSITIONS) -> dict[JobState, int]:
    """Longest forward path from the start, ignoring loops and back edges."""
    table = tuple(transitions)
    forward = _forward_edges(table)
    rank: dict[JobState, int] = {}
    changed = True
    while changed:
        changed = False
        for source, target in forward:
            value = (rank.get(source, 0) if source is not None else 0) + 1
            if rank.get(target, 0) < value:
                rank[target], changed = value, True
    return rank


def _forward_edges(table: tuple[Transition, ...]) -> list[tuple[JobState | None, JobState]]:
    """Edges that are not loops and do not close a cycle (DFS from the start, table order)."""
    succ: dict[JobState | None, list[JobState]] = defaultdict(list)
    for t in table:
        if t.source is not t.target and t.target not in succ[t.source]:
            succ[t.source].append(t.target)
    forward: list[tuple[JobState | None, JobState]] = []
    on_path: list[JobState | None] = []
    seen: set[JobState | None] = set()

    def visit(node: JobState | None) -> None:
        seen.add(node)
        on_path.append(node)
        for nxt in succ[node]:
            if nxt not in on_path:
                forward.append((node, nxt))
                if nxt not in seen:
                    visit(nxt)
        on_path.pop()

    visit(None)
    return forward


def layout(transitions: Iterable[Transition] = TRANSITIONS) -> LifecycleLayout:
    table = tuple(transitions)
    rank = ranks(table)
    rows: dict[int, list[JobState]] = defaultdict(list)
    for t in table:  # left to right in the table's order of first appearance
        if t.target not in rows[rank[t.target]]:
            rows[rank[t.target]].append(t.target)
    widest = max(len(r) for r in rows.values())
    inner = widest * NODE_W + (widest - 1) * ROW_GAP
    nodes: dict[JobState, NodeBox] = {}
    for r, states in rows.items():
        left = MARGIN + (inner - (len(states) * NODE_W + (len(states) - 1) * ROW_GAP)) / 2
        top = START_RADIUS * 2 + RANK_GAP * 0.8 + (r - 1) * (NODE_H + RANK_GAP)
        for i, state in enumerate(states):
            nodes[state] = NodeBox(state, left + i * (NODE_W + ROW_GAP), top, r, i)
    width = inner + 2 * MARGIN
    height = max(n.y for n in nodes.values()) + NODE_H
    return LifecycleLayout(nodes, _arrows(table, rank), (width / 2, START_RADIUS), width, height)


def _arrows(table: tuple[Transition, ...], rank: dict[JobState, int]) -> tuple[Arrow, ...]:
    grouped: dict[tuple[JobState | None, JobState], list[Transition]] = defaultdict(list)
    for t in table:
        grouped[(t.source, t.target)].append(t)
    arrows = []
    for (source, target), ts in grouped.items():
        here = rank[source] if source is not None else 0
        if source is target:
            shape = ArrowShape.LOOP
        elif rank[target] <= here:
            shape = ArrowShape.BACK
        elif rank[target] == here + 1:
            shape = ArrowShape.STRAIGHT
        else:
            shape = ArrowShape.SKIP
        arrows.append(Arrow(source, target, tuple(ts), shape))
    return tuple(arrows)


def path_taken(events: Iterable[str], transitions: Iterable[Transition] = TRANSITIONS) -> list[Transition]:
    """The transitions a job took, replaying its history's event kinds through the table.

    Events that are not lifecycle moves (metadata, say) are skipped.
    """
    table = tuple(transitions)
    state: JobState | None = None
    taken: list[Transition] = []
    for kind in events:
        move = next((t for t in table if t.source is state and t.event == kind), None)
        if move is not None:
            taken.append(move)
            state = move.target
    return taken


def arrow_counts(taken: Iterable[Transition]) -> Counter[tuple[JobState | None, JobState]]:
    """How many times each arrow was travelled."""
    return Counter((t.source, t.target) for t in taken)


def offered(state: JobState | None, actions: Iterable[Action]) -> tuple[Transition, ...]:
    """The transitions out of ``state`` that this application performs (e.g. cancel)."""
    wanted = set(actions)
    return tuple(t for t in TRANSITIONS if t.source is state and t.action in wanted)
