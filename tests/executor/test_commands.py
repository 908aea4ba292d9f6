"""The ``worker`` and ``demo`` commands, through a parser built with ``commands.register``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from postproject import InvalidArgumentError, JobState, Production
from postproject.executor import commands, jobs
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
        (["--lease", "0s"], "lease duration must be between"),
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
    assert [p.name for p in (studio.root / "mapped").iterdir()] == [
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
