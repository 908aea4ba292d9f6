"""The Client API over real HTTP: every endpoint's success and error contract (issue 25, item 3)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from postproject import JobId, JobRef, Production
from postproject.service import models
from tests.service.conftest import KIND, Service

pytestmark = pytest.mark.xdist_group("service_client_api")  # one worker: tests/README.md

PROBLEM_KEYS = {"type", "title", "status", "detail", "instance", "code"}


def problem(answer: httpx.Response, status: int, code: str, reason: str | None = None) -> dict[str, Any]:
    """``answer`` is an RFC 9457 problem with this status, code and reason (and no traceback)."""
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = answer.json()
    assert set(body) >= PROBLEM_KEYS, body
    assert (body["status"], body["code"], body.get("reason")) == (status, code, reason), body
    assert body["instance"] == answer.headers["x-request-id"]
    assert "Traceback" not in answer.text
    return body


def job_view_of(service: Service, job_id: str) -> dict[str, Any]:
    """The job as ``postproject --json job show`` prints it (through the CLI, in process)."""
    from postproject.views import job_view

    with Production.open(service.scene.location, read_only=True) as production:
        return job_view(production.job(JobId(job_id)))


# --- health and readiness --------------------------------------------------------------------


def test_health_and_ready_need_no_token(service: Service) -> None:
    client = service.client()
    health = client.get("/v1/health")
    assert health.status_code == 200 and health.json()["status"] == "ok"
    ready = client.get("/v1/ready")
    assert ready.status_code == 200
    assert set(ready.json()) == {"status", "production_id", "latest_sequence"}
    assert len(health.headers["x-request-id"]) == 32


# --- requesting jobs --------------------------------------------------------------------------


def test_a_requested_job_is_the_json_of_job_show_with_its_location(service: Service) -> None:
    client = service.client("submitter")
    body = service.job_body(
        parameters=[{"vocabulary": "https://x.example/ns#", "property": "profile",
                     "value": {"type": "string", "value": "proxy-720p"}}],
        priority=7, max_attempts=3, not_before_unix_micros=1_700_000_000_000_000,
    )  # fmt: skip
    answer = client.post("/v1/jobs", json=body)
    assert answer.status_code == 201, answer.text
    job = answer.json()
    assert answer.headers["location"] == f"/v1/jobs/{job['id']}"
    assert job == job_view_of(service, job["id"])
    assert (job["kind"], job["state"], job["priority"], job["max_attempts"]) == (KIND, "requested", 7, 3)
    models.JobView.model_validate(job)
    shown = client.get(answer.headers["location"])
    assert shown.status_code == 200 and shown.json() == job
    with Production.open(service.scene.location, read_only=True) as production:
        assertions = production.metadata[JobRef(JobId(job["id"]))]
        assert [(a.property.name, a.value.value) for a in assertions] == [("profile", "proxy-720p")]
        history = production.job_history(JobId(job["id"]))
    assert [(h.kind, h.principal) for h in history] == [("job_requested", "submitter")]
    assert history[0].origin is not None and history[0].origin.startswith("postproject-service ")


def test_dependencies_and_bound_inputs(service: Service) -> None:
    first = service.request_job()
    second = service.request_job(after=[first["id"]], input_from=[first["id"]])
    assert second["depends_on"] == [first["id"]] and second["waiting_on"] == [first["id"]]
    assert second["bound_inputs"] == [{"job_id": first["id"], "representation_id": None}]
    missing = service.client("supervisor").post("/v1/jobs", json=service.job_body(after=[str(JobId.new())]))
    problem(missing, 404, "not_found")


def test_an_idempotent_replay_returns_the_original_and_a_different_body_conflicts(service: Service) -> None:
    client = service.client("submitter", headers={"Idempotency-Key": "shot-010-proxy"})
    body = service.job_body(priority=1)
    first = client.post("/v1/jobs", json=body)
    assert first.status_code == 201 and "idempotent-replayed" not in first.headers
    # the same parsed body, spelled differently: member order and spacing do not matter
    again = client.post("/v1/jobs", content=json.dumps(dict(reversed(body.items())), indent=4),
                        headers={"Content-Type": "application/json"})  # fmt: skip
    assert again.status_code == 201 and again.headers["idempotent-replayed"] == "true"
    assert again.json() == first.json() and again.headers["location"] == first.headers["location"]
    conflict = client.post("/v1/jobs", json={**body, "priority": 2})
    problem(conflict, 409, "conflict", "idempotency_key_conflict")
    # keys are scoped to the token: another token's same key is a new request
    other = service.client("other_submitter", headers={"Idempotency-Key": "shot-010-proxy"})
    assert other.post("/v1/jobs", json=body).json()["id"] != first.json()["id"]
    bad = service.client("submitter", headers={"Idempotency-Key": "é".encode("latin-1")}).post(
        "/v1/jobs", json=body
    )
    problem(bad, 400, "invalid_argument")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"kind": 42}, "kind"),
        ({"kind": "no-namespace"}, "kind"),
        ({"inputs": "x"}, "inputs"),
        ({"inputs": ["not-an-id"]}, "inputs[0]"),
        ({"output_kind": "movie"}, "output_kind"),
        ({"priority": "1"}, "priority"),
        ({"priority": 1.0}, "priority"),
        ({"priority": True}, "priority"),
        ({"priority": 5000}, "priority"),
        ({"max_attempts": 0}, "max_attempts"),
        ({"surprise": 1}, "surprise"),
        ({"parameters": [{"vocabulary": "v", "property": "p", "value": {"type": "float", "value": 1}}]},
         "parameters[0]"),
    ],
)  # fmt: skip
def test_a_bad_member_is_a_400_naming_it(service: Service, change: dict[str, Any], field: str) -> None:
    answer = service.client("supervisor").post("/v1/jobs", json=service.job_body(**change))
    body = problem(answer, 400, "invalid_argument")
    assert body["field"] == field and field.split("[")[0] in body["detail"]


def test_missing_members_bodies_and_bad_json(service: Service) -> None:
    client = service.client("supervisor")
    body = service.job_body()
    del body["output_kind"]
    assert problem(client.post("/v1/jobs", json=body), 400, "invalid_argument")["field"] == "output_kind"
    problem(client.post("/v1/jobs"), 400, "invalid_argument")
    raw = {"Content-Type": "application/json"}
    problem(client.post("/v1/jobs", content=b"{", headers=raw), 400, "invalid_argument", "malformed_json")
    dup = b'{"kind": "a:b", "kind": "c:d"}'
    problem(client.post("/v1/jobs", content=dup, headers=raw), 400, "invalid_argument", "duplicate_member")
    deep = b"[" * 33 + b"]" * 33
    problem(client.post("/v1/jobs", content=deep, headers=raw), 400, "invalid_argument", "too_deep")
    ok_depth = {
        **service.job_body(),
        "parameters": [{"vocabulary": "v", "property": "p", "value": {"type": "string", "value": "x"}}],
    }
    assert client.post("/v1/jobs", json=ok_depth).status_code == 201
    big = b'{"kind": "' + b"x" * (256 * 1024) + b'"}'
    problem(client.post("/v1/jobs", content=big, headers=raw), 413, "unsupported", "body_too_large")
    problem(client.post("/v1/jobs", content=b"kind=x", headers={"Content-Type": "text/plain"}), 415,
            "unsupported", "not_json")  # fmt: skip


# --- reading jobs ------------------------------------------------------------------------------


def test_show_list_counts_and_history(service: Service) -> None:
    client = service.client("reader")
    made = [service.request_job(kind="org.example:listed") for _ in range(3)]
    page = client.get("/v1/jobs", params={"kind": "org.example:listed", "limit": 2})
    assert page.status_code == 200
    first = page.json()
    assert [j["id"] for j in first["items"]] == [m["id"] for m in made[:2]] and first["next_cursor"]
    rest = client.get(
        "/v1/jobs", params={"kind": "org.example:listed", "limit": 2, "cursor": first["next_cursor"]}
    )
    assert [j["id"] for j in rest.json()["items"]] == [made[2]["id"]] and rest.json()["next_cursor"] is None
    models.JobPage.model_validate(first)
    # a cursor under other filters is refused
    problem(
        client.get("/v1/jobs", params={"state": "failed", "cursor": first["next_cursor"]}),
        400,
        "invalid_argument",
    )
    counts = client.get("/v1/jobs/counts", params={"kind": "org.example:listed"}).json()
    assert counts == {"kind": "org.example:listed", "counts": {**dict.fromkeys(
        ("requested", "claimed", "succeeded", "failed", "cancelled"), 0), "requested": 3}, "total": 3}  # fmt: skip
    history = client.get(f"/v1/jobs/{made[0]['id']}/history").json()["items"]
    assert [(h["kind"], h["principal"]) for h in history] == [("job_requested", "supervisor")]
    problem(client.get(f"/v1/jobs/{JobId.new()}"), 404, "not_found")
    problem(client.get("/v1/jobs/not-a-job"), 400, "invalid_argument")
    problem(client.get("/v1/jobs", params={"limit": 0}), 400, "invalid_argument")
    problem(client.get("/v1/jobs", params={"limit": 1001}), 400, "invalid_argument")
    problem(client.get("/v1/jobs", params={"state": "sleeping"}), 400, "invalid_argument")
    problem(client.get("/v1/nothing-here"), 404, "not_found")
    problem(client.delete("/v1/jobs"), 405, "unsupported", "method_not_allowed")


# --- acting on jobs -------------------------------------------------------------------------------


def test_cancel_retry_requeue_and_priority(service: Service) -> None:
    supervisor = service.client("supervisor")
    job = service.request_job()
    changed = supervisor.put(f"/v1/jobs/{job['id']}/priority", json={"priority": 99})
    assert changed.status_code == 200 and changed.json()["priority"] == 99
    problem(
        supervisor.put(f"/v1/jobs/{job['id']}/priority", json={"priority": 1001}), 400, "invalid_argument"
    )
    problem(supervisor.post(f"/v1/jobs/{job['id']}/requeue"), 409, "conflict")  # not claimed
    cancelled = supervisor.post(f"/v1/jobs/{job['id']}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["state"] == "cancelled"
    problem(supervisor.post(f"/v1/jobs/{job['id']}/cancel"), 409, "conflict", "job_finished")
    problem(supervisor.put(f"/v1/jobs/{job['id']}/priority", json={"priority": 1}), 409, "conflict")
    retried = supervisor.post(f"/v1/jobs/{job['id']}/retry")
    assert retried.status_code == 201
    new = retried.json()
    assert retried.headers["location"] == f"/v1/jobs/{new['id']}" and new["retry_of"] == job["id"]
    assert new["priority"] == 99 and new == job_view_of(service, new["id"])
    problem(supervisor.post(f"/v1/jobs/{job['id']}/retry"), 409, "conflict")  # already retried
    history = supervisor.get(f"/v1/jobs/{job['id']}/history").json()["items"]
    assert [(h["kind"], h["principal"]) for h in history] == [
        ("job_requested", "supervisor"),
        ("job_priority_changed", "supervisor"),
        ("job_cancelled", "supervisor"),
    ]
    problem(supervisor.post(f"/v1/jobs/{JobId.new()}/cancel"), 404, "not_found")


def test_a_submitter_acts_only_on_its_own_jobs(service: Service) -> None:
    mine = service.client("submitter")
    theirs = service.request_job("other_submitter")
    problem(mine.post(f"/v1/jobs/{theirs['id']}/cancel"), 403, "forbidden")
    own = service.request_job("submitter")
    assert mine.post(f"/v1/jobs/{own['id']}/cancel").json()["state"] == "cancelled"
    assert mine.post(f"/v1/jobs/{own['id']}/retry").status_code == 201
    service.client("supervisor").post(f"/v1/jobs/{theirs['id']}/cancel")
    problem(mine.post(f"/v1/jobs/{theirs['id']}/retry"), 403, "forbidden")


def test_the_sweep_and_regeneration_endpoints(service: Service) -> None:
    supervisor = service.client("supervisor")
    swept = supervisor.post("/v1/sweeps")
    assert swept.status_code == 200 and set(swept.json()) == {"finalized"}
    nothing = supervisor.post("/v1/regenerations", json={"representation_id": service.scene.source})
    assert nothing.status_code == 201
    assert nothing.json() == {"job_ids": [], "plans": [], "unplannable": [], "truncated": False}
    problem(
        supervisor.post("/v1/regenerations", json={"representation_id": str(JobId.new())}), 404, "not_found"
    )
    stale = service.client("reader").get("/v1/artifacts", params={"state": "stale"})
    assert stale.status_code == 200 and set(stale.json()) >= {"items", "next_cursor"}
    problem(
        service.client("reader").get("/v1/artifacts", params={"state": "current"}), 400, "invalid_argument"
    )


# --- workers and the feed -----------------------------------------------------------------------


def test_workers_and_revisions(service: Service) -> None:
    worker = service.client("worker")
    assert (
        worker.put("/v1/workers/lister", json={"capacity": 2, "kinds": [KIND], "host": "h1"}).status_code
        == 200
    )
    workers = service.client("reader").get("/v1/workers").json()["items"]
    found = next(w for w in workers if w["name"] == "lister")
    assert (found["capacity"], found["kinds"], found["host"], found["state"]) == (2, [KIND], "h1", "online")
    models.WorkerList.model_validate({"items": workers})
    job = service.request_job("submitter")
    page = service.client("reader").get("/v1/revisions", params={"since": 0, "limit": 1000}).json()
    models.RevisionsPage.model_validate(page)
    mine = [r for r in page["revisions"] if any(e.get("job_id") == job["id"] for e in r["events"])]
    assert [(r["principal"], r["message"]) for r in mine] == [("submitter", "Request job")]
    assert page["through_sequence"] == page["revisions"][-1]["sequence"]
