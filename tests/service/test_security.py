"""Tokens and roles (issue 25, item 2): each role refused what it may not do, 401 for missing,
unknown, revoked and expired tokens, failed authentications rate-limited per address, CORS off
unless configured, and no token ever in a log line, a response (but its creation), an event or
the database in clear."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from postproject import JobId, Production
from tests.service.conftest import ROOT, Service, wait_until
from tests.service.test_client_api import problem
from tests.service.test_worker_api import claim, completion, only_kind, register

pytestmark = pytest.mark.xdist_group("service_security")  # one worker: tests/README.md

JOB = str(JobId.new())
SESSION = "00000000-0000-4000-8000-000000000000"
# (method, path, body) of every endpoint but health, readiness and the document
CLIENT_READS = [
    ("GET", f"/v1/jobs/{JOB}", None),
    ("GET", "/v1/jobs", None),
    ("GET", "/v1/jobs/counts", None),
    ("GET", f"/v1/jobs/{JOB}/history", None),
    ("GET", "/v1/workers", None),
    ("GET", "/v1/artifacts", None),
    ("GET", "/v1/revisions", None),
]
SUBMITS = [
    ("POST", "/v1/jobs", {}),
    ("POST", f"/v1/jobs/{JOB}/cancel", None),
    ("POST", f"/v1/jobs/{JOB}/retry", None),
]
SUPERVISES = [
    ("POST", f"/v1/jobs/{JOB}/requeue", None),
    ("PUT", f"/v1/jobs/{JOB}/priority", {"priority": 1}),
    ("POST", "/v1/sweeps", None),
    ("POST", "/v1/regenerations", {"representation_id": JOB}),
]
WORKS = [
    ("PUT", "/v1/workers/w", {"capacity": 1}),
    ("POST", "/v1/workers/w/heartbeat", {"session": SESSION}),
    ("POST", "/v1/workers/w/claims", {"session": SESSION}),
    ("POST", "/v1/leases/renew", {"lease_token": "ppl1:x"}),
    ("POST", "/v1/leases/progress", {"lease_token": "ppl1:x"}),
    ("POST", "/v1/leases/log", {"lease_token": "ppl1:x", "tail": "x"}),
    ("POST", "/v1/leases/release", {"lease_token": "ppl1:x"}),
    ("POST", "/v1/leases/stopped", {"lease_token": "ppl1:x"}),
    ("PUT", "/v1/leases/completion", {"lease_token": "ppl1:x", "report_id": "r", "outcome": "failed"}),
]
ALLOWED = {
    "reader": CLIENT_READS,
    "submitter": CLIENT_READS + SUBMITS,
    "supervisor": CLIENT_READS + SUBMITS + SUPERVISES,
    "worker": WORKS,
}
EVERY = CLIENT_READS + SUBMITS + SUPERVISES + WORKS


@pytest.mark.parametrize("role", sorted(ALLOWED))
def test_each_role_is_refused_what_it_may_not_do(service: Service, role: str) -> None:
    client = service.client(role)
    for method, path, body in EVERY:
        answer = client.request(method, path, json=body)
        if (method, path, body) in ALLOWED[role]:
            assert answer.status_code not in (401, 403), (role, method, path, answer.text)
        else:
            problem(answer, 403, "forbidden")


def test_missing_unknown_revoked_and_expired_tokens_are_401(service: Service) -> None:
    wait_until(lambda: service.client("expired").get("/v1/jobs/counts").status_code == 401)
    for token in (None, "revoked", "expired", "ppa1_" + "A" * 43, "ppl1:not-an-api-token", "garbage"):
        answer = service.client(token).get("/v1/jobs/counts")
        problem(answer, 401, "unauthenticated")
        assert answer.headers["www-authenticate"].startswith("Bearer")
    basic = service.client(headers={"Authorization": "Basic dXNlcjpwYXNz"}).get("/v1/jobs/counts")
    problem(basic, 401, "unauthenticated")
    for path in ("/v1/health", "/v1/ready", "/v1/openapi.json"):
        assert service.client().get(path).status_code == 200


@pytest.fixture(scope="module")
def strict(service_factory: Callable[..., Service]) -> Iterator[Service]:
    """A service with CORS for one origin (the module's own service has none) and 2 streams."""
    service = service_factory("--cors-origin", "https://dash.example", "--max-streams", "2")
    yield service
    service.stop()


def test_cors_is_off_unless_an_origin_is_allowed(service: Service, strict: Service) -> None:
    preflight = {"Origin": "https://dash.example", "Access-Control-Request-Method": "GET",
                 "Access-Control-Request-Headers": "authorization"}  # fmt: skip
    closed = service.client().options("/v1/jobs", headers=preflight)
    assert "access-control-allow-origin" not in closed.headers
    plain = service.client("reader", headers={"Origin": "https://dash.example"}).get("/v1/jobs/counts")
    assert "access-control-allow-origin" not in plain.headers
    opened = strict.client().options("/v1/jobs", headers=preflight)
    assert opened.headers["access-control-allow-origin"] == "https://dash.example"
    other = strict.client().options("/v1/jobs", headers={**preflight, "Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in other.headers


@pytest.fixture(scope="module")
def limited(service_factory: Callable[..., Service]) -> Iterator[Service]:
    """A service whose one client address will have used up its failed authentications."""
    service = service_factory()
    yield service
    service.stop()


def test_failed_authentications_are_rate_limited_per_address(limited: Service) -> None:
    for _ in range(20):
        problem(limited.client("garbage").get("/v1/jobs/counts"), 401, "unauthenticated")
    refused = limited.client("garbage").get("/v1/jobs/counts")
    problem(refused, 429, "rate_limited")
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    problem(
        limited.client("reader").get("/v1/jobs/counts"), 429, "rate_limited"
    )  # the address, not the token
    assert limited.client().get("/v1/health").status_code == 200  # no token needed: not limited


def _database_text(location: str) -> bytes:
    if not location.startswith("postgresql"):
        path = Path(location)
        return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())
    from postproject.storage.postgresql import connection, uri

    with connection.connect(uri.parse(location), autocommit=True) as conn:
        tables = [
            r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
        ]
        return b"".join(repr(conn.execute(f'SELECT * FROM "{t}"').fetchall()).encode() for t in tables)


def test_no_token_is_ever_in_a_log_a_response_an_event_or_the_database(service: Service) -> None:
    kind = only_kind(service)
    worker, name, session = register(service, kinds=[kind])
    job = service.request_job("submitter", kind=kind)
    claimed = claim(service, worker, name, session)
    lease = claimed["lease_token"]
    bodies = [claimed["job"]]
    for path, body in (("/v1/leases/renew", {"lease_token": lease}),
                       ("/v1/leases/progress", {"lease_token": lease, "fraction": 0.2}),
                       ("/v1/leases/log", {"lease_token": lease, "tail": "working\n"})):  # fmt: skip
        bodies.append(worker.post(path, json=body).json())
    (service.scene.root / "shot010_proxy.mov").write_bytes(b"x")
    bodies.append(worker.put("/v1/leases/completion", json=completion(lease)).json())
    bodies.append(worker.put("/v1/leases/completion", json=completion(lease)).json())  # a conflict's problem
    reader = service.client("reader")
    bodies += [reader.get(f"/v1/jobs/{job['id']}").json(), reader.get("/v1/revisions").json(),
               reader.get("/v1/workers").json()]  # fmt: skip
    secrets = [*service.scene.tokens.values(), lease, lease.split(":")[-1]]
    text = repr(bodies) + service.log()
    with Production.open(service.scene.location, read_only=True) as production:
        text += repr(list(production.changes_since(0, 1000)))
    stored = _database_text(service.scene.location)
    for secret in secrets:
        assert secret not in text
        assert secret.encode() not in stored
    assert "Authorization" not in service.log() and "Bearer" not in service.log()
    lines = [line for line in service.log().splitlines() if "postproject.service.access" in line]
    assert lines and all(re.search(r"request_id=[0-9a-f]{32}$", line) for line in lines)
    assert any("principal=worker" in line and "/v1/leases/completion" in line for line in lines)
    if service.scene.location.startswith("postgresql"):
        password = re.search(r"://[^:]+:([^@]+)@", service.scene.location)
        assert password is not None and password.group(1) not in service.log()


def test_the_cli_makes_lists_and_revokes_tokens(tmp_path: Path) -> None:
    path = tmp_path / "cli.pproj"
    Production.create(path).close()

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        env = {"PYTHONPATH": f"{ROOT / 'core'}", "PATH": "/usr/bin:/bin"}
        return subprocess.run([sys.executable, "-m", "postproject", *args], capture_output=True, text=True,
                              env=env, check=False)  # fmt: skip

    made = cli(
        "api-token", "create", str(path), "--role", "worker", "--name", "render-01", "--expires", "90d"
    )
    assert made.returncode == 0, made.stderr
    secret = made.stdout.strip()
    assert re.fullmatch(r"ppa1_[A-Za-z0-9_-]{43}", secret) and "shown once" in made.stderr
    as_json = cli("--json", "api-token", "create", str(path), "--role", "reader", "--name", "dash")
    created = json.loads(as_json.stdout)
    assert created["token"].startswith("ppa1_") and created["role"] == "reader"
    listed = cli("--json", "api-token", "list", str(path))
    assert secret not in listed.stdout and created["token"] not in listed.stdout
    names = [(t["name"], t["role"], t["revoked_at_unix_micros"]) for t in json.loads(listed.stdout)["items"]]
    assert names == [("dash", "reader", None), ("render-01", "worker", None)]
    assert json.loads(listed.stdout)["items"][1]["expires_at_unix_micros"] is not None
    assert cli("api-token", "revoke", str(path), "render-01").returncode == 0
    with Production.open(path, read_only=True) as production:
        assert production.access.token(secret) is None
    again = cli("--json", "api-token", "create", str(path), "--role", "worker", "--name", "render-01")
    assert again.returncode == 4 and json.loads(again.stdout)["error"]["code"] == "already_exists"
    bad = cli("--json", "api-token", "create", str(path), "--role", "admin", "--name", "x")
    assert bad.returncode == 2


def test_config_show_never_prints_the_api_token(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from postproject.cli.app import run

    secret = "ppa1_" + "S" * 43
    monkeypatch.setenv("POSTPROJECT_API_TOKEN", secret)
    for argv in (["config", "show"], ["--json", "config", "show"]):
        assert run(argv) == 0
        out, err = capsys.readouterr()
        assert secret not in out + err


def test_streams_beyond_the_limit_are_503_until_one_closes(strict: Service) -> None:
    reader = strict.client("supervisor")
    with contextlib.ExitStack() as open_streams:
        first = open_streams.enter_context(reader.stream("GET", "/v1/revisions/stream"))
        with reader.stream("GET", "/v1/revisions/stream") as second:
            assert (first.status_code, second.status_code) == (200, 200)
            problem(reader.get("/v1/revisions/stream"), 503, "unavailable", "too_many_streams")
        wait_until(lambda: _opens(reader))  # the second's place is given back once it closed


def _opens(client: httpx.Client) -> bool:
    """Whether a new stream opens now (its headers arrive); closed again at once."""
    with client.stream("GET", "/v1/revisions/stream") as answer:
        return answer.status_code == 200
