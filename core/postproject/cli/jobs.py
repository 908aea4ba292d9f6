"""Job commands that need no lease: request, show, list, counts and cancel (and the ``job`` parser)."""

from __future__ import annotations

import argparse
from datetime import datetime, timedelta

from postproject import views
from postproject.areas import search as job_search
from postproject.cli import artifacts, farm, job_leases, job_logs, remote
from postproject.cli.common import (
    Context,
    Parser,
    add_limit,
    choice,
    command,
    commit,
    edit,
    group,
    parse_id,
    parse_int,
)
from postproject.cli.output import Result
from postproject.cli.setup import parse_value
from postproject.executor.access import is_service_url
from postproject.humanize import parse_duration
from postproject.model import clock as clocks
from postproject.model.assets import RepresentationKind
from postproject.model.errors import InvalidArgumentError
from postproject.model.ids import AssetId, JobId, RepresentationId
from postproject.model.jobs import JobOutput, JobRequest
from postproject.model.lifecycle import JobState
from postproject.model.metadata import EXECUTOR_VOCABULARY, Property
from postproject.model.refs import JobRef
from postproject.model.values import MetadataValue, StringValue

STATES = tuple(s.value for s in JobState)


def _parameters(args: argparse.Namespace) -> list[tuple[Property, MetadataValue]]:
    params = [(Property(vocabulary, name), parse_value(value)) for vocabulary, name, value in args.param]
    if args.profile is not None:
        params.append((Property(EXECUTOR_VOCABULARY, "profile"), StringValue(args.profile)))
    return params


def parse_when(field: str, text: str, now: datetime) -> datetime:
    """An aware time: ISO 8601 with a UTC offset (``Z`` allowed), or ``+DURATION`` from ``now``."""
    if text.startswith("+"):
        return now + parse_duration(text[1:], field=field, minimum=timedelta(0), maximum=timedelta(days=3650))
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidArgumentError(
            f"{field} must be an ISO 8601 time or +DURATION; got {text[:60]!r}"
        ) from None
    if when.tzinfo is None:
        raise InvalidArgumentError(
            f"{field} needs a UTC offset (e.g. 2026-12-01T18:00:00Z); got {text[:60]!r}"
        )
    return when


def job_request(ctx: Context) -> Result:
    args = ctx.args
    if is_service_url(args.production):
        now = (ctx.clock or clocks.SystemClock()).now()
        return remote.job_request(ctx, lambda field, text: parse_when(field, text, now))
    bound = [JobOutput(parse_id(JobId, j)) for j in dict.fromkeys(args.input_from)]
    request = JobRequest(
        args.kind,
        (*(parse_id(RepresentationId, i) for i in args.input), *bound),
        parse_id(AssetId, args.output_asset),
        RepresentationKind.parse(args.output_kind),
        args.target_root,
        priority=farm.parse_priority(args.priority),
        not_before=parse_when("--not-before", args.not_before, (ctx.clock or clocks.SystemClock()).now())
        if args.not_before is not None
        else None,
        max_attempts=parse_int("--max-attempts", args.max_attempts, minimum=1)
        if args.max_attempts is not None
        else None,
        idempotency_key=args.idempotency_key,
        after=tuple(parse_id(JobId, j) for j in dict.fromkeys(args.after)),
    )
    params = _parameters(args)
    production = ctx.open(args.production, write=True)
    with edit(production, "Request job") as tx:
        job_id = tx.request_job(request)
        for prop, value in params:
            tx.add_metadata(JobRef(job_id), prop, value)
        receipt = commit(tx)
    return Result(views.with_receipt(views.job_view(production.job(job_id)), receipt), "job")


def job_show(ctx: Context) -> Result:
    if is_service_url(ctx.args.production):
        return remote.job_show(ctx)
    job_id = parse_id(JobId, ctx.args.job)
    return Result(views.job_view(ctx.open(ctx.args.production).job(job_id)), "job")


def job_why(ctx: Context) -> Result:
    job_id = parse_id(JobId, ctx.args.job)
    return Result(views.pending_view(ctx.open(ctx.args.production).explain_pending(job_id)), "why")


def job_list(ctx: Context) -> Result:
    args = ctx.args
    state = JobState(choice("--state", args.state, STATES)) if args.state is not None else None
    limit = parse_int("--limit", args.limit)
    now = (ctx.clock or clocks.SystemClock()).now()
    times = {
        name: parse_when(f"--{name.replace('_', '-')}", text, now) if text is not None else None
        for name, text in (
            ("requested_after", args.requested_after),
            ("requested_before", args.requested_before),
            ("finished_after", args.finished_after),
            ("finished_before", args.finished_before),
        )
    }
    sort = choice("--sort", args.sort, job_search.SORTS)
    if is_service_url(args.production):
        return remote.job_list(ctx, state.value if state is not None else None, limit, times, sort)
    page = ctx.open(args.production).jobs(
        limit=limit,
        cursor=args.cursor,
        state=state,
        kind=args.kind,
        search=args.search,
        sort=sort,
        descending=args.desc,
        requested_after=times["requested_after"],
        requested_before=times["requested_before"],
        finished_after=times["finished_after"],
        finished_before=times["finished_before"],
    )
    return Result(views.paged(page, views.job_view), "page:job")


def job_failures(ctx: Context) -> Result:
    limit = parse_int("--limit", ctx.args.limit)
    groups = ctx.open(ctx.args.production).failure_groups(ctx.args.kind, limit=limit)
    return Result(
        {"kind": ctx.args.kind, "groups": [views.failure_group_view(g) for g in groups]}, "failures"
    )


def job_counts(ctx: Context) -> Result:
    counts = ctx.open(ctx.args.production).job_counts(ctx.args.kind)
    by_state = {state.value: counts[state] for state in JobState}
    return Result({"kind": ctx.args.kind, "counts": by_state, "total": sum(by_state.values())})


def job_cancel(ctx: Context) -> Result:
    job_ids = list(dict.fromkeys(parse_id(JobId, j) for j in ctx.args.job))
    if is_service_url(ctx.args.production):
        return remote.job_cancel(ctx, job_ids)
    production = ctx.open(ctx.args.production, write=True)
    with edit(production, "Cancel job" if len(job_ids) == 1 else "Cancel jobs") as tx:
        for job_id in job_ids:
            tx.cancel_job(job_id)
        receipt = commit(tx)
    jobs = [views.job_view(production.job(j)) for j in job_ids]
    if len(ctx.args.job) == 1:
        return Result(views.with_receipt(jobs[0], receipt), "job")
    return Result({"jobs": jobs, "commit_receipt": receipt}, "jobs")


def register(sub: argparse._SubParsersAction[Parser]) -> None:
    jobs = group(sub, "job", "request, claim, complete and inspect jobs")
    p = command(jobs, "request", "request work; prints the new job", job_request)
    remote.token_option(p)
    p.add_argument("kind", metavar="KIND", help="namespaced job kind, e.g. org.example:generate-proxy")
    p.add_argument("output_asset", metavar="OUTPUT_ASSET", help="asset the output will represent")
    p.add_argument("output_kind", metavar="OUTPUT_KIND", help="original, proxy, optimized or derived")
    p.add_argument(
        "--input", action="append", default=[], metavar="REP", help="an input representation (repeatable)"
    )
    p.add_argument("--target-root", metavar="NAME", help="the configured media root the output should go to")
    p.add_argument(
        "--param",
        nargs=3,
        action="append",
        default=[],
        metavar=("VOCABULARY", "PROPERTY", "VALUE_JSON"),
        help="a typed parameter on the job (repeatable)",
    )
    p.add_argument("--profile", metavar="P", help="shorthand for the executor profile parameter")
    p.add_argument(
        "--priority", default="0", metavar="N", help="-1000..1000, higher is claimed first (default 0)"
    )
    p.add_argument(
        "--not-before",
        metavar="WHEN",
        help="not claimable before this time (ISO 8601 with a UTC offset, or +DURATION from now, e.g. +10m)",
    )
    p.add_argument("--max-attempts", metavar="N", help="claims allowed before lost or retried work fails it")
    p.add_argument(
        "--idempotency-key",
        metavar="KEY",
        help="repeating an equivalent request with this key returns the original job",
    )
    p.add_argument(
        "--after",
        action="append",
        default=[],
        metavar="JOB",
        help="claimable only once this job has succeeded (repeatable)",
    )
    p.add_argument(
        "--input-from",
        action="append",
        default=[],
        metavar="JOB",
        help="an input bound to this job's output, resolved when the new job is claimed (repeatable; implies --after)",
    )
    p = command(jobs, "show", "show one job", job_show)
    remote.token_option(p)
    p.add_argument("job", metavar="JOB", help="job id")
    p = command(
        jobs,
        "why",
        "explain why a job is still requested (dependencies, not-before, workers, queue)",
        job_why,
    )
    p.add_argument("job", metavar="JOB", help="job id")
    p = command(jobs, "list", "list jobs in request order, optionally filtered", job_list)
    remote.token_option(p)
    p.add_argument("--state", metavar="S", help=f"only jobs in this state ({', '.join(STATES)})")
    p.add_argument("--kind", metavar="K", help="only jobs of this kind")
    p.add_argument(
        "--search",
        metavar="TEXT",
        help="only jobs whose kind, output asset, agent, worker, diagnostic or id tail contains every word of TEXT",
    )
    for name, what in (("requested", "requested"), ("finished", "finished (succeeded, failed or cancelled)")):
        p.add_argument(
            f"--{name}-after", metavar="WHEN", help=f"only jobs {what} at or after WHEN (ISO 8601)"
        )
        p.add_argument(f"--{name}-before", metavar="WHEN", help=f"only jobs {what} before WHEN (ISO 8601)")
    p.add_argument(
        "--sort",
        default="requested",
        metavar="COLUMN",
        help=f"order by {', '.join(job_search.SORTS)} (default requested; ties by id)",
    )
    p.add_argument("--desc", action="store_true", help="descending order (newest first for requested)")
    add_limit(p)
    p = command(jobs, "failures", "failed jobs grouped by reason, largest group first", job_failures)
    p.add_argument("--kind", metavar="K", help="only jobs of this kind")
    p.add_argument("--limit", default="50", metavar="N", help="groups to show (default 50)")
    p = command(jobs, "counts", "count jobs in each state", job_counts)
    p.add_argument("--kind", metavar="K", help="only jobs of this kind")
    job_leases.register(jobs)
    p = command(jobs, "cancel", "cancel requested or claimed jobs (no lease token needed)", job_cancel)
    remote.token_option(p)
    p.add_argument("job", metavar="JOB", nargs="+", help="job id (several are cancelled in one transaction)")
    farm.register_job_commands(jobs)
    job_logs.register(jobs)
    artifacts.register_job_commands(jobs)
