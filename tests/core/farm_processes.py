"""Process bodies for the farm's races (top-level functions: spawned processes import them)."""

from __future__ import annotations

from datetime import datetime, timedelta
from multiprocessing.synchronize import Barrier

from postproject import (
    AssetId,
    ConflictError,
    FakeClock,
    JobRequest,
    JobState,
    Production,
    RepresentationId,
    RepresentationKind,
    ToolIdentity,
)

KIND = "org.example:generate-proxy"
TOOL = ToolIdentity("race", "1")


def sweep(path: str, now: str, barrier: Barrier) -> int:
    """Finalise lost work once, racing the others; how many claims this sweep ended."""
    with Production.open(
        path, clock=FakeClock(datetime.fromisoformat(now)), allow_injected_clock=True
    ) as production:
        barrier.wait()
        total = 0
        for _ in range(30):
            with production.edit() as tx:
                total += tx.finalize_lost(1)
                tx.commit()
        return total


def reclaim_all(path: str, now: str, barrier: Barrier) -> int:
    """Re-claim expired claims one by one, racing the sweepers; how many this process took."""
    with Production.open(
        path, clock=FakeClock(datetime.fromisoformat(now)), allow_injected_clock=True
    ) as production:
        barrier.wait()
        taken = 0
        for job in [j.id for j in production.jobs(limit=100).items]:
            with production.edit() as tx:
                try:
                    tx.claim_job_lease(job, TOOL, timedelta(minutes=5))
                except ConflictError:
                    continue
                if production.job(job).state is JobState.CLAIMED:
                    tx.commit()
                    taken += 1
        return taken


def keyed_request(path: str, asset: str, original: str, barrier: Barrier) -> str:
    request = JobRequest(
        KIND,
        (RepresentationId(original),),
        AssetId(asset),
        RepresentationKind.PROXY,
        idempotency_key="one-delivery",
    )
    with Production.open(path) as production:
        barrier.wait()
        with production.edit() as tx:
            job = tx.request_job(request)
            tx.commit()
        return str(job)
