"""The client commands through a service: ``job request|show|list|cancel|retry`` and
``revisions follow`` with an ``http(s)://`` PRODUCTION.

Each command validates its arguments as it does on a production (the same parsers, the same
errors before any request), sends the Client API's requests with the API token
(``--token-file`` or ``POSTPROJECT_API_TOKEN``) and prints exactly what it prints on a
production: the same JSON (the service answers with the same serializer,
:mod:`postproject.views`) and the same text. A command that commits prints its commit
receipt too, read back from the service (the job's lifecycle event, that revision, the
production's id). Errors come back as the core's errors (:mod:`postproject.executor.remote`)
and so exit with the same codes.

What differs from a production: ``job cancel`` with several jobs cancels them one request
each (not in one transaction: an error stops at that job, the earlier ones stay cancelled,
and the receipt is the last cancel's); ``--idempotency-key`` is sent as the service's
``Idempotency-Key`` (scoped to the token, comparing the request's body).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from postproject import views
from postproject.cli import farm
from postproject.cli.common import Context, Parser, parse_id, parse_int
from postproject.cli.output import Result
from postproject.cli.setup import parse_value
from postproject.executor.access import connect, read_token
from postproject.executor.recovery import Backoff, Outage, ServiceUnavailable, retrying, transient
from postproject.model import clock as clocks
from postproject.model import values
from postproject.model.assets import RepresentationKind
from postproject.model.errors import PostProjectError
from postproject.model.ids import AssetId, JobId, RepresentationId
from postproject.model.metadata import EXECUTOR_VOCABULARY
from postproject.model.revisions import event_kind

if TYPE_CHECKING:
    from postproject.executor.remote import ServiceClient

View = dict[str, Any]


def token_option(parser: Parser) -> None:
    """``--token-file`` for a command that also takes a service URL."""
    parser.add_argument(
        "--token-file",
        metavar="FILE",
        help="the API token when PRODUCTION is a service's http(s):// URL (else POSTPROJECT_API_TOKEN)",
    )


@contextmanager
def client(ctx: Context) -> Iterator[ServiceClient]:
    """A client for the command's service URL with its token (closed afterwards)."""
    token = read_token(getattr(ctx.args, "token_file", None))
    service = connect(ctx.args.production, token, max_connections=4)
    try:
        yield service
    finally:
        service.close()


def _job_path(job_id: JobId, action: str = "") -> str:
    return f"/v1/jobs/{quote(str(job_id), safe='')}{action}"


def receipt(service: ServiceClient, job_id: JobId, event: str) -> View:
    """The commit receipt of the revision that recorded the job's ``event`` (its newest one)."""
    history = service.request("GET", _job_path(job_id, "/history")).body["items"]
    found = [entry for entry in history if entry["kind"] == event]
    revision = None
    if found:
        sequence = int(found[-1]["sequence"])
        page = service.request("GET", "/v1/revisions", params={"since": sequence - 1, "limit": 1}).body
        revision = next((r for r in page["revisions"] if r["sequence"] == sequence), None)
    ready = service.request("GET", "/v1/ready").body
    return {"production_id": ready["production_id"], "revision": revision}


# --- jobs ----------------------------------------------------------------------------------


def job_request(ctx: Context, when: Any) -> Result:
    """``job request`` through the service (``when`` parses --not-before as the local command does)."""
    args = ctx.args
    bound = [str(parse_id(JobId, j)) for j in dict.fromkeys(args.input_from)]
    parameters = [
        {"vocabulary": vocabulary, "property": name, "value": values.to_json(parse_value(value))}
        for vocabulary, name, value in args.param
    ]
    if args.profile is not None:
        parameters.append(
            {
                "vocabulary": EXECUTOR_VOCABULARY,
                "property": "profile",
                "value": {"type": "string", "value": args.profile},
            }
        )
    not_before = when("--not-before", args.not_before) if args.not_before is not None else None
    body: View = {
        "kind": args.kind,
        "inputs": [str(parse_id(RepresentationId, i)) for i in args.input],
        "output_asset_id": str(parse_id(AssetId, args.output_asset)),
        "output_kind": RepresentationKind.parse(args.output_kind).value,
        "target_root": args.target_root,
        "parameters": parameters,
        "priority": farm.parse_priority(args.priority),
        "not_before_unix_micros": clocks.to_micros(not_before) if not_before is not None else None,
        "after": [str(parse_id(JobId, j)) for j in dict.fromkeys(args.after)],
        "input_from": bound,
        "max_attempts": parse_int("--max-attempts", args.max_attempts, minimum=1)
        if args.max_attempts is not None
        else None,
    }
    headers = {"Idempotency-Key": args.idempotency_key} if args.idempotency_key is not None else None
    with client(ctx) as service:
        answer = service.request("POST", "/v1/jobs", body=body, headers=headers)
        job = answer.body
        replay = answer.headers.get("Idempotent-Replayed") == "true"
        made = receipt(service, JobId.parse(job["id"]), "job_requested")
    if replay:
        made["revision"] = None  # nothing was committed by this request
    return Result(views.with_receipt(job, made), "job")


def job_show(ctx: Context) -> Result:
    job_id = parse_id(JobId, ctx.args.job)
    with client(ctx) as service:
        return Result(service.request("GET", _job_path(job_id)).body, "job")


def job_list(ctx: Context, state: str | None, limit: int, times: dict[str, Any], sort: str) -> Result:
    """``job list`` through the service (arguments already parsed as the local command does)."""
    params: View = {
        "state": state,
        "kind": ctx.args.kind,
        "search": ctx.args.search,
        "limit": limit,
        "cursor": ctx.args.cursor,
        "sort": sort,
        "descending": "true" if ctx.args.desc else None,
    }
    for name, when in times.items():
        params[f"{name}_unix_micros"] = clocks.to_micros(when) if when is not None else None
    with client(ctx) as service:
        return Result(service.request("GET", "/v1/jobs", params=params).body, "page:job")


def job_cancel(ctx: Context, job_ids: list[JobId]) -> Result:
    """``job cancel`` through the service: one request per job (see the module docstring)."""
    with client(ctx) as service:
        jobs = [service.request("POST", _job_path(job_id, "/cancel")).body for job_id in job_ids]
        made = receipt(service, job_ids[-1], "job_cancelled")
    if len(ctx.args.job) == 1:
        return Result(views.with_receipt(jobs[0], made), "job")
    return Result({"jobs": jobs, "commit_receipt": made}, "jobs")


def job_retry(ctx: Context) -> Result:
    job_id = parse_id(JobId, ctx.args.job)
    with client(ctx) as service:
        job = service.request("POST", _job_path(job_id, "/retry")).body
        made = receipt(service, JobId.parse(job["id"]), "job_requested")
    return Result(views.with_receipt(job, made), "job")


# --- the feed ------------------------------------------------------------------------------


def follow(ctx: Context, start: int | None, kinds: list[str] | None) -> None:
    """``revisions follow`` through the service's event stream, resumed after the last
    revision printed whenever the stream or the service goes away (no gap, no duplicate)."""
    wanted = frozenset(event_kind(k) for k in kinds) if kinds else None
    outage = Outage("service", say=lambda level, text, action: ctx.out.note(f"postproject: {text}"))
    backoff, never = Backoff(), threading.Event()
    with client(ctx) as service:
        if start is None:  # the newest revision now (a reconnection resumes from there)
            head = retrying(lambda: service.request("GET", "/v1/ready").body, outage)
            start = int(head["latest_sequence"]) if head else 0
        after = start
        while True:
            try:
                with service.stream("/v1/revisions/stream", params={"since": after}) as lines:
                    outage.answered()
                    backoff.reset()
                    for revision in _events(lines):
                        sequence = int(revision["sequence"])
                        if sequence <= after:
                            continue
                        after = sequence
                        if wanted is None or any(e.get("kind") in wanted for e in revision.get("events", [])):
                            ctx.out.line(Result(revision, "revision"))
            except PostProjectError as exc:
                if not transient(exc):
                    raise
                outage.failed(exc)
                never.wait(backoff.next(exc.retry_after if isinstance(exc, ServiceUnavailable) else None))
                continue
            never.wait(backoff.next())  # the service ended the stream (a shutdown): reconnect


def _events(lines: Iterator[str]) -> Iterator[View]:
    """The ``revision`` events of a Server-Sent Events stream, as their JSON documents."""
    kind: str | None = None
    data: list[str] = []
    for line in lines:
        if not line:
            if kind == "revision" and data:
                document = json.loads("\n".join(data))
                if isinstance(document, dict):
                    yield document
            kind, data = None, []
        elif line.startswith(":"):
            continue
        else:
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "event":
                kind = value
            elif name == "data":
                data.append(value)
