"""Regeneration plans: the job that would make an artifact again (notes §5.2, ADR 0023).

A plan is read-only: inputs are the producing activity's distinct inputs (sorted), the
output is the artifact's asset and representation kind, kind and target root repeat the
job the activity completed (the lowest job id if several) or else the activity's kind with
no root, and the parameters are the activity's metadata (never the job's: the activity
records what the worker actually used). Nothing is stored and no revision is made;
:meth:`Transaction.enqueue_plan` requests a plan and copies its parameters onto the job.

A plan's job records the artifact it regenerates (``job.regenerates``). When an input of
the producing activity has been superseded (a regeneration replaced it), the plan lists it
in ``superseded_inputs``; with ``current_inputs=True`` the plan takes each superseded
input's current replacement (the newest of its chain) instead. Downstream plans always do,
so that downstream regeneration converges.
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterable, Sequence, Sized
from dataclasses import dataclass
from itertools import islice
from typing import ClassVar, NamedTuple

from postproject.base.handle import ProductionHandle
from postproject.engine import GraphFacts, PlanFacts
from postproject.knowledge.evaluation import (
    MAX_DESCENDANTS,
    ArtifactState,
    ProducingActivityAmbiguous,
    ProducingActivityMissing,
    evaluate_many,
)
from postproject.model import values as metadata_values
from postproject.model.assets import RepresentationKind
from postproject.model.errors import ConflictError, InvalidArgumentError, NotFoundError, Reason
from postproject.model.ids import ActivityId, AssetId, RepresentationId, iter_chunks
from postproject.model.jobs import JobRequest
from postproject.model.metadata import Assertion, Property

PLAN_BATCH = 900  # artifacts whose facts one read gathers
MAX_CHAIN = 1000  # supersession steps followed at most

MAX_REGENERATION_PLANS = 100_000
ACTIVITY_TARGET = 3  # metadata target_kind of activities


@dataclass(frozen=True, slots=True)
class SupersededInput:
    """An input of the producing activity that was superseded, and its current replacement
    (the newest representation of its supersession chain)."""

    input_id: RepresentationId
    current_id: RepresentationId


@dataclass(frozen=True, slots=True)
class RegenerationPlan:
    """A proposed requested job that would regenerate ``artifact_id``.

    ``parameters`` are the producing activity's metadata assertions; enqueueing the plan
    asserts them on the new job. ``job.regenerates`` is ``artifact_id``.
    ``superseded_inputs`` lists the activity's inputs that were superseded (the job uses
    their replacements when the plan was made with current inputs).
    """

    artifact_id: RepresentationId
    job: JobRequest
    parameters: tuple[Assertion, ...]
    activity_id: ActivityId
    superseded_inputs: tuple[SupersededInput, ...] = ()


class Unplannable(NamedTuple):
    """An artifact that needs regeneration but cannot be planned, and why."""

    artifact_id: RepresentationId
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class DownstreamRegeneration:
    """Plans for the stale descendants of a changed representation, inputs before outputs.

    ``bindings[i]`` lists the inputs of ``plans[i]`` that earlier plans regenerate: enqueued
    together (``transaction.enqueue_plans``), those become the output of that plan's job.
    """

    source_id: RepresentationId
    plans: tuple[RegenerationPlan, ...]
    unplannable: tuple[Unplannable, ...]
    truncated: bool

    @property
    def bindings(self) -> tuple[tuple[RepresentationId, ...], ...]:
        return plan_bindings(self.plans)


def plan_bindings(plans: Sequence[RegenerationPlan]) -> tuple[tuple[RepresentationId, ...], ...]:
    """For each plan, the inputs of its job that another plan of ``plans`` regenerates (sorted):
    enqueued together, each becomes the output of that plan's job."""
    regenerated = {plan.artifact_id for plan in plans}
    return tuple(
        tuple(i for i in plan.job.representation_inputs if i in regenerated and i != plan.artifact_id)
        for plan in plans
    )


@dataclass(frozen=True, slots=True)
class ToolIdentityMissing:
    """The producing activity records no tool."""

    activity_id: ActivityId
    code: ClassVar[str] = "tool_identity_missing"


@dataclass(frozen=True, slots=True)
class ParametersMissing:
    """The producing activity has no metadata at all."""

    activity_id: ActivityId
    code: ClassVar[str] = "parameters_missing"


@dataclass(frozen=True, slots=True)
class InputRepresentationMissing:
    """An input of the producing activity no longer exists."""

    activity_id: ActivityId
    representation_id: RepresentationId
    code: ClassVar[str] = "input_representation_missing"


ReproducibilityIssue = (
    ProducingActivityMissing
    | ProducingActivityAmbiguous
    | ToolIdentityMissing
    | ParametersMissing
    | InputRepresentationMissing
)


@dataclass(frozen=True, slots=True)
class Reproducibility:
    """Every condition missing for reproducing an artifact (reproducible when there is none)."""

    representation_id: RepresentationId
    activity_id: ActivityId | None
    activity_kind: str | None
    issues: tuple[ReproducibilityIssue, ...]

    @property
    def reproducible(self) -> bool:
        return not self.issues


def plan_regeneration(
    handle: ProductionHandle, artifact_ids: Iterable[RepresentationId], *, current_inputs: bool = False
) -> tuple[RegenerationPlan, ...]:
    """See :meth:`Production.plan_regeneration`."""
    handle.check_open()
    _flag("current_inputs", current_inputs)
    ids = _artifact_ids(artifact_ids)
    with handle.engine.graph.snapshot() as graph:
        plans, _ = _plan(graph, [i.bytes for i in ids], strict=True, current_inputs=current_inputs)
    return tuple(plans)


def plan_downstream_regeneration(
    handle: ProductionHandle, representation_id: RepresentationId, *, current_inputs: bool = True
) -> DownstreamRegeneration:
    """See :meth:`Production.plan_downstream_regeneration`."""
    handle.check_open()
    _typed_rep(representation_id)
    _flag("current_inputs", current_inputs)
    source = representation_id.bytes
    with handle.engine.graph.snapshot() as graph:
        if not graph.exists(source):
            raise NotFoundError(f"representation {representation_id} does not exist")
        descendants, truncated = graph.walk([source], downstream=True, cap=MAX_DESCENDANTS)
        order = _topological(descendants, graph.derivations(descendants))
        wanted: list[bytes] = []
        unplannable: dict[bytes, Unplannable] = {}
        for knowledge in evaluate_many(graph, order):
            rep = knowledge.representation_id
            if knowledge.state in (ArtifactState.STALE, ArtifactState.DIVERGED):
                wanted.append(rep.bytes)
            for reason in knowledge.reasons:
                if isinstance(reason, ProducingActivityAmbiguous) and reason.representation_id == rep:
                    unplannable[rep.bytes] = Unplannable(
                        rep, reason.code, f"artifact {rep} has {reason.activity_count} producing activities"
                    )
        plans, failures = _plan(graph, wanted, strict=False, current_inputs=current_inputs)
    unplannable.update((f.artifact_id.bytes, f) for f in failures)
    rank = {rep: i for i, rep in enumerate(order)}
    return DownstreamRegeneration(
        representation_id,
        tuple(sorted(plans, key=lambda p: rank[p.artifact_id.bytes])),
        tuple(sorted(unplannable.values(), key=lambda u: rank[u.artifact_id.bytes])),
        truncated,
    )


def reproducibility(handle: ProductionHandle, representation_id: RepresentationId) -> Reproducibility:
    """See :meth:`Production.reproducibility`."""
    handle.check_open()
    _typed_rep(representation_id)
    rep = representation_id
    issues: list[ReproducibilityIssue] = []
    with handle.engine.graph.snapshot() as graph:
        if not graph.exists(rep.bytes):
            raise NotFoundError(f"representation {rep} does not exist")
        producers = graph.producing_activity(rep.bytes)
        if len(producers) != 1:
            issues.append(
                ProducingActivityAmbiguous(rep, len(producers))
                if producers
                else ProducingActivityMissing(rep)
            )
            return Reproducibility(rep, None, None, tuple(issues))
        raw, kind, tool = producers[0]
        activity = ActivityId(raw)
        if tool is None:
            issues.append(ToolIdentityMissing(activity))
        if not graph.has_metadata(ACTIVITY_TARGET, raw):
            issues.append(ParametersMissing(activity))
        issues.extend(
            InputRepresentationMissing(activity, RepresentationId(r)) for r in graph.missing_inputs(raw)
        )
    return Reproducibility(rep, activity, kind, tuple(issues))


def _artifact_ids(artifact_ids: object) -> list[RepresentationId]:
    """Validate, sort and deduplicate; more than 100 000 ids fail before any is read."""
    if isinstance(artifact_ids, (str, bytes)) or not isinstance(artifact_ids, Iterable):
        raise TypeError(
            f"artifact_ids must be an iterable of RepresentationId; got {type(artifact_ids).__name__}"
        )
    if isinstance(artifact_ids, Sized) and len(artifact_ids) > MAX_REGENERATION_PLANS:
        raise InvalidArgumentError(
            f"at most {MAX_REGENERATION_PLANS} artifacts can be planned at once; got {len(artifact_ids)}"
        )
    found = list(islice(artifact_ids, MAX_REGENERATION_PLANS + 1))
    if len(found) > MAX_REGENERATION_PLANS:
        raise InvalidArgumentError(f"at most {MAX_REGENERATION_PLANS} artifacts can be planned at once")
    for item in found:
        _typed_rep(item, "artifact id")
    return sorted(set(found), key=lambda rep: rep.int)


def current_replacements(graph: GraphFacts, reps: Iterable[bytes]) -> dict[bytes, bytes]:
    """For each superseded one of ``reps``: the newest representation of its supersession chain."""
    known = dict(graph.supersessions(sorted(set(reps))))
    firsts = dict(known)
    pending = set(known.values()) - known.keys()
    for _ in range(MAX_CHAIN):
        if not pending:
            break
        step = dict(graph.supersessions(sorted(pending)))
        known.update(step)
        pending = set(step.values()) - known.keys()
    heads: dict[bytes, bytes] = {}
    for rep, head in firsts.items():
        seen = {rep}
        while head in known and head not in seen:
            seen.add(head)
            head = known[head]
        heads[rep] = head
    return heads


def _plan(
    graph: GraphFacts, ids: list[bytes], *, strict: bool, current_inputs: bool = False
) -> tuple[list[RegenerationPlan], list[Unplannable]]:
    """Plans for ``ids`` in order; strict raises the first failure, else failures are collected."""
    plans: list[RegenerationPlan] = []
    failures: list[Unplannable] = []
    for part in iter_chunks(ids, PLAN_BATCH):
        facts = graph.plan_facts(part)
        heads = current_replacements(graph, [i for inputs in facts.inputs.values() for i in inputs])
        parameters: dict[bytes, tuple[Assertion, ...]] = {}
        for rep in part:
            try:
                plans.append(_one(facts, rep, parameters, heads, current_inputs))
            except (NotFoundError, ConflictError) as error:
                if strict:
                    raise
                code = (error.reason or "") or error.code.value
                failures.append(Unplannable(RepresentationId(rep), code, error.message))
    return plans, failures


def _one(
    facts: PlanFacts,
    rep: bytes,
    cache: dict[bytes, tuple[Assertion, ...]],
    heads: dict[bytes, bytes],
    current_inputs: bool,
) -> RegenerationPlan:
    artifact = RepresentationId(rep)
    found = facts.representations.get(rep)
    if found is None:
        raise NotFoundError(f"artifact {artifact} does not exist")
    producers = facts.producers.get(rep, [])
    if len(producers) != 1:
        raise ConflictError(
            f"artifact {artifact} must have exactly one producing activity; it has {len(producers)}",
            reason=Reason.PRODUCING_ACTIVITY_AMBIGUOUS if producers else Reason.PRODUCING_ACTIVITY_MISSING,
        )
    activity = producers[0]
    kind, root = facts.completed_jobs.get(activity, (facts.activity_kinds[activity], None))
    inputs = facts.inputs[activity]
    superseded = tuple(
        SupersededInput(RepresentationId(i), RepresentationId(heads[i])) for i in inputs if i in heads
    )
    if current_inputs:
        inputs = sorted({heads.get(i, i) for i in inputs})
    request = JobRequest(
        kind,
        tuple(RepresentationId(r) for r in inputs),
        AssetId(found[0]),
        RepresentationKind.from_code(found[1]),
        root,
        regenerates=artifact,
    )
    parameters = cache.get(activity)
    if parameters is None:
        parameters = tuple(
            Assertion(Property(vocabulary, name), metadata_values.from_json(json.loads(value)))
            for vocabulary, name, value in facts.parameters[activity]
        )
        cache[activity] = parameters
    return RegenerationPlan(artifact, request, parameters, ActivityId(activity), superseded)


def _topological(nodes: list[bytes], pairs: list[tuple[bytes, bytes]]) -> list[bytes]:
    """``nodes`` with every input before the outputs made from it (ties by id)."""
    members = set(nodes)
    children: dict[bytes, list[bytes]] = {n: [] for n in nodes}
    waiting = dict.fromkeys(nodes, 0)
    for parent, child in set(pairs):
        if parent in members and child in members:
            children[parent].append(child)
            waiting[child] += 1
    ready = [n for n, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    order: list[bytes] = []
    while ready:
        node = heapq.heappop(ready)
        order.append(node)
        for child in children[node]:
            waiting[child] -= 1
            if waiting[child] == 0:
                heapq.heappush(ready, child)
    return order


def _flag(field: str, value: object) -> None:
    if not isinstance(value, bool):
        raise InvalidArgumentError(f"{field} must be a bool; got {value!r}")


def _typed_rep(value: object, field: str = "representation_id") -> None:
    if type(value) is not RepresentationId:
        raise InvalidArgumentError(f"{field} must be a RepresentationId; got {type(value).__name__}")
