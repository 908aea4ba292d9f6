"""Lease-token hygiene: where tokens come from, what is accepted, and that they never leak
(acceptance checks 14, 15, 22, 36, 62; notes subtlety 17)."""

from __future__ import annotations

import errno
import json
import os
import subprocess
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from postproject import FakeClock
from tests.cli.helpers import KIND, Cli, Scene

Script = Callable[..., subprocess.CompletedProcess[str]]


def test_release_reads_token_from_stdin_with_one_trailing_newline(cli: Cli, scene: Scene) -> None:
    for ending in (b"\n", b"\r\n", b""):
        job = scene.request()
        scene.claim(job, f"t{len(ending)}")
        token = scene.token(f"t{len(ending)}").encode()
        outcome = cli(
            "--json", "job", "release", scene.path, job, "--lease-token-file", "-", stdin=token + ending
        )
        assert outcome.code == 0, outcome
        assert outcome.json["state"] == "requested"


@pytest.mark.parametrize("ending", [b" ", b"\n\n", b"\r\n\n", b"\t", b"\r"])
def test_malformed_token_fails_before_the_production_is_opened(cli: Cli, scene: Scene, ending: bytes) -> None:
    job = scene.request()
    scene.claim(job)
    token = scene.token().encode()
    missing = scene.dir / "never-created.pproj"
    outcome = cli(
        "--json", "job", "release", str(missing), job, "--lease-token-file", "-", stdin=token + ending
    )
    assert (outcome.code, outcome.json["error"]["code"]) == (2, "invalid_argument")
    assert not missing.exists()
    assert token.decode() not in outcome.stdout + outcome.stderr


@pytest.mark.parametrize("content", [b"", b"x" * 10_000, b"j" * 115, "ppl1:é".encode()])
def test_junk_tokens_are_invalid(cli: Cli, scene: Scene, content: bytes) -> None:
    job = scene.request()
    outcome = cli("--json", "job", "renew", scene.path, job, "--lease-token-file", "-", stdin=content)
    assert (outcome.code, outcome.json["error"]["message"]) == (2, "invalid scoped job lease token")


def test_token_of_another_job_or_production(cli: Cli, scene: Scene, tmp_path: Path) -> None:
    first, second = scene.request(), scene.request()
    scene.claim(first)
    token = scene.token().encode()
    wrong_job = cli("--json", "job", "release", scene.path, second, "--lease-token-file", "-", stdin=token)
    assert wrong_job.code == 2
    assert "belongs to another job" in wrong_job.json["error"]["message"]
    other = str(tmp_path / "other.pproj")
    cli.json("init", other)
    wrong_production = cli("--json", "job", "release", other, first, "--lease-token-file", "-", stdin=token)
    assert (wrong_production.code, wrong_production.json["error"]["code"]) == (2, "invalid_argument")


def test_altered_token_is_rejected(cli: Cli, scene: Scene) -> None:
    job = scene.request()
    scene.claim(job)
    token = scene.token()
    flipped = token[:-1] + ("0" if token[-1] != "0" else "1")
    outcome = cli(
        "--json", "job", "release", scene.path, job, "--lease-token-file", "-", stdin=flipped.encode()
    )
    assert (outcome.code, outcome.json["error"]["code"]) == (4, "conflict")
    assert flipped not in outcome.stdout + outcome.stderr


def test_token_as_argument_is_refused_without_echo(cli: Cli, scene: Scene) -> None:
    job = scene.request()
    scene.claim(job)
    token = scene.token()
    outcome = cli("--json", "job", "release", scene.path, job, "--lease-token-file", token)
    assert outcome.code == 2
    assert token not in outcome.stdout + outcome.stderr
    stray = cli("job", "release", scene.path, job, token, "--lease-token-file", "-")
    assert stray.code == 2
    assert token not in stray.stdout + stray.stderr


def test_claim_refuses_stdin_token_destination(cli: Cli, scene: Scene) -> None:
    outcome = cli(
        "--json", "job", "claim", scene.path, scene.request(), "--tool-name", "W", "--lease-token-file", "-"
    )
    assert outcome.code == 2


def test_unreadable_token_file_is_io(cli: Cli, scene: Scene) -> None:
    job = scene.request()
    outcome = cli(
        "--json", "job", "release", scene.path, job, "--lease-token-file", str(scene.dir / "absent")
    )
    assert (outcome.code, outcome.json["error"]["code"]) == (7, "io")


def test_superseded_token_file_cannot_fail_the_job(cli: Cli, scene: Scene, clock: FakeClock) -> None:
    job = scene.request()
    scene.claim(job, "a.token", "--lease", "1s")
    clock.advance(timedelta(seconds=2))
    scene.claim(job, "b.token")
    old = cli(
        "--json", "job", "fail", scene.path, job, "late", "--lease-token-file", str(scene.dir / "a.token")
    )
    assert (old.code, old.json["error"]["code"]) == (4, "conflict")
    assert cli.json("job", "show", scene.path, job)["state"] == "claimed"


def test_failed_delivery_removes_the_file_and_reports_the_receipt(
    cli: Cli, scene: Scene, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = scene.request()

    def no_space(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", no_space)
    outcome = cli("--json", "job", "claim", scene.path, job, "--tool-name", "W", "--lease-token-file",
                  str(scene.dir / "lease.token"))  # fmt: skip
    monkeypatch.undo()
    assert (outcome.code, outcome.json["error"]["code"]) == (7, "io")
    assert outcome.json["commit_receipt"]["revision"]["events"][0]["kind"] == "job_claimed"
    assert not (scene.dir / "lease.token").exists()
    assert cli.json("job", "show", scene.path, job)["state"] == "claimed"
    assert cli.json("job", "cancel", scene.path, job)["state"] == "cancelled"


@pytest.mark.slow
def test_token_never_appears_in_any_output(script: Script, tmp_path: Path) -> None:
    """Real processes: every job command's stdout and stderr, successes and failures."""
    seen: list[str] = []

    def run(*args: str, stdin: bytes | None = None, code: int = 0) -> str:
        done = script(list(args), tmp_path, stdin=stdin)
        assert done.returncode == code, (args, done.stdout, done.stderr)
        seen.append(done.stdout + done.stderr)
        return done.stdout

    run("init", "p.pproj")
    asset = json.loads(run("--json", "asset", "create", "p.pproj"))["id"]
    (tmp_path / "in.mov").write_bytes(b"in")
    rep = json.loads(run("--json", "representation", "add", "p.pproj", asset, "original", "in.mov"))["id"]
    job = json.loads(run("--json", "job", "request", "p.pproj", KIND, asset, "proxy", "--input", rep))["id"]
    for mode in ("--json", "--root-map=x=y"):
        run(mode, "job", "claim", "p.pproj", job, "--tool-name", "W", "--lease-token-file", f"t{mode[2]}")
        run(mode, "job", "show", "p.pproj", job)
        run(mode, "job", "list", "p.pproj")
        run(mode, "job", "renew", "p.pproj", job, "--lease", "2m", "--lease-token-file", f"t{mode[2]}")
        run(mode, "job", "claim", "p.pproj", job, "--tool-name", "W", "--lease-token-file", "t2", code=4)
        run(
            mode,
            "job",
            "release",
            "p.pproj",
            job,
            "--lease-token-file",
            "-",
            stdin=(tmp_path / f"t{mode[2]}").read_bytes(),
        )
        run(mode, "job", "release", "p.pproj", job, "--lease-token-file", f"t{mode[2]}", code=4)
    tokens = [(tmp_path / name).read_text() for name in ("tj", "tr")]
    run("job", "claim", "p.pproj", job, "--tool-name", "W", "--lease-token-file", "t3")
    run("--json", "job", "fail", "p.pproj", job, "diagnostic", "--lease-token-file", "tj", code=4)
    (tmp_path / "out.mov").write_bytes(b"out")
    run("--json", "job", "complete", "p.pproj", job, "out.mov", "--lease-token-file", "t3")
    replayed = run("--json", "job", "complete", "p.pproj", job, "out.mov", "--lease-token-file", "t3")
    assert json.loads(replayed)["replayed"] is True  # a completion repeated after a lost response
    (tmp_path / "other.mov").write_bytes(b"other")
    run("--json", "job", "complete", "p.pproj", job, "other.mov", "--lease-token-file", "t3", code=4)
    tokens.append((tmp_path / "t3").read_text())
    job2 = json.loads(run("--json", "job", "request", "p.pproj", KIND, asset, "proxy", "--input", rep))["id"]
    run("--json", "job", "claim", "p.pproj", job2, "--tool-name", "W", "--lease-token-file", "t4")
    tokens.append((tmp_path / "t4").read_text())
    run("--json", "job", "fail", "p.pproj", job2, "gave up", "--lease-token-file", "t4")
    run("--json", "job", "cancel", "p.pproj", job2, code=4)
    run("--json", "revisions", "since", "p.pproj", "0")
    run("revisions", "since", "p.pproj", "0")
    secrets = tokens + [t.rsplit(":", 1)[1] for t in tokens]
    assert len(seen) > 20
    for text in seen:
        for secret in secrets:
            assert secret not in text


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
@pytest.mark.parametrize("command", ["renew", "release", "fail", "complete"])
def test_a_fifo_as_token_file_is_refused_at_once(
    scene: Scene, tmp_path: Path, script: Callable[..., subprocess.CompletedProcess[str]], command: str
) -> None:
    job = scene.request()
    scene.claim(job)
    fifo = tmp_path / "token.fifo"
    os.mkfifo(fifo)  # nothing ever writes to it: opening it for reading would wait forever
    extra = {"fail": ["it broke"], "complete": [str(tmp_path / "media" / "A001.mov")]}.get(command, [])
    done = script(
        ["--json", "job", command, scene.path, job, *extra, "--lease-token-file", str(fifo)],
        tmp_path,
        timeout=30,
    )
    assert done.returncode == 2, done
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "invalid_argument" and "not a regular file" in error["message"]
