"""Fixtures for the executor tests: one small real clip, and a production with media roots."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from postproject import (
    AssetId,
    FakeClock,
    JobId,
    JobRef,
    JobRequest,
    Production,
    RepresentationId,
    RepresentationKind,
)
from postproject.executor import jobs
from postproject.executor.attemptlog import LOGS
from postproject.executor.testclip import ClipInfo, generate_test_clip
from postproject.executor.worker import Listener, Worker, WorkerConfig, WorkerEvent
from postproject.model.identity import AgentIdentity

SIZE = (320, 180)
FRAMES = 12
AGENT = AgentIdentity("test-node/1")


@pytest.fixture(scope="session")
def clip(tmp_path_factory: pytest.TempPathFactory) -> ClipInfo:
    path = tmp_path_factory.mktemp("clips") / "A001_C003.mov"
    return generate_test_clip(path, name="A001_C003 Harbour dawn", frames=FRAMES, size=SIZE, hue=30)


@dataclass
class Studio:
    """A production with roots ``media`` and ``proxies``, one asset and its original."""

    production: Production
    clock: FakeClock
    root: Path
    asset: AssetId
    original: RepresentationId

    @property
    def path(self) -> str:
        """The production's location (a file path, or a URI on PostgreSQL)."""
        return self.production.location

    @property
    def media(self) -> Path:
        return self.root / "media"

    @property
    def proxies(self) -> Path:
        return self.root / "proxies"

    def request(
        self,
        kind: str = jobs.PROXY_KIND,
        profile: str | None = "proxy-720p",
        *,
        inputs: tuple[RepresentationId, ...] | None = None,
        output_kind: RepresentationKind | None = None,
        target_root: str | None = "proxies",
        asset: AssetId | None = None,
    ) -> JobId:
        if output_kind is None:
            output_kind = RepresentationKind.PROXY if kind == jobs.PROXY_KIND else RepresentationKind.DERIVED
        request = JobRequest(kind, inputs or (self.original,), asset or self.asset, output_kind, target_root)
        with self.production.edit() as tx:
            job = tx.request_job(request)
            if profile is not None:
                tx.add_metadata(JobRef(job), jobs.PROFILE, profile)
            tx.commit()
        return job

    def add_original(self, name: str, source: Path) -> tuple[AssetId, RepresentationId]:
        target = self.media / f"{name}.mov"
        shutil.copyfile(source, target)
        with self.production.edit() as tx:
            asset = tx.create_asset(name)
            rep = tx.add_representation(asset, RepresentationKind.ORIGINAL, target.name, root="media")
            tx.commit()
        return asset, rep

    def config(self, **overrides: Any) -> WorkerConfig:
        settings: dict[str, Any] = {"clock": self.clock, "agent": AGENT, "lease": timedelta(seconds=60)}
        settings.update(overrides)
        return WorkerConfig(self.path, **settings)

    def run(self, listener: Listener | None = None, **overrides: Any) -> Worker:
        worker = Worker(self.config(**overrides), listener)
        worker.run()
        return worker

    def outputs(self) -> list[str]:
        return sorted(p.name for p in self.proxies.iterdir() if p.name != LOGS)  # not the attempt logs


@pytest.fixture
def studio(
    tmp_path: Path, clock: FakeClock, clip: ClipInfo, production_factory: Callable[..., Production]
) -> Iterator[Studio]:
    (tmp_path / "media").mkdir()
    (tmp_path / "proxies").mkdir()
    shutil.copyfile(clip.path, tmp_path / "media" / "A001_C003.mov")
    production = production_factory("studio.pproj")
    with production.edit() as tx:
        tx.add_media_root("media", tmp_path / "media")
        tx.add_media_root("proxies", tmp_path / "proxies")
        asset = tx.create_asset("A001_C003 Harbour dawn")
        original = tx.add_representation(asset, RepresentationKind.ORIGINAL, "A001_C003.mov", root="media")
        tx.commit()
    yield Studio(production, clock, tmp_path, asset, original)
    production.close()


class Recorder:
    """A worker listener that records events and can run a hook on the first progress report."""

    def __init__(self, on_first_progress: Callable[[WorkerEvent], None] | None = None) -> None:
        self.events: list[WorkerEvent] = []
        self._hook = on_first_progress
        self._hooked = False

    def __call__(self, event: WorkerEvent) -> None:
        self.events.append(event)
        if event.action == "progress" and not self._hooked and self._hook is not None:
            self._hooked = True
            self._hook(event)

    def actions(self) -> list[str]:
        return [e.action for e in self.events if e.action != "progress"]
