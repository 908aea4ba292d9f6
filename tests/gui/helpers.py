"""Helpers shared by the GUI tests (fixtures are in conftest.py)."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable, Coroutine
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import qasync
from PySide6.QtWidgets import QApplication

from postproject import (
    AgentIdentity,
    JobRequest,
    Production,
    RepresentationKind,
    ToolIdentity,
)

T = TypeVar("T")
KIND = "org.postproject:generate-proxy"
THUMB = "org.postproject:generate-thumbnail"


class LoopRunner:
    """The test's qasync loop, plus helpers to run coroutines to completion."""

    def __init__(self, loop: qasync.QEventLoop, app: QApplication) -> None:
        self.loop = loop
        self.app = app
        self.errors: list[dict[str, Any]] = []

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 10.0) -> T:
        task = self.loop.create_task(coro)
        deadline = self.loop.time() + timeout
        while not task.done():
            self.app.processEvents()
            if self.loop.time() > deadline:
                task.cancel()
                raise TimeoutError("coroutine did not finish")
            threading.Event().wait(0.001)
        return task.result()


class ProductionBuilder:
    """Writes jobs into a production file through the public core API."""

    def __init__(self, production: Production, media: Path) -> None:
        self.production = production
        self.media = media
        media.mkdir(parents=True, exist_ok=True)
        clip = media / "A001_C002.mov"
        clip.write_bytes(b"essence")
        with production.edit() as tx:
            self.asset = tx.create_asset("A001_C002")
            self.rep = tx.add_representation(self.asset, RepresentationKind.ORIGINAL, clip)
            tx.add_media_root("proxies", media)
            tx.commit()

    def request(self, count: int = 1, kind: str = KIND) -> list[Any]:
        ids = []
        with self.production.edit() as tx:
            for _ in range(count):
                ids.append(
                    tx.request_job(
                        JobRequest(kind, [self.rep], self.asset, RepresentationKind.PROXY, "proxies")
                    )
                )
            tx.commit()
        return ids

    def claim(self, job_id: Any, seconds: float = 120, agent: str = "render-07") -> Any:
        with self.production.edit() as tx:
            lease = tx.claim_job_lease(
                job_id, ToolIdentity("ffmpeg", "6.1"), timedelta(seconds=seconds), AgentIdentity(agent)
            )
            tx.commit()
        return lease

    def fail(self, job_id: Any, diagnostic: str) -> None:
        lease = self.claim(job_id)
        with self.production.edit() as tx:
            tx.fail_job_lease(lease, diagnostic)
            tx.commit()

    def cancel(self, job_id: Any) -> None:
        with self.production.edit() as tx:
            tx.cancel_job(job_id)
            tx.commit()


def ready(window: Any, revision: int = 1) -> bool:
    """The window shows revision ``revision`` or later, with nothing loading, and is live."""
    s = window.session
    return s is not None and s.applied_revision >= revision and not s.busy and s.live


def wait_for(qtbot: Any, condition: Callable[[], object], timeout: int = 15_000) -> None:
    """qtbot.waitUntil with a boolean condition. The bound is generous: a loaded CI machine can
    take seconds for one step, and a passing test does not wait for it."""
    qtbot.waitUntil(lambda: bool(condition()), timeout=timeout)


COMMIT_SCRIPT = """
import sys
from postproject import AssetId, JobRequest, Production, RepresentationId, RepresentationKind
path, asset, rep, count = sys.argv[1], AssetId.parse(sys.argv[2]), RepresentationId.parse(sys.argv[3]), int(sys.argv[4])
with Production.open(path) as production, production.edit(origin="other-process") as tx:
    ids = [tx.request_job(JobRequest("org.example:from-elsewhere", [rep], asset, RepresentationKind.PROXY))
           for _ in range(count)]
    tx.commit()
print(" ".join(str(i) for i in ids))
"""


def commit_from_another_process(builder: ProductionBuilder, count: int = 1) -> list[str]:
    """Request jobs in a separate Python process (a real second writer); their ids."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            COMMIT_SCRIPT,
            builder.production.location,
            str(builder.asset),
            str(builder.rep),
            str(count),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.stdout.split()


STEADY_WRITER_SCRIPT = """
import sys, time
from postproject import AssetId, JobRequest, Production, RepresentationId, RepresentationKind
path, asset, rep = sys.argv[1], AssetId.parse(sys.argv[2]), RepresentationId.parse(sys.argv[3])
rate, seconds = float(sys.argv[4]), float(sys.argv[5])
with Production.open(path) as production:
    start = time.monotonic()
    done = 0
    while time.monotonic() - start < seconds:
        with production.edit(origin="steady-writer") as tx:
            tx.request_job(JobRequest("org.example:steady", [rep], asset, RepresentationKind.PROXY))
            tx.commit()
        done += 1
        if done == 1:
            print("writing", flush=True)
        ahead = start + done / rate - time.monotonic()
        if ahead > 0:
            time.sleep(ahead)
print(done, flush=True)
"""


def steady_writer(
    builder: ProductionBuilder, rate: float = 150.0, seconds: float = 60.0
) -> subprocess.Popen[str]:
    """A separate process that requests one job per revision at ``rate`` revisions per second
    for ``seconds`` (terminate it when done); returns once it has committed its first one."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            STEADY_WRITER_SCRIPT,
            builder.production.location,
            str(builder.asset),
            str(builder.rep),
            str(rate),
            str(seconds),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "writing"
    return process
