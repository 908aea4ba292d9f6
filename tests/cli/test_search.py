"""``job list --search/--requested-*/--finished-*/--sort/--desc`` and ``job failures`` (issue 16)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from postproject import FakeClock
from tests.cli.helpers import Cli, Scene


def _fail(cli: Cli, scene: Scene, job: str, diagnostic: str, token: str) -> None:
    scene.claim(job, token, "--agent", "render-07")
    cli.json("job", "fail", scene.path, job, diagnostic, "--lease-token-file", str(scene.dir / token))


def test_search_time_and_sort(cli: Cli, scene: Scene, clock: FakeClock) -> None:
    jobs = []
    for priority in ("3", "1", "2"):
        clock.advance(timedelta(minutes=5))
        jobs.append(scene.request("--priority", priority))
    clock.advance(timedelta(minutes=5))
    _fail(cli, scene, jobs[1], "unsupported profile 'XQ' in /mnt/a/b.mov", "t1")
    found = cli.json("job", "list", scene.path, "--search", "RENDER-07")
    assert [j["id"] for j in found["items"]] == [jobs[1]]
    assert found["items"][0]["finished_at_unix_micros"] is not None
    assert cli.json("job", "list", scene.path, "--search", jobs[2][-10:])["items"][0]["id"] == jobs[2]
    by_priority = cli.json("job", "list", scene.path, "--sort", "priority", "--desc", "--limit", "2")
    assert [j["id"] for j in by_priority["items"]] == [jobs[0], jobs[2]]
    rest = cli.json(
        "job",
        "list",
        scene.path,
        "--sort",
        "priority",
        "--desc",
        "--limit",
        "2",
        "--cursor",
        by_priority["next_cursor"],
    )
    assert [j["id"] for j in rest["items"]] == [jobs[1]] and rest["next_cursor"] is None
    second = cli.json("job", "show", scene.path, jobs[1])["requested_at_unix_micros"]
    iso = datetime.fromtimestamp(second // 1_000_000, UTC).isoformat()
    after = cli.json("job", "list", scene.path, "--requested-after", iso)
    assert [j["id"] for j in after["items"]] == jobs[1:]
    assert cli.json("job", "list", scene.path, "--finished-after", "+1h")["items"] == []
    refused = cli("--json", "job", "list", scene.path, "--sort", "colour")
    assert refused.code != 0 and "sort" in refused.stderr
    refused = cli("--json", "job", "list", scene.path, "--finished-after", "yesterday")
    assert refused.code != 0 and "--finished-after" in refused.stderr


def test_failures_grouped_by_reason(cli: Cli, scene: Scene) -> None:
    for index, profile in enumerate(("XQ", "HQX", "LT")):
        job = scene.request()
        _fail(cli, scene, job, f"unsupported profile '{profile}' in /mnt/shot/{index}.mov", f"t{index}")
    job = scene.request()
    _fail(cli, scene, job, "decoder crashed at frame 12", "t9")
    groups = cli.json("job", "failures", scene.path)["groups"]
    assert [(g["count"], g["reason"]) for g in groups] == [
        (3, "unsupported profile <text> in <path>"),
        (1, "decoder crashed at frame #"),
    ]
    assert set(groups[0]) == {
        "reason",
        "count",
        "search",
        "example",
        "latest_job_id",
        "latest_at_unix_micros",
    }
    listed = cli.json("job", "list", scene.path, "--state", "failed", "--search", groups[0]["search"])
    assert len(listed["items"]) == 3
    text = cli("job", "failures", scene.path).stdout
    assert "3 failed: unsupported profile <text> in <path>" in text
    assert "--search 'unsupported profile'" in text


def test_a_copied_production_searches_alike(cli: Cli, scene: Scene, tmp_path: Path) -> None:
    job = scene.request()
    _fail(cli, scene, job, "unsupported profile 'XQ'", "t1")
    copy_path = str(tmp_path / "copy.pproj")
    cli.json("copy", scene.path, copy_path)
    assert cli.json("verify", scene.path, copy_path)
    for text in ("unsupported", "render-07", job[-8:]):
        found = cli.json("job", "list", copy_path, "--search", text)["items"]
        assert [j["id"] for j in found] == [job], text


def test_search_by_a_parameter_value_and_sort_by_finished_time(
    cli: Cli, scene: Scene, clock: FakeClock
) -> None:
    """Issue 26, items 6 and 7: a supervisor handed a ticket number finds its job; the most
    recent failure is first when the list is sorted newest-finished first."""
    ticket = '{"type": "string", "value": "TCK-054321"}'
    found_by_ticket = scene.request("--param", "https://example.com/editorial", "ticket", ticket)
    other = scene.request("--profile", "proxy-720p")
    listed = cli.json("job", "list", scene.path, "--search", "tck-054321")
    assert [j["id"] for j in listed["items"]] == [found_by_ticket]
    assert [j["id"] for j in cli.json("job", "list", scene.path, "--search", "720p")["items"]] == [other]
    clock.advance(timedelta(minutes=5))
    _fail(cli, scene, found_by_ticket, "decoder crashed at frame 12", "t1")
    clock.advance(timedelta(minutes=5))
    _fail(cli, scene, other, "decoder crashed at frame 13", "t2")
    newest = cli.json("job", "list", scene.path, "--sort", "finished", "--desc", "--state", "failed")
    assert [j["id"] for j in newest["items"]] == [other, found_by_ticket]
    by_worker = cli.json("job", "list", scene.path, "--sort", "worker")
    assert len(by_worker["items"]) == 2
