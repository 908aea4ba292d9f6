"""``clock reset`` asks before it fences (issue 28 item 8): it lists the leases a reset would
fence and resets only when told yes (or ``--yes``); a mark far ahead names what raised it;
on PostgreSQL a caller's clock is refused unless ``allow_injected_clock=True``."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest

from postproject import ConflictError, FakeClock, InvalidArgumentError, JobId, JobState, Production
from tests.cli.helpers import Cli, Scene


def future_claim(cli: Cli, scene: Scene) -> str:
    """A job claimed by render-07 while the CLI's clock ran a day ahead; the clock is then right again."""
    job = scene.request()
    cli.clock.advance(timedelta(days=1))
    scene.claim(job, "lease.token", "--lease", "10m", "--agent-name", "render-07")
    cli.clock.advance(timedelta(days=-1))
    return job


def state(cli: Cli, scene: Scene, job: str) -> JobState:
    with Production.open(scene.path, clock=cli.clock, allow_injected_clock=True) as production:
        return production.job(JobId(uuid.UUID(job))).state


def test_clock_reset_lists_the_leases_it_would_fence_and_resets_nothing_unless_told_yes(
    cli: Cli, scene: Scene
) -> None:
    job = future_claim(cli, scene)
    for answer in (b"", b"n\n", b"whatever\n"):
        outcome = cli("clock", "reset", scene.path, stdin=answer)
        assert outcome.code != 0 and "not confirmed" in outcome.stderr, outcome
        assert f"job {job} held by render-07" in outcome.stderr
        assert "1 lease(s) granted under the future clock would be fenced" in outcome.stderr
        assert state(cli, scene, job) is JobState.CLAIMED  # nothing was reset
    outcome = cli("--json", "clock", "reset", scene.path, stdin=b"y\n")
    assert outcome.code == 0, outcome
    assert outcome.json["fenced"] == [job]
    assert state(cli, scene, job) is JobState.REQUESTED


def test_clock_reset_yes_resets_without_asking(cli: Cli, scene: Scene) -> None:
    job = future_claim(cli, scene)
    done = cli.json("clock", "reset", scene.path, "--yes")
    assert done["fenced"] == [job]
    again = cli("clock", "reset", scene.path)  # nothing to fence: it still asks, and says so
    assert "no lease would be fenced" in again.stderr and again.code != 0


def test_a_mark_far_ahead_names_what_raised_it(cli: Cli, scene: Scene) -> None:
    future_claim(cli, scene)
    other = scene.request()
    outcome = cli(
        "job",
        "claim",
        scene.path,
        other,
        "--tool-name",
        "Proxy Worker",
        "--lease-token-file",
        str(scene.dir / "t2"),
    )
    assert outcome.code != 0
    assert "clock moved backward" in outcome.stderr
    assert "agent 'render-07'" in outcome.stderr and "origin 'postproject-cli" in outcome.stderr
    assert "postproject clock reset" in outcome.stderr


def test_postgresql_refuses_an_injected_clock_unless_allowed(production_location, engine_kind: str) -> None:  # type: ignore[no-untyped-def]
    location = production_location("clocked.pproj")
    Production.create(location).close()
    if engine_kind == "postgresql":
        with pytest.raises(InvalidArgumentError) as raised:
            Production.open(location, clock=FakeClock())
        assert "allow_injected_clock" in raised.value.message
        with pytest.raises(InvalidArgumentError):
            Production.create(production_location("other.pproj"), clock=FakeClock())
    else:
        Production.open(location, clock=FakeClock()).close()  # a file's clock is the caller's
    Production.open(location, clock=FakeClock(), allow_injected_clock=True).close()


def test_a_mark_within_skew_says_only_to_retry(cli: Cli, scene: Scene) -> None:
    job = scene.request()
    cli.clock.advance(timedelta(seconds=5))
    scene.claim(job, "lease.token", "--lease", "10m")
    cli.clock.advance(timedelta(seconds=-5))
    later = JobId(uuid.UUID(scene.request()))
    with (
        Production.open(scene.path, clock=cli.clock, allow_injected_clock=True) as production,
        pytest.raises(ConflictError) as raised,
        production.edit() as tx,
    ):
        tx.claim_job_lease(later, _tool(), timedelta(minutes=1))
    assert "retry when time catches up" in raised.value.message


def _tool():  # type: ignore[no-untyped-def]
    from postproject import ToolIdentity

    return ToolIdentity("Proxy Worker", "1.0", "https://example.com/worker")
