"""The ASGI application: routes, errors as problems, the pool, the listener, the loss sweep.

:func:`create_app` builds a FastAPI application over one production. Its lifespan opens the
pool of production handles (:mod:`.handles`), starts the one notification listener
(:mod:`.hub`) and, unless disabled, the hosted loss sweep: a first pass at once, then one
every 5 s, at most 100 claims a pass (the core's ``finalize_lost``: a lost claim's job returns
to ``requested`` while it has attempts left; several instances never finalise one claim
twice). :func:`begin_drain` (a signal) ends event streams and held claims at once; requests
in flight finish; the lifespan's end stops the sweep and closes the handles.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.cors import CORSMiddleware

from postproject._version import __version__
from postproject.model.errors import PostProjectError
from postproject.production import Production
from postproject.service import client_api, models, stream, worker_api
from postproject.service.auth import FailureLimit, KnownRoles
from postproject.service.config import (
    MAX_BODY_BYTES,
    MAX_JSON_DEPTH,
    SWEEP_BATCH,
    ServiceConfig,
    with_statement_timeout,
)
from postproject.service.gate import Gate
from postproject.service.handles import Handles, commit
from postproject.service.hub import FeedHub
from postproject.service.problems import MEDIA_TYPE, Problem, document, from_error, scrub
from postproject.service.stream import Streams

log = logging.getLogger("postproject.service")
PUBLIC = frozenset({"/v1/health", "/v1/ready", "/v1/openapi.json"})


def create_app(config: ServiceConfig) -> FastAPI:
    """The service over ``config.location`` (nothing is opened until the lifespan starts)."""
    location = with_statement_timeout(config.location, config.time_limit)
    roots = dict(config.root_map) or None

    def open_writable() -> Production:
        return Production.open(location, root_map=roots)

    def open_listener() -> Production:
        return Production.open(location, read_only=True)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        handles = Handles(open_writable, config.pool_size, config.time_limit)
        await asyncio.to_thread(handles.open)
        hub = FeedHub(open_listener)
        try:
            await asyncio.to_thread(hub.start, asyncio.get_running_loop())
        except BaseException:
            handles.close()
            raise
        app.state.handles = handles
        app.state.hub = hub
        sweeper = asyncio.create_task(_sweep(app, config)) if config.sweep else None
        log.info("serving %s", handles_location(config), extra={"action": "started"})
        try:
            yield
        finally:
            begin_drain(app)
            if sweeper is not None:
                sweeper.cancel()
                await asyncio.gather(sweeper, return_exceptions=True)
            await asyncio.to_thread(handles.close)
            log.info("stopped", extra={"action": "stopped"})

    app = FastAPI(
        title="PostProject service",
        version=__version__,
        summary="The Client API and the Worker API over one production (docs/service.md).",
        openapi_url="/v1/openapi.json",
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.config = config
    app.state.failures = FailureLimit(config.auth_failures, config.auth_window)
    app.state.roles = KnownRoles()
    app.state.draining = False
    app.state.streams = Streams(config.max_streams)
    app.state.sessions = worker_api.Sessions()
    app.include_router(client_api.router)
    app.include_router(stream.router)
    app.include_router(worker_api.router)
    _health(app)
    _errors(app)
    if config.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(config.cors_origins),
            allow_methods=["GET", "POST", "PUT"],
            allow_headers=["Authorization", "Content-Type", "Idempotency-Key", "Last-Event-ID"],
            expose_headers=["Location", "X-Request-Id", "Idempotent-Replayed", "Retry-After"],
        )
    app.add_middleware(Gate, max_body=MAX_BODY_BYTES, max_depth=MAX_JSON_DEPTH)
    app.openapi = _openapi(app)  # type: ignore[method-assign]
    return app


def handles_location(config: ServiceConfig) -> str:
    """The production as logs show it (a URI without its password)."""
    return scrub(config.location)


def begin_drain(app: FastAPI) -> None:
    """A shutdown begins: end the event streams and the held claims now (from the event loop)."""
    app.state.draining = True
    hub: FeedHub | None = getattr(app.state, "hub", None)
    if hub is not None:
        hub.close()


async def _sweep(app: FastAPI, config: ServiceConfig) -> None:
    handles: Handles = app.state.handles

    def once(production: Production) -> int:
        with production.edit(origin=client_api.ORIGIN, message="Finalize lost work") as tx:
            count = tx.finalize_lost(SWEEP_BATCH)
            commit(tx)
        return count

    while not app.state.draining:
        try:
            count = await handles.run(once)
            if count:
                log.warning("finalized %d lost claim(s)", count, extra={"action": "swept_lost"})
        except (PostProjectError, Problem) as exc:
            log.warning("loss sweep: %s", exc, extra={"action": "sweep_error"})
        await asyncio.sleep(config.sweep_interval)


# --- health --------------------------------------------------------------------------------


def _health(app: FastAPI) -> None:
    @app.get(
        "/v1/health",
        response_model=models.Health,
        tags=["health"],
        summary="The process is up",
        dependencies=[Depends(client_api.known_query)],
    )
    async def health() -> JSONResponse:
        return JSONResponse({"status": "ok", "version": __version__})

    @app.get(
        "/v1/ready",
        response_model=models.Ready,
        tags=["health"],
        summary="The production is reachable",
        responses={503: {"description": "the production does not answer"}},
        dependencies=[Depends(client_api.known_query)],
    )
    async def ready(request: Request) -> JSONResponse:
        if request.app.state.draining:
            raise Problem(503, "unavailable", "the service is shutting down", reason="shutting_down")
        handles: Handles = request.app.state.handles
        found = await handles.run(lambda p: (str(p.id), p.latest_sequence()), time_limit=5.0)
        return JSONResponse({"status": "ready", "production_id": found[0], "latest_sequence": found[1]})


# --- errors --------------------------------------------------------------------------------


def _problem_response(request: Request, problem: Problem) -> Response:
    body = document(problem, getattr(request.state, "request_id", "-"))
    return JSONResponse(body, status_code=problem.status, headers=problem.headers, media_type=MEDIA_TYPE)


def _errors(app: FastAPI) -> None:
    @app.exception_handler(Problem)
    async def problem(request: Request, exc: Problem) -> Response:
        return _problem_response(request, exc)

    @app.exception_handler(PostProjectError)
    async def core_error(request: Request, exc: PostProjectError) -> Response:
        return _problem_response(request, from_error(exc))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        return _problem_response(request, _validation_problem(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 404:
            found = Problem(404, "not_found", f"no such resource: {request.url.path}")
        elif exc.status_code == 405:
            found = Problem(405, "unsupported", f"{request.method} is not allowed here", reason="method_not_allowed",
                            headers=dict(exc.headers or {}))  # fmt: skip
        else:
            found = Problem(
                exc.status_code, "invalid_argument" if exc.status_code < 500 else "internal", str(exc.detail)
            )
        return _problem_response(request, found)


def _validation_problem(exc: RequestValidationError) -> Problem:
    """``400`` naming the first field that failed (never echoing the value given)."""
    errors = exc.errors()
    first = errors[0] if errors else {}
    location = [str(part) for part in first.get("loc", ())]
    where = location[0] if location else "body"
    path = location[1:] if where in ("body", "query", "path", "header") else location
    field = "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in path).lstrip(".") or where
    kind = first.get("type", "")
    if kind == "extra_forbidden":
        detail = f"unknown member {field!r}"
    elif kind == "missing":
        detail = f"{field} is required" if path else "a JSON body is required"
    elif kind == "json_invalid":
        detail = "the body is not valid JSON"
    else:
        detail = f"{field}: {first.get('msg', 'invalid value')}"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return Problem(400, "invalid_argument", detail + more, extra={"field": field})


# --- the OpenAPI document ------------------------------------------------------------------

PROBLEM_STATUSES = {
    "400": "invalid_argument (a field is missing, unknown, of the wrong type or out of range)",
    "401": "unauthenticated (no token, or an unknown, revoked or expired one)",
    "403": "forbidden (the token's role may not)",
    "404": "not_found",
    "409": "conflict or already_exists (see reason)",
    "413": "unsupported: the body is larger than 256 KiB",
    "415": "unsupported: the body is not JSON",
    "422": "unsupported, or io (a file the request names cannot be read here)",
    "429": "rate_limited (too many failed authentications from this address)",
    "500": "internal or migration",
    "503": "storage (see reason) or unavailable (shutting down, no handle free, too many streams)",
    "504": "timeout (the request's 30 s time limit)",
}


def _openapi(app: FastAPI) -> Callable[[], dict[str, Any]]:
    """The OpenAPI 3.1 document, with the bearer scheme and the problem responses every
    operation may give."""

    def build() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        spec = get_openapi(
            title=app.title, version=app.version, summary=app.summary, routes=app.routes, tags=None
        )
        components = spec.setdefault("components", {})
        components.setdefault("securitySchemes", {})["bearer"] = {
            "type": "http",
            "scheme": "bearer",
            "description": "an API token (ppa1_...): postproject api-token create",
        }
        schemas = components.setdefault("schemas", {})
        schemas["Problem"] = models.ProblemView.model_json_schema(ref_template="#/components/schemas/{model}")
        problem = {MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}}
        shared = components.setdefault("responses", {})
        for status, description in PROBLEM_STATUSES.items():
            shared[f"Problem{status}"] = {"description": description, "content": problem}
        for path, operations in spec.get("paths", {}).items():
            for operation in operations.values():
                responses = operation.setdefault("responses", {})
                responses.pop("422", None)  # FastAPI's validation error: answered as 400 here
                wanted = ("400", "503") if path in PUBLIC else tuple(PROBLEM_STATUSES)
                for status in wanted:
                    responses[status] = {"$ref": f"#/components/responses/Problem{status}"}
                if path not in PUBLIC:
                    operation["security"] = [{"bearer": []}]
        schemas.pop("HTTPValidationError", None)
        schemas.pop("ValidationError", None)
        app.openapi_schema = spec
        return spec

    return build
