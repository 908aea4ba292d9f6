"""A service's life: event streams (resume without gap or duplicate, the stream limit), restarts
(idempotent replays and completion reports survive them), and shutdowns that drain and exit 0."""

from __future__ import annotations

import json
import signal
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.service.conftest import Service, wait_until
from tests.service.test_client_api import problem
from tests.service.test_worker_api import claim, completion, only_kind, register

pytestmark = pytest.mark.xdist_group("service_lifecycle")  # one worker: tests/README.md


def events(answer: httpx.Response) -> Iterator[tuple[int, dict[str, Any]]]:
    """(sequence, revision) of each event of an open stream, as they arrive."""
    fields: dict[str, str] = {}
    for line in answer.iter_lines():
        if line.startswith(":"):
            continue
        if not line:
            if fields.get("event") == "revision":
                yield int(fields["id"]), json.loads(fields["data"])
            fields = {}
            continue
        name, _, value = line.partition(":")
        fields[name] = value.removeprefix(" ")


def test_a_stream_resumes_after_last_event_id_without_gap_or_duplicate(service: Service) -> None:
    reader = service.client("reader")
    head = reader.get("/v1/ready").json()["latest_sequence"]
    made = [service.request_job("submitter")["id"] for _ in range(3)]
    seen: list[int] = []
    with reader.stream("GET", "/v1/revisions/stream", params={"since": head}) as answer:
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("text/event-stream")
        for sequence, revision in events(answer):
            seen.append(sequence)
            assert revision["sequence"] == sequence and revision["principal"] == "submitter"
            if len(seen) == 2:
                break
    assert seen == [head + 1, head + 2]
    made.append(service.request_job("submitter")["id"])
    resumed: list[tuple[int, dict[str, Any]]] = []
    with reader.stream("GET", "/v1/revisions/stream", headers={"Last-Event-ID": str(seen[-1])}) as answer:
        for found in events(answer):
            resumed.append(found)
            if len(resumed) == 2:
                break
    assert [s for s, _ in resumed] == [head + 3, head + 4]
    requested = [e["job_id"] for _, r in resumed for e in r["events"]]
    assert requested == made[2:]
    problem(reader.get("/v1/revisions/stream", headers={"Last-Event-ID": "x"}), 400, "invalid_argument")


def test_a_stream_without_a_start_follows_new_revisions(service: Service) -> None:
    reader = service.client("reader")
    got: list[dict[str, Any]] = []
    opened = threading.Event()

    def follow() -> None:
        with reader.stream("GET", "/v1/revisions/stream") as answer:
            opened.set()  # the headers came: the stream starts at the head as it was then
            for _, revision in events(answer):
                got.append(revision)
                return

    thread = threading.Thread(target=follow)
    thread.start()
    assert opened.wait(60)
    job = service.request_job("submitter")
    thread.join(60)
    assert got and got[0]["events"][0]["job_id"] == job["id"]


@pytest.fixture(scope="module")
def small(service_factory: Callable[..., Service]) -> Iterator[Service]:
    """A service of its own (these tests stop and restart it)."""
    service = service_factory()
    yield service
    service.stop()


def test_replays_and_reports_survive_a_restart(small: Service) -> None:
    kind = only_kind(small)
    body = small.job_body(kind=kind)
    submitter = small.client("submitter", headers={"Idempotency-Key": "across-restart"})
    first = submitter.post("/v1/jobs", json=body)
    worker, name, session = register(small, kinds=[kind])
    token = claim(small, worker, name, session, lease_seconds=600)["lease_token"]
    (small.scene.root / "shot010_proxy.mov").write_bytes(b"rendered")
    report = completion(token, report_id=str(uuid.uuid4()))
    done = worker.put("/v1/leases/completion", json=report)
    assert done.status_code == 200
    assert small.stop() == 0
    small.start()
    submitter = small.client("submitter", headers={"Idempotency-Key": "across-restart"})
    again = submitter.post("/v1/jobs", json=body)
    assert (again.status_code, again.json(), again.headers["location"]) == (
        201,
        first.json(),
        first.headers["location"],
    )
    problem(
        submitter.post("/v1/jobs", json={**body, "priority": 5}), 409, "conflict", "idempotency_key_conflict"
    )
    worker = small.client("worker")
    replayed = worker.put("/v1/leases/completion", json=report)
    assert (replayed.status_code, replayed.json()) == (200, done.json())
    problem(worker.put("/v1/leases/completion", json={**report, "report_id": "another"}), 409, "conflict",
            "report_conflict")  # fmt: skip


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_drains_streams_and_held_claims_and_exits_0(small: Service, sig: int) -> None:
    if small.process is None:
        small.start()
    kind = only_kind(small)
    for _attempt in range(3):
        worker, name, session = register(small, kinds=[kind])  # (a restart closed the clients)
        ended = _signal_while_held(small, worker, name, session, sig)
        if ended is not None:
            break
    else:
        pytest.fail("the held claim never reached the service before the signal, in 3 attempts")
    assert isinstance(ended["claim"], httpx.Response) and ended["claim"].status_code == 204
    assert "stream" in ended


def _signal_while_held(
    small: Service, worker: httpx.Client, name: str, session: str, sig: int
) -> dict[str, Any] | None:
    """Hold a claim and a stream, signal the service, restart it; what the two got, or None
    when the claim request never reached the service (sent on a kept-alive connection as the
    signal came: the server closes idle connections at once, a request on one is never read).
    Whether it reached it is in the access log, which lists every request it answered."""
    reader = small.client("reader")
    ended: dict[str, Any] = {}
    answered = small.log().count("/claims?wait_seconds=30")

    def stream() -> None:
        with reader.stream("GET", "/v1/revisions/stream") as answer:
            ended["status"] = answer.status_code
            for _ in events(answer):
                pass
        ended["stream"] = True

    def held() -> None:
        try:
            ended["claim"] = worker.post(
                f"/v1/workers/{name}/claims", params={"wait_seconds": 30}, json={"session": session}
            )
        except httpx.TransportError as exc:
            ended["claim"] = exc

    threads = [threading.Thread(target=stream), threading.Thread(target=held)]
    for thread in threads:
        thread.start()
    wait_until(lambda: "status" in ended)
    assert small.process is not None
    small.process.send_signal(sig)
    for thread in threads:  # a drain ends both at once (streams within 5 s), not at their timeouts
        thread.join(30)
    assert small.process.wait(60) == 0  # by itself, on the one signal (a second one cuts a drain short)
    assert small.stop() == 0 and "Finished server process" in small.log()
    reached = small.log().count("/claims?wait_seconds=30") > answered
    small.start()
    return ended if reached or isinstance(ended.get("claim"), httpx.Response) else None


@pytest.mark.slow
def test_two_instances_sweep_and_finalise_each_lost_claim_once(
    service_engine: str, service_factory: Callable[..., Service], tmp_path: Path
) -> None:
    """Several instances over one PostgreSQL production, each running the hosted sweep."""
    if service_engine != "postgresql":
        pytest.skip("several instances serve a PostgreSQL production")
    first = service_factory()
    second = Service(first.scene, tmp_path / "second.log").start()
    try:
        kind = only_kind(first)
        worker, name, session = register(first, capacity=6, kinds=[kind])
        jobs = [first.request_job(kind=kind, max_attempts=3)["id"] for _ in range(6)]
        for _ in jobs:
            claim(first, worker, name, session, lease_seconds=1)
        reader = second.client("reader")

        def all_returned() -> bool:
            return all(reader.get(f"/v1/jobs/{job}").json()["state"] == "requested" for job in jobs)

        wait_until(all_returned, timeout=60)
        for job in jobs:
            kinds = [h["kind"] for h in reader.get(f"/v1/jobs/{job}/history").json()["items"]]
            assert kinds == ["job_requested", "job_claimed", "job_lost"], kinds
    finally:
        assert second.stop() == 0
        first.stop()
