"""The regeneration area of a transaction: requesting plans, one at a time or as one dependency graph.

``Transaction`` builds one :class:`RegenerationOperations` per edit, given the edit's state,
its jobs area (each plan's job is requested through it) and its metadata area (each plan's
parameters are asserted through it), and delegates ``enqueue_plan`` and ``enqueue_plans`` to
it (their public docstrings are on :class:`postproject.transaction.Transaction`).
:meth:`RegenerationOperations.enqueue_plans` is how downstream regeneration converges: a
plan whose input is the artifact another plan of the batch regenerates takes that job's
output instead (``JobOutput``, which also makes it wait for that job), so each job works
from the freshly made inputs and, when it succeeds, supersedes the artifact it regenerates.
"""

from __future__ import annotations

import dataclasses
import heapq
from collections.abc import Iterable, Sequence

from postproject.areas.jobs import JobOperations
from postproject.areas.metadata import MetadataOperations
from postproject.base.edit import EditState
from postproject.knowledge.regeneration import MAX_REGENERATION_PLANS, RegenerationPlan, plan_bindings
from postproject.model.errors import InvalidArgumentError
from postproject.model.ids import JobId, RepresentationId
from postproject.model.jobs import JobOutput, JobRequest
from postproject.model.refs import JobRef


class RegenerationOperations:
    """``enqueue_plan`` and ``enqueue_plans`` (see the module docstring)."""

    def __init__(self, edit: EditState, jobs: JobOperations, metadata: MetadataOperations) -> None:
        self._edit = edit
        self._jobs = jobs
        self._metadata = metadata

    def enqueue_plan(self, plan: RegenerationPlan) -> JobId:
        """Request a plan's job and assert its parameters on that job, as one operation."""
        if not isinstance(plan, RegenerationPlan):
            raise TypeError(f"plan must be a RegenerationPlan; got {type(plan).__name__}")
        with self._edit.operation():
            return self._request_plan(plan, plan.job)

    def enqueue_plans(self, plans: Iterable[RegenerationPlan]) -> tuple[JobId, ...]:
        """Request several plans as one dependency graph, in one operation; their job ids in the order
        given."""
        ordered = _checked(plans)
        index = {plan.artifact_id: i for i, plan in enumerate(ordered)}
        upstream = [sorted(index[i] for i in inputs) for inputs in plan_bindings(ordered)]
        job_ids: dict[int, JobId] = {}
        with self._edit.operation():
            for n in _upstream_first(upstream):
                plan = ordered[n]
                bound = {ordered[u].artifact_id: job_ids[u] for u in upstream[n]}
                request = plan.job
                if bound:
                    inputs = (
                        *(i for i in request.inputs if not (isinstance(i, RepresentationId) and i in bound)),
                        *(JobOutput(job) for job in bound.values()),
                    )
                    request = dataclasses.replace(request, inputs=inputs)
                job_ids[n] = self._request_plan(plan, request)
        return tuple(job_ids[n] for n in range(len(ordered)))

    def _request_plan(self, plan: RegenerationPlan, request: JobRequest) -> JobId:
        if request.regenerates is None:
            request = dataclasses.replace(request, regenerates=plan.artifact_id)
        job_id = self._jobs.request_job(request)
        for assertion in plan.parameters:
            self._metadata.add_metadata(JobRef(job_id), assertion.property, assertion.value)
        return job_id


def _checked(plans: object) -> list[RegenerationPlan]:
    if isinstance(plans, (str, bytes)) or not isinstance(plans, Iterable):
        raise TypeError(f"plans must be an iterable of RegenerationPlan; got {type(plans).__name__}")
    found: list[RegenerationPlan] = []
    for plan in plans:
        if not isinstance(plan, RegenerationPlan):
            raise TypeError(f"plans must be RegenerationPlan values; got {type(plan).__name__}")
        found.append(plan)
        if len(found) > MAX_REGENERATION_PLANS:
            raise InvalidArgumentError(f"at most {MAX_REGENERATION_PLANS} plans can be enqueued at once")
    seen: set[RepresentationId] = set()
    for plan in found:
        if plan.artifact_id in seen:
            raise InvalidArgumentError(
                f"two plans regenerate artifact {plan.artifact_id}; give each artifact once"
            )
        seen.add(plan.artifact_id)
    return found


def _upstream_first(upstream: Sequence[Sequence[int]]) -> list[int]:
    """Plan positions with every plan after the plans it binds to (ties in the order given)."""
    waiting = [len(u) for u in upstream]
    downstream: list[list[int]] = [[] for _ in upstream]
    for n, ups in enumerate(upstream):
        for u in ups:
            downstream[u].append(n)
    ready = [n for n, count in enumerate(waiting) if count == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        n = heapq.heappop(ready)
        order.append(n)
        for d in downstream[n]:
            waiting[d] -= 1
            if waiting[d] == 0:
                heapq.heappush(ready, d)
    if len(order) != len(upstream):
        raise InvalidArgumentError("the plans bind each other's outputs in a cycle")
    return order
