"""The farm layer through the command line: attempts, retries, requeue, sweeps, priority,
idempotent requests, completion replay and registered workers (issue 13)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from postproject import Production
from tests.cli.helpers import Cli, Scene

ATTEMPT_KEYS = {
    "number",
    "outcome",
    "agent",
    "worker",
    "tool",
    "claimed_at_unix_micros",
    "ended_at_unix_micros",
    "diagnostic",
    "stopped_at",
    "stopped_at_unix_micros",
    "stop_by_unix_micros",
    "stopping",
    "progress",
}
WORKER_KEYS = {
    "name",
    "host",
    "state",
    "last_seen",
    "last_seen_unix_micros",
    "capacity",
    "kinds",
    "running",
    "attempts",
}


def _complete(scene: Scene, job: str, name: str = "out.mov") -> tuple[int, dict[str, object]]:
    output = scene.dir / name
    output.write_bytes(b"proxy essence")
    outcome = scene.cli(
        "--json", "job", "complete", scene.path, job, str(output),
        "--lease-token-file", str(scene.dir / "lease.token"),
    )  # fmt: skip
    return outcome.code, outcome.json


def test_job_show_carries_attempts_priority_and_retry_links(cli: Cli, scene: Scene) -> None:
    job = scene.request("--priority", "5", "--max-attempts", "2")
    scene.claim(job, "lease.token", "--agent-name", "render-07")
    shown = cli.json("job", "show", scene.path, job)
    assert shown["priority"] == 5 and shown["max_attempts"] == 2
    (attempt,) = shown["attempts"]
    assert set(attempt) == ATTEMPT_KEYS
    assert (attempt["number"], attempt["outcome"], attempt["agent"]) == (1, None, {"name": "render-07"})
    failed = cli.json(
        "job",
        "fail",
        scene.path,
        job,
        "encoder crashed",
        "--lease-token-file",
        str(scene.dir / "lease.token"),
    )
    assert failed["state"] == "failed"
    assert failed["attempts"][0]["outcome"] == "failed"
    assert failed["attempts"][0]["diagnostic"] == "encoder crashed"
    again = cli.json("job", "retry", scene.path, job)
    assert again["retry_of"] == job and again["state"] == "requested" and again["priority"] == 5
    assert cli.json("job", "show", scene.path, job)["retried_as"] == again["id"]
    human = cli("job", "show", scene.path, job)
    assert "attempts:" in human.stdout and "#1 failed" in human.stdout and "retried as" in human.stdout


def test_retryable_failures_stop_at_the_attempt_limit(cli: Cli, scene: Scene) -> None:
    job = scene.request("--max-attempts", "2")
    for attempt in (1, 2):
        scene.claim(job, f"t{attempt}")
        shown = cli.json(
            "job",
            "fail",
            scene.path,
            job,
            "tool crashed",
            "--retry",
            "--lease-token-file",
            str(scene.dir / f"t{attempt}"),
        )
        expected = "requested" if attempt == 1 else "failed"
        assert shown["state"] == expected, attempt
    events = [
        e["kind"] for r in cli.json("revisions", "since", scene.path, "0")["revisions"] for e in r["events"]
    ]
    assert "job_retry_scheduled" in events and events[-1] == "job_failed"


def test_requeue_sweep_and_priority(cli: Cli, scene: Scene) -> None:
    first, second = scene.request(), scene.request()
    scene.claim(first, "lease.token", "--lease", "10s")
    requeued = cli.json("job", "requeue", scene.path, first)
    assert requeued["state"] == "requested" and requeued["attempts"][0]["outcome"] == "released"
    assert cli("job", "requeue", scene.path, first).code == 4  # not claimed any more
    rushed = cli.json("job", "priority", scene.path, second, "100")
    assert rushed["priority"] == 100
    claimed = scene.claim(second, "t2", "--lease", "10s")
    assert claimed["state"] == "claimed"
    assert cli.json("job", "sweep", scene.path)["finalized"] == 0
    cli.clock.advance(timedelta(seconds=11))
    swept = cli.json("job", "sweep", scene.path)
    # the expired claim, and the requeued attempt nobody confirmed stopping before its lease ran out
    assert swept["finalized"] == 2
    shown = cli.json("job", "show", scene.path, second)
    assert shown["state"] == "requested" and shown["attempts"][-1]["outcome"] == "lost"
    assert cli.json("job", "show", scene.path, first)["attempts"][0]["outcome"] == "lost"


def test_idempotent_requests(cli: Cli, scene: Scene) -> None:
    first = scene.request("--idempotency-key", "delivery-42")
    head = cli.json("revisions", "latest", scene.path)["revision"]["sequence"]
    assert scene.request("--idempotency-key", "delivery-42") == first
    assert cli.json("revisions", "latest", scene.path)["revision"]["sequence"] == head  # nothing committed
    clash = cli("--json", "job", "request", scene.path, "org.example:other", scene.asset, "proxy",
                "--input", scene.original, "--idempotency-key", "delivery-42")  # fmt: skip
    assert clash.code == 4 and clash.json["error"]["code"] == "conflict"
    assert "delivery-42" in clash.json["error"]["message"]


@pytest.mark.parametrize(
    ("option", "value", "needle"),
    [
        ("--priority", "1001", "priority"),
        ("--priority", "१", "priority"),
        ("--not-before", "2026-12-01T10:00:00", "UTC offset"),
        ("--not-before", "tomorrow", "--not-before"),
        ("--idempotency-key", "", "idempotency key"),
        ("--idempotency-key", "k" * 300, "idempotency key"),
        ("--max-attempts", "0", "--max-attempts"),
    ],
)
def test_bad_scheduling_input_is_refused_and_changes_nothing(
    cli: Cli, scene: Scene, option: str, value: str, needle: str
) -> None:
    head = cli.json("revisions", "latest", scene.path)["revision"]["sequence"]
    outcome = cli(
        "--json", "job", "request", scene.path, "org.example:a", scene.asset, "proxy", option, value
    )
    assert outcome.code == 2, outcome
    assert needle in outcome.json["error"]["message"]
    assert cli.json("revisions", "latest", scene.path)["revision"]["sequence"] == head


def test_not_before_holds_a_job_back(cli: Cli, scene: Scene) -> None:
    job = scene.request("--not-before", "+10m")
    assert (
        cli(
            "job", "claim", scene.path, job, "--tool-name", "w", "--lease-token-file", str(scene.dir / "t")
        ).code
        == 4
    )
    cli.clock.advance(timedelta(minutes=10))
    assert scene.claim(job, "t2")["state"] == "claimed"


def test_a_repeated_completion_reports_the_original(cli: Cli, scene: Scene) -> None:
    job = scene.request()
    scene.claim(job)
    code, first = _complete(scene, job)
    assert code == 0 and first["state"] == "succeeded" and "replayed" not in first
    code, again = _complete(scene, job)  # the response was lost: the worker tries again
    assert code == 0 and again["replayed"] is True
    assert again["completion_representation_id"] == first["completion_representation_id"]
    code, other = _complete(scene, job, "other.mov")  # another output is not a replay
    assert code == 4 and other["error"]["code"] == "conflict"


def test_worker_list_and_show(cli: Cli, scene: Scene) -> None:
    with (
        Production.open(scene.path, clock=cli.clock, allow_injected_clock=True) as production,
        production.edit() as tx,
    ):
        render = tx.register_worker(
            "render-07", capacity=2, kinds=["org.example:generate-proxy"], host="node7"
        )
        tx.register_worker("render-08")
        tx.commit()
    job = scene.request()
    with (
        Production.open(scene.path, clock=cli.clock, allow_injected_clock=True) as production,
        production.edit() as tx,
    ):
        from postproject import ToolIdentity

        assert (
            tx.claim_next_job_lease(ToolIdentity("w", "1"), timedelta(minutes=5), worker=render) is not None
        )
        tx.commit()
    listed = cli.json("worker", "list", scene.path)
    assert set(listed) == {"items", "next_cursor"}
    items = {w["name"]: w for w in listed["items"]}
    assert set(items["render-07"]) == WORKER_KEYS
    assert items["render-07"]["state"] == "online" and items["render-07"]["running"] == [job]
    assert items["render-07"]["capacity"] == 2 and items["render-07"]["kinds"] == [
        "org.example:generate-proxy"
    ]
    cli.clock.advance(timedelta(seconds=31))
    assert {w["name"]: w["state"] for w in cli.json("worker", "list", scene.path)["items"]} == {
        "render-07": "offline",
        "render-08": "offline",
    }
    shown = cli.json("worker", "show", scene.path, "render-07")
    assert shown["attempts_list"][0]["job_id"] == job
    human = cli("worker", "list", scene.path)
    assert "render-07" in human.stdout and "1/2" in human.stdout
    assert cli("worker", "show", scene.path, "nobody").code == 3
    shown_job = cli.json("job", "show", scene.path, job)
    assert shown_job["claim_worker"] == "render-07" and shown_job["attempts"][0]["worker"] == "render-07"
