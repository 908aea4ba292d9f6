"""The client commands through a service (issue 25 item 3): ``job request|show|list|cancel|retry``
and ``revisions follow`` with an ``http(s)://`` PRODUCTION and ``--token-file`` (or
``POSTPROJECT_API_TOKEN``) print exactly what they print on the production itself, human and
``--json``, and errors exit with the same codes.

Each comparison runs the same command twice, once on the production's location and once on
the service's URL, against the one production the module's real service process serves.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from postproject import FakeClock, Production
from postproject.cli.app import run
from postproject.engine import JOB_SORTS
from postproject.model import clock as clocks
from tests.service.conftest import KIND, ROOT, Service, wait_until

pytestmark = pytest.mark.xdist_group("service_cli_remote")


class Both:
    """Runs one command on the production and on the service, with the scene's tokens."""

    def __init__(self, service: Service, capsys: pytest.CaptureFixture[str], tmp: Path) -> None:
        self.service = service
        self.capsys = capsys
        self.files: dict[str, str] = {}
        for role, secret in service.scene.tokens.items():
            path = tmp / f"{role}.token"
            path.write_text(secret + "\n")
            self.files[role] = str(path)

    def run(
        self, where: str, *argv: str, token: str | None = "supervisor", clock: FakeClock | None = None
    ) -> tuple[int, str, str]:
        """``postproject ARGV`` with PRODUCTION (``@``) replaced by ``where``; (code, out, err)."""
        args = [where if a == "@" else a for a in argv]
        if token is not None and where == self.service.url:
            args += ["--token-file", self.files[token]]
        self.capsys.readouterr()
        code = run(args, stdin=io.BytesIO(), clock=clock)
        captured = self.capsys.readouterr()
        return code, captured.out, captured.err

    def local(self, *argv: str, clock: FakeClock | None = None) -> tuple[int, str, str]:
        return self.run(self.service.scene.location, *argv, clock=clock)

    def remote(
        self, *argv: str, token: str | None = "supervisor", clock: FakeClock | None = None
    ) -> tuple[int, str, str]:
        return self.run(self.service.url, *argv, token=token, clock=clock)

    def same(self, *argv: str) -> str:
        """Run both ways, human and --json; both succeed with the same output (the text)."""
        clock = FakeClock(clocks.SystemClock().now())  # the same "(2s ago)" both ways
        for json_mode in ((), ("--json",)):
            here = self.local(*json_mode, *argv, clock=clock)
            there = self.remote(*json_mode, *argv, clock=clock)
            assert here[0] == 0, here
            assert there == here, (argv, json_mode)
        return here[1]


@pytest.fixture
def both(service: Service, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Both:
    return Both(service, capsys, tmp_path)


def _request(both: Both, *extra: str) -> dict[str, Any]:
    scene = both.service.scene
    code, out, err = both.remote(
        "--json", "job", "request", "@", KIND, scene.asset, "proxy", "--input", scene.source,
        "--target-root", "out", *extra,
    )  # fmt: skip
    assert code == 0, err
    job: dict[str, Any] = json.loads(out)
    return job


def test_job_request_prints_the_job_and_its_commit_receipt(both: Both) -> None:
    job = _request(
        both,
        "--priority",
        "10",
        "--param",
        "org.example",
        "crf",
        '{"type": "i64", "value": 18}',
        "--max-attempts",
        "2",
    )
    receipt = job.pop("commit_receipt")
    code, shown, _ = both.local("--json", "job", "show", "@", job["id"])
    assert code == 0 and json.loads(shown) == job
    code, latest, _ = both.local("--json", "revisions", "latest", "@")
    assert receipt == {"production_id": receipt["production_id"], "revision": json.loads(latest)["revision"]}
    # the human text: the job's block, then the revision that recorded it
    code, out, _ = both.remote(
        "job", "request", "@", KIND, job["output_asset_id"], "proxy", "--target-root", "out"
    )
    assert code == 0 and "requested" in out and "revision" in out


def test_job_show_and_list_print_what_the_production_prints(both: Both) -> None:
    first = _request(both)
    _request(both, "--priority", "-5")
    both.same("job", "show", "@", first["id"])
    both.same("job", "list", "@")
    both.same("job", "list", "@", "--state", "requested", "--kind", KIND, "--limit", "2")
    both.same("job", "list", "@", "--sort", "priority", "--desc", "--requested-after", "2020-01-01T00:00:00Z")
    for sort in JOB_SORTS:  # every sort the store has, the service takes
        both.same("job", "list", "@", "--sort", sort, "--limit", "3")
    page = json.loads(both.local("--json", "job", "list", "@", "--limit", "1")[1])
    assert page["next_cursor"]
    both.same("job", "list", "@", "--limit", "1", "--cursor", page["next_cursor"])


def test_job_cancel_and_retry_print_the_job_with_its_receipt(both: Both) -> None:
    job = _request(both)
    code, out, err = both.remote("--json", "job", "cancel", "@", job["id"])
    assert code == 0, err
    cancelled = json.loads(out)
    receipt = cancelled.pop("commit_receipt")
    assert json.loads(both.local("--json", "job", "show", "@", job["id"])[1]) == cancelled
    assert cancelled["state"] == "cancelled"
    assert receipt["revision"] == json.loads(both.local("--json", "revisions", "latest", "@")[1])["revision"]

    code, out, err = both.remote("--json", "job", "retry", "@", job["id"])
    assert code == 0, err
    again = json.loads(out)
    receipt = again.pop("commit_receipt")
    assert again["state"] == "requested" and again["id"] != job["id"]
    assert json.loads(both.local("--json", "job", "show", "@", again["id"])[1]) == again
    assert receipt["revision"] == json.loads(both.local("--json", "revisions", "latest", "@")[1])["revision"]

    several = [_request(both)["id"] for _ in range(2)]
    code, out, err = both.remote("--json", "job", "cancel", "@", *several)
    assert code == 0, err
    assert [j["state"] for j in json.loads(out)["jobs"]] == ["cancelled", "cancelled"]


@pytest.mark.parametrize(
    "argv",
    [
        ("job", "show", "@", "01a237ce-4f1c-765d-8000-000000000001"),  # no such job
        ("job", "show", "@", "not-an-id"),  # refused before any request
        ("job", "cancel", "@", "01a237ce-4f1c-765d-8000-000000000001"),
        ("job", "list", "@", "--state", "lost"),
        ("job", "list", "@", "--cursor", "garbage"),
        ("job", "request", "@", KIND, "01a237ce-4f1c-765d-8000-000000000001", "proxy"),
    ],
)
def test_errors_exit_with_the_codes_they_exit_with_on_a_production(both: Both, argv: tuple[str, ...]) -> None:
    here = both.local("--json", *argv)
    there = both.remote("--json", *argv)
    assert here[0] != 0
    assert there[0] == here[0], (here, there)
    assert json.loads(there[1])["error"]["code"] == json.loads(here[1])["error"]["code"]


def test_the_token_comes_from_the_file_or_the_environment(
    both: Both, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    job = _request(both)
    code, _, err = both.remote("job", "show", "@", job["id"], token=None)
    assert code == 2 and "POSTPROJECT_API_TOKEN" in err  # invalid argument: no token at all
    monkeypatch.setenv("POSTPROJECT_API_TOKEN", both.service.scene.tokens["reader"])
    clock = FakeClock(clocks.SystemClock().now())
    shown = both.remote("job", "show", "@", job["id"], token=None, clock=clock)
    assert shown == both.local("job", "show", "@", job["id"], clock=clock)
    monkeypatch.setenv("POSTPROJECT_API_TOKEN", "pp_wrong")
    refused = both.remote("--json", "job", "show", "@", job["id"], token=None)
    assert json.loads(refused[1])["error"]["reason"] == "auth_failed"
    forbidden = both.remote("--json", "job", "cancel", "@", job["id"], token="reader")
    assert json.loads(forbidden[1])["error"]["reason"] == "permission_denied"
    assert refused[0] == forbidden[0] == 7  # storage errors, as a production's refusals are
    assert secret_not_in(both, refused, forbidden)


def secret_not_in(both: Both, *outcomes: tuple[int, str, str]) -> bool:
    secrets = both.service.scene.tokens.values()
    return not any(s in text for s in secrets for outcome in outcomes for text in outcome[1:])


def _follow(where: str, token_file: str | None, path: Path, *more: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "core"), str(ROOT / "gui")])}
    extra = [*more, "--token-file", token_file] if token_file else list(more)
    with path.open("wb") as out, path.with_suffix(".err").open("wb") as err:
        return subprocess.Popen(
            [sys.executable, "-m", "postproject", "--json", "revisions", "follow", where, "--from", "0", *extra],
            stdout=out, stderr=err, env=env,
        )  # fmt: skip


def _lines(path: Path) -> Callable[[], list[str]]:
    return lambda: [line for line in path.read_text().splitlines() if line.endswith("}")]


def test_revisions_follow_streams_the_revisions_the_production_streams(both: Both, tmp_path: Path) -> None:
    _request(both)
    paths = [tmp_path / "local.jsonl", tmp_path / "remote.jsonl"]
    kinds = [tmp_path / "local-cancels.jsonl", tmp_path / "remote-cancels.jsonl"]
    followers = [
        _follow(both.service.scene.location, None, paths[0]),
        _follow(both.service.url, both.files["reader"], paths[1]),
        _follow(both.service.scene.location, None, kinds[0], "--kind", "job_cancelled"),
        _follow(both.service.url, both.files["reader"], kinds[1], "--kind", "job_cancelled"),
    ]
    try:
        job = _request(both)  # a revision written while they follow
        both.remote("job", "cancel", "@", job["id"])
        latest = json.loads(both.local("--json", "revisions", "latest", "@")[1])["revision"]["sequence"]
        for path in paths:
            wait_until(lambda p=path: len(_lines(p)()) >= latest, timeout=60)  # type: ignore[misc]
        with Production.open(both.service.scene.location, read_only=True) as production:
            cancels = len(production.changes_since(0, 1000, ["job_cancelled"]).revisions)
        for path in kinds:
            wait_until(lambda p=path: len(_lines(p)()) >= cancels, timeout=60)  # type: ignore[misc]
    finally:
        for follower in followers:
            follower.send_signal(signal.SIGINT)
        codes = [f.wait(60) for f in followers]
    assert codes == [0] * 4, [p.with_suffix(".err").read_text() for p in paths + kinds]
    local, remote = (_lines(p)() for p in paths)
    assert [json.loads(line)["sequence"] for line in remote] == list(range(1, latest + 1))
    assert remote == local
    local_cancels, remote_cancels = (_lines(p)() for p in kinds)
    assert remote_cancels == local_cancels and len(local_cancels) == cancels >= 1
