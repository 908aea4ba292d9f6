"""A small farm for the monitor's tests: registered workers (through the core's own
``register_worker`` and ``heartbeat``, on the production's FakeClock) with claims, finished
attempts of every outcome, a retried job and a worker that went quiet holding a claim."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from postproject import FakeClock, JobId, ToolIdentity
from postproject.model.workers import WorkerSession
from tests.gui.helpers import ProductionBuilder

TOOL = ToolIdentity("ffmpeg", "6.1")


@dataclass
class Farm:
    sessions: dict[str, WorkerSession] = field(default_factory=dict)
    leases: dict[JobId, Any] = field(default_factory=dict)
    failed: list[JobId] = field(default_factory=list)
    retried: tuple[JobId, JobId] | None = None  # (original, its retry)
    lost: JobId | None = None  # lost by render-02, claimed again by render-01
    running: dict[str, list[JobId]] = field(default_factory=dict)
    waiting: list[JobId] = field(default_factory=list)

    def heartbeat(self, builder: ProductionBuilder, *names: str) -> None:
        with builder.production.edit() as tx:
            for name in names or tuple(self.sessions):
                tx.heartbeat(self.sessions[name])
            tx.commit()


def claim_as(builder: ProductionBuilder, session: WorkerSession, job_id: JobId, seconds: float = 60) -> Any:
    with builder.production.edit(origin="postproject-worker", message="Claim job") as tx:
        lease = tx.claim_job_lease(job_id, TOOL, timedelta(seconds=seconds), worker=session)
        tx.commit()
    return lease


def build_farm(builder: ProductionBuilder, clock: FakeClock) -> Farm:
    """render-01 (capacity 2, online, one job running, one failure retried), render-02
    (capacity 1, online, idle, one lost attempt), render-03 (offline since 5 minutes,
    still holding a claim whose lease expired)."""
    farm = Farm()
    ids = builder.request(8)
    with builder.production.edit(origin="postproject-worker", message="Register workers") as tx:
        farm.sessions["render-01"] = tx.register_worker("render-01", capacity=2, host="node-a")
        farm.sessions["render-02"] = tx.register_worker("render-02", capacity=1, host="node-b")
        farm.sessions["render-03"] = tx.register_worker(
            "render-03", capacity=1, host="node-c", kinds=["org.postproject:generate-proxy"]
        )
        tx.commit()
    # render-03 claims a job and dies: no more heartbeats, its lease runs out.
    farm.leases[ids[0]] = claim_as(builder, farm.sessions["render-03"], ids[0], seconds=60)
    farm.running["render-03"] = [ids[0]]
    # render-02 claims a job and loses it (a lease that ran out, re-claimed later by render-01).
    claim_as(builder, farm.sessions["render-02"], ids[1], seconds=30)
    clock.advance(timedelta(seconds=40))
    farm.heartbeat(builder, "render-01", "render-02")
    failing = claim_as(builder, farm.sessions["render-01"], ids[2], seconds=120)
    with builder.production.edit(origin="postproject-worker", message="Fail job") as tx:
        tx.fail_job_lease(failing, "ffmpeg exited with status 1: unsupported profile")
        tx.commit()
    farm.failed.append(ids[2])
    with builder.production.edit(origin="postproject-monitor", message="Retry 1 job") as tx:
        farm.retried = (ids[2], tx.request_again(ids[2]))
        tx.commit()
    clock.advance(timedelta(seconds=5))
    farm.leases[ids[1]] = claim_as(
        builder, farm.sessions["render-01"], ids[1], seconds=600
    )  # lost by render-02
    farm.running["render-01"] = [ids[1]]
    farm.lost = ids[1]
    clock.advance(timedelta(minutes=4))
    farm.heartbeat(builder, "render-01", "render-02")
    farm.waiting = list(ids[3:])
    return farm
