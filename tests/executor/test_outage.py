"""Workers and followers ride out a lost database server (issue 28 item 1).

A PostgreSQL server of the test's own (durable, so an immediate stop loses no commit) is
stopped with ``pg_ctl stop -m immediate`` and started again on the same port while two
``postproject worker run URI --watch`` processes and a ``revisions follow`` run. Before the
recovery policy every one of them exited with status 7; now they wait the outage out (said
once in their log, which stays all JSON with ``--log-format json``), a job requested after
the restart is done, and the follower printed every revision exactly once.
"""

from __future__ import annotations

import contextlib
import functools
import json
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from postproject import JobRef, JobRequest, JobState, Production, RepresentationKind
from postproject.executor import jobs
from postproject.executor.testclip import ClipInfo
from postproject.model.errors import StorageError
from postproject.storage.postgresql.localserver import LocalServer, _server_command, find_bindir
from tests.cli.helpers import SCRIPT_DIR, script_env
from tests.postgresql_fixtures import in_ci
from tests.waiting import wait_until

pytestmark = pytest.mark.slow


@pytest.fixture
def own_server() -> Iterator[LocalServer]:
    if find_bindir() is None:
        if in_ci():
            pytest.fail("no PostgreSQL server binaries; CI=true, so this is a failure", pytrace=False)
        pytest.skip("no PostgreSQL server binaries")
    with LocalServer(durable=True) as server:
        yield server


def _pg_ctl(server: LocalServer, *args: str | Path) -> None:
    assert server.bindir is not None
    _server_command(server.bindir / "pg_ctl", *args, "--pgdata", server.data, what=f"pg_ctl {args[0]}")


def _request(uri: str, asset: Any, original: Any) -> Any:
    with Production.open(uri) as production, production.edit() as tx:
        job = tx.request_job(
            JobRequest(jobs.THUMBNAIL_KIND, (original,), asset, RepresentationKind.DERIVED, "thumbs")
        )
        tx.add_metadata(JobRef(job), jobs.PROFILE, "thumbnail-640")
        tx.commit()
    return job


def _states(uri: str, job_ids: list[Any]) -> list[JobState] | None:
    try:
        with Production.open(uri) as production:
            return [production.job(j).state for j in job_ids]
    except StorageError:
        return None


def _farm(server: LocalServer, name: str, tmp_path: Path, clip: ClipInfo) -> tuple[str, Any, Any]:
    """A production ``name`` in a new database ``farm`` with a clip under the media root
    ``media`` and a root ``thumbs`` for the outputs: (its URI, the asset, the original)."""
    server.create_database("farm")
    uri = server.uri("farm", production=name)
    (tmp_path / "media").mkdir()
    (tmp_path / "thumbs").mkdir()
    shutil.copyfile(clip.path, tmp_path / "media" / "A.mov")
    with Production.create(uri) as production, production.edit() as tx:
        tx.add_media_root("media", tmp_path / "media")
        tx.add_media_root("thumbs", tmp_path / "thumbs")
        asset = tx.create_asset("A001")
        original = tx.add_representation(asset, RepresentationKind.ORIGINAL, "A.mov", root="media")
        tx.commit()
    return uri, asset, original


def test_workers_and_a_follower_ride_out_a_server_restart(
    own_server: LocalServer, tmp_path: Path, clip: ClipInfo
) -> None:
    server = own_server
    uri, asset, original = _farm(server, "restart", tmp_path, clip)
    before = [_request(uri, asset, original) for _ in range(2)]

    env = script_env() | {"POSTPROJECT_CONFIG": "/dev/null"}
    script = str(SCRIPT_DIR / "postproject")
    logs = [tmp_path / f"worker{n}.log" for n in (1, 2)]
    followed = tmp_path / "follow.jsonl"
    worker_args = ["--watch", "--lease", "10s", "--log-format", "json", "--kind", "generate-thumbnail"]
    with contextlib.ExitStack() as files:
        workers = [
            subprocess.Popen(
                [script, "worker", "run", uri, *worker_args, "--agent-name", f"w{n}"],
                stdout=subprocess.DEVNULL,
                stderr=files.enter_context(log.open("wb")),
                env=env,
            )
            for n, log in zip((1, 2), logs, strict=True)
        ]
        follower = subprocess.Popen(
            [script, "--json", "revisions", "follow", uri, "--from", "0"],
            stdout=files.enter_context(followed.open("wb")),
            stderr=files.enter_context((tmp_path / "follow.err").open("wb")),
            env=env,
        )
    try:
        wait_until(lambda: _states(uri, before) == [JobState.SUCCEEDED] * 2, "the first jobs done", 120)
        _pg_ctl(server, "stop", "--mode", "immediate", "--wait", "--silent")
        for log in logs:  # every worker met the outage (its idle lanes, heartbeats, sweeps)
            wait_until(functools.partial(_says, log, "database unreachable"), "the outage logged", 150)
        follow_err = tmp_path / "follow.err"
        wait_until(lambda: "database unreachable" in follow_err.read_text(), "the follower's outage", 60)
        assert [w.poll() for w in workers] == [None, None], "a worker exited during the outage"
        assert follower.poll() is None, "the follower exited during the outage"
        _pg_ctl(server, "start", "--log", server.log_path, "--wait", "--silent")
        after = wait_until(lambda: _try_request(uri, asset, original), "a request after the restart", 60)
        wait_until(lambda: _states(uri, [after]) == [JobState.SUCCEEDED], "the new job done", 120)
        for log in logs:  # a worker still in its backoff when the new job was done comes back too
            wait_until(functools.partial(_says, log, "answers again"), "the worker back", 90)
        assert [w.poll() for w in workers] == [None, None]
    finally:
        try:
            for worker in workers:
                if worker.poll() is None:
                    worker.send_signal(signal.SIGTERM)
            codes = [w.wait(60) for w in workers]
            with Production.open(uri) as production:
                latest = production.latest_sequence()
            wait_until(
                lambda: _followed(followed)[-1:] == [latest], "the follower at the newest revision", 30
            )
        finally:  # (also when the above failed: no process of the test's outlives it)
            if follower.poll() is None:
                follower.send_signal(signal.SIGINT)
            follow_code = follower.wait(60)
    assert codes == [143, 143]
    assert follow_code == 0, (tmp_path / "follow.err").read_text()

    for log in logs:
        lines = log.read_text().splitlines()
        records = [json.loads(line) for line in lines]  # all JSON, also during the outage
        messages = [r["message"] for r in records]
        assert sum("database unreachable, retrying" in m for m in messages) >= 1, messages
        assert any("the database answers again" in m for m in messages), messages
        assert not any(r["level"] == "error" for r in records), messages
    said = follow_err.read_text()
    assert said.count("database unreachable, retrying") == 1, said  # once per outage
    assert "database answers again" in said, said
    assert _followed(followed) == list(range(1, latest + 1))  # every revision, once, in order


def _says(path: Path, text: str) -> bool:
    return text in path.read_text()


def _followed(path: Path) -> list[int]:
    return [json.loads(line)["sequence"] for line in path.read_text().splitlines() if line.endswith("}")]


def _try_request(uri: str, asset: Any, original: Any) -> Any:
    try:
        return _request(uri, asset, original)
    except StorageError:
        return None


def test_a_worker_started_while_the_server_is_down_waits_for_it(
    own_server: LocalServer, tmp_path: Path, clip: ClipInfo
) -> None:
    """A node that boots while the database restarts keeps trying instead of exiting (before,
    opening the production was outside the recovery policy: exit 7 at once)."""
    server = own_server
    uri, asset, original = _farm(server, "boot", tmp_path, clip)
    _pg_ctl(server, "stop", "--mode", "immediate", "--wait", "--silent")
    log = tmp_path / "worker.log"
    env = script_env() | {"POSTPROJECT_CONFIG": "/dev/null"}
    with log.open("wb") as out:
        worker = subprocess.Popen(
            [str(SCRIPT_DIR / "postproject"), "worker", "run", uri, "--watch", "--lease", "10s",
             "--log-format", "json", "--kind", "generate-thumbnail", "--agent-name", "early"],
            stdout=subprocess.DEVNULL, stderr=out, env=env,
        )  # fmt: skip
    try:
        said = functools.partial(_says, log, "database unreachable")
        wait_until(lambda: said() or worker.poll() is not None, "the outage logged", 60)
        assert worker.poll() is None, log.read_text()  # it waits rather than exits
        _pg_ctl(server, "start", "--log", server.log_path, "--wait", "--silent")
        job = wait_until(lambda: _try_request(uri, asset, original), "a request after the start", 60)
        wait_until(
            lambda: _states(uri, [job]) == [JobState.SUCCEEDED], "the job done by the early worker", 120
        )
    finally:
        if worker.poll() is None:
            worker.send_signal(signal.SIGTERM)
        code = worker.wait(60)
    assert code == 143, log.read_text()
