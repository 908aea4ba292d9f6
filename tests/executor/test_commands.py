"""The ``worker`` and ``demo`` commands, through a parser built with ``commands.register``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from postproject import InvalidArgumentError, JobState, Production
from postproject.cli import executor as commands
from postproject.executor import jobs
from postproject.executor.attemptlog import LOGS
from postproject.executor.recipe import default_path
from tests.executor.conftest import Studio


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="postproject")
    commands.register(parser.add_subparsers(dest="group", required=True))
    return parser.parse_args(argv)


def run(*argv: str) -> int:
    args = parse(*argv)
    return int(args.handler(args))


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--lease", "0s"], "--lease must be between 1us and 24h"),
        (["--lease", "५s"], "whole number and a unit"),  # Devanagari digit
        (["--concurrency", "३"], "--concurrency must be a whole number from 1 to 16"),  # int() takes it
        (["--concurrency", "٣"], "--concurrency must be a whole number"),  # Arabic-Indic three
        (["--concurrency", "３"], "--concurrency must be a whole number"),  # fullwidth three
        (["--lease", "1.5s"], "whole number and a unit"),
        (["--concurrency", "0"], "--concurrency must be a whole number from 1 to 16"),
        (["--concurrency", "-1"], "--concurrency"),
        (["--root-map", "media"], "NAME=PATH"),
        (["--kind", "org.example:render"], "--kind must be one of"),
    ],
)
def test_invalid_worker_arguments(tmp_path: Path, argv: list[str], message: str) -> None:
    with pytest.raises(InvalidArgumentError, match=message):
        run("worker", "run", str(tmp_path / "absent.pproj"), *argv)
    assert not (tmp_path / "absent.pproj").exists()


@pytest.mark.parametrize("option", ["--assets", "--seed"])
@pytest.mark.parametrize("digits", ["३", "٣", "３", "1٣"])
def test_demo_counts_take_ascii_digits_only(tmp_path: Path, option: str, digits: str) -> None:
    with pytest.raises(InvalidArgumentError, match=f"{option} must be a whole number"):
        run("demo", "create", str(tmp_path / "demo.pproj"), option, digits)
    assert not (tmp_path / "demo.pproj").exists()


def test_unicode_digits_exit_2_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from postproject.cli.app import run as cli

    for argv in (
        ["demo", "create", str(tmp_path / "d.pproj"), "--assets", "३"],
        ["demo", "run", str(tmp_path / "d.pproj"), "--workers", "३"],
        ["worker", "run", str(tmp_path / "d.pproj"), "--concurrency", "३"],
        ["job", "list", str(tmp_path / "d.pproj"), "--limit", "३"],
    ):
        assert cli(["--json", *argv]) == 2, argv
        assert json.loads(capsys.readouterr().out)["error"]["code"] == "invalid_argument"
    assert not (tmp_path / "d.pproj").exists()


def test_worker_run_command(studio: Studio, capsys: pytest.CaptureFixture[str]) -> None:
    proxy = studio.request(profile="proxy-720p")
    thumbnail = studio.request(jobs.THUMBNAIL_KIND, "thumbnail-640")
    studio.production.close()
    code = run(
        "worker", "run", str(studio.path), "--kind", "generate-thumbnail", "--agent-name", "cli-test",
        "--thumbnail-format", "png", "--root-map", f"proxies={studio.root / 'mapped'}", "--once",
    )  # fmt: skip
    assert code == 0
    with Production.open(studio.path) as production:
        assert production.job(proxy).state is JobState.REQUESTED
        job = production.job(thumbnail)
        assert job.state is JobState.SUCCEEDED
        assert job.completion is not None
        activity = production.activity(job.completion.activity_id)
        assert activity.agent is not None
        assert activity.agent.name == "cli-test"
    assert [p.name for p in (studio.root / "mapped").iterdir() if p.name != LOGS] == [
        "A001_C003_Harbour_dawn_thumbnail-640.png"
    ]
    err = capsys.readouterr().err
    assert f"succeeded job {thumbnail}" in err
    assert "ppl1:" not in err


def test_handlers_accept_a_cli_context(studio: Studio) -> None:
    studio.production.close()

    class Context:
        def __init__(self, args: argparse.Namespace) -> None:
            self.args = args

    args = parse("worker", "run", str(studio.path), "--tool-name", "Renamed executor")
    assert args.handler(Context(args)) == 0


def test_demo_create_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe = json.loads(default_path().read_text())
    recipe["clip"] = {"width": 320, "height": 180, "frames": 6, "rate": 24}
    (tmp_path / "small.json").write_text(json.dumps(recipe))
    path = tmp_path / "demo.pproj"
    assert (
        run(
            "demo",
            "create",
            str(path),
            "--assets",
            "3",
            "--seed",
            "4",
            "--recipe",
            str(tmp_path / "small.json"),
        )
        == 0
    )
    assert "Created" in capsys.readouterr().err
    with Production.open(path) as production:
        assert len(production.assets().items) == 3
    with pytest.raises(InvalidArgumentError, match="--assets"):
        run("demo", "create", str(tmp_path / "other.pproj"), "--assets", "many")


def test_standalone_entry_point_maps_errors_to_exit_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert commands.main(["worker", "run", str(tmp_path / "absent.pproj")]) == 3
    assert "(not_found)" in capsys.readouterr().err
    assert commands.main(["worker", "run", str(tmp_path / "absent.pproj"), "--lease", "25h"]) == 2


def test_worker_run_logs_json_lines_and_ends_with_a_summary(
    studio: Studio, capsys: pytest.CaptureFixture[str]
) -> None:
    from postproject.cli.app import run as cli

    thumbnail = studio.request(jobs.THUMBNAIL_KIND, "thumbnail-640")
    studio.production.close()
    code = cli(
        [
            "--json",
            "worker",
            "run",
            str(studio.path),
            "--once",
            "--log-format",
            "json",
            "--agent-name",
            "json-1",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0
    summary = json.loads(captured.out)  # exactly one document on stdout
    assert summary["worker"] == "json-1" and summary["exit_code"] == 0 and summary["stopped_by"] is None
    assert summary["counts"] == {
        "claimed": 1, "succeeded": 1, "failed": 0, "released": 0, "skipped": 0, "cancelled": 0,
        "requeued": 0, "lease_lost": 0,
    }  # fmt: skip
    lines = [json.loads(line) for line in captured.err.splitlines()]  # every line is one object
    assert all({"time", "level", "logger", "message", "worker"} <= line.keys() for line in lines)
    assert {line["worker"] for line in lines} == {"json-1"}
    by_action = {line.get("action"): line for line in lines}
    claimed, succeeded = by_action["claimed"], by_action["succeeded"]
    assert claimed["job"] == succeeded["job"] == str(thumbnail)
    with Production.open(studio.path) as production:
        attempts = production.job(thumbnail).attempts
    assert claimed["attempt"] == succeeded["attempt"] == attempts[0].number == 1  # the job's attempt number
    assert "ppl1:" not in captured.err


def test_worker_settings_come_from_the_environment_unless_a_flag_says(
    studio: Studio, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = studio.request(jobs.THUMBNAIL_KIND, "thumbnail-640")
    second = studio.request(jobs.THUMBNAIL_KIND, "thumbnail-640")
    studio.production.close()
    monkeypatch.setenv("POSTPROJECT_WORKER_AGENT_NAME", "from-env")
    monkeypatch.setenv("POSTPROJECT_WORKER_THUMBNAIL_FORMAT", "png")
    assert run("worker", "run", str(studio.path), "--once") == 0
    assert run("worker", "run", str(studio.path), "--once", "--agent-name", "from-flag") == 0
    with Production.open(studio.path) as production:
        agents = []
        for job_id in (first, second):
            job = production.job(job_id)
            assert job.completion is not None
            agents.append(production.activity(job.completion.activity_id).agent)
            assert production.representation(job.completion.representation_id).path.suffix == ".png"
    assert [a.name if a else None for a in agents] == ["from-env", "from-flag"]


def test_demo_create_json_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from postproject.cli.app import run as cli

    recipe = json.loads(default_path().read_text())
    recipe["clip"] = {"width": 320, "height": 180, "frames": 6, "rate": 24}
    (tmp_path / "small.json").write_text(json.dumps(recipe))
    path = tmp_path / "demo.pproj"
    assert (
        cli(
            ["demo", "create", str(path), "--assets", "3", "--recipe", str(tmp_path / "small.json"), "--json"]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary["path"] == str(path) and summary["assets"] == 3
    assert set(summary["jobs"]) == {state.value for state in JobState}
    assert sum(summary["jobs"].values()) > 0
