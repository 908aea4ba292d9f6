"""The reference executor in the farm's work model (issue 13 item 7): it registers, claims as
its session, sweeps lost work, tells tool crashes from bad input, and rides out a busy database."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap
from datetime import datetime, timedelta
from pathlib import Path

import av.error
import pytest

from postproject import AgentIdentity, JobState, Production, ToolIdentity
from postproject.executor.media import _media_errors
from postproject.model.jobs import AttemptOutcome
from postproject.model.workers import WorkerState
from tests.cli.helpers import SCRIPT_DIR, script_env
from tests.executor.conftest import Studio


def test_the_worker_registers_and_its_attempts_name_it(studio: Studio) -> None:
    job = studio.request()
    studio.run(concurrency=2)
    (worker,) = studio.production.workers()
    assert (worker.name, worker.capacity, worker.state) == ("test-node/1", 2, WorkerState.ONLINE)
    assert set(worker.kinds or ()) == {"org.postproject:generate-proxy", "org.postproject:generate-thumbnail"}
    assert worker.succeeded == 1 and worker.running == ()
    (attempt,) = studio.production.job(job).attempts
    assert (attempt.worker, attempt.outcome) == ("test-node/1", AttemptOutcome.SUCCEEDED)


def test_the_worker_sweeps_lost_work_then_does_it(studio: Studio) -> None:
    job = studio.request()
    with studio.production.edit() as tx:  # a worker that crashed holding a short lease
        tx.claim_job_lease(
            job, ToolIdentity("crashed", "1"), timedelta(seconds=1), agent=AgentIdentity("dead")
        )
        tx.commit()
    studio.clock.advance(timedelta(seconds=2))
    studio.run()
    done = studio.production.job(job)
    assert done.state is JobState.SUCCEEDED
    assert [a.outcome for a in done.attempts] == [AttemptOutcome.LOST, AttemptOutcome.SUCCEEDED]


def test_no_sweep_leaves_expired_claims_alone(studio: Studio) -> None:
    job = studio.request()
    with studio.production.edit() as tx:
        tx.claim_job_lease(job, ToolIdentity("crashed", "1"), timedelta(seconds=1))
        tx.commit()
    studio.clock.advance(timedelta(seconds=2))
    studio.run(sweep=False)  # the worker still re-claims the expired claim itself
    attempts = studio.production.job(job).attempts
    assert [a.outcome for a in attempts] == [AttemptOutcome.LOST, AttemptOutcome.SUCCEEDED]
    with studio.production.edit() as tx:
        assert tx.finalize_lost() == 0


def test_bad_input_is_not_retried(studio: Studio) -> None:
    asset, corrupt = studio.add_original("broken", studio.media / "A001_C003.mov")
    (studio.media / "broken.mov").write_bytes(b"\x00" * 4096)
    job = studio.request(inputs=(corrupt,), asset=asset)
    studio.run()
    failed = studio.production.job(job)
    assert failed.state is JobState.FAILED and failed.attempts[0].outcome is AttemptOutcome.FAILED


@pytest.mark.parametrize(
    ("raised", "retryable"),
    [
        (av.error.InvalidDataError(1094995529, "Invalid data found when processing input"), False),
        (FileNotFoundError(errno.ENOENT, "No such file"), False),
        (OSError(errno.ENOSPC, "No space left on device"), True),
        (OSError(errno.EIO, "Input/output error"), True),
    ],
)
def test_media_errors_tell_tool_crashes_from_bad_input(raised: Exception, retryable: bool) -> None:
    from postproject.executor.profiles import MediaError

    with pytest.raises(MediaError) as caught, _media_errors("cannot make proxy"):
        raise raised
    assert caught.value.retryable is retryable


@pytest.mark.slow
@pytest.mark.sqlite_only("SQLite's write lock: PostgreSQL edits do not wait for each other")
def test_a_worker_rides_out_a_write_lock_held_past_its_busy_timeout(studio: Studio, tmp_path: Path) -> None:
    """Another process holds the write lock longer than the worker's busy timeout (what made
    workers exit after a 30 s lock, issue 13): the worker says it waits, and does its work once
    the lock is gone. The lock is held until the worker has said so, not for a fixed 30 s."""
    jobs = [studio.request() for _ in range(2)]
    studio.production.close()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import sys
                from postproject import Production, SystemClock
                with Production.open({str(studio.path)!r}) as p:
                    tx = p.edit()
                    tx.create_asset("holding the write lock")
                    print("locked", flush=True)
                    sys.stdin.readline()
                    print(SystemClock().now().isoformat(), flush=True)  # still holding it
                    tx.rollback()
                """
            ),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdin is not None and holder.stdout is not None
    assert holder.stdout.readline().strip() == "locked"
    worker = subprocess.Popen(
        [str(SCRIPT_DIR / "postproject"), "worker", "run", str(studio.path), "--agent-name", "patient"],
        env=script_env() | {"POSTPROJECT_CONFIG": os.devnull},
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert worker.stderr is not None
        said = []
        for line in worker.stderr:  # until its edit has waited out the busy timeout, and it lives on
            said.append(line)
            if "waiting for the database" in line:
                break
        assert worker.poll() is None, "".join(said)
        holder.stdin.write("release\n")
        holder.stdin.flush()
        released = datetime.fromisoformat(holder.stdout.readline().strip())
        rest = worker.communicate(timeout=240)[1]
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
        holder.stdin.close()
        holder.wait(60)
        holder.stdout.close()
    assert worker.returncode == 0, "".join(said) + rest
    with Production.open(studio.path) as production:
        done = [production.job(j) for j in jobs]
    assert [job.state for job in done] == [JobState.SUCCEEDED] * 2
    assert all(job.attempts[-1].claimed_at >= released for job in done)  # it really waited for the lock
