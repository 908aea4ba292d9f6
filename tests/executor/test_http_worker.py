"""``postproject worker run http(s)://HOST:PORT --token-file FILE`` as a real process beside a
real ``postproject serve`` (issue 25 items 2 and 5).

The worker process runs with psycopg made unimportable (``sys.modules`` entries set to None
before anything is imported), so on PostgreSQL too it proves that a worker node needs no
database driver: every fact it reads and writes goes through the Worker API. A cancel sent
while it encodes reaches it through its next progress report, which it sends at least every
second: the test waits at most 2 s for the worker to say it saw it.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from postproject import JobId, JobState, Production
from postproject.model.access import ApiRole
from postproject.model.jobs import AttemptOutcome, Job
from tests.executor.conftest import Studio
from tests.executor.test_cancel_process import encoding, long_clip, long_job, poll
from tests.service.conftest import free_port
from tests.waiting import wait_until

pytestmark = [pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"), pytest.mark.slow]
__all__ = ["long_clip"]  # the fixture, shared with test_cancel_process

ROOT = Path(__file__).resolve().parents[2]
WITHOUT_DRIVER = (
    "import sys; sys.modules.update(dict.fromkeys(['psycopg', 'psycopg_pool', 'psycopg_c', 'psycopg_binary']));"
    "from postproject.cli.app import console_main; code = console_main();"
    "assert not [m for m in sys.modules if m.startswith('psycopg') and sys.modules[m] is not None];"
    "sys.exit(code)"
)


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "core"), str(ROOT / "gui")])}


class Farm:
    """A service over the studio's production, and token files for a worker and a supervisor."""

    def __init__(self, studio: Studio, tmp: Path) -> None:
        with studio.production.edit() as tx:
            secrets = {
                "worker": tx.create_api_token("node", ApiRole.WORKER).secret,
                "supervisor": tx.create_api_token("ana", ApiRole.SUPERVISOR).secret,
            }
            tx.commit()
        self.tokens = {}
        for name, secret in secrets.items():
            (tmp / f"{name}.token").write_text(secret + "\n")
            self.tokens[name] = str(tmp / f"{name}.token")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tmp / "service.log"
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "postproject", "serve", studio.path, "--listen", f"127.0.0.1:{self.port}"],
                stdout=log, stderr=subprocess.STDOUT, env=_env(), start_new_session=True,
            )  # fmt: skip
        wait_until(self._healthy, "the service to answer")

    def _healthy(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"the service exited: {self.log.read_text()[-3000:]}")
        try:
            return httpx.get(f"{self.url}/v1/health", timeout=1.0).status_code == 200
        except httpx.TransportError:
            return False

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class Node:
    """A worker process over HTTP without a database driver; its stderr lines in a queue."""

    def __init__(self, farm: Farm, *extra: str) -> None:
        command = [sys.executable, "-c", WITHOUT_DRIVER, "worker", "run", farm.url,
                   "--token-file", farm.tokens["worker"], *extra]  # fmt: skip
        self.proc = subprocess.Popen(
            command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=_env()
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self._pump = threading.Thread(target=self._read, daemon=True)
        self._pump.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.put(line)

    def said(self, text: str) -> bool:
        while not self.lines.empty():
            self.seen.append(self.lines.get_nowait())
        return any(text in line for line in self.seen)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self._pump.join(10)
        assert self.proc.stderr is not None
        self.proc.stderr.close()


@pytest.fixture
def farm(studio: Studio, tmp_path: Path) -> Iterator[Farm]:
    running = Farm(studio, tmp_path)
    yield running
    running.stop()


@pytest.fixture
def nodes() -> Iterator[list[Node]]:
    made: list[Node] = []
    yield made
    for node in made:
        node.close()


def test_a_worker_without_a_database_driver_does_a_job_through_the_service(
    studio: Studio, farm: Farm, nodes: list[Node]
) -> None:
    job_id = studio.request(profile="proxy-720p")
    nodes.append(Node(farm, "--once", "--agent-name", "node-a"))
    code = nodes[-1].proc.wait(120)
    assert code == 0, "".join(nodes[-1].seen) + nodes[-1].lines.qsize() * "?"
    with Production.open(studio.path, read_only=True) as production:
        job = production.job(job_id)
        assert job.state is JobState.SUCCEEDED
        assert job.completion is not None
        output = production.representation(job.completion.representation_id)
        assert output.root == "proxies"
    assert studio.outputs() == [output.path.name]


def _poll(location: str, job_id: JobId, until: Callable[[Job], bool], what: str) -> Job:
    return poll(location, job_id, until, what)  # type: ignore[arg-type]  # a location: a path or URI


def test_a_cancel_reaches_a_worker_over_http_within_two_seconds(
    studio: Studio, farm: Farm, nodes: list[Node], long_clip: Path
) -> None:
    job_id = long_job(studio, long_clip)
    node = Node(farm, "--once", "--lease", "60s", "--agent-name", "node-b")
    nodes.append(node)
    _poll(studio.path, job_id, encoding, "encode progress")
    cancel = subprocess.run(
        [sys.executable, "-m", "postproject", "job", "cancel", farm.url, str(job_id),
         "--token-file", farm.tokens["supervisor"]],
        capture_output=True, text=True, env=_env(), timeout=60, check=False,
    )  # fmt: skip
    assert cancel.returncode == 0, cancel.stderr
    # the bound the design promises (progress at least every second): waited for, not timed
    wait_until(lambda: node.said("the job was cancelled; stopping"), "the worker to see the cancel", 2.0)
    assert node.proc.wait(60) == 0
    stopped = _poll(studio.path, job_id, lambda j: j.attempts[0].stopped_at is not None, "the stop")
    assert stopped.state is JobState.CANCELLED
    assert stopped.attempts[0].outcome is AttemptOutcome.CANCELLED
    assert studio.outputs() == []


def test_a_refused_token_ends_the_worker_at_once(farm: Farm, nodes: list[Node], tmp_path: Path) -> None:
    """Retrying cannot cure a token the service refuses: the worker exits 7 and says why (in
    JSON with --log-format json), instead of waiting as it does for an unreachable service."""
    wrong = tmp_path / "wrong.token"
    wrong.write_text("pp_not_a_token\n")
    farm.tokens["worker"] = str(wrong)
    node = Node(farm, "--watch", "--log-format", "json")
    nodes.append(node)
    assert node.proc.wait(60) == 7
    node.said("")
    records = [json.loads(line) for line in node.seen]  # every line JSON, the final error too
    assert records and records[-1]["level"] == "error", records
    assert "auth" in json.dumps(records[-1]).lower(), records[-1]
