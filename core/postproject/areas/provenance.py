"""The provenance area: activities, the recorded facts of what made which representation.

``Transaction`` builds one :class:`ProvenanceOperations` per edit, given the edit's state,
and delegates ``create_activity`` to it; ``Production`` builds one :class:`ProvenanceReads`,
given its handle, and delegates the activity reads to it. Their public docstrings are on
:class:`postproject.transaction.Transaction` and :class:`postproject.production.Production`.
What the recorded facts mean (evaluation, plans, graphs) is the knowledge area's
(:mod:`postproject.areas.knowledge`).
"""

from __future__ import annotations

from postproject.base.edit import EditState, event
from postproject.base.handle import ProductionHandle
from postproject.model import names
from postproject.model.activities import Activity, ActivitySpec
from postproject.model.clock import to_micros
from postproject.model.errors import InvalidArgumentError, NotFoundError
from postproject.model.ids import ActivityId, RepresentationId, check_id
from postproject.model.pages import Page, check_limit


class ProvenanceOperations:
    """Recording completed activities."""

    def __init__(self, edit: EditState) -> None:
        self._edit = edit

    def create_activity(self, spec: ActivitySpec) -> ActivityId:
        """Record a completed activity; storage captures its edge snapshots at commit."""
        if not isinstance(spec, ActivitySpec):
            raise TypeError(f"spec must be an ActivitySpec; got {type(spec).__name__}")
        inputs = [e.representation_id.bytes for e in spec.input_edges]
        outputs = [e.representation_id.bytes for e in spec.output_edges]
        activity_id = ActivityId.new()
        with self._edit.operation() as s:
            if s.outputs_consumed(outputs) and s.creates_cycle(inputs, outputs):
                absent = s.missing("representations", sorted(set(inputs + outputs)))
                if absent:
                    raise NotFoundError(f"representation {RepresentationId(absent[0])} does not exist")
                raise InvalidArgumentError(
                    "the activity would create a provenance cycle (an output is upstream of an input)"
                )
            if not s.insert_activity(
                activity_id.bytes,
                spec,
                to_micros(spec.started_at) if spec.started_at else None,
                to_micros(spec.finished_at) if spec.finished_at else None,
            ):
                absent = s.missing("representations", sorted(set(inputs + outputs)))
                raise NotFoundError(f"representation {RepresentationId(absent[0])} does not exist")
            event(
                s,
                "activity_created",
                activity_id,
                activity_id=activity_id,
                activity_kind=spec.kind,
            )
        return activity_id


class ProvenanceReads:
    """Activities, and the activities that made or used a representation."""

    def __init__(self, handle: ProductionHandle) -> None:
        self._handle = handle

    def activity(self, activity_id: ActivityId) -> Activity:
        """One activity."""
        self._handle.check_open()
        check_id("activity_id", activity_id, ActivityId)
        return self._handle.reads.activity(activity_id)

    def activities(self, limit: int, cursor: str | None, kind: str | None) -> Page[Activity]:
        """Activities (optionally of one kind) in id order."""
        self._handle.check_open()
        check_limit(limit)
        if kind is not None:
            names.namespaced("activity kind", kind)
        params = (kind or "*",)
        after = self._handle.after("activities", params, cursor)
        with self._handle.reads.snapshot():
            ids = self._handle.reads.activity_ids(kind, after, limit + 1)
            items = [self._handle.reads.activity(i) for i in ids]
        return self._handle.page("activities", params, items, limit, lambda a: a.id.bytes)

    def producing_activities(self, representation_id: RepresentationId) -> tuple[ActivityId, ...]:
        """Activities that output the representation (normally one)."""
        self._handle.check_open()
        check_id("representation_id", representation_id, RepresentationId)
        return tuple(self._handle.reads.edge_activities(representation_id, 1))

    def consuming_activities(self, representation_id: RepresentationId) -> tuple[ActivityId, ...]:
        """Activities that used the representation as an input (up to 1000)."""
        self._handle.check_open()
        check_id("representation_id", representation_id, RepresentationId)
        return tuple(self._handle.reads.edge_activities(representation_id, 0))
