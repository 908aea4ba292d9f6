"""Artifact knowledge and regeneration through the CLI (acceptance checks 54-58 as exposed)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.cli.helpers import KIND, Cli, Scene

KNOWLEDGE_KEYS = {"representation_id", "state", "reasons", "visited_representations", "truncated"}
PLAN_KEYS = {
    "artifact_representation_id",
    "activity_id",
    "job",
    "parameters",
    "superseded_inputs",
    "bound_inputs",
}
REQUEST_KEYS = {"kind", "inputs", "output_asset_id", "output_kind", "target_root", "regenerates"}


@dataclass
class Produced:
    scene: Scene
    job: str
    proxy: str
    activity: str


@pytest.fixture
def produced(cli: Cli, scene: Scene) -> Produced:
    """A proxy made by a completed job whose activity carries one parameter."""
    proxies = scene.dir / "proxies"
    proxies.mkdir()
    cli.json("media-root", "add", scene.path, "proxies", str(proxies))
    job = scene.request("--target-root", "proxies")
    scene.claim(job)
    (proxies / "A001_proxy.mov").write_bytes(b"proxy")
    done = cli.json("job", "complete", scene.path, job, str(proxies / "A001_proxy.mov"),
                    "--lease-token-file", str(scene.dir / "lease.token"))  # fmt: skip
    activity = done["completion_activity_id"]
    cli.json("metadata", "add", scene.path, f"activity:{activity}", "urn:x", "profile",
             '{"type": "string", "value": "proxy-720p"}')  # fmt: skip
    return Produced(scene, job, done["completion_representation_id"], activity)


def change_original(cli: Cli, scene: Scene) -> None:
    (scene.dir / "media" / "A001.mov").write_bytes(b"re-conformed essence")
    assert cli.json("representation", "observe", scene.path, scene.original)["changed"] is True


def test_evaluate_current_then_stale(cli: Cli, produced: Produced) -> None:
    scene = produced.scene
    current = cli.json("artifact", "evaluate", scene.path, produced.proxy)
    assert set(current) == KNOWLEDGE_KEYS
    assert (current["state"], current["reasons"]) == ("current", [])
    change_original(cli, scene)
    stale = cli.json("artifact", "evaluate", scene.path, produced.proxy)
    assert stale["state"] == "stale"
    reason = stale["reasons"][0]
    assert (reason["code"], reason["edge"], reason["representation_id"]) == (
        "fingerprint_changed",
        "input",
        scene.original,
    )
    assert {"description", "algorithm", "version", "snapshot", "current"} <= set(reason)
    human = cli("artifact", "evaluate", scene.path, produced.proxy).stdout
    assert "state:    stale\n" in human and f"  - input {scene.original} changed" in human


def test_evaluate_bounds_and_absent(cli: Cli, produced: Produced) -> None:
    path = produced.scene.path
    assert cli("artifact", "evaluate", path, produced.proxy, "--max-depth", "0").code == 2
    assert cli("artifact", "evaluate", path, produced.proxy, "--max-depth", "65").code == 2
    assert cli("artifact", "evaluate", path, "0190a000-0000-7000-8000-000000000000").code == 3


def test_stale_page(cli: Cli, produced: Produced) -> None:
    scene = produced.scene
    assert cli.json("artifact", "stale", scene.path) == {"items": [], "next_cursor": None, "truncated": False}
    change_original(cli, scene)
    page = cli.json("artifact", "stale", scene.path)
    assert [k["representation_id"] for k in page["items"]] == [produced.proxy]
    assert set(page["items"][0]) == KNOWLEDGE_KEYS
    downstream = cli.json("artifact", "stale", scene.path, "--source", scene.original)
    assert [k["representation_id"] for k in downstream["items"]] == [produced.proxy]
    assert cli("artifact", "stale", scene.path, "--limit", "0").code == 2


def test_reproducibility(cli: Cli, produced: Produced) -> None:
    scene = produced.scene
    report = cli.json("artifact", "reproducibility", scene.path, produced.proxy)
    assert report == {
        "representation_id": produced.proxy,
        "reproducible": True,
        "activity_id": produced.activity,
        "activity_kind": KIND,
        "issues": [],
    }
    original = cli.json("artifact", "reproducibility", scene.path, scene.original)
    assert original["reproducible"] is False
    assert original["issues"] == [{"code": "producing_activity_missing", "representation_id": scene.original}]


def test_plan_is_read_only_and_repeats_the_job(cli: Cli, produced: Produced) -> None:
    scene = produced.scene
    before = cli.json("revisions", "latest", scene.path)["revision"]["sequence"]
    planned = cli.json("job", "plan", scene.path, "--artifact", produced.proxy, "--artifact", produced.proxy)
    assert set(planned) == {"plans", "unplannable", "truncated"}
    (plan,) = planned["plans"]
    assert set(plan) == PLAN_KEYS and set(plan["job"]) == REQUEST_KEYS
    assert plan["job"] == {
        "kind": KIND,
        "inputs": [scene.original],
        "output_asset_id": scene.asset,
        "output_kind": "proxy",
        "target_root": "proxies",
        "regenerates": produced.proxy,
    }
    assert (plan["superseded_inputs"], plan["bound_inputs"]) == ([], [])
    assert plan["parameters"] == [
        {"vocabulary": "urn:x", "property": "profile", "value": {"type": "string", "value": "proxy-720p"}}
    ]
    assert cli.json("revisions", "latest", scene.path)["revision"]["sequence"] == before
    no_producer = cli("--json", "job", "plan", scene.path, "--artifact", scene.original)
    assert (no_producer.code, no_producer.json["error"]["code"]) == (4, "conflict")
    assert cli("job", "plan", scene.path).code == 2
    assert (
        cli("job", "plan", scene.path, "--artifact", produced.proxy, "--downstream-of", scene.original).code
        == 2
    )


def test_enqueue_requests_jobs_with_parameters_in_one_revision(cli: Cli, produced: Produced) -> None:
    scene = produced.scene
    change_original(cli, scene)
    downstream = cli.json("job", "plan", scene.path, "--downstream-of", scene.original)
    assert [p["artifact_representation_id"] for p in downstream["plans"]] == [produced.proxy]
    enqueued = cli.json("job", "enqueue", scene.path, "--downstream-of", scene.original)
    assert set(enqueued) == {"jobs", "unplannable", "commit_receipt"}
    (job,) = enqueued["jobs"]
    assert (job["state"], job["kind"], job["target_root"]) == ("requested", KIND, "proxies")
    kinds = [e["kind"] for e in enqueued["commit_receipt"]["revision"]["events"]]
    assert kinds == ["job_requested", "metadata_added_or_replaced"]
    params = cli.json("metadata", "list", scene.path, f"job:{job['id']}")["items"]
    assert [p["property"] for p in params] == ["profile"]
    again = cli.json("job", "enqueue", scene.path, "--artifact", produced.proxy)
    assert len(again["jobs"]) == 1 and again["jobs"][0]["id"] != job["id"]


def test_provenance_graph(cli: Cli, produced: Produced) -> None:
    scene = produced.scene
    graph = cli.json("artifact", "provenance", scene.path, produced.proxy)
    assert set(graph) == {"focus", "nodes", "edges", "truncated"}
    types = {n["id"]: n["type"] for n in graph["nodes"]}
    assert types == {
        scene.original: "representation",
        produced.proxy: "representation",
        produced.activity: "activity",
        produced.job: "job",
    }
    relations = {(e["source"], e["relation"], e["target"]) for e in graph["edges"]}
    assert (scene.original, "used", produced.activity) in relations
    assert (produced.activity, "generated", produced.proxy) in relations
    assert (produced.job, "completed", produced.activity) in relations
    assert cli("artifact", "provenance", scene.path, produced.proxy, "--upstream", "65").code == 2


def test_prov_export(cli: Cli, produced: Produced) -> None:
    scene = produced.scene
    document = cli.json("artifact", "prov", scene.path)
    assert f"uuid:{produced.proxy}" in document["entity"]
    assert f"uuid:{produced.activity}" in document["activity"]
    lineage = cli.json("artifact", "prov", scene.path, "--artifact", produced.proxy)
    assert set(lineage["entity"]) == {f"uuid:{scene.original}", f"uuid:{produced.proxy}"}
    provn = cli("artifact", "prov", scene.path, "--format", "provn")
    assert provn.code == 0 and provn.stdout.startswith("document\n")
    wrapped = cli.json("artifact", "prov", scene.path, "--format", "provn")
    assert wrapped["format"] == "provn" and "wasGeneratedBy" in wrapped["document"]
    assert cli("artifact", "prov", scene.path, "--format", "xml").code == 2


def test_artifact_human_output(cli: Cli, produced: Produced, tmp_path: Path) -> None:
    scene = produced.scene
    assert "reproducible: yes\n" in cli("artifact", "reproducibility", scene.path, produced.proxy).stdout
    plan = cli("job", "plan", scene.path, "--artifact", produced.proxy).stdout
    assert plan.startswith(f"{produced.proxy}: {KIND} -> proxy of asset {scene.asset} under root proxies\n")
    graph = cli("artifact", "provenance", scene.path, produced.proxy).stdout
    assert graph.startswith(f"focus: {produced.proxy}\n") and f"-completed-> {produced.activity}" in graph
