"""Row <-> domain value mapping (column names never leak into the model)."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from pathlib import PurePath
from typing import Any

from postproject.model import paths
from postproject.model.activities import Activity, ActivityEdge, EdgeSnapshot
from postproject.model.assets import (
    Asset,
    Fingerprint,
    MediaRoot,
    Representation,
    RepresentationKind,
)
from postproject.model.clock import from_micros
from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.model.ids import ActivityId, AssetId, JobId, ProductionId, RepresentationId, RevisionId
from postproject.model.jobs import (
    Attempt,
    AttemptOutcome,
    BoundInput,
    Job,
    JobClaim,
    JobCompletion,
    JobFailure,
    JobOutput,
)
from postproject.model.lifecycle import JobState
from postproject.model.progress import JobProgress
from postproject.model.revisions import Revision, RevisionEvent

Row = Sequence[Any]  # a row as either driver returns it (a tuple)


# Identities are immutable values and a production holds few distinct ones: each stored one
# is validated and built once, not on every row read.
@functools.lru_cache(maxsize=1024)
def tool_identity(name: str, version: str | None, uri: str | None) -> ToolIdentity:
    return ToolIdentity(name, version, uri)


@functools.lru_cache(maxsize=1024)
def agent_identity(name: str) -> AgentIdentity:
    return AgentIdentity(name)


JOB_COLUMNS = """j.id, j.kind, j.output_asset_id, j.output_kind, j.target_root, j.state,
    j.claim_tool_name, j.claim_tool_version, j.claim_tool_uri, j.claim_agent_name,
    j.claimed_at, j.claim_expires_at, j.completion_activity_id, j.completion_representation_id,
    j.failure_diagnostic, j.requested_at, j.updated_sequence, j.inputs,
    (SELECT w.name FROM workers w WHERE w.id = j.claim_worker_id), j.claim_attempt, j.priority,
    j.not_before, j.max_attempts, j.retry_of, j.retried_as, j.attempts, j.dependencies, j.regenerates,
    j.finished_at"""
ATTEMPT_COUNT = 25  # the position of j.attempts in JOB_COLUMNS
DEPENDENCY_COUNT = 26  # the position of j.dependencies in JOB_COLUMNS
# (dependent, upstream, upstream state, binds its output, resolution) of a set of jobs
DEPENDENCY_COLUMNS = "d.job_id, d.upstream_id, u.state, d.binds_output, d.resolved_id"
ATTEMPT_COLUMNS = """a.job_id, a.number, a.outcome, a.agent_name, (SELECT w.name FROM workers w WHERE w.id = a.worker_id),
    a.tool_name, a.tool_version, a.tool_uri, a.claimed_at, a.ended_at, a.diagnostic,
    a.progress_fraction, a.progress_stage, a.progress_message, a.progress_at, a.stop_by, a.stopped_at"""


def attempt(row: Row) -> Attempt:
    (
        _,
        number,
        outcome,
        agent,
        worker,
        tool_name,
        tool_version,
        tool_uri,
        claimed,
        ended,
        diagnostic,
        fraction,
        stage,
        message,
        progress_at,
        stop_by,
        stopped_at,
    ) = row
    return Attempt(
        number=number,
        outcome=AttemptOutcome.from_code(outcome) if outcome is not None else None,
        agent=agent_identity(agent) if agent is not None else None,
        worker=worker,
        tool=tool_identity(tool_name, tool_version, tool_uri),
        claimed_at=from_micros(claimed),
        ended_at=from_micros(ended) if ended is not None else None,
        diagnostic=diagnostic,
        progress=JobProgress(fraction, stage, message, from_micros(progress_at))
        if progress_at is not None
        else None,
        stop_by=from_micros(stop_by) if stop_by is not None else None,
        stopped_at=from_micros(stopped_at) if stopped_at is not None else None,
    )


def split_ids(blob: bytes) -> list[bytes]:
    """The 16-byte ids packed in a blob."""
    return [blob[i : i + 16] for i in range(0, len(blob), 16)]


WAITING = frozenset((JobState.REQUESTED.code, JobState.CLAIMED.code))
BLOCKING = frozenset((JobState.FAILED.code, JobState.CANCELLED.code))


def job(
    row: Row,
    attempts: Sequence[Attempt] = (),
    dependencies: Sequence[Row] = (),
    production: ProductionId | None = None,
) -> Job:
    """A job from its row, its attempts and its dependency rows (``DEPENDENCY_COLUMNS``)."""
    (
        id_,
        kind,
        asset,
        out_kind,
        root,
        state,
        tool_name,
        tool_version,
        tool_uri,
        agent,
        claimed_at,
        expires,
        activity,
        representation,
        diagnostic,
        requested_at,
        updated,
        inputs,
        worker,
        attempt_number,
        priority,
        not_before,
        max_attempts,
        retry_of,
        retried_as,
        _,
        _,
        regenerates,
        finished_at,
    ) = row
    state_value = JobState.from_code(state)
    input_ids = split_ids(inputs)
    pending = state_value is JobState.REQUESTED
    if dependencies:
        resolved = [d[4] for d in dependencies if d[4] is not None]
        if resolved:
            input_ids = sorted(set(input_ids).union(resolved))
        depends_on = tuple(JobId(d[1]) for d in dependencies)
        waiting_on = tuple(JobId(d[1]) for d in dependencies if pending and d[2] in WAITING)
        blocked_by = tuple(JobId(d[1]) for d in dependencies if pending and d[2] in BLOCKING)
        bound_inputs = tuple(
            BoundInput(JobOutput(JobId(d[1])), RepresentationId(d[4]) if d[4] is not None else None)
            for d in dependencies
            if d[3]
        )
    else:  # most jobs: nothing to build
        depends_on = waiting_on = blocked_by = ()
        bound_inputs = ()
    claim = None
    if state_value is JobState.CLAIMED:
        claim = JobClaim(
            tool_identity(tool_name, tool_version, tool_uri),
            agent_identity(agent) if agent is not None else None,
            from_micros(claimed_at),
            from_micros(expires),
            worker,
            attempt_number,
        )
    return Job(
        id=JobId(id_),
        kind=kind,
        inputs=tuple([RepresentationId(raw) for raw in input_ids]),
        output_asset_id=AssetId(asset),
        output_representation_kind=RepresentationKind.from_code(out_kind),
        target_root=root,
        state=state_value,
        claim=claim,
        completion=JobCompletion(RepresentationId(representation), ActivityId(activity))
        if activity is not None
        else None,
        failure=JobFailure(diagnostic) if diagnostic is not None else None,
        requested_at=from_micros(requested_at),
        updated_sequence=updated,
        priority=priority,
        not_before=from_micros(not_before) if not_before is not None else None,
        max_attempts=max_attempts,
        attempts=tuple(attempts),
        retry_of=JobId(retry_of) if retry_of is not None else None,
        retried_as=JobId(retried_as) if retried_as is not None else None,
        depends_on=depends_on,
        waiting_on=waiting_on,
        blocked_by=blocked_by,
        bound_inputs=bound_inputs,
        regenerates=RepresentationId(regenerates) if regenerates is not None else None,
        production_id=production,
        finished_at=from_micros(finished_at) if finished_at is not None else None,
    )


ASSET_COLUMNS = "id, name, created_at"


def asset(row: Row) -> Asset:
    return Asset(AssetId(row[0]), row[1], from_micros(row[2]))


REPRESENTATION_COLUMNS = """r.id, r.asset_id, r.kind, r.path, r.root_name, r.size, r.mtime, r.created_at,
    (SELECT json_group_array(json_array(algorithm, version, hex(value))) FROM
        (SELECT algorithm, version, value FROM representation_fingerprints
         WHERE representation_id = r.id ORDER BY algorithm, version)), r.superseded_by"""


def representation(row: Row) -> Representation:
    return Representation(
        id=RepresentationId(row[0]),
        asset_id=AssetId(row[1]),
        kind=RepresentationKind.from_code(row[2]),
        path=PurePath(paths.decode_path(row[3])),
        root=row[4],
        size=row[5],
        modified_at=from_micros(row[6]),
        created_at=from_micros(row[7]),
        fingerprints=fingerprints(row[8]),
        superseded_by=RepresentationId(row[9]) if row[9] is not None else None,
    )


def fingerprints(text: str | None) -> tuple[Fingerprint, ...]:
    if not text:
        return ()
    return tuple(Fingerprint(a, v, bytes.fromhex(h)) for a, v, h in json.loads(text))


def media_root(row: Row) -> MediaRoot:
    return MediaRoot(row[0], PurePath(row[1]) if row[1] is not None else None)


ACTIVITY_COLUMNS = (
    "id, kind, tool_name, tool_version, tool_uri, agent_name, started_at, finished_at, created_sequence"
)
EDGE_COLUMNS = "direction, representation_id, role, snapshot_sequence, snapshot_fingerprints"


def activity(row: Row, edges: Sequence[Row]) -> Activity:
    id_, kind, tool_name, tool_version, tool_uri, agent, started, finished, sequence = row
    sides: tuple[list[ActivityEdge], list[ActivityEdge]] = ([], [])
    for direction, rep, role, snap_seq, snap_fps in edges:
        snapshot = EdgeSnapshot(snap_seq, fingerprints(snap_fps)) if snap_seq is not None else None
        sides[direction].append(ActivityEdge(RepresentationId(rep), role or None, snapshot))
    return Activity(
        id=ActivityId(id_),
        kind=kind,
        inputs=tuple(sides[0]),
        outputs=tuple(sides[1]),
        tool=tool_identity(tool_name, tool_version, tool_uri) if tool_name is not None else None,
        agent=agent_identity(agent) if agent is not None else None,
        started_at=from_micros(started) if started is not None else None,
        finished_at=from_micros(finished) if finished is not None else None,
        revision_sequence=sequence,
    )


REVISION_COLUMNS = "sequence, id, committed_at, origin, message, principal"


def revision(row: Row, events: Sequence[Row]) -> Revision:
    sequence, id_, committed_at, origin, message, principal = row
    return Revision(
        id=RevisionId(id_),
        sequence=sequence,
        committed_at=from_micros(committed_at),
        origin=origin,
        message=message,
        events=tuple(
            RevisionEvent(position, kind, json.loads(payload)) for position, kind, payload in events
        ),
        principal=principal,
    )
