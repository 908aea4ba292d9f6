"""The Worker API: registration, heartbeats, claims, renewals, progress, logs and completions.

A worker keeps nothing but its name, its session and its lease tokens; the service keeps
nothing a restart would lose (a session is found again in the production by name, a cache
only saves that read). Every rule is the core's: a fenced session's heartbeat, claim and
report are refused, a completion after the lease expired is refused, the loss sweep decides
what an expired claim becomes. Lease tokens travel only in request bodies, and only a
claim's response carries one.

A completion report is recorded with the completion (``Transaction.record_reply``, scope
``completion``, keyed by the SHA-256 of the lease token: one report per attempt), so a report
sent again after its answer was lost returns the original, and a different report for that
attempt is ``409`` ``report_conflict``.
"""

from __future__ import annotations

import collections
import hashlib
import json
import threading
import uuid
from collections.abc import Iterator, Sequence
from datetime import timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import JSONResponse, Response

from postproject import views
from postproject._version import __version__
from postproject.base.leases import JobLease
from postproject.model import clock as clocks
from postproject.model.access import ApiRole
from postproject.model.activities import ActivitySpec
from postproject.model.assets import RepresentationKind
from postproject.model.errors import (
    ConflictError,
    InvalidArgumentError,
    NotFoundError,
    PostProjectError,
    Reason,
    StorageError,
)
from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.model.ids import ActivityId, JobId, RepresentationId
from postproject.model.jobs import MAX_DIAGNOSTIC_BYTES, Job
from postproject.model.lifecycle import JobState
from postproject.model.metadata import Assertion, Property
from postproject.model.refs import ActivityRef, JobRef
from postproject.model.values import MetadataValue
from postproject.model.workers import HEARTBEAT_INTERVAL, OFFLINE_AFTER, WorkerSession
from postproject.production import Production
from postproject.service import models
from postproject.service.auth import Principal, require
from postproject.service.client_api import (
    ORIGIN,
    Pool,
    canonical_digest,
    edit,
    json_response,
    known_query,
    parameters,
    parse_id,
    replayed,
)
from postproject.service.handles import commit, committing
from postproject.service.problems import Problem
from postproject.transaction import Transaction

Worker = Annotated[Principal, Depends(require(ApiRole.WORKER))]
Name = Annotated[str, Path(min_length=1, max_length=256, description="the worker's stable name")]
CLAIM_TOOL = ToolIdentity("postproject-service", __version__)
RECHECK = 5.0  # seconds a held claim waits at most before trying again (an expired lease makes work without a revision)
LOST = frozenset({Reason.LEASE_LOST, Reason.LEASE_EXPIRED})
MAX_SESSIONS = 10_000

router = APIRouter(prefix="/v1", tags=["worker"], dependencies=[Depends(known_query)])


class Sessions:
    """Worker sessions found again by (name, session): a session never changes (a registration
    makes a new one), so a cached one is as good as a read; the core still fences it."""

    def __init__(self) -> None:
        self._found: collections.OrderedDict[tuple[str, str], WorkerSession] = collections.OrderedDict()
        self._lock = threading.Lock()

    def remember(self, session: WorkerSession) -> str:
        text = str(uuid.UUID(bytes=session.session_id))
        with self._lock:
            self._found[(session.name, text)] = session
            while len(self._found) > MAX_SESSIONS:
                self._found.popitem(last=False)
        return text

    def find(self, production: Production, name: str, session: str) -> WorkerSession:
        with self._lock:
            found = self._found.get((name, session))
        if found is not None:
            return found
        found = production.access.worker_session(name, uuid.UUID(session).bytes)
        self.remember(found)
        return found


def sessions(request: Request) -> Sessions:
    found: Sessions = request.app.state.sessions
    return found


Known = Annotated[Sessions, Depends(sessions)]


def _lease(production: Production, token: str) -> JobLease:
    """A handle on the lease a token names (its claim is checked by each operation)."""
    try:
        return JobLease.import_token(production, token, live=False)
    except InvalidArgumentError as exc:
        raise Problem(
            400, "invalid_argument", f"lease_token: {exc.message}", extra={"field": "lease_token"}
        ) from None


def _stop(production: Production, job_id: Any) -> str | None:
    """ "cancelled" or "requeued" when a supervisor's cancel or requeue ended the claim (its
    holder should stop and confirm); None for any other lost claim."""
    job = production.job(job_id)
    if job.stopping is None:
        return None
    return "cancelled" if job.state is JobState.CANCELLED else "requeued"


def _micros(when: Any) -> int | None:
    return clocks.to_micros(when) if when is not None else None


# --- registration, heartbeats, claims -----------------------------------------------------


@router.put("/workers/{name:path}", response_model=models.Registration, summary="Register a worker")
async def register(
    name: Name, body: models.RegistrationBody, principal: Worker, pool: Pool, known: Known
) -> JSONResponse:
    """Register (or register again: a new session that fences the old one)."""

    def work(production: Production) -> WorkerSession:
        with edit(production, principal, f"Register worker {name}") as tx:
            session = tx.register_worker(name, capacity=body.capacity, kinds=body.kinds, host=body.host)
            commit(tx)
        return session

    session = await pool.run(work, principal=principal)
    return json_response(
        {
            "worker": session.name,
            "session": known.remember(session),
            "capacity": session.capacity,
            "kinds": list(session.kinds) if session.kinds is not None else None,
            "host": body.host,
            "heartbeat_interval_seconds": int(HEARTBEAT_INTERVAL.total_seconds()),
            "offline_after_seconds": int(OFFLINE_AFTER.total_seconds()),
        }
    )


@router.post("/workers/{name:path}/heartbeat", status_code=204, summary="Heartbeat")
async def heartbeat(
    name: Name, body: models.SessionBody, principal: Worker, pool: Pool, known: Known
) -> Response:
    def work(production: Production) -> None:
        session = known.find(production, name, body.session)
        with edit(production, principal, "Heartbeat") as tx:
            tx.heartbeat(session)
            commit(tx)

    await pool.run(work, principal=principal)
    return Response(status_code=204)


@router.post(
    "/workers/{name:path}/claims",
    response_model=models.Claim,
    summary="Claim the next job",
    responses={
        204: {
            "description": "no eligible work or no free capacity",
            "headers": {
                "Retry-After": {"description": "seconds before asking again", "schema": {"type": "integer"}}
            },
        }
    },
)
async def claim(
    name: Name,
    body: models.ClaimBody,
    request: Request,
    principal: Worker,
    pool: Pool,
    known: Known,
    wait_seconds: Annotated[int, Query(ge=0, le=30, description="hold the request until work arrives")] = 0,
) -> Response:
    """Claim the first claimable job of the worker's kinds (``200`` with the lease token), or
    ``204`` when there is none or the worker is at capacity."""
    duration = timedelta(seconds=body.lease_seconds)
    tool = ToolIdentity(body.tool.name, body.tool.version, body.tool.uri) if body.tool else CLAIM_TOOL
    agent = AgentIdentity(body.agent.name) if body.agent else AgentIdentity(name)
    hub = request.app.state.hub
    deadline = clocks.monotonic() + wait_seconds

    skip = frozenset(parse_id(JobId, text, f"skip[{i}]") for i, text in enumerate(body.skip))

    def work(production: Production) -> dict[str, Any] | None:
        session = known.find(production, name, body.session)
        if skip:
            with edit(production, principal, "Claim job") as tx:
                lease = _claim_skipping(production, tx, session, skip, tool, duration, agent)
                commit(tx)
            claimed = None
        else:  # one call: claim, commit, the job and its parameters (one round trip on PostgreSQL)
            committing()
            claimed = production.claim_next_job(
                tool, duration, agent=agent, worker=session, origin=ORIGIN, message="Claim job",
                principal=principal.name,
            )  # fmt: skip
            lease = claimed.lease if claimed is not None else None
        if lease is None:
            return None
        try:
            if claimed is not None:
                context = _context(production, claimed.job, claimed.parameters)
            else:
                context = _context(production, production.job(lease.job_id))
            return {
                **context,
                "lease_token": lease.export_token(),
                "expires_at_unix_micros": _micros(lease.expires_at),
            }
        except StorageError as exc:  # committed, but its answer cannot be made: never repeat it
            raise StorageError(
                f"the claim committed but its answer could not be read: {exc.message}",
                reason=Reason.CONNECTION_LOST,
            ) from None

    while True:
        seen = hub.head
        claimed = await pool.run(work, principal=principal)
        if claimed is not None:
            return json_response(claimed)
        remaining = deadline - clocks.monotonic()
        if remaining <= 0 or request.app.state.draining or await request.is_disconnected():
            return Response(status_code=204, headers={"Retry-After": "1"})
        await hub.wait(seen, min(remaining, RECHECK))


MAX_CONTEXT_INPUTS = 1000


def _context(
    production: Production, job: Job, parameters: Sequence[Assertion] | None = None
) -> dict[str, Any]:
    """A claimed job with what its work reads (``Claim``): parameters (read unless given),
    inputs (read together), output asset and the media roots it names (as stored: the worker
    maps them)."""
    found = production.representations_by_id(job.inputs[:MAX_CONTEXT_INPUTS])
    reps = [found[rep_id] for rep_id in job.inputs[:MAX_CONTEXT_INPUTS] if rep_id in found]
    names = sorted(n for n in {job.target_root, *(rep.root for rep in reps)} if n is not None)
    stored = {root.name: root for root in production.media_roots()} if names else {}
    if parameters is None:
        parameters = production.metadata[JobRef(job.id)]
    return {
        "job": views.job_view(job),
        "parameters": [views.assertion_view(a) for a in parameters],
        "inputs": [views.representation_view(rep) for rep in reps],
        "output_asset": views.asset_view(production.asset(job.output_asset_id)),
        "media_roots": [views.media_root_view(stored[name]) for name in names if name in stored],
    }


def _claim_skipping(
    production: Production,
    tx: Transaction,
    session: WorkerSession,
    skip: frozenset[JobId],
    tool: ToolIdentity,
    duration: timedelta,
    agent: AgentIdentity,
) -> JobLease | None:
    """The first claimable job of the worker's kinds that is not in ``skip`` (oldest first per
    kind, then expired claims): claimed by id, as a direct worker that skipped jobs does."""
    for job in _candidates(production, session.kinds, skip):
        try:
            return tx.claim_job_lease(job.id, tool, duration, agent=agent, worker=session)
        except ConflictError as exc:  # taken meanwhile; the edit stays usable
            if exc.reason in (Reason.WORKER_OFFLINE, Reason.WORKER_AT_CAPACITY):
                if exc.reason is Reason.WORKER_AT_CAPACITY:
                    return None
                raise
        except NotFoundError:
            continue
    return None


def _candidates(
    production: Production, kinds: tuple[str, ...] | None, skip: frozenset[JobId]
) -> Iterator[Job]:
    for kind in kinds if kinds is not None else (None,):
        cursor: str | None = None
        while True:
            page = production.jobs(limit=100, cursor=cursor, state=JobState.REQUESTED, kind=kind)
            yield from (job for job in page.items if job.id not in skip)
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
    expired = production.claims_expiring().items
    yield from (j for j in expired if (kinds is None or j.kind in kinds) and j.id not in skip)


# --- leases -------------------------------------------------------------------------------


@router.post("/leases/renew", response_model=models.LeaseState, summary="Renew a lease")
async def renew(body: models.RenewBody, principal: Worker, pool: Pool) -> JSONResponse:
    duration = timedelta(seconds=body.lease_seconds)

    def work(production: Production) -> dict[str, Any]:
        lease = _lease(production, body.lease_token)
        try:
            with edit(production, principal, "Renew job claim") as tx:
                tx.renew_job_lease(lease, duration)
                commit(tx)
        except ConflictError as exc:
            return _stopped_or_raise(production, lease, exc)
        return {"job_id": str(lease.job_id), "expires_at_unix_micros": _micros(lease.expires_at),
                "cancel_requested": False, "stop": None}  # fmt: skip

    return json_response(await pool.run(work, principal=principal))


@router.post("/leases/progress", response_model=models.LeaseState, summary="Report progress")
async def progress(body: models.ProgressBody, principal: Worker, pool: Pool) -> JSONResponse:
    renew = timedelta(seconds=body.renew_seconds) if body.renew_seconds is not None else None

    def work(production: Production) -> dict[str, Any]:
        lease = _lease(production, body.lease_token)
        try:
            with edit(production, principal, "Renew job claim") as tx:
                tx.report_progress(
                    lease, fraction=body.fraction, stage=body.stage, message=body.message, renew=renew
                )
                commit(tx)
        except ConflictError as exc:
            return _stopped_or_raise(production, lease, exc)
        return {"job_id": str(lease.job_id), "expires_at_unix_micros": _micros(lease.expires_at),
                "cancel_requested": False, "stop": None}  # fmt: skip

    return json_response(await pool.run(work, principal=principal))


def _stopped_or_raise(production: Production, lease: JobLease, error: ConflictError) -> dict[str, Any]:
    """A refused renewal or report: ``cancel_requested`` when a cancel or requeue ended the
    claim, the core's conflict otherwise."""
    if error.reason in LOST:
        stop = _stop(production, lease.job_id)
        if stop is not None:
            return {
                "job_id": str(lease.job_id),
                "expires_at_unix_micros": None,
                "cancel_requested": True,
                "stop": stop,
            }
    raise error


@router.post("/leases/log", response_model=models.LogRecorded, summary="Record an attempt's log")
async def record_log(body: models.LogBody, principal: Worker, pool: Pool) -> JSONResponse:
    def work(production: Production) -> dict[str, Any]:
        lease = _lease(production, body.lease_token)
        with edit(production, principal, "Record attempt log") as tx:
            attempt = tx.record_attempt_log(lease, tail=body.tail, path=body.path, root=body.root)
            commit(tx)
        return {"job_id": str(lease.job_id), "attempt": attempt}

    return json_response(await pool.run(work, principal=principal))


@router.post("/leases/release", response_model=models.Released, summary="Give a claimed job back")
async def release(body: models.LeaseBody, principal: Worker, pool: Pool) -> JSONResponse:
    def work(production: Production) -> dict[str, Any]:
        lease = _lease(production, body.lease_token)
        with edit(production, principal, "Release job claim") as tx:
            tx.release_job_lease(lease)
            commit(tx)
        return {"job": views.job_view(production.job(lease.job_id))}

    return json_response(await pool.run(work, principal=principal))


@router.post("/leases/stopped", response_model=models.Stopped, summary="Confirm a stop")
async def stopped(body: models.LeaseBody, principal: Worker, pool: Pool) -> JSONResponse:
    def work(production: Production) -> dict[str, Any]:
        lease = _lease(production, body.lease_token)
        with edit(production, principal, "Confirm job stopped") as tx:
            outcome = tx.confirm_stopped(lease)
            commit(tx)
        return {"job_id": str(lease.job_id), "outcome": outcome.value}

    return json_response(await pool.run(work, principal=principal))


# --- completion ----------------------------------------------------------------------------


def _report(
    tx: Transaction,
    lease: JobLease,
    body: models.CompletionBody,
    params: list[tuple[Property, MetadataValue]],
) -> tuple[RepresentationId, ActivityId] | None:
    """Stage a report in ``tx``: a success's output, activity (what the worker used) and
    completion, all under the core's rules; or a failure. (output, activity) of a success."""
    if body.outcome == "failed":
        assert body.error is not None
        tx.fail_job_lease(lease, _diagnostic(body.error), retry=body.error.retry)
        return None
    assert body.output is not None
    assert body.activity is not None
    job = tx.job(lease.job_id)
    output, activity = body.output, body.activity
    kind = RepresentationKind.parse(output.kind) if output.kind else job.output_representation_kind
    rep = tx.add_representation(job.output_asset_id, kind, output.path, root=output.root)
    started, finished = activity.started_at_unix_micros, activity.finished_at_unix_micros
    spec = ActivitySpec(
        job.kind,
        inputs=job.inputs,
        outputs=(rep,),
        tool=ToolIdentity(activity.tool.name, activity.tool.version, activity.tool.uri),
        agent=AgentIdentity(activity.agent.name) if activity.agent else None,
        started_at=clocks.from_micros(started) if started is not None else None,
        finished_at=clocks.from_micros(finished) if finished is not None else None,
    )
    made = tx.create_activity(spec)
    for prop, value in params:
        tx.add_metadata(ActivityRef(made), prop, value)
    tx.complete_job_lease(lease, rep, made)
    return rep, made


def _diagnostic(error: models.ErrorBody) -> str:
    text = f"{error.code}: {error.message}".replace("\x00", "\ufffd")
    return text.encode()[:MAX_DIAGNOSTIC_BYTES].decode("utf-8", "ignore")


def _checked(body: models.CompletionBody) -> None:
    if body.outcome == "succeeded" and (
        body.output is None or body.activity is None or body.error is not None
    ):
        raise Problem(400, "invalid_argument", "a succeeded report has output and activity, and no error",
                      extra={"field": "output" if body.output is None else "activity" if body.activity is None else "error"})  # fmt: skip
    if body.outcome == "failed" and (
        body.error is None or body.output is not None or body.activity is not None
    ):
        raise Problem(400, "invalid_argument", "a failed report has an error, and no output or activity",
                      extra={"field": "error" if body.error is None else "output"})  # fmt: skip


@router.put(
    "/leases/completion",
    response_model=models.Completion,
    summary="Report a job's outcome",
    responses={409: {"description": "report_conflict, lease_lost, lease_expired, input_changed"}},
)
async def complete(
    body: models.CompletionBody, request: Request, principal: Worker, pool: Pool
) -> JSONResponse:
    """Complete (output, activity and success in one revision) or fail the lease's job; the same
    ``report_id`` again returns the original answer."""
    _checked(body)
    params = parameters(body.activity.parameters, "activity.parameters") if body.activity else []
    digest = canonical_digest(getattr(request.state, "json_body", None))
    key = hashlib.sha256(body.lease_token.encode()).hexdigest()

    def recorded(production: Production) -> JSONResponse | None:
        found = production.access.reply("completion", key)
        if found is None:
            return None
        if found.digest != digest:
            raise Problem(409, "conflict", "a different report was already recorded for this attempt",
                          reason=Reason.REPORT_CONFLICT.value)  # fmt: skip
        return replayed(found.reply)

    def work(production: Production) -> JSONResponse:
        # No lookup first: a report already recorded ended its lease, so the core refuses the
        # repeat, and only then is the recorded reply read (the first report pays nothing).
        lease = _lease(production, body.lease_token)
        try:
            succeeded = body.outcome == "succeeded"
            message = "Complete job" if succeeded else "Fail job"
            # a success's lease check goes with its commit when this handle made the claim
            with edit(production, principal, message, defer_lease_checks=succeeded) as tx:
                made = _report(tx, lease, body, params)
                state = "succeeded" if made else tx.job(lease.job_id).state.value
                view = {
                    "report_id": body.report_id,
                    "outcome": body.outcome,
                    "job_id": str(lease.job_id),
                    "state": state,
                    "representation_id": str(made[0]) if made else None,
                    "activity_id": str(made[1]) if made else None,
                }
                reply = json.dumps({"status": 200, "body": view}, separators=(",", ":"))
                tx.record_reply("completion", key, digest, reply)
                commit(tx)
        except PostProjectError:  # refused: was this attempt's report recorded already?
            again = recorded(production)
            if again is None:
                raise
            return again
        return json_response(view)

    return await pool.run(work, principal=principal)
