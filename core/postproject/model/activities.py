"""Activities: complete, immutable facts about work that produced representations."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from postproject.model import names
from postproject.model.assets import Fingerprint
from postproject.model.errors import InvalidArgumentError
from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.model.ids import ActivityId, RepresentationId

MAX_EDGES = 100_000

EdgeInput = RepresentationId | tuple[RepresentationId, str | None]


@dataclass(frozen=True, slots=True)
class EdgeSnapshot:
    """What an edge's representation looked like when the activity was committed."""

    revision_sequence: int
    fingerprints: tuple[Fingerprint, ...]


@dataclass(frozen=True, slots=True)
class ActivityEdge:
    """An input or output of an activity, with an optional namespaced role."""

    representation_id: RepresentationId
    role: str | None = None
    snapshot: EdgeSnapshot | None = None


@dataclass(frozen=True, slots=True)
class ActivitySpec:
    """What :meth:`Transaction.create_activity` records.

    Edges are representation ids or ``(id, role)`` pairs; they are stored sorted by id,
    then role.
    """

    kind: str
    inputs: tuple[EdgeInput, ...] | list[EdgeInput] = ()
    outputs: tuple[EdgeInput, ...] | list[EdgeInput] = ()
    tool: ToolIdentity | None = None
    agent: AgentIdentity | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    _edges: tuple[tuple[ActivityEdge, ...], tuple[ActivityEdge, ...]] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        names.namespaced("activity kind", self.kind)
        inputs = _edges("input", self.inputs)
        outputs = _edges("output", self.outputs)
        if not outputs:
            raise InvalidArgumentError("an activity needs at least one output")
        both = {e.representation_id for e in inputs} & {e.representation_id for e in outputs}
        if both:
            raise InvalidArgumentError(
                f"representation {min(both)} cannot be both an input and an output of one activity"
            )
        check_context(self.tool, self.agent, self.started_at, self.finished_at)
        object.__setattr__(self, "_edges", (inputs, outputs))

    @property
    def input_edges(self) -> tuple[ActivityEdge, ...]:
        return self._edges[0]

    @property
    def output_edges(self) -> tuple[ActivityEdge, ...]:
        return self._edges[1]


def check_context(
    tool: ToolIdentity | None,
    agent: AgentIdentity | None,
    started_at: datetime | None,
    finished_at: datetime | None,
) -> None:
    """An activity's tool, agent and times as :class:`ActivitySpec` checks them."""
    if tool is not None and not isinstance(tool, ToolIdentity):
        raise InvalidArgumentError("activity tool must be a ToolIdentity")
    if agent is not None and not isinstance(agent, AgentIdentity):
        raise InvalidArgumentError("activity agent must be an AgentIdentity")
    for name, when in (("started_at", started_at), ("finished_at", finished_at)):
        if when is not None and (not isinstance(when, datetime) or when.tzinfo is None):
            raise InvalidArgumentError(f"activity {name} must be a timezone-aware datetime; got {when!r}")
    if started_at and finished_at and finished_at < started_at:
        raise InvalidArgumentError(
            f"activity finished_at {finished_at.isoformat()} is before started_at {started_at.isoformat()}"
        )


def _edges(side: str, items: Iterable[EdgeInput]) -> tuple[ActivityEdge, ...]:
    if not isinstance(items, (tuple, list)):
        raise InvalidArgumentError(f"activity {side}s must be a tuple or list")
    if len(items) > MAX_EDGES:
        raise InvalidArgumentError(f"an activity has at most {MAX_EDGES} {side}s; got {len(items)}")
    edges = []
    for item in items:
        rep, role = item if isinstance(item, tuple) else (item, None)
        if type(rep) is not RepresentationId:
            raise InvalidArgumentError(
                f"activity {side} must be a RepresentationId or (RepresentationId, role); got {type(rep).__name__}"
            )
        if role is not None:
            names.namespaced(f"activity {side} role", role)
        edges.append(ActivityEdge(rep, role))
    edges.sort(key=lambda e: (e.representation_id.bytes, e.role or ""))
    for first, second in itertools.pairwise(edges):
        if first.representation_id == second.representation_id and first.role == second.role:
            raise InvalidArgumentError(
                f"activity {side} {first.representation_id} is listed twice with the same role"
            )
    return tuple(edges)


@dataclass(frozen=True, slots=True)
class Activity:
    """A recorded activity, with storage-captured edge snapshots."""

    id: ActivityId
    kind: str
    inputs: tuple[ActivityEdge, ...]
    outputs: tuple[ActivityEdge, ...]
    tool: ToolIdentity | None
    agent: AgentIdentity | None
    started_at: datetime | None
    finished_at: datetime | None
    revision_sequence: int
