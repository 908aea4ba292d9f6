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
    NotFoundError,
    Production,
    Reason,
    RegenerationPlan,
    RepresentationId,
    __version__,
)
from postproject_gui.services.types import (
    CancelOutcome,
    EnqueueOutcome,
    FarmOutcome,
    ObserveOutcome,
    RequestSpec,
)

ORIGIN = f"postproject-monitor {__version__}"


def request_job(production: Production, spec: RequestSpec) -> tuple[JobId, int | None]:
    """Request one job with its parameters; (job id, revision sequence). A replay of a
    request with the same idempotency key returns the original job and revision None."""
    request = JobRequest(
        spec.kind,
        list(spec.inputs),
        spec.output_asset_id,
        spec.output_kind,
        spec.target_root,
        priority=spec.priority,
        not_before=spec.not_before,
        max_attempts=spec.max_attempts,
        idempotency_key=spec.idempotency_key,
    )
    with production.edit(origin=ORIGIN, message="Request job") as tx:
        job_id = tx.request_job(request)
        if spec.idempotency_key is not None and _committed(production, job_id):
            return job_id, None  # a replay of a keyed request: the original job; nothing new
        for prop, value in spec.parameters:
            tx.add_metadata(JobRef(job_id), prop, value)
        receipt = tx.commit()
    return job_id, receipt.revision.sequence if receipt.revision else None


def _committed(production: Production, job_id: JobId) -> bool:
    """Whether ``job_id`` was committed before this edit (reads never see an open edit's rows,
    so a keyed request that returned an existing job was a replay)."""
    try:
        production.job(job_id)
    except NotFoundError:
        return False
    return True


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
    """Request the plans' jobs as one dependency graph (``enqueue_plans``: an input another
    plan regenerates is bound to that plan's job output) in one transaction: all of them or,
    on any failure, none. Job ids come back in the order of ``plans``."""
    noun = "artifact" if len(plans) == 1 else "artifacts"
    with production.edit(origin=ORIGIN, message=f"Regenerate {len(plans)} {noun}") as tx:
        job_ids = tx.enqueue_plans(plans)
        receipt = tx.commit()
    return EnqueueOutcome(job_ids, receipt.revision.sequence if receipt.revision else None)


def observe_representations(production: Production, ids: Sequence[RepresentationId]) -> ObserveOutcome:
    """Re-read these representations' files (``observe_representation``) in one transaction:
    a file whose content changed gets its new fingerprint recorded (a re-delivered original;
    what was made from it turns stale). Nothing changed commits no revision."""
    changed: list[RepresentationId] = []
    with production.edit(origin=ORIGIN, message=f"Re-read {_plural(len(ids), 'file')}") as tx:
        for rep_id in ids:
            if tx.observe_representation(rep_id):
                changed.append(rep_id)
        receipt = tx.commit()
    unchanged = tuple(r for r in ids if r not in changed)
    return ObserveOutcome(tuple(changed), unchanged, receipt.revision.sequence if receipt.revision else None)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'s' if count != 1 else ''}"


def retry_jobs(production: Production, ids: Sequence[JobId]) -> FarmOutcome:
    """Request failed or cancelled jobs again (``request_again``) in one transaction: all of
    them, or (on any conflict, say one was already retried) none."""
    with production.edit(origin=ORIGIN, message=f"Retry {_plural(len(ids), 'job')}") as tx:
        new = tuple(tx.request_again(job_id) for job_id in ids)
        receipt = tx.commit()
    return FarmOutcome(new, receipt.revision.sequence if receipt.revision else None, len(new))


def requeue_jobs(production: Production, ids: Sequence[JobId]) -> FarmOutcome:
    """Return claims to requested (``requeue_job``, fencing their leases) in one transaction."""
    with production.edit(origin=ORIGIN, message=f"Requeue {_plural(len(ids), 'claim')}") as tx:
        for job_id in ids:
            tx.requeue_job(job_id)
        receipt = tx.commit()
    return FarmOutcome(tuple(ids), receipt.revision.sequence if receipt.revision else None, len(ids))


SWEEP_LIMIT = 100


def finalize_lost(production: Production, limit: int = SWEEP_LIMIT) -> FarmOutcome:
    """End up to ``limit`` expired, unrenewed claims as lost (``finalize_lost``) in one
    transaction; how many (0 commits no revision)."""
    with production.edit(origin=ORIGIN, message="Finalize lost work") as tx:
        count = tx.finalize_lost(limit)
        receipt = tx.commit()
    return FarmOutcome((), receipt.revision.sequence if receipt.revision else None, count)


def set_priority(production: Production, ids: Sequence[JobId], priority: int) -> FarmOutcome:
    """Give requested jobs a new priority (``set_job_priority``) in one transaction."""
    with production.edit(
        origin=ORIGIN, message=f"Set priority {priority} on {_plural(len(ids), 'job')}"
    ) as tx:
        for job_id in ids:
            tx.set_job_priority(job_id, priority)
        receipt = tx.commit()
    return FarmOutcome(tuple(ids), receipt.revision.sequence if receipt.revision else None, len(ids))
