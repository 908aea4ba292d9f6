"""Domain values as JSON-able dicts: the JSON contract of the CLI (``--json``) and the service
(its responses), one serializer for both front ends (stable snake_case keys).

Times are Unix microseconds in ``*_unix_micros`` keys; ids are canonical lowercase UUID
text; absent or inapplicable fields are ``null``. No view ever carries a lease secret.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from postproject.areas.search import FailureGroup
from postproject.model import values
from postproject.model.activities import Activity, ActivityEdge
from postproject.model.assets import Asset, Fingerprint, MediaRoot, Representation
from postproject.model.clock import to_micros
from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.model.ids import JobId
from postproject.model.jobs import Attempt, AttemptOutcome, Job
from postproject.model.metadata import Assertion
from postproject.model.pages import Page
from postproject.model.pending import PendingExplanation, PendingReason
from postproject.model.progress import JobProgress
from postproject.model.refs import ObjectRef
from postproject.model.revisions import CommitReceipt, Revision, RevisionEvent
from postproject.model.workers import Worker

View = dict[str, Any]


def micros(when: datetime | None) -> int | None:
    return to_micros(when) if when is not None else None


def _id(value: object | None) -> str | None:
    return str(value) if value is not None else None


def tool_view(tool: ToolIdentity | None) -> View | None:
    return None if tool is None else {"name": tool.name, "version": tool.version, "uri": tool.uri}


def agent_view(agent: AgentIdentity | None) -> View | None:
    return None if agent is None else {"name": agent.name}


def job_view(job: Job) -> View:
    claim = job.claim
    return {
        "id": str(job.id),
        "kind": job.kind,
        "inputs": [str(i) for i in job.inputs],
        "output_asset_id": str(job.output_asset_id),
        "output_kind": job.output_representation_kind.value,
        "target_root": job.target_root,
        "state": job.state.value,
        "claim_tool": tool_view(claim.tool) if claim else None,
        "claim_agent": agent_view(claim.agent) if claim else None,
        "claimed_at_unix_micros": micros(claim.claimed_at) if claim else None,
        "claim_expires_at_unix_micros": micros(claim.expires_at) if claim else None,
        "completion_activity_id": _id(job.completion.activity_id if job.completion else None),
        "completion_representation_id": _id(job.completion.representation_id if job.completion else None),
        "failure_diagnostic": job.failure.diagnostic if job.failure else None,
        "requested_at_unix_micros": micros(job.requested_at),
        "claim_worker": claim.worker if claim else None,
        "priority": job.priority,
        "not_before_unix_micros": micros(job.not_before),
        "max_attempts": job.max_attempts,
        "attempts": [attempt_view(a) for a in job.attempts],
        "retry_of": _id(job.retry_of),
        "retried_as": _id(job.retried_as),
        "depends_on": [str(j) for j in job.depends_on],
        "waiting_on": [str(j) for j in job.waiting_on],
        "blocked_by": [str(j) for j in job.blocked_by],
        "bound_inputs": [
            {"job_id": str(b.output.job_id), "representation_id": _id(b.resolved)} for b in job.bound_inputs
        ],
        "regenerates": _id(job.regenerates),
        "progress": progress_view(job.progress),
        "stopping": job.stopping is not None,
        "finished_at_unix_micros": micros(job.finished_at),
    }


def failure_group_view(group: FailureGroup) -> View:
    return {
        "reason": group.reason,
        "count": group.count,
        "search": group.search,
        "example": group.example,
        "latest_job_id": str(group.latest_job),
        "latest_at_unix_micros": micros(group.latest_at),
    }


def progress_view(progress: JobProgress | None) -> View | None:
    """``{fraction, stage, message, updated_at}`` (``updated_at`` in Unix microseconds, also as
    ``updated_at_unix_micros``), or None when nothing was reported."""
    if progress is None:
        return None
    return {
        "fraction": progress.fraction,
        "stage": progress.stage,
        "message": progress.message,
        "updated_at": micros(progress.updated_at),
        "updated_at_unix_micros": micros(progress.updated_at),
    }


def pending_view(explanation: PendingExplanation) -> View:
    """``job why``: the job's state, whether a claim could take it now, and the reasons."""
    return {
        "job_id": str(explanation.job_id),
        "state": explanation.state.value,
        "claimable": explanation.claimable,
        "reasons": [_reason_view(r) for r in explanation.reasons],
    }


def _reason_view(reason: PendingReason) -> View:
    view: View = {"code": reason.code, "message": reason.message}
    for field in dataclasses.fields(reason):
        value = getattr(reason, field.name)
        if isinstance(value, datetime):
            view[f"{field.name}_unix_micros"] = micros(value)
        elif isinstance(value, enum.Enum):
            view[field.name] = value.value
        elif isinstance(value, JobId):
            view[field.name] = str(value)
        else:
            view[field.name] = value
    return view


def attempt_view(attempt: Attempt) -> View:
    return {
        "number": attempt.number,
        "outcome": attempt.outcome.value if attempt.outcome else None,
        "agent": agent_view(attempt.agent),
        "worker": attempt.worker,
        "tool": tool_view(attempt.tool),
        "claimed_at_unix_micros": micros(attempt.claimed_at),
        "ended_at_unix_micros": micros(attempt.ended_at),
        "diagnostic": attempt.diagnostic,
        "stopped_at": micros(attempt.stopped_at),
        "stopped_at_unix_micros": micros(attempt.stopped_at),
        "stop_by_unix_micros": micros(attempt.stop_by),
        "stopping": attempt.stopping,
        "progress": progress_view(attempt.progress),
    }


def worker_view(worker: Worker) -> View:
    return {
        "name": worker.name,
        "host": worker.host,
        "state": worker.state.value,
        "last_seen": micros(worker.last_seen),
        "last_seen_unix_micros": micros(worker.last_seen),
        "capacity": worker.capacity,
        "kinds": list(worker.kinds) if worker.kinds is not None else None,
        "running": [str(j) for j in worker.running],
        "attempts": {outcome.value: worker.outcomes.get(outcome, 0) for outcome in AttemptOutcome},
    }


def event_view(event: RevisionEvent) -> View:
    return {"position": event.position, "kind": event.kind, **dict(event.payload)}


def revision_view(revision: Revision) -> View:
    return {
        "id": str(revision.id),
        "sequence": revision.sequence,
        "committed_at_unix_micros": micros(revision.committed_at),
        "origin": revision.origin,
        "message": revision.message,
        "principal": revision.principal,
        "events": [event_view(e) for e in revision.events],
    }


def receipt_view(receipt: CommitReceipt) -> View:
    """``{production_id, revision}`` (the receipt's revision carries its events)."""
    revision = receipt.revision
    return {
        "production_id": str(receipt.production_id),
        "revision": revision_view(revision) if revision is not None else None,
    }


def asset_view(asset: Asset) -> View:
    return {"id": str(asset.id), "name": asset.name, "created_at_unix_micros": micros(asset.created_at)}


def fingerprint_view(fingerprint: Fingerprint) -> View:
    return {"algorithm": fingerprint.algorithm, "version": fingerprint.version, "hex": fingerprint.hex}


def representation_view(rep: Representation) -> View:
    return {
        "id": str(rep.id),
        "asset_id": str(rep.asset_id),
        "kind": rep.kind.value,
        "root": rep.root,
        "path": rep.path.as_posix(),
        "size": rep.size,
        "modified_at_unix_micros": micros(rep.modified_at),
        "fingerprints": [fingerprint_view(f) for f in rep.fingerprints],
        "created_at_unix_micros": micros(rep.created_at),
        "superseded_by": _id(rep.superseded_by),
    }


def media_root_view(root: MediaRoot) -> View:
    return {"name": root.name, "path": str(root.path) if root.path is not None else None}


def edge_view(edge: ActivityEdge) -> View:
    snapshot = edge.snapshot
    return {
        "representation_id": str(edge.representation_id),
        "role": edge.role,
        "snapshot": None
        if snapshot is None
        else {
            "revision_sequence": snapshot.revision_sequence,
            "fingerprints": [fingerprint_view(f) for f in snapshot.fingerprints],
        },
    }


def activity_view(activity: Activity) -> View:
    return {
        "id": str(activity.id),
        "kind": activity.kind,
        "inputs": [edge_view(e) for e in activity.inputs],
        "outputs": [edge_view(e) for e in activity.outputs],
        "tool": tool_view(activity.tool),
        "agent": agent_view(activity.agent),
        "started_at_unix_micros": micros(activity.started_at),
        "finished_at_unix_micros": micros(activity.finished_at),
        "revision_sequence": activity.revision_sequence,
    }


def ref_view(ref: ObjectRef) -> View:
    return {"kind": ref.kind, "id": str(ref.id)}


def assertion_view(assertion: Assertion) -> View:
    return {
        "vocabulary": assertion.property.vocabulary,
        "property": assertion.property.name,
        "value": values.to_json(assertion.value),
    }


def page_view(items: Iterable[View], next_cursor: str | None = None) -> View:
    return {"items": list(items), "next_cursor": next_cursor}


def paged(page: Page[Any], view: Any) -> View:
    """A core :class:`Page` through a per-item view function."""
    return page_view((view(item) for item in page.items), page.next_cursor)


def with_receipt(view: Mapping[str, Any], receipt: View) -> View:
    return {**view, "commit_receipt": receipt}
