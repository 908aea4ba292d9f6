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

import itertools
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from postproject.model import clock as clocks
from postproject.service.app import create_app
from postproject.service.config import ServiceConfig
from postproject.service.server import DrainingServer
from tests.service.conftest import Scene, Service, wait_until


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
