"""Process bodies for the schema races (top-level functions: spawned processes import them)."""

from __future__ import annotations

from multiprocessing.synchronize import Barrier
from typing import Any

from postproject.model.errors import PostProjectError
from postproject.storage.postgresql import connection, schema, uri


def ensure_each(uri_text: str, names: list[str], barrier: Barrier) -> list[int]:
    """For each name: wait for the other process, then create-or-migrate it; return versions found."""
    with connection.connect(uri.parse(uri_text)) as conn:
        found = []
        for name in names:
            barrier.wait(timeout=60)
            found.append(schema.ensure(conn, name))
        return found


def create_each(uri_text: str, names: list[str], barrier: Barrier) -> list[str]:
    """For each name: wait for the other process, then create it; return "created" or the error code."""
    with connection.connect(uri.parse(uri_text)) as conn:
        outcomes = []
        for name in names:
            barrier.wait(timeout=60)
            try:
                schema.create(conn, name)
                outcomes.append("created")
            except PostProjectError as exc:
                outcomes.append(exc.code.value)
        return outcomes


def skewed_worker(
    location: str, out_dir: str, skew: float, local_clock: bool, barrier: Barrier
) -> dict[str, Any]:
    """This process's clocks run ``skew`` seconds off (its wall clock, and its monotonic clock's
    origin, as another host's would): claim, renew and complete jobs until none is left.

    ``local_clock``: the production takes this process's (skewed) wall clock, as before the
    server's clock existed; otherwise it takes none and gets the server's."""
    from datetime import UTC, datetime, timedelta
    from pathlib import Path

    from postproject import ActivitySpec, ConflictError, Production, SystemClock, ToolIdentity
    from postproject.model import clock as clocks

    real_now, real_monotonic = datetime.now, clocks.monotonic
    clocks.SystemClock.now = lambda self: real_now(UTC) + timedelta(seconds=skew)  # type: ignore[method-assign]
    clocks.monotonic = lambda: real_monotonic() + 1000 + skew  # type: ignore[assignment]
    tool = ToolIdentity("skewed", "1")
    done: list[str] = []
    conflicts: list[str] = []
    with Production.open(
        location, clock=SystemClock() if local_clock else None, allow_injected_clock=True
    ) as production:
        barrier.wait(timeout=60)
        idle = 0
        while idle < 3:
            try:
                with production.edit() as tx:
                    lease = tx.claim_next_job_lease(tool, timedelta(seconds=30))
                    tx.commit()
                if lease is None:
                    idle += 1
                    continue
                idle = 0
                with production.edit() as tx:
                    tx.renew_job_lease(lease, timedelta(seconds=30))
                    tx.commit()
                job = production.job(lease.job_id)
                output = Path(out_dir) / f"{job.id}.bin"
                output.write_bytes(b"x")
                with production.edit() as tx:
                    rep = tx.add_representation(job.output_asset_id, job.output_representation_kind, output)
                    activity = tx.create_activity(ActivitySpec(job.kind, inputs=job.inputs, outputs=(rep,)))
                    tx.complete_job_lease(lease, rep, activity)
                    tx.commit()
                done.append(str(job.id))
            except ConflictError as error:
                conflicts.append(str(error.reason))
                if len(conflicts) > 50:
                    break
    return {"done": done, "conflicts": conflicts}


def add_edge(location: str, source: str, target: str, barrier: Barrier) -> str:
    """Stage an activity ``source`` -> ``target`` (its cycle check passes: nothing committed closes
    a loop yet), wait until the other process has staged its own, then commit; "committed" or
    the error code."""
    from postproject import ActivitySpec, Production, RepresentationId

    with Production.open(location) as production, production.edit() as tx:
        tx.create_activity(
            ActivitySpec(
                "org.example:step", inputs=(RepresentationId(source),), outputs=(RepresentationId(target),)
            )
        )
        barrier.wait(timeout=60)
        try:
            tx.commit()
        except PostProjectError as exc:
            return exc.code.value
        return "committed"
