"""Lease commands: claim, renew, release, complete and fail.

The lease token travels only through ``--lease-token-file FILE`` (``-`` reads stdin when
using a lease); see :mod:`postproject.cli.tokens` for the file rules. Tokens are read and
checked before the production is opened.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from postproject import views
from postproject.base.leases import JobLease
from postproject.cli.common import Context, Parser, command, commit, edit, parse_id
from postproject.cli.durations import parse_lease
from postproject.cli.output import Result
from postproject.cli.tokens import ReservedTokenFile, read_token
from postproject.model.activities import ActivitySpec
from postproject.model.errors import ConflictError, InvalidArgumentError, NotFoundError, Reason
from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.model.ids import JobId
from postproject.model.jobs import Job
from postproject.model.jobs import diagnostic as check_diagnostic
from postproject.production import Production

DEFAULT_LEASE = "60s"


def _job_result(production: Production, job_id: JobId, receipt: views.View) -> Result:
    return Result(views.with_receipt(views.job_view(production.job(job_id)), receipt), "job")


def job_claim(ctx: Context) -> Result:
    args = ctx.args
    job_id = parse_id(JobId, args.job)
    duration = parse_lease(args.lease)
    tool = ToolIdentity(args.tool_name, args.tool_version, args.tool_uri)
    agent = AgentIdentity(args.agent_name) if args.agent_name is not None else None
    if args.lease_token_file == "-":
        raise InvalidArgumentError("job claim writes the lease token to a new file; '-' is not allowed here")
    production = ctx.open(args.production, write=True)
    with ReservedTokenFile(Path(args.lease_token_file)) as reserved:
        with edit(production, "Claim job") as tx:
            lease = tx.claim_job_lease(job_id, tool, duration, agent)
            receipt = commit(tx)
        with lease:
            reserved.deliver(lease.export_token(), receipt)
    return _job_result(production, job_id, receipt)


def _leased(ctx: Context) -> tuple[Production, JobId, JobLease]:
    """Read and check the token (before opening anything), then open and import it."""
    job_id = parse_id(JobId, ctx.args.job)
    token = read_token(ctx.args.lease_token_file, ctx.stdin, job_id)
    production = ctx.open(ctx.args.production, write=True)
    return production, job_id, JobLease.import_token(production, token)


def job_renew(ctx: Context) -> Result:
    duration = parse_lease(ctx.args.lease)
    production, job_id, lease = _leased(ctx)
    with lease, edit(production, "Renew job claim") as tx:
        tx.renew_job_lease(lease, duration)
        receipt = commit(tx)
    return _job_result(production, job_id, receipt)


def job_release(ctx: Context) -> Result:
    production, job_id, lease = _leased(ctx)
    with lease, edit(production, "Release job claim") as tx:
        tx.release_job_lease(lease)
        receipt = commit(tx)
    return _job_result(production, job_id, receipt)


def job_fail(ctx: Context) -> Result:
    diagnostic = check_diagnostic(ctx.args.diagnostic)
    production, job_id, lease = _leased(ctx)
    with lease, edit(production, "Fail job") as tx:
        tx.fail_job_lease(lease, diagnostic, retry=ctx.args.retry)
        receipt = commit(tx)
    return _job_result(production, job_id, receipt)


def _output_root(production: Production, job: Job, path: Path) -> str | None:
    """The job's target root when the output file lies under that root's directory here."""
    if job.target_root is None:
        return None
    try:
        base = production.root_path(job.target_root)
    except NotFoundError:
        return None
    if base is None:
        return None
    try:
        path.resolve().relative_to(base.resolve())
    except ValueError:
        return None
    return job.target_root


def job_complete(ctx: Context) -> Result:
    output = Path(ctx.args.output_file)
    job_id = parse_id(JobId, ctx.args.job)
    token = read_token(ctx.args.lease_token_file, ctx.stdin, job_id)
    production = ctx.open(ctx.args.production, write=True)
    try:
        lease = JobLease.import_token(production, token)
    except ConflictError as exc:
        if not _replayed(production, token, output):
            raise exc from None
        return Result(views.job_view(production.job(job_id)) | {"replayed": True}, "job")
    job = production.job(job_id)
    if job.claim is None:
        raise ConflictError(f"job {job_id} is {job.state.value}, not claimed", reason=Reason.LEASE_LOST)
    root = _output_root(production, job, output)
    with lease, edit(production, "Complete job") as tx:
        rep_id = tx.add_representation(
            job.output_asset_id, job.output_representation_kind, output.resolve(), root=root
        )
        spec = ActivitySpec(
            job.kind,
            inputs=job.inputs,
            outputs=(rep_id,),
            tool=job.claim.tool,
            agent=job.claim.agent,
            finished_at=production.clock.now(),
        )
        activity_id = tx.create_activity(spec)
        tx.complete_job_lease(lease, rep_id, activity_id)
        receipt = commit(tx)
    return _job_result(production, job_id, receipt)


def _replayed(production: Production, token: str, output: Path) -> bool:
    """Did this token's claim already complete the job with this very output file (a
    completion repeated after a lost response)?"""
    rep_id = JobLease.replayed_completion(production, token)
    if rep_id is None:
        return False
    path = production.resolve(production.representation(rep_id))
    return path is not None and os.path.abspath(path) == os.path.abspath(output.resolve())


def _token_argument(parser: Parser, *, claim: bool) -> None:
    if claim:
        about = "new file to receive the lease token (created with mode 0600; never overwritten)"
    else:
        about = "file holding the lease token, or - to read it from stdin"
    parser.add_argument("--lease-token-file", required=True, metavar="FILE", help=about)


def register(jobs: argparse._SubParsersAction[Parser]) -> None:
    p = command(jobs, "claim", "claim a job for a while; the lease token goes to a new file", job_claim)
    p.add_argument("job", metavar="JOB", help="job id")
    p.add_argument("--tool-name", required=True, metavar="N", help="the tool that will do the work")
    p.add_argument("--tool-version", metavar="V", help="its version")
    p.add_argument("--tool-uri", metavar="U", help="its absolute URI")
    p.add_argument("--agent-name", metavar="A", help="who runs it (person, host or service)")
    p.add_argument(
        "--lease", default=DEFAULT_LEASE, metavar="DUR", help="lease duration, 1us-24h (default 60s)"
    )
    _token_argument(p, claim=True)
    p = command(jobs, "renew", "extend the lease on a claimed job", job_renew)
    p.add_argument("job", metavar="JOB", help="job id")
    p.add_argument("--lease", default=DEFAULT_LEASE, metavar="DUR", help="new lease from now (default 60s)")
    _token_argument(p, claim=False)
    p = command(jobs, "release", "give a claimed job back (it returns to requested)", job_release)
    p.add_argument("job", metavar="JOB", help="job id")
    _token_argument(p, claim=False)
    p = command(
        jobs,
        "complete",
        "record the output file and its activity and mark the job succeeded, in one transaction",
        job_complete,
    )
    p.add_argument("job", metavar="JOB", help="job id")
    p.add_argument("output_file", metavar="OUTPUT_FILE", help="the finished output file")
    _token_argument(p, claim=False)
    p = command(jobs, "fail", "mark a claimed job failed with a diagnostic", job_fail)
    p.add_argument("job", metavar="JOB", help="job id")
    p.add_argument("diagnostic", metavar="DIAGNOSTIC", help="what went wrong (1-4096 bytes)")
    p.add_argument(
        "--retry",
        action="store_true",
        help="a retryable failure: back to requested while the job has attempts left",
    )
    _token_argument(p, claim=False)
