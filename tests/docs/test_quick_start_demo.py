"""The Quick start's first command runs from this checkout: ``python3 dev.py demo`` builds the
demo production, opens the monitor (offscreen here) with live workers, and Ctrl-C ends it all
cleanly with no claim left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from tests.demo_recipe import small_recipe
from tests.waiting import wait_until

from postproject import JobState, Production, SystemClock

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")]


def succeeded_by_demo_workers(path: Path) -> int:
    with Production.open(path, read_only=True) as production:
        done = production.jobs(limit=1000, state=JobState.SUCCEEDED).items
        return sum(1 for job in done if job.completion is not None and _by_worker(production, job.completion))


def _by_worker(production: Production, completion: object) -> bool:
    activity = production.activity(completion.activity_id)  # type: ignore[attr-defined]
    return activity.agent is not None and activity.agent.name.startswith("demo-worker-")


@pytest.mark.parametrize("through", [(), ("--service",)], ids=["database", "service"])
def test_dev_py_demo_runs_live_and_stops_cleanly(tmp_path: Path, through: tuple[str, ...]) -> None:
    production = tmp_path / "demo.pproj"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", POSTPROJECT_DEMO_PRODUCTION=str(production))
    recipe = small_recipe(tmp_path)  # the shipped demo with small clips: the path, not the encoding
    demo = subprocess.Popen(
        [sys.executable, str(ROOT / "dev.py"), "demo", "--recipe", str(recipe), *through],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, like a terminal's foreground job
    )

    def progressed() -> bool:
        assert demo.poll() is None, demo.communicate()[1].decode(errors="replace")[-2000:]
        return production.exists() and succeeded_by_demo_workers(production) >= 2

    try:
        wait_until(progressed, "the demo's workers to complete two jobs", timeout=240)
    finally:
        os.killpg(demo.pid, signal.SIGINT)  # what Ctrl-C in the terminal does
        _, stderr = demo.communicate(timeout=90)
    assert demo.returncode in (0, 130), stderr.decode(errors="replace")[-2000:]
    assert b"Traceback" not in stderr
    now = SystemClock().now()
    with Production.open(production, read_only=True) as opened:
        live = [
            job
            for job in opened.jobs(limit=1000, state=JobState.CLAIMED).items
            if job.claim is not None and job.claim.expires_at > now
        ]
    assert live == []
    if through:  # the workers went through the service, which stopped with the demo
        logs = tmp_path / "demo-media" / "logs"
        assert "http://127.0.0.1:" in stderr.decode(errors="replace")
        assert (logs / "worker.token").stat().st_mode & 0o077 == 0
        service_log = (logs / "service.log").read_text()
        claims = [line for line in service_log.splitlines() if '/claims" 200' in line]
        assert claims and all("principal=demo-workers-" in line for line in claims), service_log[-2000:]
        assert "postproject.service: stopped" in service_log
