"""The Client API: request, read and steer jobs; workers, stale artifacts, regeneration, the feed.

Each endpoint checks its role (:mod:`.auth`), then runs one core call in a worker thread with
a handle of the pool (:mod:`.handles`): the core's rules decide, errors come back as problems
(:mod:`.problems`), and a job is the JSON ``postproject --json job show`` prints
(:func:`postproject.views.job_view`). Every write is an edit whose revision names the token
(``principal``) and the service (``origin``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import JSONResponse

from postproject import views
from postproject._version import __version__
from postproject.model import clock as clocks
from postproject.model import values
from postproject.model.access import ApiRole
from postproject.model.assets import RepresentationKind
from postproject.model.errors import AlreadyExistsError, InvalidArgumentError, Reason
from postproject.model.ids import AssetId, JobId, RepresentationId
from postproject.model.jobs import JobOutput, JobRequest
from postproject.model.lifecycle import JobState
from postproject.model.metadata import Property
from postproject.model.refs import JobRef
from postproject.model.values import MetadataValue
from postproject.production import Production
from postproject.service import models
from postproject.service.auth import Principal, require
from postproject.service.handles import Handles, commit
from postproject.service.problems import Problem
from postproject.transaction import Transaction
from postproject.views import knowledge as kv

ORIGIN = f"postproject-service {__version__}"
REPLAYED = "Idempotent-Replayed"
_KEY_CHARS = frozenset(chr(c) for c in range(0x20, 0x7F))
Reader = Annotated[Principal, Depends(require(ApiRole.READER))]
Submitter = Annotated[Principal, Depends(require(ApiRole.SUBMITTER))]
Supervisor = Annotated[Principal, Depends(require(ApiRole.SUPERVISOR))]
Limit = Annotated[int, Query(ge=1, le=1000, description="page size")]
Cursor = Annotated[str | None, Query(max_length=4096, description="the previous page's next_cursor")]


async def known_query(request: Request) -> None:
    """Refuse a query parameter the endpoint does not take, or one given twice that takes one
    value (a typo must not pass unnoticed): the names the route's parameters and dependencies
    declare (the OpenAPI document's query parameters, read from the route itself: building the
    whole document on a service's first request cost ~0.15 s of CPU)."""
    route = request.scope.get("route")
    if route is None:
        return
    known = route_query_names(route)
    for name, value in request.query_params.multi_items():
        del value
        if name not in known:
            raise Problem(
                400, "invalid_argument", f"unknown query parameter {name[:80]!r}", extra={"field": name[:80]}
            )
        if not known[name] and len(request.query_params.getlist(name)) > 1:
            raise Problem(
                400, "invalid_argument", f"query parameter {name!r} takes one value", extra={"field": name}
            )


def route_query_names(route: Any) -> dict[str, bool]:
    """``{name: takes a list}`` for the query parameters of ``route`` and its dependencies
    (kept on the route: it lives as long as its app)."""
    names: dict[str, bool] | None = getattr(route, "pp_query_names", None)
    if names is None:
        names = {}
        pending = [getattr(route, "dependant", None)]
        while pending:
            dependant = pending.pop()
            if dependant is None:
                continue
            for field in dependant.query_params:
                names[field.alias] = _takes_a_list(field.field_info.annotation)
            pending.extend(dependant.dependencies)
        route.pp_query_names = names
    return names


def _takes_a_list(annotation: Any) -> bool:
    """Whether a query parameter's annotation takes several values (``kind`` of ``/v1/revisions``)."""
    options = get_args(annotation) if get_origin(annotation) in (Union, UnionType) else (annotation,)
    return any(get_origin(option) in (list, set, frozenset, tuple) for option in options)


router = APIRouter(prefix="/v1", tags=["client"], dependencies=[Depends(known_query)])


def handles(request: Request) -> Handles:
    pool: Handles = request.app.state.handles
    return pool


Pool = Annotated[Handles, Depends(handles)]


def edit(
    production: Production, principal: Principal, message: str, *, defer_lease_checks: bool = False
) -> Transaction:
    """An edit made for ``principal`` through the service (``defer_lease_checks`` as
    :meth:`Production.edit` takes it)."""
    return production.edit(
        origin=ORIGIN, message=message, principal=principal.name, defer_lease_checks=defer_lease_checks
    )


def parse_id(kind: type[Any], text: str, field: str) -> Any:
    try:
        return kind.parse(text)
    except InvalidArgumentError:
        raise Problem(
            400, "invalid_argument", f"{field} is not a valid id: {text[:80]!r}", extra={"field": field}
        ) from None


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(body, status_code=status, headers=headers)


def canonical_digest(document: Any) -> bytes:
    """The SHA-256 of a parsed JSON document in one canonical spelling (two documents that parse
    equal have equal digests, whatever their member order or spacing)."""
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).digest()


def replayed(recorded: str) -> JSONResponse:
    """A recorded reply sent again, as it was."""
    reply = json.loads(recorded)
    headers = {REPLAYED: "true"}
    if reply.get("location"):
        headers["Location"] = reply["location"]
    return JSONResponse(reply["body"], status_code=reply["status"], headers=headers)


def parameters(items: list[models.Parameter], field: str) -> list[tuple[Property, MetadataValue]]:
    found = []
    for index, item in enumerate(items):
        where = f"{field}[{index}]"
        try:
            found.append((Property(item.vocabulary, item.property), values.from_json(item.value)))
        except InvalidArgumentError as exc:
            raise Problem(
                400, "invalid_argument", f"{where}: {exc.message}", extra={"field": where}
            ) from None
    return found


def job_request(body: models.JobBody) -> JobRequest:
    inputs: list[RepresentationId | JobOutput] = [
        parse_id(RepresentationId, text, f"inputs[{i}]") for i, text in enumerate(body.inputs)
    ]
    inputs += [
        JobOutput(parse_id(JobId, t, f"input_from[{i}]"))
        for i, t in enumerate(dict.fromkeys(body.input_from))
    ]
    return JobRequest(
        body.kind,
        inputs,
        parse_id(AssetId, body.output_asset_id, "output_asset_id"),
        RepresentationKind.parse(body.output_kind),
        body.target_root,
        priority=body.priority,
        not_before=clocks.from_micros(body.not_before_unix_micros)
        if body.not_before_unix_micros is not None
        else None,
        max_attempts=body.max_attempts,
        after=tuple(parse_id(JobId, t, f"after[{i}]") for i, t in enumerate(dict.fromkeys(body.after))),
    )


def _own(production: Production, principal: Principal, job_id: JobId) -> None:
    """A submitter acts only on the jobs its own token requested (a supervisor on any)."""
    if principal.supervises:
        return
    production.job(job_id)  # not_found for an unknown job, before forbidden
    history = production.job_history(job_id)
    requested = next((h for h in history if h.kind == "job_requested"), None)
    if requested is None or requested.principal != principal.name:
        raise Problem(403, "forbidden", f"job {job_id} was not requested with this token; a submitter "
                      "acts only on its own jobs")  # fmt: skip


# --- requesting a job ----------------------------------------------------------------------


@router.post(
    "/jobs",
    status_code=201,
    response_model=models.JobView,
    summary="Request a job",
    responses={
        201: {
            "description": "the job, at Location (Idempotent-Replayed: true when an Idempotency-Key replayed it)",
            "headers": {"Location": {"description": "/v1/jobs/{id}", "schema": {"type": "string"}}},
        }
    },
)
async def request_job(
    body: models.JobBody,
    request: Request,
    principal: Submitter,
    pool: Pool,
    idempotency_key: Annotated[str | None, Header(min_length=1, max_length=256)] = None,
) -> JSONResponse:
    """Request a job (``job request``): ``201`` with ``Location`` and the job. With an
    ``Idempotency-Key`` (scoped to the token), an equal repeat returns the original answer."""
    if idempotency_key is not None and not set(idempotency_key) <= _KEY_CHARS:
        raise Problem(
            400,
            "invalid_argument",
            "Idempotency-Key must be printable ASCII",
            extra={"field": "Idempotency-Key"},
        )
    request_obj = job_request(body)
    params = parameters(body.parameters, "parameters")
    digest = canonical_digest(getattr(request.state, "json_body", None))
    key = idempotency_key

    def recorded(production: Production) -> JSONResponse | None:
        if key is None:
            return None
        found = production.access.reply(f"job-request:{principal.name}", key)
        if found is None:
            return None
        if found.digest != digest:
            raise Problem(409, "conflict", f"idempotency key {key!r} was used for a different request",
                          reason=Reason.IDEMPOTENCY_KEY_CONFLICT.value)  # fmt: skip
        return replayed(found.reply)

    def work(production: Production) -> JSONResponse:
        again = recorded(production)
        if again is not None:
            return again
        try:
            with edit(production, principal, "Request job") as tx:
                job_id = tx.request_job(request_obj)
                for prop, value in params:
                    tx.add_metadata(JobRef(job_id), prop, value)
                location = f"/v1/jobs/{job_id}"
                reply = {"status": 201, "location": location, "body": views.job_view(tx.job(job_id))}
                if key is not None:
                    scope = f"job-request:{principal.name}"  # (the principal is resolved by now)
                    tx.record_reply(scope, key, digest, json.dumps(reply, separators=(",", ":")))
                commit(tx)
        except AlreadyExistsError:  # the same key committed by a concurrent request first
            again = recorded(production)
            if again is None:
                raise
            return again
        return json_response(reply["body"], 201, {"Location": location})

    return await pool.run(work, principal=principal)


# --- reading jobs --------------------------------------------------------------------------


@router.get("/jobs", response_model=models.JobPage, summary="List jobs")
async def list_jobs(
    principal: Reader,
    pool: Pool,
    state: Annotated[models.State | None, Query()] = None,
    kind: Annotated[str | None, Query(min_length=1, max_length=128)] = None,
    search: Annotated[str | None, Query(min_length=1, max_length=1024)] = None,
    limit: Limit = 100,
    cursor: Cursor = None,
    sort: Annotated[models.JobSort, Query(description="the column to order by (ties by id)")] = "requested",
    descending: Annotated[bool, Query(description="descending order")] = False,
    requested_after_unix_micros: Annotated[int | None, Query(ge=0, le=2**62)] = None,
    requested_before_unix_micros: Annotated[int | None, Query(ge=0, le=2**62)] = None,
    finished_after_unix_micros: Annotated[int | None, Query(ge=0, le=2**62)] = None,
    finished_before_unix_micros: Annotated[int | None, Query(ge=0, le=2**62)] = None,
) -> JSONResponse:
    """A keyset page of jobs (``job list``): in request order unless ``sort`` says otherwise."""
    wanted = JobState(state) if state is not None else None

    def when(micros: int | None) -> Any:
        return clocks.from_micros(micros) if micros is not None else None

    def work(production: Production) -> Any:
        return production.jobs(
            limit,
            cursor,
            wanted,
            kind,
            search=search,
            sort=sort,
            descending=descending,
            requested_after=when(requested_after_unix_micros),
            requested_before=when(requested_before_unix_micros),
            finished_after=when(finished_after_unix_micros),
            finished_before=when(finished_before_unix_micros),
        )

    page = await pool.run(work, principal=principal)
    return json_response(views.paged(page, views.job_view))


@router.get("/jobs/counts", response_model=models.JobCounts, summary="Count jobs by state")
async def job_counts(
    principal: Reader, pool: Pool, kind: Annotated[str | None, Query(min_length=1, max_length=128)] = None
) -> JSONResponse:
    counts = await pool.run(lambda p: p.job_counts(kind), principal=principal)
    by_state = {state.value: counts[state] for state in JobState}
    return json_response({"kind": kind, "counts": by_state, "total": sum(by_state.values())})


@router.get("/jobs/{job_id}", response_model=models.JobView, summary="Show a job")
async def show_job(job_id: str, principal: Reader, pool: Pool) -> JSONResponse:
    parsed = parse_id(JobId, job_id, "job_id")
    return json_response(await pool.run(lambda p: views.job_view(p.job(parsed)), principal=principal))


@router.get("/jobs/{job_id}/history", response_model=models.JobHistory, summary="A job's lifecycle events")
async def job_history(job_id: str, principal: Reader, pool: Pool) -> JSONResponse:
    parsed = parse_id(JobId, job_id, "job_id")

    def work(production: Production) -> list[dict[str, Any]]:
        production.job(parsed)  # not_found for an unknown job
        return [
            {
                "sequence": h.sequence,
                "committed_at_unix_micros": clocks.to_micros(h.committed_at),
                "kind": h.kind,
                "origin": h.origin,
                "message": h.message,
                "principal": h.principal,
            }
            for h in production.job_history(parsed)
        ]

    return json_response({"items": await pool.run(work, principal=principal)})


# --- acting on jobs -----------------------------------------------------------------------


def _act(
    job_id: str,
    principal: Principal,
    message: str,
    change: Callable[[Transaction, JobId], None],
    *,
    own: bool,
) -> Callable[[Production], dict[str, Any]]:
    parsed = parse_id(JobId, job_id, "job_id")

    def work(production: Production) -> dict[str, Any]:
        if own:
            _own(production, principal, parsed)
        with edit(production, principal, message) as tx:
            change(tx, parsed)
            commit(tx)
        return views.job_view(production.job(parsed))

    return work


@router.post("/jobs/{job_id}/cancel", response_model=models.JobView, summary="Cancel a job")
async def cancel_job(job_id: str, principal: Submitter, pool: Pool) -> JSONResponse:
    """Cancel requested or claimed work (a submitter: its own jobs only)."""
    work = _act(job_id, principal, "Cancel job", lambda tx, j: tx.cancel_job(j), own=True)
    return json_response(await pool.run(work, principal=principal))


@router.post(
    "/jobs/{job_id}/retry",
    status_code=201,
    response_model=models.JobView,
    summary="Retry a job",
    responses={201: {"description": "the new job", "headers": {"Location": {"schema": {"type": "string"}}}}},
)
async def retry_job(job_id: str, principal: Submitter, pool: Pool) -> JSONResponse:
    """Request a failed or cancelled job again: ``201`` with the new job's ``Location``."""
    parsed = parse_id(JobId, job_id, "job_id")

    def work(production: Production) -> dict[str, Any]:
        _own(production, principal, parsed)
        with edit(production, principal, "Retry job") as tx:
            new = tx.request_again(parsed)
            commit(tx)
        return views.job_view(production.job(new))

    view = await pool.run(work, principal=principal)
    return json_response(view, 201, {"Location": f"/v1/jobs/{view['id']}"})


@router.post("/jobs/{job_id}/requeue", response_model=models.JobView, summary="Requeue a claimed job")
async def requeue_job(job_id: str, principal: Supervisor, pool: Pool) -> JSONResponse:
    work = _act(job_id, principal, "Requeue claim", lambda tx, j: tx.requeue_job(j), own=False)
    return json_response(await pool.run(work, principal=principal))


@router.put("/jobs/{job_id}/priority", response_model=models.JobView, summary="Change a job's priority")
async def set_priority(
    job_id: str, body: models.PriorityBody, principal: Supervisor, pool: Pool
) -> JSONResponse:
    priority = body.priority
    work = _act(
        job_id,
        principal,
        f"Set priority {priority}",
        lambda tx, j: tx.set_job_priority(j, priority),
        own=False,
    )
    return json_response(await pool.run(work, principal=principal))


@router.post("/sweeps", response_model=models.Sweep, summary="Run one pass of the loss sweep")
async def sweep(principal: Supervisor, pool: Pool) -> JSONResponse:
    def work(production: Production) -> int:
        with edit(production, principal, "Finalize lost work") as tx:
            count = tx.finalize_lost(100)
            commit(tx)
        return count

    return json_response({"finalized": await pool.run(work, principal=principal)})


@router.post(
    "/regenerations",
    status_code=201,
    response_model=models.Regeneration,
    summary="Regenerate stale downstream",
)
async def regenerate(body: models.RegenerationBody, principal: Supervisor, pool: Pool) -> JSONResponse:
    """Plan and request the regeneration of every stale descendant of a representation."""
    source = parse_id(RepresentationId, body.representation_id, "representation_id")

    def work(production: Production) -> dict[str, Any]:
        downstream = production.plan_downstream_regeneration(source, current_inputs=body.current_inputs)
        job_ids: tuple[JobId, ...] = ()
        if downstream.plans:
            with edit(production, principal, f"Regenerate {len(downstream.plans)} artifact(s)") as tx:
                job_ids = tx.enqueue_plans(downstream.plans)
                commit(tx)
        return {"job_ids": [str(j) for j in job_ids], **kv.plans_view(downstream.plans, downstream)}

    return json_response(await pool.run(work, principal=principal), 201)


# --- workers, artifacts, the feed ---------------------------------------------------------


@router.get("/workers", response_model=models.WorkerList, summary="List registered workers")
async def list_workers(principal: Reader, pool: Pool) -> JSONResponse:
    workers = await pool.run(lambda p: p.workers(), principal=principal)
    return json_response({"items": [views.worker_view(w) for w in workers]})


@router.get("/artifacts", response_model=models.StalePage, summary="List stale artifacts")
async def stale_artifacts(
    principal: Reader,
    pool: Pool,
    state: Annotated[Literal["stale"], Query(description="only stale (or diverged) artifacts")] = "stale",
    limit: Limit = 100,
    cursor: Cursor = None,
) -> JSONResponse:
    page = await pool.run(lambda p: p.stale_artifacts(limit, cursor), principal=principal)
    return json_response(kv.stale_page_view(page))


@router.get("/revisions", response_model=models.RevisionsPage, summary="Revisions after a sequence")
async def revisions(
    principal: Reader,
    pool: Pool,
    since: Annotated[int, Query(ge=0, le=2**62)] = 0,
    limit: Limit = 100,
    kind: Annotated[list[str] | None, Query(max_length=100)] = None,
) -> JSONResponse:
    changes = await pool.run(lambda p: p.changes_since(since, limit, kind or None), principal=principal)
    return json_response(
        {"revisions": [views.revision_view(r) for r in changes], "through_sequence": changes.through_sequence}
    )
