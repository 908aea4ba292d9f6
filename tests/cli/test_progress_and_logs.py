"""``job progress``, ``job log`` and the progress/stop fields of ``job show`` (issue 15)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from postproject import JobId, JobLease, Production
from tests.cli.helpers import Cli, Scene
from tests.cli.test_json_shapes import PROGRESS_KEYS


def progress(scene: Scene, job: str, *extra: str) -> dict[str, object]:
    return scene.cli.json(  # type: ignore[no-any-return]
        "job", "progress", scene.path, job, "--lease-token-file", str(scene.dir / "lease.token"), *extra
    )


def test_job_show_carries_progress_and_each_attempts_stop(cli: Cli, scene: Scene) -> None:
    job = scene.request()
    assert cli.json("job", "show", scene.path, job)["progress"] is None
    scene.claim(job, "lease.token", "--lease", "10m")
    cli.clock.advance(timedelta(seconds=1))
    reported = progress(scene, job, "--fraction", "0.25", "--stage", "encode", "--message", "frame 25 of 100")
    assert reported["signalled"] is True and reported["commit_receipt"]["revision"] is None
    shown = cli.json("job", "show", scene.path, job)
    assert set(shown["progress"]) == PROGRESS_KEYS
    assert shown["progress"] | {"updated_at": 0, "updated_at_unix_micros": 0} == {
        "fraction": 0.25, "stage": "encode", "message": "frame 25 of 100", "updated_at": 0,
        "updated_at_unix_micros": 0,
    }  # fmt: skip
    assert shown["progress"]["updated_at"] == shown["attempts"][0]["claimed_at_unix_micros"] + 1_000_000
    human = cli("job", "show", scene.path, job).stdout
    assert "progress" in human and "25% encode: frame 25 of 100" in human
    cli.json("job", "cancel", scene.path, job)
    shown = cli.json("job", "show", scene.path, job)
    (attempt,) = shown["attempts"]
    assert shown["stopping"] is True and attempt["stopping"] is True
    assert attempt["outcome"] == "cancelled" and attempt["stopped_at"] is None
    assert "cancelling..." in cli("job", "show", scene.path, job).stdout
    with Production.open(scene.path, clock=cli.clock, allow_injected_clock=True) as production:
        lease = JobLease.import_token  # the token no longer imports: the claim is gone
        del lease
        assert production.job(JobId(job)).stopping is not None


@pytest.mark.parametrize(
    ("args", "what"),
    [
        (("--fraction", "nan"), "fraction"),
        (("--fraction", "1.01"), "fraction"),
        (("--fraction", "-0"), None),
        (("--fraction", "half"), "fraction"),
        (("--stage", "s" * 1025), "stage"),
        (("--message", "m" * 1025), "message"),
    ],
)
def test_bad_progress_is_a_clear_error(
    cli: Cli, scene: Scene, args: tuple[str, ...], what: str | None
) -> None:
    job = scene.request()
    scene.claim(job)
    outcome = cli(
        "--json",
        "job",
        "progress",
        scene.path,
        job,
        "--lease-token-file",
        str(scene.dir / "lease.token"),
        *args,
    )
    if what is None:
        assert outcome.code == 0  # -0 is 0
        return
    assert outcome.code != 0
    error = json.loads(outcome.stdout)["error"]
    assert error["code"] == "invalid_argument" and what in error["message"]
    assert cli.json("job", "show", scene.path, job)["progress"] is None


def test_job_log_of_a_missing_attempt_is_not_found(cli: Cli, scene: Scene) -> None:
    job = scene.request()
    outcome = cli("--json", "job", "log", scene.path, job)
    assert json.loads(outcome.stdout)["error"]["code"] == "not_found"
    scene.claim(job)
    outcome = cli("--json", "job", "log", scene.path, job, "--attempt", "2")
    assert json.loads(outcome.stdout)["error"]["code"] == "not_found" and "attempt 2" in outcome.stdout
    outcome = cli("--json", "job", "log", scene.path, job, "--attempt", "0")
    assert json.loads(outcome.stdout)["error"]["code"] == "invalid_argument"


def test_job_log_shows_the_stored_tail_and_the_file(cli: Cli, scene: Scene) -> None:
    job = scene.request()
    scene.claim(job, "lease.token", "--lease", "10m")
    log_file = scene.dir / "attempt.log"
    log_file.write_bytes(b"line one\nbell \x07 here\n")
    cli.json("media-root", "add", scene.path, "work", str(scene.dir))  # a log lives under a media root
    with Production.open(scene.path, clock=cli.clock, allow_injected_clock=True) as production:
        lease = JobLease.import_token(production, scene.token())
        with production.edit() as tx:
            tx.record_attempt_log(lease, path=log_file)
            tx.commit()
    running = cli.json("job", "log", scene.path, job)
    assert running["running"] is True and running["tail"] is None and running["file"] == str(log_file)
    assert cli("job", "log", scene.path, job).stdout == "line one\nbell \\x07 here\n"
    with Production.open(scene.path, clock=cli.clock, allow_injected_clock=True) as production:
        lease = JobLease.import_token(production, scene.token())
        with production.edit() as tx:
            tx.record_attempt_log(lease, tail="the stored tail\n")
            tx.release_job_lease(lease)
            tx.commit()
    log_file.unlink()
    ended = cli.json("job", "log", scene.path, job, "--attempt", "1", "--follow")
    assert ended["running"] is False and ended["tail"] == "the stored tail\n" and ended["file"] is None
    assert cli("job", "log", scene.path, job, "--follow").stdout == "the stored tail\n"
