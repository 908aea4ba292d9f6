"""Process bodies for the race tests (top-level functions: spawned processes import them)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

from postproject import (
    ActivitySpec,
    ConflictError,
    FakeClock,
    JobLease,
    JobState,
    Production,
    RepresentationKind,
    StorageError,
    ToolIdentity,
)

TOOL = ToolIdentity("race-worker", "1")


def commit_assets(path: str, count: int, barrier: Barrier) -> list[int]:
    """Commit ``count`` single-asset transactions as fast as possible; return their sequences."""
    sequences = []
    with Production.open(path) as production:
        barrier.wait()
        for _ in range(count):
            with production.edit() as tx:
                tx.create_asset()
                receipt = tx.commit()
            assert receipt.revision is not None
            sequences.append(receipt.revision.sequence)
    return sequences


def wait_for_one(path: str, after: int, ready: Barrier) -> list[int]:
    """Wait (up to 30 s) for revisions after ``after``; return their sequences."""
    with Production.open(path, read_only=True) as production:
        ready.wait()
        return [r.sequence for r in production.wait_for_changes(after, 30)]


def drain(path: str, out_dir: str, seed: int, barrier: Barrier, calls: bool = False) -> dict[str, Any]:
    """Claim and complete jobs until none is claimable; some leases are short enough to be lost.
    ``calls``: by the reference executor's calls (the claim is ``Production.claim_next_job_lease``,
    one server call on PostgreSQL; the completion edit defers its lease check to the commit)."""
    rng = random.Random(seed)
    completed: list[tuple[str, int, int]] = []  # job, claim sequence, completion sequence
    fenced_rejections = 0
    errors: list[str] = []
    with Production.open(path) as production:
        barrier.wait()
        idle = 0
        while idle < 3:
            lease_length = timedelta(milliseconds=rng.choice([2, 50, 5000, 5000, 5000]))
            try:
                if calls:
                    lease = production.claim_next_job_lease(TOOL, lease_length)
                    claimed = production.job(lease.job_id).updated_sequence if lease is not None else 0
                else:
                    with production.edit() as tx:
                        lease = tx.claim_next_job_lease(TOOL, lease_length)
                        claim = tx.commit()
                    claimed = claim.revision.sequence if claim.revision is not None else 0
            except ConflictError:
                continue  # a 2 ms lease can expire before its own claim commits
            except StorageError as exc:
                errors.append(str(exc))
                continue
            if lease is None:
                idle += 1
                continue
            idle = 0
            job = production.job(lease.job_id)
            output = Path(out_dir) / f"{job.id}-{seed}-{claimed}.bin"
            output.write_bytes(f"{job.id}".encode())
            try:
                with production.edit(defer_lease_checks=calls) as tx:
                    rep = tx.add_representation(job.output_asset_id, job.output_representation_kind, output)
                    activity = tx.create_activity(
                        ActivitySpec(job.kind, inputs=job.inputs, outputs=(rep,), tool=TOOL)
                    )
                    tx.complete_job_lease(lease, rep, activity)
                    done = tx.commit()
            except ConflictError:
                fenced_rejections += 1
                continue
            except StorageError as exc:
                errors.append(str(exc))
                continue
            assert done.revision is not None
            completed.append((str(job.id), claimed, done.revision.sequence))
            # A finished lease must never be accepted again.
            try:
                with production.edit() as tx:
                    tx.renew_job_lease(lease, timedelta(seconds=1))
                    tx.commit()
                errors.append(f"closed lease of {job.id} was accepted")
            except ConflictError:
                pass
    return {"completed": completed, "fenced": fenced_rejections, "errors": errors}


def lost_lease_worker(path: str, out_dir: str, start: str, claimed: Barrier, reclaimed: Barrier) -> str:
    """Claim with a 100 µs lease, let another process re-claim, then try to publish."""
    clock = FakeClock(datetime.fromisoformat(start))
    with Production.open(path, clock=clock, allow_injected_clock=True) as production:
        job_id = production.jobs(state=JobState.REQUESTED).items[0].id
        with production.edit() as tx:
            lease = tx.claim_job_lease(job_id, TOOL, timedelta(microseconds=100))
            tx.commit()
        token = lease.export_token()
        claimed.wait()
        reclaimed.wait()
        clock.advance(timedelta(microseconds=250))  # our own clock agrees the lease is gone
        job = production.job(job_id)
        output = Path(out_dir) / "late.bin"
        output.write_bytes(b"late")
        try:
            with production.edit() as tx:
                rep = tx.add_representation(job.output_asset_id, RepresentationKind.PROXY, output)
                activity = tx.create_activity(ActivitySpec(job.kind, inputs=job.inputs, outputs=(rep,)))
                tx.complete_job_lease(lease, rep, activity)
                tx.commit()
        except ConflictError:
            pass
        else:
            return "published"
        try:
            JobLease.import_token(production, token)
        except ConflictError:
            return "fenced"
        return "token still accepted"


START = datetime(2026, 1, 1, tzinfo=UTC)


def call(queue: Any, index: int, function: Any, args: tuple[Any, ...]) -> None:
    """Run ``function(*args)`` in a spawned process and report (index, ok, result)."""
    try:
        queue.put((index, True, function(*args)))
    except BaseException as exc:  # report every failure to the parent test
        queue.put((index, False, f"{type(exc).__name__}: {exc}"))
