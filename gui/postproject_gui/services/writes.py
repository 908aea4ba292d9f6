"""Edits the service runs on its writer thread: one transaction each, all or nothing.

A failure inside ``with production.edit()`` leaves the block without ``commit()``, so the
transaction rolls back and nothing half-done is published.
"""

from __future__ import annotations

from collections.abc import Sequence

from postproject import (
    ConflictError,
    JobId,
    JobRef,
    JobRequest,
    Production,
    Reason,
    RegenerationPlan,
    __version__,
)
from postproject_gui.services.types import CancelOutcome, EnqueueOutcome, RequestSpec

ORIGIN = f"postproject-monitor {__version__}"


def request_job(production: Production, spec: RequestSpec) -> tuple[JobId, int | None]:
    """Request one job with its parameters; (job id, revision sequence)."""
    request = JobRequest(
        spec.kind, list(spec.inputs), spec.output_asset_id, spec.output_kind, spec.target_root
    )
    with production.edit(origin=ORIGIN, message="Request job") as tx:
        job_id = tx.request_job(request)
        for prop, value in spec.parameters:
            tx.add_metadata(JobRef(job_id), prop, value)
        receipt = tx.commit()
    return job_id, receipt.revision.sequence if receipt.revision else None


def cancel_jobs(production: Production, ids: Sequence[JobId]) -> CancelOutcome:
    """Cancel jobs in one transaction.

    A job that finished meanwhile (cancel is a conflict) is skipped and reported; any other
    error rolls the whole transaction back and propagates.
    """
    cancelled: list[JobId] = []
    skipped: list[tuple[JobId, str]] = []
    noun = "job" if len(ids) == 1 else "jobs"
    with production.edit(origin=ORIGIN, message=f"Cancel {len(ids)} {noun}") as tx:
        for job_id in ids:
            try:
                tx.cancel_job(job_id)
            except ConflictError as exc:
                if exc.reason is not Reason.JOB_FINISHED:  # lease or clock conflicts are real failures
                    raise
                skipped.append((job_id, exc.message))
            else:
                cancelled.append(job_id)
        receipt = tx.commit()
    revision = receipt.revision.sequence if receipt.revision else None
    return CancelOutcome(tuple(cancelled), tuple(skipped), revision)


def enqueue_plans(production: Production, plans: Sequence[RegenerationPlan]) -> EnqueueOutcome:
    """Request every plan's job with its parameters (``enqueue_plan``) in one transaction:
    all of them or, on any failure, none."""
    noun = "artifact" if len(plans) == 1 else "artifacts"
    with production.edit(origin=ORIGIN, message=f"Regenerate {len(plans)} {noun}") as tx:
        job_ids = tuple(tx.enqueue_plan(plan) for plan in plans)
        receipt = tx.commit()
    return EnqueueOutcome(job_ids, receipt.revision.sequence if receipt.revision else None)
