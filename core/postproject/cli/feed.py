"""The revision feed: latest, since, wait and follow."""

from __future__ import annotations

import argparse
import functools
import logging
import os
import sys
from collections.abc import Callable
from typing import TypeVar

from postproject import views
from postproject.cli import remote
from postproject.cli.common import Context, Parser, command, group, parse_int
from postproject.cli.durations import parse_timeout
from postproject.cli.output import Result
from postproject.executor.access import is_service_url
from postproject.executor.recovery import Outage, retrying
from postproject.model.revisions import Changes
from postproject.production import Production

FOLLOW_WAIT_SECONDS = 60.0
T = TypeVar("T")


def revisions_latest(ctx: Context) -> Result:
    production = ctx.open(ctx.args.production)
    latest = production.latest_revision()
    return Result({"revision": views.revision_view(latest) if latest else None}, "revision")


def revisions_since(ctx: Context) -> Result:
    args = ctx.args
    sequence = parse_int("SEQ", args.sequence)
    limit = parse_int("--limit", args.limit)
    changes = ctx.open(args.production).changes_since(sequence, limit, args.kind or None)
    data = {
        "revisions": [views.revision_view(r) for r in changes],
        "through_sequence": changes.through_sequence,
    }
    return Result(data, "revisions")


def revisions_wait(ctx: Context) -> Result:
    args = ctx.args
    sequence = parse_int("SEQ", args.sequence)
    timeout = parse_timeout(args.timeout)
    limit = parse_int("--limit", args.limit)
    changes = ctx.open(args.production).wait_for_changes(
        sequence, timeout, limit=limit, kinds=args.kind or None
    )
    data = {
        "result": "revisions" if changes else "timed_out",
        "revisions": [views.revision_view(r) for r in changes],
    }
    return Result(data, "revisions")


def revisions_follow(ctx: Context) -> None:
    """Stream one line per revision until interrupted (Ctrl-C or a closed pipe exit 0).

    A database (or service) that goes away is waited out under the executor's recovery
    policy: "database unreachable, retrying" once on stderr, once more when it answers, and
    the feed resumes after the last revision printed (no gap, no duplicate)."""
    args = ctx.args
    start = parse_int("--from", args.start) if args.start is not None else None
    kinds = args.kind or None
    try:
        if is_service_url(args.production):
            remote.follow(ctx, start, kinds)
            return
        outage = Outage("database", say=lambda level, text, action: ctx.out.note(f"postproject: {text}"))
        driver = logging.getLogger("psycopg")  # its per-attempt warnings repeat the line above
        driver.setLevel(max(driver.getEffectiveLevel(), logging.ERROR))
        production = _patiently(outage, lambda: ctx.open(args.production))
        if start is None:
            start = _patiently(outage, production.latest_sequence)
        after = start
        _patiently(outage, lambda: production.changes_since(after, 1, kinds))  # validates the kinds first
        while True:
            changes = _patiently(outage, functools.partial(_wait, production, after, kinds))
            for revision in changes:
                ctx.out.line(Result(views.revision_view(revision), "revision"))
            after = max(after, changes.through_sequence)
    except KeyboardInterrupt:
        return
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _wait(production: Production, after: int, kinds: list[str] | None) -> Changes:
    return production.wait_for_changes(after, FOLLOW_WAIT_SECONDS, kinds=kinds)


def _patiently(outage: Outage, action: Callable[[], T]) -> T:
    """``action``'s result, waiting out an unreachable or busy database without limit."""
    result = retrying(action, outage)
    assert result is not None  # no stop event: only a result or an error ends the retries
    return result


def register(sub: argparse._SubParsersAction[Parser]) -> None:
    revs = group(sub, "revisions", "read and follow the revision feed")
    command(revs, "latest", "show the newest revision (null before the first change)", revisions_latest)
    p = command(revs, "since", "list revisions after a sequence, oldest first", revisions_since)
    p.add_argument("sequence", metavar="SEQ", help="sequence to read after (0 for the beginning)")
    p.add_argument(
        "--kind", action="append", metavar="K", help="only revisions with an event of this kind (repeatable)"
    )
    p.add_argument("--limit", default="100", metavar="N", help="at most N revisions, 1-1000 (default 100)")
    p = command(revs, "wait", "wait for revisions after a sequence (or time out)", revisions_wait)
    p.add_argument("sequence", metavar="SEQ", help="sequence to wait after")
    p.add_argument("--timeout", default="60s", metavar="DUR", help="0s (check once) to 60s (default 60s)")
    p.add_argument(
        "--kind", action="append", metavar="K", help="only revisions with an event of this kind (repeatable)"
    )
    p.add_argument("--limit", default="100", metavar="N", help="at most N revisions, 1-1000 (default 100)")
    p = command(revs, "follow", "stream one line per new revision until interrupted", revisions_follow)
    remote.token_option(p)
    p.add_argument(
        "--from", dest="start", metavar="SEQ", help="start after this sequence (default: the newest)"
    )
    p.add_argument(
        "--kind", action="append", metavar="K", help="only revisions with an event of this kind (repeatable)"
    )
