"""Golden JSON shapes: the exact key sets of every command's ``--json`` output (a contract)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.cli.helpers import Cli, Scene

JOB_KEYS = {
    "id",
    "kind",
    "inputs",
    "output_asset_id",
    "output_kind",
    "target_root",
    "state",
    "claim_tool",
    "claim_agent",
    "claimed_at_unix_micros",
    "claim_expires_at_unix_micros",
    "completion_activity_id",
    "completion_representation_id",
    "failure_diagnostic",
    "requested_at_unix_micros",
    "claim_worker",
    "priority",
    "not_before_unix_micros",
    "max_attempts",
    "attempts",
    "retry_of",
    "retried_as",
    "depends_on",
    "waiting_on",
    "blocked_by",
    "bound_inputs",
    "regenerates",
    "progress",
    "stopping",
    "finished_at_unix_micros",
}
PROGRESS_KEYS = {"fraction", "stage", "message", "updated_at", "updated_at_unix_micros"}
RECEIPT_KEYS = {"production_id", "revision"}
REVISION_KEYS = {"id", "sequence", "committed_at_unix_micros", "origin", "message", "principal", "events"}
PAGE_KEYS = {"items", "next_cursor"}
ASSET_KEYS = {"id", "name", "created_at_unix_micros"}
REPRESENTATION_KEYS = {
    "id",
    "asset_id",
    "kind",
    "root",
    "path",
    "size",
    "modified_at_unix_micros",
    "fingerprints",
    "created_at_unix_micros",
    "superseded_by",
}
EDGE_KEYS = {"representation_id", "role", "snapshot"}
ACTIVITY_KEYS = {
    "id",
    "kind",
    "inputs",
    "outputs",
    "tool",
    "agent",
    "started_at_unix_micros",
    "finished_at_unix_micros",
    "revision_sequence",
}


def assert_receipt(doc: dict[str, Any], *, revision: bool = True) -> None:
    receipt = doc["commit_receipt"]
    assert set(receipt) == RECEIPT_KEYS
    if revision:
        assert set(receipt["revision"]) == REVISION_KEYS
        for event in receipt["revision"]["events"]:
            assert {"position", "kind"} <= set(event)
    else:
        assert receipt["revision"] is None


def assert_job_write(doc: dict[str, Any]) -> None:
    assert set(doc) == JOB_KEYS | {"commit_receipt"}
    assert_receipt(doc)


def test_init_shape(cli: Cli, tmp_path: Path) -> None:
    doc = cli.json("init", str(tmp_path / "new.pproj"))
    assert set(doc) == {"id", "path", "commit_receipt"}
    assert_receipt(doc, revision=False)


def test_asset_shapes(cli: Cli, scene: Scene) -> None:
    created = cli.json("asset", "create", scene.path)
    assert set(created) == {"id", "commit_receipt"}
    assert_receipt(created)
    assert set(cli.json("asset", "show", scene.path, scene.asset)) == ASSET_KEYS
    page = cli.json("asset", "list", scene.path)
    assert set(page) == PAGE_KEYS
    assert all(set(item) == ASSET_KEYS for item in page["items"])


def test_representation_shapes(cli: Cli, scene: Scene) -> None:
    shown = cli.json("representation", "show", scene.path, scene.original)
    assert set(shown) == REPRESENTATION_KEYS | {"availability"}
    assert set(shown["fingerprints"][0]) == {"algorithm", "version", "hex"}
    page = cli.json("representation", "list", scene.path, "--asset", scene.asset)
    assert set(page) == PAGE_KEYS
    assert set(page["items"][0]) == REPRESENTATION_KEYS
    observed = cli.json("representation", "observe", scene.path, scene.original)
    assert set(observed) == {"id", "changed", "commit_receipt"}
    assert_receipt(observed, revision=False)


def test_media_root_shapes(cli: Cli, scene: Scene) -> None:
    added = cli.json("media-root", "add", scene.path, "proxies", str(scene.dir / "proxies"))
    assert set(added) == {"name", "path", "commit_receipt"}
    assert_receipt(added)
    page = cli.json("media-root", "list", scene.path)
    assert set(page) == PAGE_KEYS
    assert set(page["items"][0]) == {"name", "path"}


def test_activity_and_metadata_shapes(cli: Cli, scene: Scene) -> None:
    output = scene.dir / "media" / "A001_grade.mov"
    output.write_bytes(b"graded")
    derived = cli.json("representation", "add", scene.path, scene.asset, "derived", str(output))["id"]
    created = cli.json(
        "activity", "create", scene.path, "--kind", "org.example:grade",
        "--input", f"{scene.original}:org.example:source", "--output", derived,
        "--tool-name", "Grader", "--tool-version", "2", "--agent-name", "colourist",
    )  # fmt: skip
    assert set(created) == {"id", "commit_receipt"}
    shown = cli.json("activity", "show", scene.path, created["id"])
    assert set(shown) == ACTIVITY_KEYS
    assert set(shown["inputs"][0]) == EDGE_KEYS
    assert set(shown["inputs"][0]["snapshot"]) == {"revision_sequence", "fingerprints"}
    assert set(shown["tool"]) == {"name", "version", "uri"}
    assert set(shown["agent"]) == {"name"}
    page = cli.json("activity", "list", scene.path)
    assert set(page) == PAGE_KEYS
    assert set(page["items"][0]) == ACTIVITY_KEYS
    value = '{"type": "string", "value": "editing-proxy"}'
    added = cli.json("metadata", "add", scene.path, f"activity:{created['id']}", "urn:x", "profile", value)
    assert set(added) == {"target", "vocabulary", "property", "value", "commit_receipt"}
    assert set(added["target"]) == {"kind", "id"}
    listed = cli.json("metadata", "list", scene.path, f"activity:{created['id']}")
    assert set(listed) == PAGE_KEYS
    assert set(listed["items"][0]) == {"vocabulary", "property", "value"}


def test_job_read_shapes(cli: Cli, scene: Scene) -> None:
    job = scene.request()
    assert set(cli.json("job", "show", scene.path, job)) == JOB_KEYS
    page = cli.json("job", "list", scene.path)
    assert set(page) == PAGE_KEYS
    assert set(page["items"][0]) == JOB_KEYS
    counts = cli.json("job", "counts", scene.path)
    assert set(counts) == {"kind", "counts", "total"}
    assert set(counts["counts"]) == {"requested", "claimed", "succeeded", "failed", "cancelled"}


def test_job_write_shapes(cli: Cli, scene: Scene) -> None:
    job = scene.request()
    claimed = scene.claim(job)
    assert_job_write(claimed)
    assert set(claimed["claim_tool"]) == {"name", "version", "uri"}
    token_file = str(scene.dir / "lease.token")
    assert_job_write(
        cli.json("job", "renew", scene.path, job, "--lease", "5m", "--lease-token-file", token_file)
    )
    assert_job_write(cli.json("job", "release", scene.path, job, "--lease-token-file", token_file))
    scene.claim(job, "second.token")
    failed = cli.json(
        "job", "fail", scene.path, job, "tool crashed", "--lease-token-file", str(scene.dir / "second.token")
    )
    assert_job_write(failed)
    other = scene.request()
    scene.claim(other, "third.token")
    out = scene.dir / "A001_proxy.mov"
    out.write_bytes(b"proxy")
    completed = cli.json(
        "job", "complete", scene.path, other, str(out), "--lease-token-file", str(scene.dir / "third.token")
    )
    assert_job_write(completed)
    cancelled = cli.json("job", "cancel", scene.path, scene.request())
    assert_job_write(cancelled)
    several = cli.json("job", "cancel", scene.path, scene.request(), scene.request())
    assert set(several) == {"jobs", "commit_receipt"}
    assert all(set(j) == JOB_KEYS for j in several["jobs"])


def test_revision_shapes(cli: Cli, scene: Scene) -> None:
    latest = cli.json("revisions", "latest", scene.path)
    assert set(latest) == {"revision"}
    assert set(latest["revision"]) == REVISION_KEYS
    since = cli.json("revisions", "since", scene.path, "0")
    assert set(since) == {"revisions", "through_sequence"}
    assert set(since["revisions"][0]) == REVISION_KEYS
    waited = cli.json("revisions", "wait", scene.path, "0", "--timeout", "0s")
    assert set(waited) == {"result", "revisions"}
    assert waited["result"] == "revisions"


def test_error_shape(cli: Cli, scene: Scene) -> None:
    outcome = cli("--json", "job", "show", scene.path, "0190a000-0000-7000-8000-000000000000")
    assert outcome.code == 3
    assert set(outcome.json) == {"error"}
    assert set(outcome.json["error"]) == {"code", "message"}
