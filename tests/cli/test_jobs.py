"""Job commands end to end through the CLI (in-process, fake clock): acceptance checks 1-7,
11, 20-24, 34-38, 41-45, 62 and 63 as the CLI exposes them."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from postproject import EXECUTOR_VOCABULARY, FakeClock
from tests.cli.helpers import KIND, Cli, Scene

ABSENT = "0190a000-0000-7000-8000-000000000000"


def head(cli: Cli, scene: Scene) -> int | None:
    revision = cli.json("revisions", "latest", scene.path)["revision"]
    return None if revision is None else int(revision["sequence"])


def second_input(cli: Cli, scene: Scene, name: str = "B.mov") -> str:
    path = scene.dir / "media" / name
    path.write_bytes(name.encode())
    return str(cli.json("representation", "add", scene.path, scene.asset, "original", str(path))["id"])


def test_request_commits_job_and_parameters_in_one_revision(cli: Cli, scene: Scene) -> None:
    job = cli.json(
        "job", "request", scene.path, KIND, scene.asset, "proxy", "--input", scene.original,
        "--param", "urn:example:grading", "lut", '{"type": "string", "value": "rec709"}',
        "--profile", "proxy-720p",
    )  # fmt: skip
    assert job["state"] == "requested"
    assert job["claim_tool"] is None and job["completion_activity_id"] is None
    events = [e["kind"] for e in job["commit_receipt"]["revision"]["events"]]
    assert events == ["job_requested", "metadata_added_or_replaced", "metadata_added_or_replaced"]
    assert job["commit_receipt"]["revision"]["message"] == "Request job"
    assert job["commit_receipt"]["revision"]["origin"].startswith("postproject-cli ")
    params = cli.json("metadata", "list", scene.path, f"job:{job['id']}")["items"]
    assert [(p["vocabulary"], p["property"], p["value"]) for p in params] == [
        ("urn:example:grading", "lut", {"type": "string", "value": "rec709"}),
        (EXECUTOR_VOCABULARY, "profile", {"type": "string", "value": "proxy-720p"}),
    ]


def test_request_returns_inputs_sorted(cli: Cli, scene: Scene) -> None:
    other = second_input(cli, scene)
    low, high = sorted([scene.original, other])
    job = cli.json("job", "request", scene.path, KIND, scene.asset, "proxy", "--input", high, "--input", low)
    assert job["inputs"] == [low, high]
    assert cli.json("job", "show", scene.path, job["id"])["inputs"] == [low, high]


@pytest.mark.parametrize(
    "kind", ["not-namespaced", ":x", "x:", "org.example:has space", "a:b/c", "a:" + "x" * 127]
)
def test_bad_kind_is_invalid_argument_without_revision(cli: Cli, scene: Scene, kind: str) -> None:
    before = head(cli, scene)
    outcome = cli("--json", "job", "request", scene.path, kind, scene.asset, "proxy")
    assert outcome.code == 2
    assert outcome.json["error"]["code"] == "invalid_argument"
    assert head(cli, scene) == before


def test_duplicate_input_and_bad_root_are_invalid(cli: Cli, scene: Scene) -> None:
    dup = ("--input", scene.original, "--input", scene.original)
    assert cli("job", "request", scene.path, KIND, scene.asset, "proxy", *dup).code == 2
    for root in ["../machine-path", " media", "a/b", "r" * 129]:
        outcome = cli(
            "--json", "job", "request", scene.path, KIND, scene.asset, "proxy", "--target-root", root
        )
        assert outcome.code == 2, root
    outcome = cli(
        "--json", "job", "request", scene.path, KIND, scene.asset, "proxy", "--target-root", "media"
    )
    assert (outcome.code, outcome.json["error"]["code"]) == (3, "not_found")


def test_absent_input_or_asset_is_not_found(cli: Cli, scene: Scene) -> None:
    assert cli("job", "request", scene.path, KIND, scene.asset, "proxy", "--input", ABSENT).code == 3
    assert cli("job", "request", scene.path, KIND, ABSENT, "proxy").code == 3
    assert cli("job", "request", scene.path, KIND, scene.asset, "thumbnail").code == 2


def test_claim_default_lease_is_sixty_seconds(cli: Cli, scene: Scene, clock: FakeClock) -> None:
    job = scene.claim(scene.request(), "lease.token", "--agent-name", "render-07", "--tool-version", "1.0")
    assert job["state"] == "claimed"
    assert job["claim_expires_at_unix_micros"] - job["claimed_at_unix_micros"] == 60_000_000
    assert job["claim_tool"] == {"name": "Proxy Worker", "version": "1.0", "uri": None}
    assert job["claim_agent"] == {"name": "render-07"}
    assert "claim_id" not in job


def test_claim_receipt_matches_head(cli: Cli, scene: Scene) -> None:
    job = scene.claim(scene.request(), "lease.token", "--lease", "5m")
    assert job["commit_receipt"]["revision"]["sequence"] == head(cli, scene)
    assert [e["kind"] for e in job["commit_receipt"]["revision"]["events"]] == ["job_claimed"]
    assert job["claim_expires_at_unix_micros"] - job["claimed_at_unix_micros"] == 300_000_000


def test_claim_of_claimed_or_absent_job(cli: Cli, scene: Scene) -> None:
    job = scene.request()
    scene.claim(job)
    again = cli(
        "--json",
        "job",
        "claim",
        scene.path,
        job,
        "--tool-name",
        "B",
        "--lease-token-file",
        str(scene.dir / "b"),
    )
    assert (again.code, again.json["error"]["code"]) == (4, "conflict")
    assert not (scene.dir / "b").exists()
    absent = cli(
        "job", "claim", scene.path, ABSENT, "--tool-name", "B", "--lease-token-file", str(scene.dir / "c")
    )
    assert absent.code == 3
    assert not (scene.dir / "c").exists()


def test_claim_never_overwrites_an_existing_token_file(cli: Cli, scene: Scene) -> None:
    job = scene.request()
    existing = scene.dir / "lease.token"
    existing.write_text("keep me")
    before = head(cli, scene)
    outcome = cli(
        "--json", "job", "claim", scene.path, job, "--tool-name", "W", "--lease-token-file", str(existing)
    )
    assert (outcome.code, outcome.json["error"]["code"]) == (4, "already_exists")
    assert existing.read_text() == "keep me"
    assert head(cli, scene) == before
    assert cli.json("job", "show", scene.path, job)["state"] == "requested"


def test_claim_token_file_is_private_and_holds_only_the_token(cli: Cli, scene: Scene) -> None:
    job = scene.request()
    scene.claim(job)
    token_file = scene.dir / "lease.token"
    assert token_file.stat().st_mode & 0o777 == 0o600
    token = token_file.read_text()
    assert len(token) == 115 and token.startswith("ppl1:") and job in token


def test_renew_extends_and_expired_lease_conflicts(cli: Cli, scene: Scene, clock: FakeClock) -> None:
    job = scene.request()
    claimed = scene.claim(job)
    token_file = str(scene.dir / "lease.token")
    clock.advance(timedelta(seconds=30))
    renewed = cli.json("job", "renew", scene.path, job, "--lease", "5m", "--lease-token-file", token_file)
    assert renewed["claim_expires_at_unix_micros"] == claimed["claimed_at_unix_micros"] + 330_000_000
    assert [e["kind"] for e in renewed["commit_receipt"]["revision"]["events"]] == ["job_claim_renewed"]
    shorter = cli("job", "renew", scene.path, job, "--lease", "1s", "--lease-token-file", token_file)
    assert shorter.code == 4
    clock.advance(timedelta(minutes=6))
    late = cli("--json", "job", "renew", scene.path, job, "--lease-token-file", token_file)
    assert (late.code, late.json["error"]["code"]) == (4, "conflict")


def test_release_returns_job_and_fences_the_old_token(cli: Cli, scene: Scene) -> None:
    job = scene.request()
    scene.claim(job)
    token_file = str(scene.dir / "lease.token")
    released = cli.json("job", "release", scene.path, job, "--lease-token-file", token_file)
    assert released["state"] == "requested" and released["claim_tool"] is None
    assert released["commit_receipt"]["revision"]["message"] == "Release job claim"
    assert cli("job", "release", scene.path, job, "--lease-token-file", token_file).code == 4


def test_complete_records_output_activity_and_state_in_one_revision(
    cli: Cli, scene: Scene, clock: FakeClock
) -> None:
    proxies = scene.dir / "proxies"
    proxies.mkdir()
    cli.json("media-root", "add", scene.path, "proxies", str(proxies))
    job = scene.request("--target-root", "proxies")
    scene.claim(job, "lease.token", "--tool-version", "1.0", "--agent-name", "render-07")
    output = proxies / "A001_proxy.mov"
    output.write_bytes(b"proxy media")
    clock.advance(timedelta(seconds=20))
    done = cli.json(
        "job", "complete", scene.path, job, str(output), "--lease-token-file", str(scene.dir / "lease.token")
    )
    assert done["state"] == "succeeded"
    revision = done["commit_receipt"]["revision"]
    assert [e["kind"] for e in revision["events"]] == [
        "representation_added",
        "activity_created",
        "job_succeeded",
    ]
    assert [e["position"] for e in revision["events"]] == [0, 1, 2]
    rep = cli.json("representation", "show", scene.path, done["completion_representation_id"])
    assert (rep["kind"], rep["root"], rep["path"], rep["availability"]) == (
        "proxy",
        "proxies",
        "A001_proxy.mov",
        "online",
    )
    activity = cli.json("activity", "show", scene.path, done["completion_activity_id"])
    assert activity["kind"] == KIND
    assert [e["representation_id"] for e in activity["inputs"]] == [scene.original]
    assert [e["representation_id"] for e in activity["outputs"]] == [done["completion_representation_id"]]
    assert activity["tool"] == {"name": "Proxy Worker", "version": "1.0", "uri": None}
    assert activity["agent"] == {"name": "render-07"}
    assert activity["finished_at_unix_micros"] == revision["committed_at_unix_micros"]
    assert activity["inputs"][0]["snapshot"]["revision_sequence"] == revision["sequence"]
    assert cli.json("metadata", "list", scene.path, f"activity:{activity['id']}")["items"] == []


def test_complete_with_root_map_stores_root_relative_path(cli: Cli, scene: Scene) -> None:
    cli.json("media-root", "add", scene.path, "proxies")
    job = scene.request("--target-root", "proxies")
    scene.claim(job)
    local = scene.dir / "here"
    local.mkdir()
    (local / "out.mov").write_bytes(b"proxy")
    done = cli.json(
        "--root-map", f"proxies={local}", "job", "complete", scene.path, job, str(local / "out.mov"),
        "--lease-token-file", str(scene.dir / "lease.token"),
    )  # fmt: skip
    rep = cli.json("representation", "show", scene.path, done["completion_representation_id"])
    assert (rep["root"], rep["path"]) == ("proxies", "out.mov")
    outside = cli.json("representation", "show", scene.path, scene.original)
    assert outside["root"] is None


def test_complete_with_missing_output_publishes_nothing(cli: Cli, scene: Scene) -> None:
    job = scene.request()
    scene.claim(job)
    before = head(cli, scene)
    outcome = cli("--json", "job", "complete", scene.path, job, str(scene.dir / "absent.mov"),
                  "--lease-token-file", str(scene.dir / "lease.token"))  # fmt: skip
    assert (outcome.code, outcome.json["error"]["code"]) == (7, "io")
    assert head(cli, scene) == before
    assert cli.json("job", "show", scene.path, job)["state"] == "claimed"


def test_complete_after_cancel_conflicts_and_adds_no_representation(cli: Cli, scene: Scene) -> None:
    job = scene.request()
    scene.claim(job)
    cancelled = cli.json("job", "cancel", scene.path, job)
    assert cancelled["state"] == "cancelled"
    output = scene.dir / "late.mov"
    output.write_bytes(b"late")
    token = str(scene.dir / "lease.token")
    assert cli("job", "complete", scene.path, job, str(output), "--lease-token-file", token).code == 4
    reps = cli.json("representation", "list", scene.path)["items"]
    assert [r["id"] for r in reps] == [scene.original]
    again = cli("--json", "job", "complete", scene.path, job, str(output), "--lease-token-file", token)
    # Scripts branch on the refined case, not on the message's wording.
    assert again.json["error"]["code"] == "conflict"
    assert again.json["error"]["reason"] == "lease_lost"  # the cancel ended the claim


def test_fail_stores_exact_diagnostic_and_validates_it(cli: Cli, scene: Scene) -> None:
    job = scene.request()
    scene.claim(job)
    token = str(scene.dir / "lease.token")
    for bad in ["", "é" * 2049, "nul\x00here"]:
        assert cli("job", "fail", scene.path, job, bad, "--lease-token-file", token).code == 2
    diagnostic = "é" * 2048
    failed = cli.json("job", "fail", scene.path, job, diagnostic, "--lease-token-file", token)
    assert (failed["state"], failed["failure_diagnostic"]) == ("failed", diagnostic)
    assert failed["completion_activity_id"] is None
    assert cli("job", "fail", scene.path, job, "again", "--lease-token-file", token).code == 4


def test_cancel_is_atomic_over_several_jobs(cli: Cli, scene: Scene) -> None:
    done = scene.request()
    cli.json("job", "cancel", scene.path, done)
    fresh = scene.request()
    before = head(cli, scene)
    outcome = cli("--json", "job", "cancel", scene.path, fresh, done)
    assert (outcome.code, outcome.json["error"]["code"]) == (4, "conflict")
    assert head(cli, scene) == before
    assert cli.json("job", "show", scene.path, fresh)["state"] == "requested"
    assert cli("job", "cancel", scene.path, ABSENT).code == 3
    both = cli.json("job", "cancel", scene.path, fresh, scene.request())
    assert [j["state"] for j in both["jobs"]] == ["cancelled", "cancelled"]
    assert len(both["commit_receipt"]["revision"]["events"]) == 2


def test_list_limits_and_paging(cli: Cli, scene: Scene) -> None:
    jobs = sorted(scene.request() for _ in range(3))
    assert cli("job", "list", scene.path, "--limit", "0").code == 2
    assert cli("job", "list", scene.path, "--limit", "1001").code == 2
    assert cli("job", "list", scene.path, "--limit", "-1").code == 2
    assert cli.json("job", "list", scene.path, "--limit", "1000")["next_cursor"] is None
    seen, cursors, cursor = [], [], None
    for _ in range(3):
        args = ["job", "list", scene.path, "--state", "requested", "--kind", KIND, "--limit", "1"]
        page = cli.json(*args, *(["--cursor", cursor] if cursor else []))
        seen += [j["id"] for j in page["items"]]
        cursor = page["next_cursor"]
        cursors.append(cursor)
    assert seen == jobs
    assert cursors[0] and cursors[1] and cursors[2] is None


def test_cursor_is_bound_to_filters_and_production(cli: Cli, scene: Scene, tmp_path: Path) -> None:
    for _ in range(2):
        scene.request()
    cursor = cli.json("job", "list", scene.path, "--state", "requested", "--limit", "1")["next_cursor"]
    assert cli("job", "list", scene.path, "--state", "claimed", "--limit", "1", "--cursor", cursor).code == 2
    assert (
        cli("job", "list", scene.path, "--kind", KIND, "--state", "requested", "--cursor", cursor).code == 2
    )
    other = str(tmp_path / "other.pproj")
    cli.json("init", other)
    assert cli("job", "list", other, "--state", "requested", "--limit", "1", "--cursor", cursor).code == 2
    altered = cursor.replace("ppq2", "ppq1", 1)
    assert (
        cli("job", "list", scene.path, "--state", "requested", "--limit", "1", "--cursor", altered).code == 2
    )


def test_kind_and_state_filters(cli: Cli, scene: Scene) -> None:
    scene.request()
    bad = cli("--json", "job", "list", scene.path, "--kind", "bad")
    assert (bad.code, bad.json["error"]["code"]) == (2, "invalid_argument")
    state = cli("--json", "job", "list", scene.path, "--state", "running")
    assert (state.code, state.json["error"]["code"]) == (2, "invalid_argument")
    empty = cli.json("job", "list", scene.path, "--kind", "org.example:nothing")
    assert empty == {"items": [], "next_cursor": None}


def test_counts(cli: Cli, scene: Scene) -> None:
    scene.request()
    scene.claim(scene.request())
    scene.request(kind="org.example:thumbnail")
    counts = cli.json("job", "counts", scene.path)
    assert counts["counts"] == {"requested": 2, "claimed": 1, "succeeded": 0, "failed": 0, "cancelled": 0}
    assert counts["total"] == 3
    only = cli.json("job", "counts", scene.path, "--kind", "org.example:thumbnail")
    assert (only["kind"], only["total"]) == ("org.example:thumbnail", 1)


def test_write_that_changes_nothing_reports_null_revision(cli: Cli, scene: Scene) -> None:
    observed = cli.json("representation", "observe", scene.path, scene.original)
    assert observed["changed"] is False
    assert observed["commit_receipt"]["revision"] is None


def test_an_input_changed_completion_names_the_input_and_revision(cli: Cli, scene: Scene) -> None:
    job = scene.request()
    scene.claim(job)
    (scene.dir / "media" / "A001.mov").write_bytes(b"a new take")
    observed = cli.json("representation", "observe", scene.path, scene.original)
    output = scene.dir / "proxy.mov"
    output.write_bytes(b"proxy")
    token = str(scene.dir / "lease.token")
    outcome = cli("--json", "job", "complete", scene.path, job, str(output), "--lease-token-file", token)
    assert outcome.code == 4
    error = outcome.json["error"]
    assert (error["code"], error["reason"], error["input_id"]) == (
        "conflict",
        "input_changed",
        scene.original,
    )
    assert error["superseding_revision"] == observed["commit_receipt"]["revision"]["sequence"]
