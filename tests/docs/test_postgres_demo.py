"""``python3 dev.py demo --postgres`` (README, PostgreSQL section): a local server in its own
folder, the demo production in it, workers as separate processes over TCP, the monitor on its
URI (here a stand-in that waits for the workers, then takes a snapshot); closing the monitor
stops the workers and the server, and a second run reuses the server's folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.demo_recipe import small_recipe

from postproject.storage.postgresql.localserver import find_bindir

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups"),
    pytest.mark.skipif(find_bindir() is None, reason="no PostgreSQL server binaries"),
]

# The monitor's stand-in: given the URI (the password is only in PGPASSWORD), wait until the
# demo's workers have completed two jobs, then let the real monitor take a snapshot and exit.
MONITOR = """
import os, subprocess, sys, time
from postproject import JobState, Production
out, uri = sys.argv[1], sys.argv[2]
deadline = time.monotonic() + 240
with Production.open(uri, read_only=True) as production:
    while time.monotonic() < deadline:
        done = production.jobs(limit=1000, state=JobState.SUCCEEDED).items
        agents = [j.attempts[-1].agent for j in done if j.attempts]
        by_workers = [a for a in agents if a is not None and a.name.startswith("demo-worker-")]
        if len(by_workers) >= 2:
            break
        time.sleep(0.5)  # polling another process's progress, not waiting for time to pass
    else:
        sys.exit("the demo's workers completed nothing within four minutes")
monitor = [sys.executable, "-m", "postproject_gui", uri, "--snapshot", out, "--timeout", "60s"]
sys.exit(subprocess.run(monitor, check=False).returncode)
"""


@pytest.fixture
def pgdata() -> Iterator[Path]:
    """A folder the server's unprivileged account can reach (pytest's tmp_path is private)."""
    folder = Path(tempfile.mkdtemp(prefix="pp-demo-pgdata-"))
    folder.chmod(0o755)  # like a checkout: others may search it
    yield folder / ".pgdata"
    shutil.rmtree(folder, ignore_errors=True)


def run_demo(
    pgdata: Path, tmp_path: Path, shot: str, assets: int
) -> tuple[subprocess.CompletedProcess[str], dict[str, object]]:
    script = tmp_path / "monitor.py"
    script.write_text(MONITOR, encoding="utf-8")
    out = tmp_path / f"{shot}.png"
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        POSTPROJECT_DEMO_PGDATA=str(pgdata),
        POSTPROJECT_DEMO_MEDIA=str(tmp_path / "media"),
        POSTPROJECT_DEMO_MONITOR_CMD=f"{sys.executable} {script} {out}",
    )
    env.pop("PGPASSWORD", None)
    small = small_recipe(tmp_path)  # the shipped demo with small clips: the path, not the encoding
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "dev.py"),
            "demo",
            "--postgres",
            "--assets",
            str(assets),
            "--recipe",
            str(small),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    document = json.loads(out.with_suffix(".json").read_text()) if out.with_suffix(".json").exists() else {}
    return done, document


def test_dev_py_demo_postgres_runs_workers_over_tcp_and_stops_cleanly(pgdata: Path, tmp_path: Path) -> None:
    done, shown = run_demo(pgdata, tmp_path, "first", 3)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    production = str(shown["production"])
    assert production.startswith("postgresql://postproject@127.0.0.1:") and production.endswith(
        "production=demo"
    )
    counts = shown["counts"]
    assert isinstance(counts, dict) and counts["succeeded"] >= 2
    assert (pgdata / "data" / "PG_VERSION").exists()
    assert not (pgdata / "data" / "postmaster.pid").exists()  # the server was stopped
    assert list((tmp_path / "media" / "logs").glob("worker-*.log"))  # separate worker processes

    again, shown = run_demo(pgdata, tmp_path, "second", 1)  # the same cluster, a fresh demo production
    assert again.returncode == 0, again.stderr[-3000:]
    assert (
        str(shown["production"]).endswith("production=demo")
        and not (pgdata / "data" / "postmaster.pid").exists()
    )
