"""``job log`` reads only what a media root holds, only regular files, bounded (issue 28
item 4): a lease holder could record ``/dev/zero`` (memory exhausted), a FIFO (a hang) or
``/etc/passwd`` / a ``~/.pgpass`` (printed to whoever reads the log)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from postproject import InvalidArgumentError, JobId, JobLease, Production
from postproject.cli import job_logs
from tests.cli.helpers import Cli, Scene
from tests.engines import execute_raw

SECRET_LINE = "render:x:1000:1000:planted secret line:/home/render:/bin/sh\n"


@pytest.fixture
def logs(cli: Cli, scene: Scene) -> tuple[Path, str]:
    """A claimed job whose attempt log is recorded at ``<root>/logs/attempt.log`` under the
    media root ``out``; (that path, the job id)."""
    root = scene.dir / "out"
    (root / "logs").mkdir(parents=True)
    cli.json("media-root", "add", scene.path, "out", str(root))
    job = scene.request()
    scene.claim(job, "lease.token", "--lease", "10m")
    log_file = root / "logs" / "attempt.log"
    log_file.write_text("encoding frame 1\n")
    with Production.open(scene.path, clock=cli.clock, allow_injected_clock=True) as production:
        lease = JobLease.import_token(production, scene.token())
        with production.edit() as tx:
            tx.record_attempt_log(lease, path=log_file)  # an absolute path inside a root: located
            tx.record_attempt_log(lease, tail="the stored tail\n")
            tx.commit()
        log = production.attempt_log(JobId(uuid.UUID(job)))
        assert (log.root, str(log.path)) == ("out", "logs/attempt.log")
    return log_file, job


def test_a_log_path_under_no_media_root_is_refused_when_recorded(
    cli: Cli, scene: Scene, tmp_path: Path
) -> None:
    job = scene.request()
    scene.claim(job, "lease.token", "--lease", "10m")
    secret = tmp_path / ".pgpass"
    secret.write_text("db:5432:farm:render:hunter2\n")
    with Production.open(scene.path, clock=cli.clock, allow_injected_clock=True) as production:
        lease = JobLease.import_token(production, scene.token())
        for path in ("/etc/passwd", "/dev/zero", secret):
            with pytest.raises(InvalidArgumentError) as raised, production.edit() as tx:
                tx.record_attempt_log(lease, path=path)
            assert "under no media root" in raised.value.message


def _replace(log_file: Path, how: str, tmp_path: Path) -> None:
    log_file.unlink()
    if how == "fifo":
        os.mkfifo(log_file)
    elif how == "dev-zero":
        log_file.symlink_to("/dev/zero")
    elif how == "secret-outside":
        outside = tmp_path / "passwd"
        outside.write_text(SECRET_LINE)
        log_file.symlink_to(outside)
    elif how == "directory":
        log_file.mkdir()


@pytest.mark.parametrize("how", ["fifo", "dev-zero", "secret-outside", "directory"])
def test_job_log_never_hangs_exhausts_memory_or_prints_what_a_root_does_not_hold(
    cli: Cli, logs: tuple[Path, str], scene: Scene, tmp_path: Path, how: str
) -> None:
    log_file, job = logs
    _replace(log_file, how, tmp_path)
    outcome = cli("job", "log", scene.path, job)
    assert outcome.code == 0, outcome
    assert outcome.stdout == "the stored tail\n"
    assert "planted secret" not in outcome.stdout + outcome.stderr
    json_out = cli.json("job", "log", scene.path, job)
    assert json_out["tail"] == "the stored tail\n"


def test_a_path_recorded_before_the_rule_is_not_read(
    cli: Cli, logs: tuple[Path, str], scene: Scene, tmp_path: Path
) -> None:
    """A row written by an older release (or by hand) with an absolute path and no root."""
    _, job = logs
    outside = tmp_path / "passwd"
    outside.write_text(SECRET_LINE)
    with Production.open(scene.path, clock=cli.clock, allow_injected_clock=True) as production:
        execute_raw(production, "UPDATE job_attempt_logs SET root_name = NULL, path = ?", (str(outside),))
    outcome = cli("job", "log", scene.path, job)
    assert outcome.code == 0 and outcome.stdout == "the stored tail\n"
    assert "under no media root" in outcome.stderr and "planted secret" not in outcome.stdout


def test_a_huge_log_prints_its_end_only(
    cli: Cli, logs: tuple[Path, str], scene: Scene, monkeypatch: pytest.MonkeyPatch
) -> None:
    log_file, job = logs
    monkeypatch.setattr(job_logs, "READ_LIMIT", 1 << 16)
    with log_file.open("wb") as out:
        out.truncate(1 << 30)  # a sparse 1 GiB file: reading it whole would take a GiB
        out.seek(1 << 30)
        out.write(b"the last line\n")
    outcome = cli("job", "log", scene.path, job)
    assert outcome.code == 0
    assert outcome.stdout.endswith("the last line\n") and len(outcome.stdout) <= 1 << 16
    assert f"(the last {1 << 16} of {(1 << 30) + 14} bytes)" in outcome.stderr
