"""Job dependencies on the command line: ``job request --after/--input-from``, ``job why``,
blocked jobs and ``job retry`` moving dependents, with their JSON shapes (issue 14)."""

from __future__ import annotations

from pathlib import Path

from tests.cli.helpers import Cli, Scene

WHY_KEYS = {"job_id", "state", "claimable", "reasons"}
THUMB = "org.example:generate-thumbnail"


def complete(cli: Cli, scene: Scene, job: str, name: str) -> str:
    """Claim and complete ``job`` with a new file; the output representation id."""
    scene.claim(job, f"{name}.token")
    out = scene.dir / f"{name}.mov"
    out.write_bytes(name.encode())
    done = cli.json(
        "job", "complete", scene.path, job, str(out), "--lease-token-file", str(scene.dir / f"{name}.token")
    )
    return str(done["completion_representation_id"])


def test_input_from_binds_the_output_of_another_job(cli: Cli, scene: Scene) -> None:
    proxy_job = scene.request()
    thumb = cli.json("job", "request", scene.path, THUMB, scene.asset, "derived", "--input-from", proxy_job)
    assert (thumb["inputs"], thumb["depends_on"], thumb["waiting_on"], thumb["blocked_by"]) == (
        [],
        [proxy_job],
        [proxy_job],
        [],
    )
    assert thumb["bound_inputs"] == [{"job_id": proxy_job, "representation_id": None}]
    assert thumb["regenerates"] is None
    why = cli.json("job", "why", scene.path, thumb["id"])
    assert set(why) == WHY_KEYS
    assert (why["state"], why["claimable"]) == ("requested", False)
    assert why["reasons"][0] == {
        "code": "waiting_on",
        "message": f"waiting on job {proxy_job} (requested)",
        "job_id": proxy_job,
        "state": "requested",
    }
    text = cli("job", "why", scene.path, thumb["id"]).stdout
    assert text.startswith(f"job {thumb['id']} is requested: held back\n")
    assert f"  - waiting on job {proxy_job} (requested)\n" in text
    claim = cli("--json", "job", "claim", scene.path, thumb["id"], "--tool-name", "W",
                "--lease-token-file", str(scene.dir / "t.token"))  # fmt: skip
    assert (claim.code, claim.json["error"]["code"]) == (4, "conflict")
    proxy = complete(cli, scene, proxy_job, "proxy")
    scene.claim(thumb["id"], "thumb.token")
    shown = cli.json("job", "show", scene.path, thumb["id"])
    assert shown["inputs"] == [proxy]
    assert shown["bound_inputs"] == [{"job_id": proxy_job, "representation_id": proxy}]
    human = cli("job", "show", scene.path, thumb["id"]).stdout
    assert f"input from job: {proxy_job} -> {proxy}\n" in human


def test_after_and_a_blocked_job_moved_by_retry(cli: Cli, scene: Scene) -> None:
    first = scene.request()
    second = cli.json("job", "request", scene.path, "org.example:x", scene.asset, "proxy", "--after", first)
    assert second["depends_on"] == [first] and second["bound_inputs"] == []
    scene.claim(first, "first.token")
    cli.json("job", "fail", scene.path, first, "broke", "--lease-token-file", str(scene.dir / "first.token"))
    blocked = cli.json("job", "show", scene.path, second["id"])
    assert (blocked["state"], blocked["waiting_on"], blocked["blocked_by"]) == ("requested", [], [first])
    why = cli.json("job", "why", scene.path, second["id"])
    assert why["reasons"][0]["code"] == "blocked_by" and why["reasons"][0]["job_id"] == first
    assert "blocked by:" in cli("job", "show", scene.path, second["id"]).stdout
    again = cli.json("job", "retry", scene.path, first)["id"]
    moved = cli.json("job", "show", scene.path, second["id"])
    assert (moved["depends_on"], moved["waiting_on"], moved["blocked_by"]) == ([again], [again], [])


def test_job_why_for_a_claimable_and_a_finished_job(cli: Cli, scene: Scene) -> None:
    first, second = scene.request(), scene.request()
    why = cli.json("job", "why", scene.path, second)
    assert why["claimable"] is True
    assert why["reasons"] == [
        {"code": "no_online_worker", "message": f"no online worker registered for its kind {scene_kind()}",
         "kind": scene_kind()},
        {"code": "jobs_ahead", "message": "1 job ahead of it", "count": 1, "capped": False},
    ]  # fmt: skip
    cli.json("job", "cancel", scene.path, first)
    finished = cli.json("job", "why", scene.path, first)
    assert finished["reasons"] == [
        {"code": "not_pending", "message": "it is cancelled, not requested", "state": "cancelled"}
    ]
    assert cli("job", "why", scene.path, first).stdout == f"job {first} is cancelled\n"


def scene_kind() -> str:
    from tests.cli.helpers import KIND

    return KIND


def test_bad_dependencies_exit_with_stable_codes_and_change_nothing(
    cli: Cli, scene: Scene, tmp_path: Path
) -> None:
    failed = scene.request()
    cli.json("job", "cancel", scene.path, failed)
    before = cli.json("revisions", "latest", scene.path)["revision"]["sequence"]
    unknown = "01a00000-0000-7000-8000-000000000000"
    cases = [
        (("--after", unknown), 3, "not_found", unknown),
        (("--input-from", unknown), 3, "not_found", unknown),
        (("--input-from", failed), 4, "conflict", "cancelled"),
        (("--after", "not-an-id"), 2, "invalid_argument", "job id"),
    ]
    for extra, code, error, words in cases:
        outcome = cli("--json", "job", "request", scene.path, THUMB, scene.asset, "derived", *extra)
        assert (outcome.code, outcome.json["error"]["code"]) == (code, error), extra
        assert words in outcome.json["error"]["message"]
    why = cli("--json", "job", "why", scene.path, unknown)
    assert (why.code, why.json["error"]["code"]) == (3, "not_found")
    assert cli.json("revisions", "latest", scene.path)["revision"]["sequence"] == before
