"""``job log`` (an attempt's log, optionally followed while it runs) and ``job progress``.

A running attempt's log is read from its file (under a media root this machine maps: a
recorded path never leads outside its root, and only a regular file is read, at most
:data:`READ_LIMIT` bytes, given up after a few seconds); an ended attempt's from its file when
it is here, else from the tail stored with the attempt (the last 64 KiB). ``--follow`` keeps printing what the worker appends
until the attempt ends (or, when the file is elsewhere, waits and prints the stored tail).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from postproject import views
from postproject.base.files import read_regular
from postproject.cli.common import Context, Parser, command, commit, edit, parse_id, parse_int
from postproject.cli.durations import parse_lease
from postproject.cli.job_leases import _leased, _token_argument
from postproject.cli.output import Result
from postproject.model.errors import InvalidArgumentError, PostProjectError
from postproject.model.ids import JobId
from postproject.model.lifecycle import HISTORY_EVENT_KINDS
from postproject.model.progress import AttemptLog, log_tail
from postproject.production import Production

FOLLOW_POLL = 0.25  # seconds between looks at the file and the attempt
READ_CHUNK = 1 << 20
READ_LIMIT = 16 << 20  # bytes of a log printed at most (its end)


def job_log(ctx: Context) -> Result | None:
    args = ctx.args
    job_id = parse_id(JobId, args.job)
    number = parse_int("--attempt", args.attempt, minimum=1) if args.attempt is not None else None
    production = ctx.open(args.production)
    log = production.attempt_log(job_id, number)  # not_found for a missing job or attempt
    if args.follow:
        log = _follow(ctx, production, job_id, log)
    file = production.log_file(log)
    if ctx.out.json_mode:
        return Result(
            {
                "job_id": str(job_id),
                "attempt": log.attempt,
                "running": _running(production, job_id, log.attempt),
                "root": log.root,
                "path": log.path.as_posix() if log.path is not None else None,
                "file": str(file) if file is not None and file.is_file() else None,
                "tail": log.tail,
                "tail_at_unix_micros": views.micros(log.tail_at),
            },
            "object",
        )
    if not args.follow:
        text = _file_text(ctx, file)
        if text is None and log.path is not None and log.root is None:
            ctx.out.note(
                f"the log path recorded for attempt {log.attempt} ({log.path}) is under no media root; "
                "it is not read"
            )
        if text is None:
            text = log.tail
        if text is None:
            where = (
                f" ({log.path} under root {log.root})" if log.root else f" ({log.path})" if log.path else ""
            )
            ctx.out.note(
                f"attempt {log.attempt} of job {job_id} is running elsewhere; its log is not here{where}"
            )
        else:
            ctx.out.text(text)
    return None


def _running(production: Production, job_id: JobId, number: int) -> bool:
    attempt = next(a for a in production.job(job_id).attempts if a.number == number)
    return attempt.outcome is None or attempt.stopping


def _follow(ctx: Context, production: Production, job_id: JobId, log: AttemptLog) -> AttemptLog:
    """Print the log as it grows until the attempt ends; the log as stored then."""
    head = production.latest_sequence()
    offset = 0
    while True:
        file = production.log_file(production.attempt_log(job_id, log.attempt))
        if not ctx.out.json_mode and file is not None:
            offset = _print_new(ctx, file, offset)
        if not _running(production, job_id, log.attempt):
            break
        changes = production.wait_for_changes(head, FOLLOW_POLL, kinds=sorted(HISTORY_EVENT_KINDS))
        head = max(head, changes.through_sequence)
    log = production.attempt_log(job_id, log.attempt)
    file = production.log_file(log)
    if not ctx.out.json_mode:
        if file is not None and file.is_file():
            _print_new(ctx, file, offset)
        elif offset == 0 and log.tail is not None:
            ctx.out.text(log.tail)
    return log


def _print_new(ctx: Context, file: Path, offset: int) -> int:
    """Print what the file holds after ``offset`` (whole lines); the new offset."""
    try:
        data, _ = read_regular(file, READ_CHUNK, offset=offset)
    except PostProjectError:
        return offset
    cut = data.rfind(b"\n") + 1
    if cut:
        ctx.out.text(data[:cut].decode("utf-8", "replace"))
    return offset + cut


def _file_text(ctx: Context, file: Path | None) -> str | None:
    """The log file's text (its last :data:`READ_LIMIT` bytes), or None when it cannot be read
    here (missing: silently; not a regular file, too slow: with a note)."""
    if file is None or not file.exists():
        return None
    try:
        data, size = read_regular(file, READ_LIMIT)
    except PostProjectError as exc:
        ctx.out.note(f"postproject: {exc.message}")
        return None
    if size > READ_LIMIT:
        ctx.out.note(f"(the last {READ_LIMIT} of {size} bytes)")
        return log_tail(data, READ_LIMIT)
    return data.decode("utf-8", "replace")


def job_progress(ctx: Context) -> Result:
    args = ctx.args
    fraction = _fraction(args.fraction) if args.fraction is not None else None
    renew = parse_lease(args.renew) if args.renew is not None else None
    production, job_id, lease = _leased(ctx)
    with lease, edit(production, "Renew job claim") as tx:
        signalled = tx.report_progress(
            lease, fraction=fraction, stage=args.stage, message=args.message, renew=renew
        )
        receipt = commit(tx)
    view = views.with_receipt(views.job_view(production.job(job_id)), receipt)
    return Result(view | {"signalled": signalled}, "job")


def _fraction(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise InvalidArgumentError(f"--fraction must be a number from 0 to 1; got {text[:40]!r}") from None


def register(jobs: argparse._SubParsersAction[Parser]) -> None:
    p = command(jobs, "log", "show an attempt's log (--follow: as it grows, until the attempt ends)", job_log)
    p.add_argument("job", metavar="JOB", help="job id")
    p.add_argument("--attempt", metavar="N", help="which attempt (default: the newest)")
    p.add_argument("--follow", action="store_true", help="keep printing while the attempt runs")
    p = command(
        jobs, "progress", "report a claimed job's progress (stored state, not a revision)", job_progress
    )
    p.add_argument("job", metavar="JOB", help="job id")
    p.add_argument("--fraction", metavar="F", help="work done, 0 to 1")
    p.add_argument("--stage", metavar="S", help="the stage, e.g. decode, encode, publish (1-1024 bytes)")
    p.add_argument("--message", metavar="M", help="a short message (1-1024 bytes)")
    p.add_argument("--renew", metavar="DUR", help="also renew the lease to now + DUR")
    _token_argument(p, claim=False)
