"""One bounded pool however many clients call (issue 25, item 1): on PostgreSQL an instance holds
at most two connections per production handle of its pool and two for its listener, while 64
clients request, claim, stream and read at once; and its event streams open no connection."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.service.conftest import Service
from tests.service.test_worker_api import register
from tests.waiting import wait_until

POOL = 4
BOUND = 2 * POOL + 2  # per handle: its write connection and one pooled read; the listener: two
CLIENTS = 64


def connections(counter: Any, name: str) -> int:
    """The service's connections, counted through ``counter``: one connection kept for the whole
    test (a connection per count was itself counted by the next one while its backend exited)."""
    row = counter.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s AND pid <> pg_backend_pid()",
        (name,),
    ).fetchone()
    assert row is not None
    return int(row[0])


@pytest.mark.slow
def test_connections_are_bounded_by_the_pool_not_by_clients(
    service_engine: str, service_factory: Callable[..., Service], request: pytest.FixtureRequest
) -> None:
    if service_engine != "postgresql":
        pytest.skip("counts PostgreSQL connections")
    name = f"svcpool{os.getpid()}"
    service = service_factory("--pool-size", str(POOL), application_name=name)
    from postproject.storage.postgresql import connection, uri

    counter = connection.connect(uri.parse(service.scene.location), autocommit=True)
    request.addfinalizer(counter.close)
    # (a connection the service's start closed may still be listed while its backend exits)
    idle = wait_until(
        lambda: (lambda n: n if 2 <= n <= BOUND else 0)(connections(counter, name)),
        f"the idle service to hold between 2 and {BOUND} connections",
    )
    peak = [idle]
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.02):
            peak.append(connections(counter, name))

    def client(number: int) -> None:
        http = httpx.Client(base_url=service.url, timeout=60)
        token = service.scene.tokens["supervisor"]
        headers = {"Authorization": f"Bearer {token}"}
        try:
            if number % 8 == 0:  # some follow the feed
                with http.stream(
                    "GET", "/v1/revisions/stream", params={"since": 0}, headers=headers
                ) as answer:
                    for index, _ in enumerate(answer.iter_lines()):
                        if index > 20:
                            break
                return
            for _ in range(8):
                http.post("/v1/jobs", json=service.job_body(), headers=headers).raise_for_status()
                http.get("/v1/jobs", params={"limit": 20}, headers=headers).raise_for_status()
                http.get("/v1/jobs/counts", headers=headers).raise_for_status()
        finally:
            http.close()

    workers_client, worker, session = register(service, capacity=4)
    threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
    sampler = threading.Thread(target=sample)
    sampler.start()
    for thread in threads:
        thread.start()
    claims: list[Any] = []
    for _ in range(4):
        claims.append(
            workers_client.post(f"/v1/workers/{worker}/claims", json={"session": session}).status_code
        )
    for thread in threads:
        thread.join(300)
    stop.set()
    sampler.join()
    assert set(claims) <= {200, 204}
    assert max(peak) <= BOUND, (max(peak), BOUND)
    assert connections(counter, name) <= BOUND
    print(f"\nconnections: idle {idle}, peak {max(peak)} with {CLIENTS} clients (bound {BOUND})")
