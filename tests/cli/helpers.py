"""CLI test helpers: run ``postproject`` in-process (fast, fake clock) or as a real process."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from postproject import FakeClock
from postproject.cli.app import run

SCRIPT_DIR = Path(sys.executable).parent
KIND = "org.example:generate-proxy"


@dataclass
class Outcome:
    """What one CLI run produced."""

    code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        return json.loads(self.stdout)


@dataclass
class Cli:
    """Runs ``postproject`` in-process against the test's fake clock."""

    capsys: pytest.CaptureFixture[str]
    clock: FakeClock
    tmp_path: Path

    def __call__(self, *argv: str, stdin: bytes = b"") -> Outcome:
        self.capsys.readouterr()
        code = run(list(argv), clock=self.clock, stdin=io.BytesIO(stdin))
        captured = self.capsys.readouterr()
        return Outcome(code, captured.out, captured.err)

    def json(self, *argv: str, stdin: bytes = b"") -> Any:
        """Run with ``--json`` and return the document, failing on a non-zero exit."""
        outcome = self("--json", *argv, stdin=stdin)
        assert outcome.code == 0, outcome
        return outcome.json


@dataclass
class Scene:
    """A production with one asset and its original, made through the CLI."""

    cli: Cli
    path: str
    asset: str
    original: str
    dir: Path

    def request(self, *extra: str, kind: str = KIND) -> str:
        job = self.cli.json(
            "job", "request", self.path, kind, self.asset, "proxy", "--input", self.original, *extra
        )
        return str(job["id"])

    def claim(self, job: str, token_file: str = "lease.token", *extra: str) -> Any:
        path = str(self.dir / token_file)
        return self.cli.json(
            "job", "claim", self.path, job, "--tool-name", "Proxy Worker", "--lease-token-file", path, *extra
        )

    def token(self, token_file: str = "lease.token") -> str:
        return (self.dir / token_file).read_text()


def script_env() -> dict[str, str]:
    """The environment for real ``postproject`` processes: the venv's scripts first on PATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("POSTPROJECT_")}
    env["PATH"] = f"{SCRIPT_DIR}{os.pathsep}{env.get('PATH', '')}"
    return env


def run_script(
    args: Sequence[str], cwd: Path, *, stdin: bytes | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run the installed ``postproject`` console script."""
    return subprocess.run(
        [str(SCRIPT_DIR / "postproject"), *args],
        cwd=cwd,
        env=script_env(),
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
