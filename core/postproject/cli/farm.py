"""The farm layer on the command line: workers, retries, requeue, loss sweeps and priority.

``job retry``, ``job requeue``, ``job sweep`` and ``job priority`` join the ``job`` group;
``worker list`` and ``worker show`` join ``worker run`` in the ``worker`` group.
"""

from __future__ import annotations

import argparse
import re
from typing import Any

from postproject import views
from postproject.cli import remote
from postproject.cli.common import Context, Parser, command, commit, edit, group, parse_id, parse_int
from postproject.cli.output import Result
from postproject.locations import is_service_url
from postproject.model.errors import ConflictError, InvalidArgumentError, NotFoundError
from postproject.model.ids import JobId
from postproject.production import Production


def job_retry(ctx: Context) -> Result:
    if is_service_url(ctx.args.production):
        return remote.job_retry(ctx)
    job_id = parse_id(JobId, ctx.args.job)
    production = ctx.open(ctx.args.production, write=True)
    with edit(production, "Request job again") as tx:
        new_id = tx.request_again(job_id)
        receipt = commit(tx)
    return Result(views.with_receipt(views.job_view(production.job(new_id)), receipt), "job")


def job_requeue(ctx: Context) -> Result:
    job_id = parse_id(JobId, ctx.args.job)
    production = ctx.open(ctx.args.production, write=True)
    with edit(production, "Requeue job") as tx:
        tx.requeue_job(job_id)
        receipt = commit(tx)
    return Result(views.with_receipt(views.job_view(production.job(job_id)), receipt), "job")


def job_sweep(ctx: Context) -> Result:
    limit = parse_int("--limit", ctx.args.limit, minimum=1)
    production = ctx.open(ctx.args.production, write=True)
    with edit(production, "Finalize lost work") as tx:
        finalized = tx.finalize_lost(limit)
        receipt = commit(tx)
    return Result({"finalized": finalized, "commit_receipt": receipt}, "sweep")


def parse_priority(text: str) -> int:
    """A priority from -1000 to 1000 in ASCII digits (``-5``, ``+10``, ``0``)."""
    if not re.fullmatch(r"[+-]?[0-9]{1,4}", text):
        raise InvalidArgumentError(f"priority must be a whole number from -1000 to 1000; got {text[:40]!r}")
    value = int(text)
    if not -1000 <= value <= 1000:
        raise InvalidArgumentError(f"priority must be from -1000 to 1000; got {value}")
    return value


def job_priority(ctx: Context) -> Result:
    job_id = parse_id(JobId, ctx.args.job)
    priority = parse_priority(ctx.args.priority)
    production = ctx.open(ctx.args.production, write=True)
    with edit(production, "Change job priority") as tx:
        tx.set_job_priority(job_id, priority)
        receipt = commit(tx)
    return Result(views.with_receipt(views.job_view(production.job(job_id)), receipt), "job")


def worker_list(ctx: Context) -> Result:
    workers = ctx.open(ctx.args.production).workers()
    return Result({"items": [views.worker_view(w) for w in workers], "next_cursor": None}, "page:worker")


def worker_show(ctx: Context) -> Result:
    production = ctx.open(ctx.args.production)
    found = [w for w in production.workers() if w.name == ctx.args.name]
    if not found:
        raise NotFoundError(f"worker {ctx.args.name!r} is not registered")
    limit = parse_int("--limit", ctx.args.limit, minimum=1)
    attempts = production.worker_attempts(found[0].name, limit)
    view = views.worker_view(found[0]) | {
        "attempts_list": [views.attempt_view(a) | {"job_id": str(job)} for job, a in attempts]
    }
    return Result(view, "worker")


def clock_reset(ctx: Context) -> Result:
    production = ctx.open(ctx.args.production, write=True)
    if not ctx.args.yes:
        _confirm_reset(ctx, production)
    with edit(production, "Reset the job clock") as tx:
        reset = tx.reset_clock()
        receipt = commit(tx)
    data = {
        "old_mark_unix_micros": views.micros(reset.old_mark),
        "new_mark_unix_micros": views.micros(reset.new_mark),
        "fenced": [str(j) for j in reset.fenced],
        "commit_receipt": receipt,
    }
    return Result(data, "object")


def _confirm_reset(ctx: Context, production: Production) -> None:
    """List what a reset would do (the mark, now: the server's on PostgreSQL, and each lease it
    would fence) and ask on stdin; anything but yes (or no answer) resets nothing."""
    with production.edit() as tx:  # the reset itself, rolled back: exactly what it would fence
        preview = tx.reset_clock()
        tx.rollback()
    old = preview.old_mark.isoformat() if preview.old_mark is not None else "none"
    lines = [f"clock reset: the mark {old} would become {preview.new_mark.isoformat()} (now)"]
    if preview.fenced:
        lines.append(f"{len(preview.fenced)} lease(s) granted under the future clock would be fenced:")
        for job_id in preview.fenced:
            claim = production.job(job_id).claim
            holder = (
                ""
                if claim is None
                else (
                    f" held by {claim.worker or claim.agent or claim.tool.name}, claimed {claim.claimed_at.isoformat()}"
                )
            )
            lines.append(f"  job {job_id}{holder}")
    else:
        lines.append("no lease would be fenced")
    ctx.out.note("\n".join(lines) + "\nreset? [y/N] ")
    answer = ctx.stdin.readline().decode("utf-8", "replace").strip().lower()
    if answer not in ("y", "yes"):
        raise ConflictError("clock reset not done: it was not confirmed (answer 'y', or give --yes)")


def register_clock(sub: argparse._SubParsersAction[Parser]) -> None:
    clock = group(sub, "clock", "the job clock's durable high-water mark")
    p = command(
        clock,
        "reset",
        "lower the clock's high-water mark to now (after a host ran with a clock far ahead); "
        "fences the leases granted under the future clock (listed first, then asked)",
        clock_reset,
    )
    p.add_argument("--yes", action="store_true", help="reset without asking (scripts)")


def register_job_commands(jobs: argparse._SubParsersAction[Parser]) -> None:
    p = command(jobs, "retry", "request a failed or cancelled job again (a new, linked job)", job_retry)
    p.add_argument("job", metavar="JOB", help="job id")
    remote.token_option(p)
    p = command(jobs, "requeue", "return a claimed job to requested (fences its lease)", job_requeue)
    p.add_argument("job", metavar="JOB", help="job id")
    p = command(jobs, "sweep", "finalize lost work: end expired, unrenewed claims", job_sweep)
    p.add_argument("--limit", default="100", metavar="N", help="claims to finalize at most, 1-1000")
    p = command(
        jobs, "priority", "change a requested job's priority (-1000..1000, higher first)", job_priority
    )
    p.add_argument("job", metavar="JOB", help="job id")
    p.add_argument("priority", metavar="N", help="the new priority")


def register_worker_commands(workers: argparse._SubParsersAction[Any]) -> None:
    command(workers, "list", "list registered workers with liveness, load and outcomes", worker_list)
    p = command(workers, "show", "show one worker and its newest attempts", worker_show)
    p.add_argument("name", metavar="NAME", help="the worker's registered name")
    p.add_argument("--limit", default="20", metavar="N", help="attempts to list, newest first (default 20)")
