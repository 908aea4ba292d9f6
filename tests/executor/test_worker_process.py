"""``worker run`` as a real process: Ctrl-C (SIGINT) releases its claim and exits promptly."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from postproject import JobState, Production, SystemClock
from postproject.executor.attemptlog import LOGS
from postproject.executor.testclip import generate_test_clip
from tests.executor.conftest import Studio
from tests.waiting import wait_until

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


class Running:
    """A worker process and a queue of its stderr lines (read by a thread, so waits can time out)."""

    def __init__(self, production: Path, *extra: str) -> None:
        command = [sys.executable, "-m", "postproject", "worker", "run", str(production), *extra]
        self.proc = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self._pump = threading.Thread(target=self._read, daemon=True)
        self._pump.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.put(line)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self._pump.join(10)
        assert self.proc.stderr is not None
        self.proc.stderr.close()


@pytest.fixture
def spawn() -> Iterator[Callable[..., Running]]:
    running: list[Running] = []

    def start(production: Path, *extra: str) -> Running:
        running.append(Running(production, *extra))
        return running[-1]

    yield start
    for item in running:
        item.close()


def wait_for(found: queue.Queue[str], text: str, timeout: float = 30) -> str:
    while True:
        line = found.get(timeout=timeout)
        if text in line:
            return line


def test_sigint_while_working_releases_the_claim(
    studio: Studio, tmp_path: Path, spawn: Callable[..., Running]
) -> None:
    long_clip = tmp_path / "long.mov"
    generate_test_clip(long_clip, name="LONG", frames=120, size=(320, 180))  # stopped part way
    asset, original = studio.add_original("long", long_clip)
    job_id = studio.request(profile="proxy-1080p", inputs=(original,), asset=asset)
    studio.production.close()  # the worker process uses the wall clock, not the test's fake one

    worker = spawn(studio.path, "--watch", "--lease", "30s", "--agent-name", "proc-test")
    wait_for(worker.lines, f"claimed job {job_id}")
    worker.proc.send_signal(signal.SIGINT)
    assert worker.proc.wait(20) == 130
    assert "stop requested" in wait_for(worker.lines, f"released job {job_id}", timeout=5)

    with Production.open(studio.path) as production:
        job = production.job(job_id)
    assert job.state is JobState.REQUESTED
    assert job.claim is None
    assert [p for p in studio.proxies.iterdir() if p.name != LOGS] == []  # no partial or hidden output left


def test_sigint_while_idle_exits_promptly(studio: Studio, spawn: Callable[..., Running]) -> None:
    studio.production.close()
    worker = spawn(studio.path, "--watch")
    wait_for(worker.lines, "waiting for new work")
    worker.proc.send_signal(signal.SIGINT)
    assert worker.proc.wait(20) == 130
    worker.close()
    assert "Traceback" not in "".join(worker.lines.queue)


def test_bad_arguments_exit_2_without_touching_the_production(
    tmp_path: Path, spawn: Callable[..., Running]
) -> None:
    worker = spawn(tmp_path / "absent.pproj", "--lease", "25h")
    assert worker.proc.wait(30) == 2
    assert "--lease must be between" in wait_for(worker.lines, "error")
    assert not (tmp_path / "absent.pproj").exists()


@pytest.mark.slow
def test_a_killed_worker_leaves_no_debris_and_steals_no_name(
    studio: Studio, tmp_path: Path, spawn: Callable[..., Running]
) -> None:
    long_clip = tmp_path / "long.mov"
    generate_test_clip(long_clip, name="LONG", frames=120, size=(320, 180))  # killed part way
    asset, original = studio.add_original("long", long_clip)
    job_id = studio.request(profile="proxy-1080p", inputs=(original,), asset=asset)
    studio.production.close()

    doomed = spawn(studio.path, "--watch", "--lease", "1s", "--agent-name", "doomed")
    wait_for(doomed.lines, f"claimed job {job_id}")
    wait_until(lambda: _media_under(studio.proxies), "the transcode to start writing", timeout=30)
    doomed.proc.kill()  # SIGKILL: no handler runs, nothing is cleaned up
    doomed.close()
    # Nothing visible in the target root: no placeholder, no partial file.
    assert [p.name for p in studio.proxies.iterdir() if not p.name.startswith(".")] == []

    with Production.open(studio.path, read_only=True) as production:
        claim = production.job(job_id).claim
    assert claim is not None  # the doomed worker's 1 s lease lapses; the job becomes claimable again
    wait_until(lambda: SystemClock().now() >= claim.expires_at, "the doomed worker's lease to lapse")
    done = subprocess.run(
        [sys.executable, "-m", "postproject", "worker", "run", str(studio.path), "--lease", "30s"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    with Production.open(studio.path) as production:
        job = production.job(job_id)
        assert job.state is JobState.SUCCEEDED
        assert job.completion is not None
        output = production.representation(job.completion.representation_id)
    # The clean name (no "-2"), and the stale staging area was swept on the next start.
    assert output.path.name == "long_proxy-1080p.mp4"
    assert sorted(p.name for p in studio.proxies.iterdir() if p.name != LOGS) == ["long_proxy-1080p.mp4"]


def _media_under(folder: Path) -> list[Path]:
    """Media files being written under ``folder``: not the attempt logs, and not the lock of an
    attempt's staging folder (a worker killed before it holds that lock leaves its folder for
    a minute, by design: jobs.STALE_UNLOCKED_SECONDS)."""
    return [
        p for p in folder.rglob("*") if p.is_file() and LOGS not in p.parts and not p.name.startswith(".lock")
    ]
