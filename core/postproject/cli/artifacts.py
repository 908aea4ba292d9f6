"""Artifact knowledge and regeneration: ``artifact evaluate|stale|reproducibility|provenance|prov``
and ``job plan|enqueue``. Everything is read-only except ``job enqueue``, which plans and
requests the jobs (with their parameters) in one transaction, as one dependency graph: a plan
whose input another plan regenerates takes that job's output.
"""

from __future__ import annotations

import argparse
import json

from postproject import views
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
from postproject.knowledge.regeneration import DownstreamRegeneration, RegenerationPlan
from postproject.model.errors import InvalidArgumentError
from postproject.model.ids import RepresentationId
from postproject.production import Production
from postproject.views import knowledge as kv


def _artifacts(args: argparse.Namespace) -> list[RepresentationId]:
    return [parse_id(RepresentationId, a) for a in args.artifact]


def artifact_evaluate(ctx: Context) -> Result:
    args = ctx.args
    rep_id = parse_id(RepresentationId, args.artifact)
    max_depth = parse_int("--max-depth", args.max_depth)
    max_reps = parse_int("--max-representations", args.max_representations)
    production = ctx.open(args.production)
    knowledge = production.evaluate_artifact(rep_id, max_depth=max_depth, max_representations=max_reps)
    return Result(kv.knowledge_view(knowledge), "knowledge")


def artifact_stale(ctx: Context) -> Result:
    args = ctx.args
    source = parse_id(RepresentationId, args.source) if args.source else None
    limit = parse_int("--limit", args.limit)
    page = ctx.open(args.production).stale_artifacts(
        limit=limit, cursor=args.cursor, source=source, include_superseded=args.include_superseded
    )
    return Result(kv.stale_page_view(page), "page:knowledge")


def artifact_reproducibility(ctx: Context) -> Result:
    rep_id = parse_id(RepresentationId, ctx.args.artifact)
    report = ctx.open(ctx.args.production).reproducibility(rep_id)
    return Result(kv.reproducibility_view(report), "reproducibility")


def artifact_provenance(ctx: Context) -> Result:
    args = ctx.args
    rep_id = parse_id(RepresentationId, args.artifact)
    upstream = parse_int("--upstream", args.upstream)
    downstream = parse_int("--downstream", args.downstream)
    limit = parse_int("--limit", args.limit)
    graph = ctx.open(args.production).provenance(
        rep_id, upstream=upstream, downstream=downstream, limit=limit
    )
    return Result(kv.graph_view(graph), "provenance")


def artifact_prov(ctx: Context) -> Result:
    args = ctx.args
    fmt = choice("--format", args.format, ("json", "provn"))
    artifacts = _artifacts(args) or None
    from postproject.knowledge import prov  # (the prov library: loaded for this command only)

    document = prov.export(ctx.open(args.production), artifacts)
    text = prov.serialize(document, "json" if fmt == "json" else "provn")
    if fmt == "json":
        return Result(json.loads(text), "prov-json")
    return Result({"format": "provn", "document": text}, "prov-text")


def _plan(
    ctx: Context, production: Production
) -> tuple[tuple[RegenerationPlan, ...], DownstreamRegeneration | None]:
    args = ctx.args
    if args.downstream_of is not None:
        found = production.plan_downstream_regeneration(parse_id(RepresentationId, args.downstream_of))
        return found.plans, found
    return production.plan_regeneration(_artifacts(args), current_inputs=args.current_inputs), None


def _check_plan_arguments(args: argparse.Namespace) -> None:
    """Exactly one way of choosing artifacts; ids are checked before anything is opened."""
    if bool(args.artifact) == (args.downstream_of is not None):
        raise InvalidArgumentError("give either --artifact REP (repeatable) or --downstream-of REP")
    _artifacts(args)
    if args.downstream_of is not None:
        parse_id(RepresentationId, args.downstream_of)


def job_plan(ctx: Context) -> Result:
    _check_plan_arguments(ctx.args)
    plans, downstream = _plan(ctx, ctx.open(ctx.args.production))
    return Result(kv.plans_view(plans, downstream), "plans")


def job_enqueue(ctx: Context) -> Result:
    _check_plan_arguments(ctx.args)
    production = ctx.open(ctx.args.production, write=True)
    plans, downstream = _plan(ctx, production)
    with edit(production, "Enqueue regeneration") as tx:
        job_ids = tx.enqueue_plans(plans)
        receipt = commit(tx)
    data = {
        "jobs": [views.job_view(production.job(j)) for j in job_ids],
        "unplannable": kv.plans_view((), downstream)["unplannable"],
        "commit_receipt": receipt,
    }
    return Result(data, "jobs")


def register(sub: argparse._SubParsersAction[Parser]) -> None:
    arts = group(sub, "artifact", "derived knowledge about artifacts: staleness, reproducibility, provenance")
    p = command(
        arts, "evaluate", "evaluate an artifact: current, stale, indeterminate or diverged", artifact_evaluate
    )
    p.add_argument("artifact", metavar="REP", help="representation id")
    p.add_argument(
        "--max-depth", default="64", metavar="N", help="upstream levels to follow, 1-64 (default 64)"
    )
    p.add_argument("--max-representations", default="1000", metavar="N", help="visit at most N, 1-1000")
    p = command(
        arts, "stale", "list stale or diverged artifacts (optionally downstream of a source)", artifact_stale
    )
    p.add_argument("--source", metavar="REP", help="only descendants of this representation")
    p.add_argument(
        "--include-superseded",
        action="store_true",
        help="also list artifacts a regeneration replaced (superseded)",
    )
    add_limit(p)
    p = command(
        arts, "reproducibility", "report what is missing to reproduce an artifact", artifact_reproducibility
    )
    p.add_argument("artifact", metavar="REP", help="representation id")
    p = command(arts, "provenance", "show the provenance graph around an artifact", artifact_provenance)
    p.add_argument("artifact", metavar="REP", help="representation id")
    p.add_argument(
        "--upstream", default="3", metavar="N", help="activity hops towards inputs, 0-64 (default 3)"
    )
    p.add_argument(
        "--downstream", default="3", metavar="N", help="activity hops towards outputs, 0-64 (default 3)"
    )
    p.add_argument("--limit", default="500", metavar="N", help="nodes at most, 1-5000 (default 500)")
    p = command(arts, "prov", "export provenance as W3C PROV (PROV-JSON or PROV-N)", artifact_prov)
    p.add_argument(
        "--format", default="json", metavar="F", help="json (PROV-JSON, default) or provn (PROV-N)"
    )
    p.add_argument(
        "--artifact",
        action="append",
        default=[],
        metavar="REP",
        help="only these artifacts and their lineage",
    )


def _plan_arguments(p: Parser) -> None:
    p.add_argument(
        "--artifact",
        action="append",
        default=[],
        metavar="REP",
        help="an artifact to regenerate (repeatable)",
    )
    p.add_argument(
        "--downstream-of",
        metavar="REP",
        help="every stale or diverged descendant of this source, as one dependency graph",
    )
    p.add_argument(
        "--current-inputs",
        action="store_true",
        help="use the current replacement of each superseded input (always so with --downstream-of)",
    )


def register_job_commands(jobs: argparse._SubParsersAction[Parser]) -> None:
    _plan_arguments(command(jobs, "plan", "propose regeneration jobs for artifacts (read-only)", job_plan))
    _plan_arguments(
        command(jobs, "enqueue", "plan and request regeneration jobs in one transaction", job_enqueue)
    )
