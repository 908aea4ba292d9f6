"""Three of the service's promises (issue 25, items 1, 3 and 4): an event stream's keep-alive
comment after the quiet time, the request time limit (``504`` as a problem, nothing committed,
the instance healthy afterwards), and ``--no-sweep`` (an instance started with it never finalises
an expired claim; one without it does).

The first two need limits shorter than the defaults (15 s, 30 s), which the CLI does not take: they
run the application in this process, built by ``create_app`` with a short ``keep_alive`` or
``time_limit`` and served by uvicorn in a thread on a socket bound to a free port. The third runs
real ``postproject serve`` processes, with and without ``--no-sweep``.
"""

from __future__ import annotations

import functools
import itertools
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from postproject.model import clock as clocks
from postproject.service.app import create_app
from postproject.service.config import SWEEP_INTERVAL, ServiceConfig
from postproject.service.server import DrainingServer
from tests.service.conftest import Scene, Service, wait_until
from tests.service.test_client_api import problem
from tests.service.test_worker_api import claim, only_kind, register

TIME_LIMIT = 1.0  # seconds: a request's limit in the in-process service of the time-limit test


class InProcessService(Service):
    """The application of ``config`` under uvicorn in a thread of this process (same helpers as
    :class:`Service`: ``client``, ``request_job``; no log file, no process)."""

    def __init__(self, scene: Scene, **limits: Any) -> None:
        super().__init__(scene, Path("/dev/null"))
        self.config = ServiceConfig(scene.location, root_map={"out": str(scene.root)}, **limits)
        self.server: DrainingServer | None = None
        self.thread: threading.Thread | None = None

    def start(self) -> InProcessService:
        app = create_app(self.config)
        settings = uvicorn.Config(
            app, log_config=None, access_log=False, lifespan="on", timeout_graceful_shutdown=5
        )
        self.server = server = DrainingServer(settings, app)
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))  # bound here, so no other test can take the port meanwhile
        self.port = int(sock.getsockname()[1])
        self.thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        self.thread.start()
        wait_until(lambda: server.started or not self.thread or not self.thread.is_alive(), timeout=60)
        assert server.started, "the in-process service did not start"
        return self

    def stop(self, sig: int = 0, timeout: float = 60.0) -> int:
        for client in self.clients:
            client.close()
        self.clients.clear()
        server, thread, self.server, self.thread = self.server, self.thread, None, None
        if server is None or thread is None:
            return 0
        server.should_exit = True  # its clients are closed: the shutdown has nothing to wait for
        thread.join(timeout)
        assert not thread.is_alive(), "the in-process service did not stop"
        return 0


@pytest.fixture
def in_process(
    service_factory: Callable[..., Service],
) -> Iterator[Callable[..., InProcessService]]:
    """Start an in-process service with the given limits over a new scene (stopped at the end)."""
    made: list[InProcessService] = []

    def make(**limits: Any) -> InProcessService:
        scene = service_factory(start=False).scene
        service = InProcessService(scene, **limits)
        made.append(service)
        return service.start()

    yield make
    for service in made:
        service.stop()


def test_a_quiet_stream_gets_a_keep_alive_comment_after_the_quiet_time(
    in_process: Callable[..., InProcessService],
) -> None:
    quiet = 0.3
    service = in_process(keep_alive=quiet)
    # A read waits at most this for its next line: far more than the quiet time configured here,
    # far less than the default's 15 s (a stream that ignored its configuration would fail).
    reader = service.client("reader", timeout=8.0)
    comments: list[float] = []  # when each keep-alive came (monotonic)
    with reader.stream("GET", "/v1/revisions/stream") as answer:
        assert answer.status_code == 200
        for line in answer.iter_lines():
            assert not line.startswith(("id:", "event:", "data:")), line  # nothing happens: no event
            if line == ": keep-alive":
                comments.append(clocks.monotonic())
                if len(comments) == 3:  # one after each quiet time, not a single one
                    break
    assert len(comments) == 3
    # One per quiet time, not a burst (a loose lower bound: delivery jitter may shorten a gap a
    # little, a slow machine only lengthens them).
    gaps = [later - earlier for earlier, later in itertools.pairwise(comments)]
    assert all(gap >= quiet / 2 for gap in gaps), gaps


@contextmanager
def writes_blocked(service_engine: str, scene: Scene, job_id: str) -> Iterator[None]:
    """While open, the production's writes wait: on SQLite another connection holds its write
    lock; on PostgreSQL another transaction holds the row lock of ``job_id`` (a cancel waits for
    it before its commit) and the revision-numbering lock (every commit waits for it)."""
    if service_engine == "sqlite":
        import sqlite3

        conn = sqlite3.connect(scene.location, isolation_level=None)
        try:
            conn.execute("BEGIN IMMEDIATE")
            yield
            conn.execute("ROLLBACK")
        finally:
            conn.close()
        return
    from postproject.storage.postgresql import connection, uri
    from postproject.storage.postgresql.statements import NUMBERING_LOCK

    with connection.connect(uri.parse(scene.location)) as pg, pg.transaction():
        pg.execute("SELECT 1 FROM jobs WHERE id = %s FOR UPDATE", (job_id,))
        pg.execute(NUMBERING_LOCK)
        yield


@pytest.mark.slow
def test_a_request_over_its_time_limit_answers_504_and_commits_nothing(
    service_engine: str, in_process: Callable[..., InProcessService]
) -> None:
    # One handle: a request after a 504 gets it only once the call answered 504 has ended (its
    # outcome is then final, whatever it was).
    service = in_process(time_limit=TIME_LIMIT, pool_size=1)
    supervisor = service.client("supervisor")
    job = service.request_job()
    counts = supervisor.get("/v1/jobs/counts").json()

    def settled() -> dict[str, Any] | None:
        answer = supervisor.get(f"/v1/jobs/{job['id']}")
        return answer.json() if answer.status_code == 200 else None  # 504 while the handle is lent

    cancel = functools.partial(supervisor.post, f"/v1/jobs/{job['id']}/cancel")
    request = functools.partial(supervisor.post, "/v1/jobs", json=service.job_body())
    for attempt in (cancel, request):
        with writes_blocked(service_engine, service.scene, job["id"]):
            body = problem(attempt(), 504, "timeout")
            assert f"{TIME_LIMIT:g} s" in body["detail"]
            assert supervisor.get("/v1/health").status_code == 200
            # Held past the time limit: on PostgreSQL the statement timeout has ended the call;
            # on SQLite it still waits for the write lock (10 s) and takes it once it is free.
            threading.Event().wait(3 * TIME_LIMIT)
        assert wait_until(settled, timeout=60)["state"] == "requested"  # no cancel committed
        assert supervisor.get("/v1/jobs/counts").json() == counts  # no job requested
    assert supervisor.get("/v1/ready").status_code == 200
    cancelled = supervisor.post(f"/v1/jobs/{job['id']}/cancel")
    assert cancelled.status_code == 200, cancelled.text
    assert service.request_job()["state"] == "requested"


@pytest.mark.slow
def test_no_sweep_never_finalises_an_expired_claim_and_an_instance_without_it_does(
    service_factory: Callable[..., Service], tmp_path: Path
) -> None:
    quiet = service_factory("--no-sweep")
    kind = only_kind(quiet)
    worker, name, session = register(quiet, capacity=2, kinds=[kind])
    requeued = quiet.request_job(kind=kind, max_attempts=2)["id"]  # an attempt left after the first
    failed = quiet.request_job(kind=kind, max_attempts=1)["id"]  # none left
    leases = [claim(quiet, worker, name, session, lease_seconds=1) for _ in range(2)]
    assert {lease["job"]["id"] for lease in leases} == {requeued, failed}
    expiry = max(lease["expires_at_unix_micros"] for lease in leases)
    wait_until(lambda: clocks.wall_millis() * 1000 > expiry + 100_000, timeout=60)
    # A restart after the expiry: an instance's first sweep pass runs at its start (not here).
    assert quiet.stop() == 0
    quiet.start()
    threading.Event().wait(2 * SWEEP_INTERVAL + 1)  # two sweep intervals, and some
    reader = quiet.client("reader")
    for job in (requeued, failed):
        assert reader.get(f"/v1/jobs/{job}").json()["state"] == "claimed"
        kinds = [h["kind"] for h in reader.get(f"/v1/jobs/{job}/history").json()["items"]]
        assert kinds == ["job_requested", "job_claimed"], kinds
    sweeping = Service(quiet.scene, tmp_path / "sweeping.log").start()  # no --no-sweep: it sweeps
    try:
        states = {requeued: "requested", failed: "failed"}

        def finalised() -> bool:
            return all(reader.get(f"/v1/jobs/{job}").json()["state"] == s for job, s in states.items())

        wait_until(finalised, timeout=60)
        kinds = [h["kind"] for h in reader.get(f"/v1/jobs/{requeued}/history").json()["items"]]
        assert kinds == ["job_requested", "job_claimed", "job_lost"], kinds
    finally:
        assert sweeping.stop() == 0, sweeping.log()[-3000:]
    assert quiet.stop() == 0, quiet.log()[-3000:]
