"""The Worker API over real HTTP: registration and fencing, claims (204 on no work and on full
capacity, held claims woken by new work), renewals, progress, cancellation, logs, releases,
stop confirmations and completion reports with their replays (issue 25, item 4)."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import httpx
import pytest

from postproject import ActivityRef, JobId, Production, RepresentationId
from postproject.service import models
from tests.service.conftest import KIND, Service, wait_until
from tests.service.test_client_api import problem

pytestmark = pytest.mark.xdist_group("service_worker_api")  # one worker: tests/README.md

_names = iter(range(1, 10_000))


def register(
    service: Service, capacity: int = 1, kinds: list[str] | None = None
) -> tuple[httpx.Client, str, str]:
    """(a worker-role client, a new worker's name, its session)."""
    client = service.client("worker")
    name = f"node-{next(_names)}"
    answer = client.put(
        f"/v1/workers/{name}", json={"capacity": capacity, "kinds": kinds or [KIND], "host": "h"}
    )
    assert answer.status_code == 200, answer.text
    models.Registration.model_validate(answer.json())
    return client, name, answer.json()["session"]


def claim(service: Service, client: httpx.Client, name: str, session: str, **body: Any) -> dict[str, Any]:
    """Request a job of our own kind, then claim; the claim's answer."""
    answer = client.post(f"/v1/workers/{name}/claims", json={"session": session, **body})
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = answer.json()
    return found


def completion(token: str, report_id: str | None = None, **overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "lease_token": token,
        "report_id": report_id or str(uuid.uuid4()),
        "outcome": "succeeded",
        "output": {"path": "shot010_proxy.mov", "root": "out"},
        "activity": {
            "tool": {"name": "render-tool", "version": "2.1"},
            "agent": {"name": "node"},
            "started_at_unix_micros": 1_800_000_000_000_000,
            "finished_at_unix_micros": 1_800_000_001_000_000,
            "parameters": [{"vocabulary": "https://x.example/ns#", "property": "profile",
                            "value": {"type": "string", "value": "what-i-used"}}],
        },
    }  # fmt: skip
    body.update(overrides)
    return body


def only_kind(service: Service) -> str:
    """A kind no other test requests (so a claim takes this test's job)."""
    return f"org.example:k{uuid.uuid4().hex[:12]}"


def test_registration_heartbeats_and_fencing(service: Service) -> None:
    client, name, session = register(service)
    assert client.post(f"/v1/workers/{name}/heartbeat", json={"session": session}).status_code == 204
    again = client.put(f"/v1/workers/{name}", json={"capacity": 1, "kinds": [KIND]}).json()["session"]
    assert again != session
    problem(client.post(f"/v1/workers/{name}/heartbeat", json={"session": session}), 409, "conflict",
            "worker_session_replaced")  # fmt: skip
    problem(client.post(f"/v1/workers/{name}/claims", json={"session": session}), 409, "conflict",
            "worker_session_replaced")  # fmt: skip
    assert client.post(f"/v1/workers/{name}/heartbeat", json={"session": again}).status_code == 204
    problem(client.post("/v1/workers/nobody/heartbeat", json={"session": again}), 404, "not_found")
    problem(client.put(f"/v1/workers/{name}", json={"capacity": 0}), 400, "invalid_argument")
    problem(client.post(f"/v1/workers/{name}/heartbeat", json={"session": "x"}), 400, "invalid_argument")


def test_204_on_no_work_and_on_full_capacity(service: Service) -> None:
    kind = only_kind(service)
    client, name, session = register(service, capacity=1, kinds=[kind])
    empty = client.post(f"/v1/workers/{name}/claims", json={"session": session})
    assert (empty.status_code, empty.content, empty.headers["retry-after"]) == (204, b"", "1")
    first, _ = service.request_job(kind=kind), service.request_job(kind=kind)
    claimed = claim(service, client, name, session)
    models.Claim.model_validate(claimed)
    assert claimed["job"]["id"] == first["id"] and claimed["job"]["state"] == "claimed"
    assert claimed["job"]["claim_worker"] == name and claimed["lease_token"].startswith("ppl1:")
    full = client.post(f"/v1/workers/{name}/claims", json={"session": session})
    assert (full.status_code, full.content) == (204, b"")  # a second job waits, but capacity is 1


def test_a_held_claim_is_woken_by_new_work(service: Service) -> None:
    kind = only_kind(service)
    _, name, session = register(service, kinds=[kind])
    sent = threading.Event()
    client = service.client("worker", event_hooks={"request": [lambda request: sent.set()]})
    answers: list[httpx.Response] = []
    held = threading.Thread(
        target=lambda: answers.append(
            client.post(f"/v1/workers/{name}/claims", params={"wait_seconds": 30}, json={"session": session})
        )
    )
    held.start()
    assert sent.wait(30)
    assert (
        service.client().get("/v1/health").status_code == 200
    )  # (the held claim reached the service by now)
    job = service.request_job(kind=kind)
    held.join(60)
    assert answers and answers[0].status_code == 200, [a.text for a in answers]
    assert answers[0].json()["job"]["id"] == job["id"]
    worker = service.client("worker")
    problem(worker.post(f"/v1/workers/{name}/claims", params={"wait_seconds": 31}, json={"session": session}),
            400, "invalid_argument")  # fmt: skip


def test_renewal_progress_log_and_a_successful_completion(service: Service) -> None:
    kind = only_kind(service)
    client, name, session = register(service, kinds=[kind])
    job = service.request_job(kind=kind)
    token = claim(service, client, name, session, lease_seconds=120)["lease_token"]
    renewed = client.post("/v1/leases/renew", json={"lease_token": token, "lease_seconds": 300}).json()
    assert renewed["cancel_requested"] is False and renewed["expires_at_unix_micros"] > 0
    reported = client.post("/v1/leases/progress", json={"lease_token": token, "fraction": 0.5, "stage": "encode",
                                                         "message": "frame 12 of 24"})  # fmt: skip
    assert reported.status_code == 200 and reported.json()["cancel_requested"] is False
    shown = service.client("reader").get(f"/v1/jobs/{job['id']}").json()
    assert shown["progress"]["fraction"] == 0.5 and shown["progress"]["stage"] == "encode"
    logged = client.post("/v1/leases/log", json={"lease_token": token, "tail": "line 1\nline 2\n"})
    assert logged.json() == {"job_id": job["id"], "attempt": 1}
    (service.scene.root / "shot010_proxy.mov").write_bytes(b"rendered " + job["id"].encode())
    done = client.put("/v1/leases/completion", json=completion(token))
    assert done.status_code == 200, done.text
    result = done.json()
    assert (result["state"], result["job_id"], result["outcome"]) == ("succeeded", job["id"], "succeeded")
    with Production.open(service.scene.location, read_only=True) as production:
        finished = production.job(JobId(job["id"]))
        assert finished.completion is not None
        assert str(finished.completion.representation_id) == result["representation_id"]
        activity = production.activity(finished.completion.activity_id)
        assert activity.tool is not None and (activity.tool.name, activity.tool.version) == (
            "render-tool",
            "2.1",
        )
        used = production.metadata[ActivityRef(activity.id)]
        assert [(a.property.name, a.value.value) for a in used] == [("profile", "what-i-used")]
        assert production.attempt_log(JobId(job["id"])).tail == "line 1\nline 2\n"
        output = production.representation(RepresentationId(result["representation_id"]))
        assert output.root == "out" and output.path.name == "shot010_proxy.mov"
        history = production.job_history(JobId(job["id"]))
    assert [(h.kind, h.principal) for h in history][-1] == ("job_succeeded", "worker")
    claimed = [h for h in history if h.kind == "job_claimed"]  # (one call: the claim's own revision)
    assert [(h.principal, (h.origin or "").split(" ")[0]) for h in claimed] == [
        ("worker", "postproject-service")
    ]
    problem(client.post("/v1/leases/renew", json={"lease_token": token}), 409, "conflict", "lease_lost")


def test_a_report_sent_again_returns_the_original_and_a_different_one_conflicts(service: Service) -> None:
    kind = only_kind(service)
    client, name, session = register(service, kinds=[kind])
    service.request_job(kind=kind)
    token = claim(service, client, name, session)["lease_token"]
    report = {"lease_token": token, "report_id": "r-1", "outcome": "failed",
              "error": {"code": "decode_error", "message": "frame 3 is damaged"}}  # fmt: skip
    first = client.put("/v1/leases/completion", json=report)
    assert first.status_code == 200 and first.json()["state"] == "failed"
    again = client.put("/v1/leases/completion", json=report)
    assert again.status_code == 200 and again.json() == first.json()
    assert again.headers["idempotent-replayed"] == "true"
    problem(
        client.put("/v1/leases/completion", json={**report, "report_id": "r-2"}),
        409,
        "conflict",
        "report_conflict",
    )
    problem(client.put("/v1/leases/completion", json={**report, "error": {"code": "x", "message": "y"}}), 409,
            "conflict", "report_conflict")  # fmt: skip
    failed = service.client("reader").get(f"/v1/jobs/{first.json()['job_id']}").json()
    assert failed["failure_diagnostic"] == "decode_error: frame 3 is damaged"


def test_a_failure_with_retry_returns_the_job_while_attempts_remain(service: Service) -> None:
    kind = only_kind(service)
    client, name, session = register(service, kinds=[kind])
    job = service.request_job(kind=kind, max_attempts=2)
    token = claim(service, client, name, session)["lease_token"]
    report = {"lease_token": token, "report_id": "retry-1", "outcome": "failed",
              "error": {"code": "tool_crash", "message": "exit 139", "retry": True}}  # fmt: skip
    assert client.put("/v1/leases/completion", json=report).json()["state"] == "requested"
    second = claim(service, client, name, session)
    assert second["job"]["id"] == job["id"] and len(second["job"]["attempts"]) == 2


def test_cancel_reaches_the_worker_through_renewal_and_progress(service: Service) -> None:
    kind = only_kind(service)
    client, name, session = register(service, kinds=[kind])
    job = service.request_job(kind=kind)
    token = claim(service, client, name, session)["lease_token"]
    service.client("supervisor").post(f"/v1/jobs/{job['id']}/cancel")
    (service.scene.root / "shot010_proxy.mov").write_bytes(b"made before the cancel was seen")
    for path in ("/v1/leases/progress", "/v1/leases/renew"):
        answer = client.post(path, json={"lease_token": token})
        assert answer.status_code == 200, answer.text
        assert answer.json() == {"job_id": job["id"], "expires_at_unix_micros": None, "cancel_requested": True,
                                 "stop": "cancelled"}  # fmt: skip
    problem(client.put("/v1/leases/completion", json=completion(token)), 409, "conflict", "lease_lost")
    assert client.post("/v1/leases/log", json={"lease_token": token, "tail": "stopped\n"}).status_code == 200
    confirmed = client.post("/v1/leases/stopped", json={"lease_token": token})
    assert confirmed.json() == {"job_id": job["id"], "outcome": "cancelled"}
    shown = service.client("reader").get(f"/v1/jobs/{job['id']}").json()
    assert shown["stopping"] is False and shown["attempts"][0]["stopped_at_unix_micros"] is not None


def test_requeue_asks_the_holder_to_stop_and_release_gives_a_job_back(service: Service) -> None:
    kind = only_kind(service)
    client, name, session = register(service, capacity=2, kinds=[kind])
    job = service.request_job(kind=kind)
    token = claim(service, client, name, session)["lease_token"]
    service.client("supervisor").post(f"/v1/jobs/{job['id']}/requeue")
    stop = client.post("/v1/leases/renew", json={"lease_token": token}).json()
    assert (stop["cancel_requested"], stop["stop"]) == (True, "requeued")
    again = claim(service, client, name, session)["lease_token"]
    released = client.post("/v1/leases/release", json={"lease_token": again})
    assert released.status_code == 200 and released.json()["job"]["state"] == "requested"
    problem(client.post("/v1/leases/release", json={"lease_token": again}), 409, "conflict", "lease_lost")
    problem(client.post("/v1/leases/stopped", json={"lease_token": "ppl1:nonsense"}), 400, "invalid_argument")


def test_a_completion_after_the_lease_expired_is_refused(service: Service) -> None:
    """The core's rule wins over the roadmap's: a late completion is refused."""
    kind = only_kind(service)
    client, name, session = register(service, kinds=[kind])
    job = service.request_job(kind=kind)
    token = claim(service, client, name, session, lease_seconds=1)["lease_token"]
    (service.scene.root / "late.mov").write_bytes(b"late")
    wait_until(lambda: service.client("reader").get(f"/v1/jobs/{job['id']}").json()["state"] == "requested")
    late = client.put(
        "/v1/leases/completion", json=completion(token, output={"path": "late.mov", "root": "out"})
    )
    problem(late, 409, "conflict", "lease_lost")
    shown = service.client("reader").get(f"/v1/jobs/{job['id']}").json()
    assert shown["attempts"][0]["outcome"] == "lost"  # the hosted sweep returned it (attempts left)


def test_bad_reports(service: Service) -> None:
    client = service.client("worker")
    problem(
        client.put("/v1/leases/completion", json=completion("ppl1:x", outcome="failed")),
        400,
        "invalid_argument",
    )
    problem(client.put("/v1/leases/completion", json={**completion("ppl1:x"), "activity": None}), 400,
            "invalid_argument")  # fmt: skip
    problem(client.put("/v1/leases/completion", json=completion("not-a-token")), 400, "invalid_argument")
    problem(
        client.post("/v1/leases/renew", json={"lease_token": "ppl1:x", "lease_seconds": 0}),
        400,
        "invalid_argument",
    )
    kind = only_kind(service)
    worker, name, session = register(service, kinds=[kind])
    service.request_job(kind=kind)
    token = claim(service, worker, name, session)["lease_token"]
    missing = worker.put(
        "/v1/leases/completion", json=completion(token, output={"path": "nowhere.mov", "root": "out"})
    )
    problem(missing, 422, "io")
    assert (
        worker.post("/v1/leases/renew", json={"lease_token": token}).status_code == 200
    )  # the claim is intact
