"""The spec's shell examples run as written, with bash and jq, against the installed script.

The example text is read from ``../shared/spec/jobs-and-production-work.md`` (or the copy in
tests/docs/spec); setup happens through ``init``, ``asset create`` and ``representation add``.
On PostgreSQL the only change to an example is its production path, replaced by a URI.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.helpers import run_script, script_env

ROOT = Path(__file__).resolve().parents[2]
SPEC_CANDIDATES = (
    ROOT.parent / "shared" / "spec" / "jobs-and-production-work.md",
    ROOT / "tests" / "docs" / "spec" / "jobs-and-production-work.md",
)
REQUEST_EXAMPLE = "JOB_ID=$(postproject --json job request"
CLAIM_EXAMPLE = "postproject --json job claim jobs.pproj"


def spec_block(start: str) -> str:
    """The shell block that begins with ``start``: up to the first blank line."""
    for candidate in SPEC_CANDIDATES:
        if candidate.exists():
            text = candidate.read_text(encoding="utf-8")
            break
    else:
        pytest.fail(f"the spec file is missing (looked at {', '.join(map(str, SPEC_CANDIDATES))})")
    index = text.find(start)
    assert index >= 0, f"the spec has no shell example starting with {start!r}"
    return text[index:].split("\n\n", 1)[0] + "\n"


def require_tools() -> None:
    if shutil.which("jq") is None:
        pytest.fail("jq must be installed to run the spec's shell examples (e.g. apt-get install jq)")
    if shutil.which("bash") is None:
        pytest.fail("bash must be installed to run the spec's shell examples")


def setup_production(directory: Path, name: str) -> dict[str, str]:
    """``init``, ``asset create`` and ``representation add``: ASSET_ID and ORIGINAL_ID."""

    def run(*args: str) -> str:
        done = run_script(list(args), directory)
        assert done.returncode == 0, done.stderr
        return done.stdout

    run("init", name)
    asset = json.loads(run("--json", "asset", "create", name, "--name", "A001"))["id"]
    (directory / "media").mkdir(exist_ok=True)
    (directory / "media" / "A001.mov").write_bytes(b"camera original")
    original = json.loads(run("--json", "representation", "add", name, asset, "original", "media/A001.mov"))[
        "id"
    ]
    return {"ASSET_ID": asset, "ORIGINAL_ID": original}


def bash(script: str, directory: Path, variables: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {**script_env(), **variables}
    return subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", script],
        cwd=directory, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def on_engine(example: str, name: str, location: str) -> tuple[str, str]:
    """(the example, the production argument) on the engine under test: a URI replaces the
    example's file name on PostgreSQL; on SQLite both stay as written."""
    if "://" not in location:
        return example, name
    assert name in example
    return example.replace(name, shlex.quote(location)), location


@pytest.mark.slow
def test_request_show_and_page_example(tmp_path: Path, production_location: Callable[[str], str]) -> None:
    require_tools()
    example, name = on_engine(
        spec_block(REQUEST_EXAMPLE), "production.pproj", production_location("production.pproj")
    )
    variables = setup_production(tmp_path, name)
    done = bash(example, tmp_path, variables)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stdout.splitlines()
    assert "requested" in lines  # `job show ... | jq -r .state`
    items = [json.loads(chunk) for chunk in _json_objects(done.stdout)]
    pages = [i for i in items if set(i) == {"id", "kind", "state"}]
    assert len(pages) == 2
    assert all(p["state"] == "requested" and p["kind"] == "org.example:generate-proxy" for p in pages)
    assert pages[0]["id"] < pages[1]["id"]


@pytest.mark.slow
def test_claim_and_complete_example(tmp_path: Path, production_location: Callable[[str], str]) -> None:
    require_tools()
    example, name = on_engine(spec_block(CLAIM_EXAMPLE), "jobs.pproj", production_location("jobs.pproj"))
    variables = setup_production(tmp_path, name)
    requested = run_script(
        ["--json", "job", "request", name, "org.example:generate-proxy", variables["ASSET_ID"], "proxy",
         "--input", variables["ORIGINAL_ID"]],
        tmp_path,
    )  # fmt: skip
    assert requested.returncode == 0, requested.stderr
    variables["JOB_ID"] = json.loads(requested.stdout)["id"]
    (tmp_path / "proxies").mkdir()
    done = bash(example, tmp_path, variables)
    assert done.returncode == 0, done.stderr
    token = (tmp_path / "completion.token").read_text()
    assert (tmp_path / "completion.token").stat().st_mode & 0o777 == 0o600
    assert token not in done.stdout + done.stderr
    documents = [json.loads(chunk) for chunk in _json_objects(done.stdout)]
    claimed, summary = documents[0], documents[-1]
    assert claimed["state"] == "claimed" and claimed["claim_tool"]["version"] == "1.0"
    assert set(summary) == {
        "state",
        "completion_representation_id",
        "completion_activity_id",
        "commit_receipt",
    }
    assert summary["state"] == "succeeded"
    events = [e["kind"] for e in summary["commit_receipt"]["revision"]["events"]]
    assert events == ["representation_added", "activity_created", "job_succeeded"]
    assert os.path.exists(tmp_path / "proxies" / "A001_proxy.mov")


def _json_objects(text: str) -> list[str]:
    """Split concatenated pretty-printed JSON objects (jq's output) into documents."""
    decoder = json.JSONDecoder()
    found: list[str] = []
    index = 0
    while True:
        start = text.find("{", index)
        if start < 0:
            return found
        _, end = decoder.raw_decode(text, start)
        found.append(text[start:end])
        index = end
