"""Issue 15 with real processes: a worker reports progress while PyAV encodes, a cancel (or
requeue) from another process stops it promptly, it removes its partial output and confirms
the stop; each attempt's log is kept beside the outputs and its tail stored with the attempt."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from postproject import JobId, JobState, Production
from postproject.executor.attemptlog import LOGS
from postproject.executor.testclip import generate_test_clip
from postproject.model.jobs import AttemptOutcome, Job
from postproject.model.progress import MAX_LOG_TAIL_BYTES
from tests.executor.conftest import Studio
from tests.executor.test_worker_process import Running, spawn, wait_for
from tests.waiting import wait_until

__all__ = ["spawn"]  # the fixture, shared with test_worker_process

pytestmark = [
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"),
    pytest.mark.xdist_group("executor_long_clip"),  # its long clip, made once: tests/README.md
]

LONG_FRAMES = 720  # its 1080p proxy encodes for seconds; a stop lands in tens of milliseconds


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The ``postproject`` command line in its own process."""
    return subprocess.run(
        [sys.executable, "-m", "postproject", *args], capture_output=True, text=True, timeout=60, check=False
    )


def poll(path: Path, job_id: JobId, until: Callable[[Job], bool], what: str) -> Job:
    """The job, read by another handle until ``until`` holds for it (``what`` it waits for)."""

    def read() -> Job | None:
        with Production.open(path, read_only=True) as production:
            job = production.job(job_id)
        return job if until(job) else None

    return wait_until(read, what)


@pytest.fixture(scope="session")
def long_clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clip long enough that its 1080p proxy is still encoding when a stop lands (made once
    per session; each test copies it into its studio)."""
    clip = tmp_path_factory.mktemp("long") / "long.mov"
    generate_test_clip(clip, name="LONG", frames=LONG_FRAMES, size=(320, 180))
    return clip


def long_job(studio: Studio, clip: Path, name: str = "long") -> JobId:
    asset, original = studio.add_original(name, clip)
    return studio.request(profile="proxy-1080p", inputs=(original,), asset=asset)


def encoding(job: Job) -> bool:
    return job.progress is not None and job.progress.stage == "encode" and (job.progress.fraction or 0) > 0


@pytest.mark.slow
@pytest.mark.parametrize("command", ["cancel", "requeue"])
def test_a_running_encode_stops_promptly_when_cancelled_from_another_process(
    studio: Studio, long_clip: Path, spawn: Callable[..., Running], command: str
) -> None:
    job_id = long_job(studio, long_clip)
    studio.production.close()
    worker = spawn(studio.path, "--once", "--lease", "30s", "--agent-name", "stopper")
    wait_for(worker.lines, f"claimed job {job_id}")
    job = poll(studio.path, job_id, encoding, "encode progress")
    assert encoding(job), f"no encode progress reported: {job.progress}"
    assert job.progress is not None and job.progress.message is not None and "frame" in job.progress.message

    done = cli("job", command, str(studio.path), str(job_id))
    assert done.returncode == 0, done.stderr
    stopped = poll(studio.path, job_id, lambda j: j.attempts[0].stopped_at is not None, "the worker's stop")
    attempt = stopped.attempts[0]
    assert attempt.stopped_at is not None, "the worker did not confirm the stop"
    # Promptly, against the encode itself: it stopped part way, long before the clip's end (how
    # many milliseconds a stop takes is benchmarks/bench_progress.py's P4 and its goal).
    assert attempt.progress is not None and attempt.progress.stage == "encode"
    assert attempt.progress.fraction is not None and attempt.progress.fraction < 0.5, attempt.progress
    expected = AttemptOutcome.CANCELLED if command == "cancel" else AttemptOutcome.RELEASED
    assert attempt.outcome is expected and not attempt.stopping
    assert stopped.state is (JobState.CANCELLED if command == "cancel" else JobState.REQUESTED)
    assert worker.proc.wait(30) == 0
    text = "".join(worker.lines.queue)
    assert f"{'cancelled' if command == 'cancel' else 'requeued'} job {job_id}" in text
    # no output, no partial file, no staging folder: only the attempt's log beside the outputs
    assert [p.name for p in studio.proxies.iterdir()] == [LOGS]
    log_file = studio.proxies / LOGS / str(job_id) / "attempt-1.log"
    with Production.open(studio.path, read_only=True) as production:
        log = production.attempt_log(job_id, 1)
        assert production.log_file(log) == log_file
    assert log.tail is not None and "stopped (" in log.tail and "partial output removed" in log.tail
    assert "stopped (" in log_file.read_text()


def test_the_attempt_log_keeps_ffmpeg_and_stray_bytes_and_its_tail_stays_valid(
    studio: Studio, tmp_path: Path, spawn: Callable[..., Running]
) -> None:
    if sys.platform == "darwin":  # pragma: no cover - APFS refuses names that are not UTF-8
        pytest.skip("file names must be UTF-8 here")
    odd = Path(os.fsdecode(bytes(tmp_path) + b"/out-\xff\xfe"))  # a folder name that is not UTF-8
    odd.mkdir()
    clip = tmp_path / "short.mov"
    generate_test_clip(clip, name="SHORT", frames=24, size=(320, 180))
    asset, original = studio.add_original("short", clip)
    job_id = studio.request(profile="proxy-720p", inputs=(original,), asset=asset)
    studio.production.close()
    worker = spawn(studio.path, "--once", "--agent-name", "bytes", "--root-map", f"proxies={odd}")
    assert worker.proc.wait(120) == 0
    with Production.open(studio.path, read_only=True, root_map={"proxies": odd}) as production:
        job = production.job(job_id)
        assert job.state is JobState.SUCCEEDED
        log = production.attempt_log(job_id)
        log_file = production.log_file(log)
    assert log.tail is not None and len(log.tail.encode("utf-8")) <= MAX_LOG_TAIL_BYTES
    log.tail.encode("utf-8")  # valid: no lone surrogate
    assert "out-\ufffd\ufffd" in log.tail, "the stray bytes became U+FFFD"
    assert "libav.libx264" in log.tail, "FFmpeg's messages are in the log"
    assert log_file is not None and b"out-\xff\xfe" in log_file.read_bytes(), "the file keeps the bytes"
    assert job.attempts[0].stopped_at == job.attempts[0].ended_at
