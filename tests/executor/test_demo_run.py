"""``demo run``: worker processes do live work while the monitor is open and stop cleanly after."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from postproject import JobState, Production, SystemClock
from postproject.executor.demo import DEAD_AGENT, create_demo
from postproject.executor.demo_run import MONITOR_ENV, DemoRunOptions, run_demo
from postproject.executor.presence import SWEEP_INTERVAL
from postproject.executor.recipe import Recipe
from postproject.model.clock import monotonic
from tests.waiting import wait_until

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

SMALL = Recipe.load().with_clip(size=(320, 180), frames=12)
OPTIONS = DemoRunOptions(workers=2, producer_interval=0.2, producer_cap=3, grace=15)


def done_by_demo_workers(production: Production) -> int:
    activities = production.activities(limit=1000).items
    return sum(1 for a in activities if a.agent is not None and a.agent.name.startswith("demo-worker-"))


def wait_until_workers_finished(count: int, timeout: float = 90) -> tuple[list[int], object]:
    """A monitor stand-in: returns once demo workers completed ``count`` jobs."""
    seen: list[int] = []

    def monitor(path: Path) -> int:
        deadline = monotonic() + timeout
        with Production.open(path, read_only=True) as production:
            while monotonic() < deadline:
                head = production.latest_revision()
                done = done_by_demo_workers(production)
                seen.append(done)
                if done >= count:
                    return 0
                production.wait_for_changes(head.sequence if head else 0, min(1.0, deadline - monotonic()))
        return 1

    return seen, monitor


def live_claims_of_demo_workers(path: Path) -> list[str]:
    now = SystemClock().now()
    with Production.open(path, read_only=True) as production:
        claimed = production.jobs(limit=1000, state=JobState.CLAIMED).items
        return [
            str(job.id)
            for job in claimed
            if job.claim is not None
            and job.claim.expires_at > now
            and job.claim.agent is not None
            and job.claim.agent.name.startswith("demo-worker-")
        ]


def test_demo_run_works_live_and_stops_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "demo.pproj"
    create_demo(path, assets=6, recipe=SMALL)
    seen, monitor = wait_until_workers_finished(4)
    result = run_demo(path, OPTIONS, recipe=SMALL, monitor=monitor)  # type: ignore[arg-type]

    assert result.exit_code == 0
    assert seen[-1] >= 4
    assert len(result.worker_pids) == 2
    assert all(code is not None for code in result.worker_exit_codes)
    assert 143 in result.worker_exit_codes  # stopped by SIGTERM after releasing their claims
    assert set(result.worker_exit_codes) <= {143, -15}  # (or ended quietly while still starting up)
    assert live_claims_of_demo_workers(path) == []
    for pid in result.worker_pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    logs = sorted(p.name for p in (tmp_path / "demo-media" / "logs").iterdir())
    assert logs == ["worker-1.log", "worker-2.log"]
    assert "succeeded job" in "".join(p.read_text() for p in (tmp_path / "demo-media" / "logs").iterdir())


def test_monitor_command_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "fresh.pproj"
    script = "import sys; from pathlib import Path; sys.exit(5 if Path(sys.argv[1]).exists() else 6)"
    monkeypatch.setenv(MONITOR_ENV, f"{sys.executable} -c '{script}'")
    options = DemoRunOptions(fresh=True, assets=3, workers=1, producer_cap=0, grace=15)
    result = run_demo(path, options, recipe=SMALL)
    assert result.exit_code == 5  # the demo was created first, and the monitor was given its path
    assert result.requested_by_producer == 0
    assert all(code is not None for code in result.worker_exit_codes)
    assert live_claims_of_demo_workers(path) == []


def test_without_the_gui_extra_the_user_is_told_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from postproject.executor import demo_run

    monkeypatch.setattr(demo_run, "_gui_installed", lambda: False)
    said: list[str] = []
    monitor, owns_screen = demo_run._choose_monitor(None, said.append)
    assert monitor is demo_run._wait_for_interrupt
    assert not owns_screen  # the workers' log lines go to the terminal instead
    assert "postproject-monitor[gui]" in said[0]


def test_terminating_the_demo_ends_the_monitor_and_the_workers(tmp_path: Path) -> None:
    import signal
    import subprocess

    path = tmp_path / "demo.pproj"
    create_demo(path, assets=3, recipe=SMALL)
    monitor_pid = tmp_path / "monitor.pid"
    stand_in = (
        "import os, sys, time; from pathlib import Path; "
        f"Path({str(monitor_pid)!r}).write_text(str(os.getpid())); time.sleep(120)"
    )
    env = dict(os.environ, **{MONITOR_ENV: f"{sys.executable} -c {stand_in!r}"})
    demo = subprocess.Popen(
        [sys.executable, "-m", "postproject", "demo", "run", str(path), "--workers", "2"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )

    def monitor_started() -> bool:
        assert demo.poll() is None, demo.stderr.read() if demo.stderr else ""
        return monitor_pid.exists() and monitor_pid.read_text() != ""

    wait_until(monitor_started, "the monitor stand-in to start")
    demo.send_signal(signal.SIGTERM)
    _, stderr = demo.communicate(timeout=60)
    assert demo.returncode == 130, stderr
    with pytest.raises(ProcessLookupError):
        os.kill(int(monitor_pid.read_text()), 0)
    assert live_claims_of_demo_workers(path) == []
    assert b"Traceback" not in stderr


@pytest.mark.slow
def test_the_abandoned_claim_stays_stuck_until_a_supervisor_acts(tmp_path: Path) -> None:
    """Issue 26 item 10: the demo workers' loss sweep finalised the dead render node's claim
    within seconds of ``demo run``, so a newcomer never saw a stuck claim. The demo workers
    leave lost work to the supervisor (the monitor's *Finalize lost work*)."""
    path = tmp_path / "demo.pproj"
    create_demo(path, assets=6, recipe=SMALL)
    with Production.open(path, read_only=True) as production:
        abandoned = abandoned_claims(production)
    assert abandoned  # the story's dead render node holds expired claims
    seen: list[list[str]] = []

    def monitor(_path: Path) -> int:
        started = monotonic()
        with Production.open(path, read_only=True) as production:
            while monotonic() - started < 90:
                if done_by_demo_workers(production) >= 2 and monotonic() - started > 2 * SWEEP_INTERVAL + 1:
                    seen.append(abandoned_claims(production))  # the workers swept twice by now
                    return 0
                production.wait_for_changes(production.latest_sequence(), 0.5)
        return 1

    result = run_demo(path, OPTIONS, recipe=SMALL, monitor=monitor)  # type: ignore[arg-type]
    assert result.exit_code == 0 and seen == [abandoned]


def abandoned_claims(production: Production) -> list[str]:
    claimed = production.jobs(limit=1000, state=JobState.CLAIMED).items
    return sorted(str(j.id) for j in claimed if j.claim is not None and j.claim.agent == DEAD_AGENT)
