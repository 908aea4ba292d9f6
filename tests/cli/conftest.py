"""CLI fixtures: an in-process runner on the fake clock, a scene made through the CLI, and
the installed console script."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from postproject import FakeClock, Production
from tests.cli.helpers import Cli, Scene, run_script


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], clock: FakeClock, tmp_path: Path) -> Cli:
    return Cli(capsys, clock, tmp_path)


@pytest.fixture
def scene(
    cli: Cli,
    tmp_path: Path,
    production_location: Callable[[str], str],
    production_factory: Callable[..., Production],
) -> Scene:
    """A production with one asset (A001) and its original representation (on each engine):
    empty as ``init`` makes it (on SQLite the suite's template copy; test_json_shapes.py runs
    ``init`` itself), then filled through the CLI."""
    path = production_location("production.pproj")
    production_factory("production.pproj").close()
    asset = cli.json("asset", "create", path, "--name", "A001")["id"]
    media = tmp_path / "media" / "A001.mov"
    media.parent.mkdir()
    media.write_bytes(b"original essence")
    original = cli.json("representation", "add", path, asset, "original", str(media))["id"]
    return Scene(cli, path, asset, original, tmp_path)


@pytest.fixture
def script() -> Callable[..., subprocess.CompletedProcess[str]]:
    return run_script
