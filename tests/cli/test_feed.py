"""The revision feed commands (acceptance checks 48-53 as the CLI exposes them)."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

from postproject import Production, RepresentationKind
from tests.cli.helpers import SCRIPT_DIR, Cli, Scene, script_env


def test_init_leaves_no_revision(cli: Cli, tmp_path: Path) -> None:
    path = str(tmp_path / "fresh.pproj")
    cli.json("init", path)
    assert cli.json("revisions", "latest", path) == {"revision": None}
    assert cli.json("revisions", "since", path, "0") == {"revisions": [], "through_sequence": 0}
    assert cli("revisions", "latest", path).stdout == "no revisions yet\n"


def test_since_lists_in_order_and_filters_by_kind(cli: Cli, scene: Scene) -> None:
    job = scene.request()
    everything = cli.json("revisions", "since", scene.path, "0")
    assert [r["sequence"] for r in everything["revisions"]] == [1, 2, 3]
    assert everything["revisions"][2]["events"] == [{"position": 0, "kind": "job_requested", "job_id": job}]
    after = cli.json("revisions", "since", scene.path, "1", "--limit", "1")
    assert [r["sequence"] for r in after["revisions"]] == [2]
    jobs_only = cli.json(
        "revisions", "since", scene.path, "0", "--kind", "job_requested", "--kind", "job_failed"
    )
    assert [r["sequence"] for r in jobs_only["revisions"]] == [3]
    assert jobs_only["through_sequence"] == 3
    assets = cli.json("revisions", "since", scene.path, "0", "--kind", "asset_imported", "--limit", "1")
    assert ([r["sequence"] for r in assets["revisions"]], assets["through_sequence"]) == ([1], 1)


def test_since_rejects_bad_arguments(cli: Cli, scene: Scene) -> None:
    for args in (
        ["0", "--limit", "0"],
        ["0", "--limit", "1001"],
        ["0", "--kind", "row_updated"],
        ["-1"],
        ["x"],
    ):
        outcome = cli("--json", "revisions", "since", scene.path, *args)
        assert (outcome.code, outcome.json["error"]["code"]) == (2, "invalid_argument"), args


def test_wait_with_zero_timeout_on_idle_production_times_out(cli: Cli, scene: Scene) -> None:
    latest = str(cli.json("revisions", "latest", scene.path)["revision"]["sequence"])
    assert cli.json("revisions", "wait", scene.path, latest, "--timeout", "0s") == {
        "result": "timed_out",
        "revisions": [],
    }
    found = cli.json("revisions", "wait", scene.path, "1", "--timeout", "0ms")
    assert found["result"] == "revisions"
    assert [r["sequence"] for r in found["revisions"]] == [2]


def test_wait_rejects_timeouts_over_a_minute(cli: Cli, scene: Scene) -> None:
    for timeout in ("60001ms", "61s", "2m", "1.5s", "-1s", "10"):
        outcome = cli("--json", "revisions", "wait", scene.path, "0", f"--timeout={timeout}")
        assert (outcome.code, outcome.json["error"]["code"]) == (2, "invalid_argument"), timeout
    assert cli.json("revisions", "wait", scene.path, "0", "--timeout", "60000ms")["result"] == "revisions"


def _production_at(tmp_path: Path) -> Path:
    path = tmp_path / "feed.pproj"
    Production.create(path).close()
    return path


def _commit_asset(path: Path, media: Path) -> None:
    with Production.open(path) as production, production.edit(message="Import") as tx:
        asset = tx.create_asset("A")
        tx.add_representation(asset, RepresentationKind.ORIGINAL, media)
        tx.commit()


def test_wait_in_another_process_wakes_on_commit(tmp_path: Path) -> None:
    path = _production_at(tmp_path)
    media = tmp_path / "a.mov"
    media.write_bytes(b"a")
    waiter = subprocess.Popen(
        [str(SCRIPT_DIR / "postproject"), "--json", "revisions", "wait", str(path), "0", "--timeout", "60s"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=script_env(),
    )  # fmt: skip
    _commit_asset(path, media)
    out, err = waiter.communicate(timeout=90)
    assert waiter.returncode == 0, err
    document = json.loads(out)
    assert document["result"] == "revisions"
    assert document["revisions"][0]["sequence"] == 1


def test_follow_streams_json_lines_and_exits_cleanly_on_ctrl_c(tmp_path: Path) -> None:
    path = _production_at(tmp_path)
    media = tmp_path / "a.mov"
    media.write_bytes(b"a")
    _commit_asset(path, media)
    follower = subprocess.Popen(
        [str(SCRIPT_DIR / "postproject"), "--json", "revisions", "follow", str(path), "--from", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=script_env(),
    )  # fmt: skip
    try:
        assert follower.stdout is not None
        first = json.loads(follower.stdout.readline())
        assert first["sequence"] == 1
        assert [e["kind"] for e in first["events"]] == ["asset_imported", "representation_added"]
        _commit_asset(path, media)
        second = json.loads(follower.stdout.readline())
        assert second["sequence"] == 2 and second["message"] == "Import"
        follower.send_signal(signal.SIGINT)
        rest, err = follower.communicate(timeout=60)
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.communicate()
    assert follower.returncode == 0
    assert rest == "" and "Traceback" not in err


def test_follow_rejects_bad_arguments(cli: Cli, scene: Scene) -> None:
    assert cli("--json", "revisions", "follow", scene.path, "--from", "x").code == 2
    assert cli("--json", "revisions", "follow", scene.path, "--kind", "row_updated").code == 2
