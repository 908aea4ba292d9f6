"""The lifecycle state diagram, drawn from ``postproject.model.lifecycle.TRANSITIONS``.

Two variants share one scene: a job's (its current state highlighted, the path it took
marked, and the actions this application can take now drawn as clickable transitions) and
the production's (live counts on every state, stuck claims flagged, states clickable to
filter the table, "request" clickable to request a job).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QPainterPath
from PySide6.QtWidgets import QGraphicsEllipseItem, QGraphicsScene

from postproject import Action, JobState, Transition
from postproject_gui.diagram import lifecycle_layout as lay
from postproject_gui.diagram.lifecycle_items import ArrowItem, ArrowStyle, NodeItem, NodeStyle
from postproject_gui.look.states import STATE_LOOKS, ClaimHealth
from postproject_gui.look.theme import Theme

Pair = tuple[JobState | None, JobState]


@dataclass(frozen=True, slots=True)
class DiagramState:
    """What the diagram shows; also what snapshots report about it."""

    variant: str  # "job" or "production"
    highlighted: JobState | None = None
    travelled: Mapping[Pair, int] = field(default_factory=dict)
    offered: tuple[Transition, ...] = ()
    counts: Mapping[JobState, int] = field(default_factory=dict)
    stuck: int = 0
    expiring: int = 0


class LifecycleScene(QGraphicsScene):
    """Signals: action_requested(str Action value), state_clicked(str JobState value)."""

    action_requested = Signal(str)
    state_clicked = Signal(str)

    def __init__(self, theme: Theme, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._theme = theme
        self._layout = lay.layout()
        self._state = DiagramState("production")
        self.nodes: dict[JobState, NodeItem] = {}
        self.arrows: dict[Pair, ArrowItem] = {}
        self._rebuild()

    @property
    def state(self) -> DiagramState:
        return self._state

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        self._rebuild()

    def show_job(
        self,
        state: JobState,
        taken: Iterable[Transition],
        offered: tuple[Transition, ...],
        health: ClaimHealth | None = None,
    ) -> None:
        stuck, expiring = int(health is ClaimHealth.STUCK), int(health is ClaimHealth.EXPIRING)
        self._show(DiagramState("job", state, dict(lay.arrow_counts(taken)), offered, {}, stuck, expiring))

    def show_production(
        self,
        counts: Mapping[JobState, int],
        *,
        stuck: int = 0,
        expiring: int = 0,
        highlighted: JobState | None = None,
        offered: tuple[Transition, ...] = (),
    ) -> None:
        self._show(DiagramState("production", highlighted, {}, offered, dict(counts), stuck, expiring))

    def _show(self, state: DiagramState) -> None:
        """Draw ``state``; the same state again draws nothing (the window asks again whenever
        counts, claims or the filter may have changed, often with nothing new to draw)."""
        if state != self._state:
            self._state = state
            self._rebuild()

    # --- drawing -----------------------------------------------------------------------

    def _rebuild(self) -> None:
        self.clear()
        self.nodes, self.arrows = {}, {}
        offered_pairs = {(t.source, t.target) for t in self._state.offered}
        for arrow in self._layout.arrows:
            self._add_arrow(arrow, (arrow.source, arrow.target) in offered_pairs)
        for box in self._layout.nodes.values():
            self._add_node(box)
        self._add_start()
        pad = 8.0
        frame = QRectF(-pad, -pad, self._layout.width + 2 * pad, self._layout.height + 2 * pad)
        self.setSceneRect(frame.united(self.itemsBoundingRect().adjusted(-pad, -pad, pad, pad)))

    def _add_start(self) -> None:
        x, y = self._layout.start
        r = lay.START_RADIUS
        dot = QGraphicsEllipseItem(QRectF(x - r, y - r, 2 * r, 2 * r))
        dot.setBrush(QBrush(QColor(self._theme.ui.text)))
        dot.setPen(Qt.PenStyle.NoPen)
        dot.setToolTip("Not yet requested")
        self.addItem(dot)

    def _add_node(self, box: lay.NodeBox) -> None:
        s = self._state
        ui, states = self._theme.ui, self._theme.states
        visited = s.variant == "production" or any(box.state in pair for pair in s.travelled)
        style = NodeStyle(
            colour=QColor(states.states[box.state]),
            fill=QColor(ui.diagram_node),
            text=QColor(ui.text if visited else ui.muted),
            border=QColor(ui.diagram_edge),
            current=box.state is s.highlighted,
            tinted=s.variant == "production",
        )
        count = s.counts.get(box.state) if s.variant == "production" else None
        badge = self._badge(box.state)
        item = NodeItem(box, STATE_LOOKS[box.state], style, count, badge)
        item.clicked.connect(lambda state=box.state: self.state_clicked.emit(state.value))
        item.setToolTip(self._node_tip(box.state, count))
        self.addItem(item)
        self.nodes[box.state] = item

    def _badge(self, state: JobState) -> tuple[str, QColor] | None:
        s = self._state
        if s.variant == "job" and state is s.highlighted:
            if s.stuck:
                return "⚠ lease expired", QColor(self._theme.states.stuck)
            if s.expiring:
                return "lease ends soon", QColor(self._theme.states.expiring)
            return None
        if s.variant != "production" or state is not JobState.CLAIMED:
            return None
        if s.stuck:
            return f"⚠ {s.stuck:,} stuck", QColor(self._theme.states.stuck)
        if s.expiring:
            return f"{s.expiring:,} expiring", QColor(self._theme.states.expiring)
        return None

    def _node_tip(self, state: JobState, count: int | None) -> str:
        look = STATE_LOOKS[state]
        tip = f"{look.label}: {look.description}"
        if count is not None:
            tip += f"\n{count:,} jobs — click to list them"
        if state is self._state.highlighted and self._state.variant == "job":
            tip += "\nThis job is here now"
        return tip

    def _add_arrow(self, arrow: lay.Arrow, offered: bool) -> None:
        s, ui = self._state, self._theme.ui
        times = s.travelled.get((arrow.source, arrow.target), 0)
        action = next(
            (t.action for t in s.offered if (t.source, t.target) == (arrow.source, arrow.target)), None
        )
        style = ArrowStyle(
            colour=QColor(self._theme.states.accent if (times or offered) else ui.diagram_edge),
            label=QColor(ui.text if (times or offered) else ui.muted),
            width=2.2 if times else 1.3,
            dashed=offered and not times,
            pill=QColor(self._theme.states.accent) if offered else None,
        )
        path = arrow_path(self._layout, arrow)
        item = ArrowItem(path, arrow, style, times, action)
        if action is not None:
            item.clicked.connect(lambda value=action.value: self.action_requested.emit(value))
        self.addItem(item)
        self.arrows[(arrow.source, arrow.target)] = item


def arrow_path(layout: lay.LifecycleLayout, arrow: lay.Arrow) -> QPainterPath:
    """The curve of an arrow (top-to-bottom layout)."""
    target = layout.nodes[arrow.target]
    path = QPainterPath()
    if arrow.source is None:
        x, y = layout.start
        path.moveTo(x, y + lay.START_RADIUS)
        path.lineTo(target.cx, target.y)
        return path
    source = layout.nodes[arrow.source]
    if arrow.shape is lay.ArrowShape.LOOP:
        right, cy = source.x + lay.NODE_W, source.cy
        path.moveTo(right, cy - 9)
        path.cubicTo(QPointF(right + 34, cy - 26), QPointF(right + 34, cy + 26), QPointF(right, cy + 9))
    elif arrow.shape is lay.ArrowShape.BACK:
        path.moveTo(source.x, source.cy)
        path.cubicTo(
            QPointF(source.x - 40, source.cy), QPointF(target.x - 40, target.cy), QPointF(target.x, target.cy)
        )
    elif arrow.shape is lay.ArrowShape.SKIP:
        end = QPointF(target.cx + lay.NODE_W * 0.28, target.y)
        path.moveTo(source.x + lay.NODE_W, source.cy)
        path.cubicTo(QPointF(end.x(), source.cy), QPointF(end.x(), source.cy + 40), end)
    else:
        spread = max(-lay.NODE_W * 0.3, min(lay.NODE_W * 0.3, (target.cx - source.cx) * 0.3))
        path.moveTo(source.cx + spread, source.y + lay.NODE_H)
        path.lineTo(target.cx, target.y)
    return path


def offered_actions(state: JobState | None, actions: Iterable[Action]) -> tuple[Transition, ...]:
    return lay.offered(state, actions)
