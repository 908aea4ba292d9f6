"""Helpers shared by the job tests: a small production with one input and one output asset."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from postproject import (
    ActivitySpec,
    AgentIdentity,
    AssetId,
    FakeClock,
    JobId,
    JobLease,
    JobRequest,
    Production,
    RepresentationId,
    RepresentationKind,
    ToolIdentity,
)
from tests.conftest import START

KIND = "org.example:generate-proxy"
TOOL = ToolIdentity("Proxy Worker", "1.0", "https://example.com/worker")
AGENT = AgentIdentity("render-07")


def us(n: int) -> timedelta:
    return timedelta(microseconds=n)


def at(clock: FakeClock, micros: int) -> None:
    """Set the fake clock to START + micros."""
    clock.set(START + us(micros))


@dataclass
class Setup:
    production: Production
    clock: FakeClock
    asset: AssetId
    original: RepresentationId
    root: Path

    def request(self, *, inputs: tuple[RepresentationId, ...] | None = None, kind: str = KIND) -> JobId:
        with self.production.edit() as tx:
            job = tx.request_job(
                JobRequest(
                    kind,
                    self.original_inputs if inputs is None else inputs,
                    self.asset,
                    RepresentationKind.PROXY,
                )
            )
            tx.commit()
        return job

    @property
    def original_inputs(self) -> tuple[RepresentationId, ...]:
        return (self.original,)

    def claim(self, job: JobId, micros: int = 100, *, production: Production | None = None) -> JobLease:
        with (production or self.production).edit() as tx:
            lease = tx.claim_job_lease(job, TOOL, us(micros), agent=AGENT)
            tx.commit()
        return lease

    def output_file(self, name: str = "proxy.mov", content: bytes = b"proxy essence") -> Path:
        path = self.root / "out" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        return path

    def complete(self, lease: JobLease, *, production: Production | None = None) -> RepresentationId:
        production = production or self.production
        job = production.job(lease.job_id)
        with production.edit() as tx:
            rep = tx.add_representation(
                job.output_asset_id, job.output_representation_kind, self.output_file()
            )
            activity = tx.create_activity(
                ActivitySpec(job.kind, inputs=job.inputs, outputs=(rep,), tool=TOOL)
            )
            tx.complete_job_lease(lease, rep, activity)
            tx.commit()
        return rep

    def head(self) -> int:
        revision = self.production.latest_revision()
        return revision.sequence if revision else 0


def make_setup(production: Production, clock: FakeClock, root: Path) -> Setup:
    source = root / "media" / "A001.mov"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_bytes(b"original essence")
    with production.edit() as tx:
        asset = tx.create_asset("A001")
        original = tx.add_representation(asset, RepresentationKind.ORIGINAL, source)
        tx.commit()
    return Setup(production, clock, asset, original, root)
