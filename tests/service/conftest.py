"""A real service process on a free port over a real production, on both engines.

``service`` is one ``postproject serve`` process per test module and engine (starting one
costs about a second): tests talk to it over real HTTP with httpx, with tokens of every role
made through the public API before it starts. Tests that stop or restart a service, or need
one of their own, use ``service_factory``. A module's service is stopped at its end with
SIGTERM, which must drain and exit 0.
"""

from __future__ import annotations

import itertools
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from postproject import Production, RepresentationKind
from postproject.model import clock as clocks
from postproject.model.access import ApiRole

ENGINES = ("sqlite", "postgresql")
ROOT = Path(__file__).resolve().parents[2]
ROLES = {
    "reader": ApiRole.READER,
    "submitter": ApiRole.SUBMITTER,
    "other_submitter": ApiRole.SUBMITTER,
    "supervisor": ApiRole.SUPERVISOR,
    "worker": ApiRole.WORKER,
}
KIND = "org.example:render"
_numbers = itertools.count(1)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(condition: Callable[[], Any], timeout: float = 30.0, step: float = 0.05) -> Any:
    """``condition()``'s first truthy value, polled until ``timeout`` (then an AssertionError)."""
    deadline = clocks.monotonic() + timeout
    while True:
        found = condition()
        if found:
            return found
        if clocks.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        _sleep(step)


def _sleep(seconds: float) -> None:
    import threading

    threading.Event().wait(seconds)


@dataclass
class Scene:
    """A production with media roots, an input representation and an asset to request into."""

    location: str
    root: Path  # the output media root's directory ("out")
    asset: str
    source: str  # an input representation id
    tokens: dict[str, str] = field(default_factory=dict)


def make_scene(location: str, tmp: Path) -> Scene:
    media, out = tmp / "media", tmp / "out"
    media.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    (media / "in.mov").write_bytes(b"camera original")
    with Production.create(location) as production:
        with production.edit(origin="test") as tx:
            tx.add_media_root("media", media)
            tx.add_media_root("out", out)
            asset = tx.create_asset("shot 010")
            source = tx.add_representation(asset, RepresentationKind.ORIGINAL, "in.mov", root="media")
            tokens = {name: tx.create_api_token(name, role).secret for name, role in ROLES.items()}
            tokens["revoked"] = tx.create_api_token("revoked", ApiRole.SUPERVISOR).secret
            soon = production.clock.now() + timedelta(seconds=1)
            tokens["expired"] = tx.create_api_token("expired", ApiRole.SUPERVISOR, expires_at=soon).secret
            tx.commit()
        with production.edit() as tx:
            tx.revoke_api_token("revoked")
            tx.commit()
    return Scene(location, out, str(asset), str(source), tokens)


class Service:
    """One ``postproject serve`` process (started by :meth:`start`, SIGTERM'd by :meth:`stop`)."""

    def __init__(self, scene: Scene, log_path: Path, args: tuple[str, ...] = ()) -> None:
        self.scene = scene
        self.log_path = log_path
        self.args = args
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.clients: list[httpx.Client] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Service:
        self.port = free_port()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "core"), str(ROOT / "gui")])}
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "postproject", "serve", self.scene.location,
                 "--listen", f"127.0.0.1:{self.port}", "--root-map", f"out={self.scene.root}", *self.args],
                stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
            )  # fmt: skip
        wait_until(self._healthy, timeout=60.0)
        return self

    def _healthy(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise AssertionError(f"the service exited ({self.process.returncode}):\n{self.log()[-3000:]}")
        try:
            return httpx.get(f"{self.url}/v1/health", timeout=1.0).status_code == 200
        except httpx.TransportError:
            return False

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60.0) -> int:
        """Signal the process and wait for it; its exit status."""
        for client in self.clients:
            client.close()
        self.clients.clear()
        process = self.process
        if process is None:
            return 0
        if process.poll() is None:
            process.send_signal(sig)
        try:
            return process.wait(timeout)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            self.process = None

    def client(self, token: str | None = None, **kwargs: Any) -> httpx.Client:
        """An HTTP client for ``token`` (a role's name in the scene, or a raw token text)."""
        headers = dict(kwargs.pop("headers", {}))
        if token is not None:
            secret = self.scene.tokens.get(token, token)
            headers["Authorization"] = f"Bearer {secret}"
        client = httpx.Client(
            base_url=self.url, headers=headers, timeout=kwargs.pop("timeout", 60.0), **kwargs
        )
        self.clients.append(client)
        return client

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    # --- helpers for tests ---------------------------------------------------------------

    def job_body(self, **overrides: Any) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": KIND,
            "inputs": [self.scene.source],
            "output_asset_id": self.scene.asset,
            "output_kind": "proxy",
            "target_root": "out",
        }
        body.update(overrides)
        return body

    def request_job(self, token: str = "supervisor", **overrides: Any) -> dict[str, Any]:
        answer = self.client(token).post("/v1/jobs", json=self.job_body(**overrides))
        assert answer.status_code == 201, answer.text
        job: dict[str, Any] = answer.json()
        return job


@pytest.fixture(scope="module", params=ENGINES)
def service_engine(request: pytest.FixtureRequest) -> str:
    wanted = os.environ.get("PP_TEST_ENGINES", ",".join(ENGINES)).split(",")
    if request.param not in wanted:
        pytest.skip(f"PP_TEST_ENGINES leaves out {request.param}")
    return str(request.param)


@pytest.fixture(scope="module")
def service_factory(
    service_engine: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[..., Service]]:
    """Make a scene (a new production) and a service over it (not started unless ``start``)."""
    made: list[Service] = []

    def make(*args: str, start: bool = True, application_name: str | None = None) -> Service:
        number = next(_numbers)
        tmp = tmp_path_factory.mktemp(f"service{number}")
        if service_engine == "sqlite":
            location = str(tmp / "show.pproj")
        else:
            from tests.postgresql_fixtures import SHARED_DATABASE

            server = request.getfixturevalue("postgres_server")
            location = server.uri(SHARED_DATABASE, production=f"svc{os.getpid()}_{number}")
            if application_name is not None:  # its connections are then counted by that name
                location += f"&application_name={application_name}"
        scene = make_scene(location, tmp)
        service = Service(scene, tmp / "service.log", args)
        made.append(service)
        return service.start() if start else service

    yield make
    for service in made:
        service.stop(signal.SIGKILL, timeout=10)


@pytest.fixture(scope="module")
def service(service_factory: Callable[..., Service]) -> Iterator[Service]:
    """The module's service (stopped with SIGTERM at the module's end: it must exit 0)."""
    running = service_factory()
    yield running
    assert running.stop() == 0, running.log()[-3000:]
