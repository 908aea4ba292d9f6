"""``demo create``: real media and the promised mix of job states, counted through the public API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from postproject import (
    AlreadyExistsError,
    ConflictError,
    InvalidArgumentError,
    Job,
    JobState,
    NotFoundError,
    Production,
    RepresentationKind,
    SystemClock,
)
from postproject.executor import jobs
from postproject.executor.demo import DemoSummary, create_demo
from postproject.executor.demo_run import is_demo, remove_demo
from postproject.executor.media import probe
from postproject.executor.recipe import Recipe, default_path

pytestmark = pytest.mark.xdist_group("executor_demo")  # the module's demo, made once: tests/README.md

SMALL = Recipe.load().with_clip(size=(320, 180), frames=12)


def all_jobs(production: Production) -> list[Job]:
    found, cursor = [], None
    while True:
        page = production.jobs(limit=100, cursor=cursor)
        found.extend(page.items)
        if page.next_cursor is None:
            return found
        cursor = page.next_cursor


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoSummary:
    path = tmp_path_factory.mktemp("demo") / "demo.pproj"
    steps: list[tuple[str, int, int]] = []
    summary = create_demo(path, assets=6, seed=7, recipe=SMALL, report=lambda *step: steps.append(step))
    assert steps[-1][1] == steps[-1][2]  # the bar reached its end
    return summary


def test_demo_has_the_promised_mix(demo: DemoSummary) -> None:
    with Production.open(demo.path, read_only=True) as production:
        listed = all_jobs(production)
        now = SystemClock().now()

        def count(state: JobState, kind: str | None = None) -> int:
            return sum(1 for j in listed if j.state is state and (kind is None or j.kind == kind))

        assert count(JobState.SUCCEEDED, jobs.PROXY_KIND) >= 1
        assert count(JobState.SUCCEEDED, jobs.THUMBNAIL_KIND) >= 1
        failed = [j for j in listed if j.state is JobState.FAILED]
        assert len(failed) >= 2
        assert all(j.failure is not None and j.failure.diagnostic for j in failed)
        diagnostics = " | ".join(j.failure.diagnostic for j in failed if j.failure)
        assert "unsupported profile 'thumbnail-4k'" in diagnostics
        assert "cannot make proxy of" in diagnostics  # the truncated original, from the media layer
        expired = [j for j in listed if j.state is JobState.CLAIMED and j.claim and j.claim.expires_at <= now]
        assert len(expired) == 1
        assert count(JobState.REQUESTED) >= 1
        assert production.job_counts() == {state: count(state) for state in JobState}
        assert len(production.assets().items) == demo.assets == 6


def test_demo_outputs_are_real_media(demo: DemoSummary) -> None:
    with Production.open(demo.path, read_only=True) as production:
        proxies = production.representations(kind=RepresentationKind.PROXY).items
        assert proxies
        for rep in proxies:
            path = production.resolve(rep)
            assert path is not None
            assert path.parent == demo.media / "proxies"
            assert probe(path).codec == "h264"
        originals = production.representations(kind=RepresentationKind.ORIGINAL).items
        codecs = {
            probe(p).codec for rep in originals if (p := production.resolve(rep)) and rep.size > 200_000
        }
        assert codecs <= {"prores", "dnxhd"}


def test_redelivered_original_makes_proxy_and_its_thumbnail_stale(demo: DemoSummary) -> None:
    with Production.open(demo.path, read_only=True) as production:
        if not hasattr(production, "evaluate_artifact"):
            pytest.skip("artifact knowledge is not available")
        states = {}
        for job in all_jobs(production):
            if job.state is JobState.SUCCEEDED and job.completion is not None:
                rep = job.completion.representation_id
                states[rep] = production.evaluate_artifact(rep).state.value
        assert sorted(states.values()).count("stale") == 2  # the proxy, and the thumbnail made from it
        assert "current" in states.values()


def test_existing_file_is_not_overwritten(demo: DemoSummary) -> None:
    with pytest.raises(AlreadyExistsError):
        create_demo(demo.path, assets=1, recipe=SMALL)


def test_remove_demo_only_removes_demo_productions(tmp_path: Path) -> None:
    other = tmp_path / "work.pproj"
    Production.create(other).close()
    with pytest.raises(ConflictError):
        remove_demo(other)
    assert other.exists()
    assert not is_demo(other)

    path = tmp_path / "demo.pproj"
    create_demo(path, assets=1, recipe=SMALL)
    assert is_demo(path)
    remove_demo(path)
    assert not path.exists()
    assert not (tmp_path / "demo-media").exists()


def test_shipped_recipe_tells_every_story() -> None:
    recipe = Recipe.load()
    assert default_path().name == "recipe.json"
    outcomes = {step.outcome for asset in recipe.assets for step in asset.story.jobs}
    assert outcomes == {"run", "abandon", "request"}
    assert recipe.size == (960, 540)
    plans = recipe.plan(8, seed=1)
    assert [p.name for p in plans[6:]] == ["C007_C001 Pickup 7", "C008_C001 Pickup 8"]
    assert recipe.plan(3, seed=1) == recipe.plan(3, seed=1)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.update(format=2), "format must be 1"),
        (lambda r: r["assets"][0].update(codec="h264"), "codec must be one of"),
        (lambda r: r["assets"][0].update(story="nope"), "unknown story"),
        (lambda r: r["stories"]["queued"]["jobs"][0].update(outcome="later"), "bad job"),
        (lambda r: r["clip"].update(frames=0), "frames must be an integer"),
    ],
)
def test_bad_recipes_are_invalid_arguments(tmp_path: Path, change: object, message: str) -> None:
    data = json.loads(default_path().read_text())
    change(data)  # type: ignore[operator]
    path = tmp_path / "recipe.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InvalidArgumentError, match=message):
        Recipe.load(path)
    with pytest.raises(InvalidArgumentError, match="assets must be 1-500"):
        Recipe.load().plan(0, seed=0)


def test_demo_create_with_the_password_in_the_uri_alone(
    postgres_server: object, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Issue 28 item 7: the in-process worker once reconnected with the password-less display
    URI and failed half-way; the password may be in the URI alone (no PGPASSWORD)."""
    from tests.postgresql_fixtures import SHARED_DATABASE

    monkeypatch.delenv("PGPASSWORD", raising=False)
    uri = postgres_server.uri(SHARED_DATABASE, production="demo_password_in_uri")  # type: ignore[attr-defined]
    summary = create_demo(uri, assets=3, recipe=SMALL, media=tmp_path / "media")
    assert summary.jobs[JobState.SUCCEEDED] > 0
    assert postgres_server.password not in str(summary.path)  # type: ignore[attr-defined]


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_a_demo_that_fails_half_way_leaves_no_production(
    engine: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """A failure after the production was created removes it: a rerun then succeeds instead
    of reporting a half-made production as existing."""
    location: str | Path = tmp_path / "demo.pproj"
    if engine == "postgresql":
        from tests.postgresql_fixtures import SHARED_DATABASE

        location = request.getfixturevalue("postgres_server").uri(SHARED_DATABASE, production="demo_half_way")

    def fail_after_import(what: str, done: int, total: int) -> None:
        if what == "Imported originals":
            raise OSError("disk full (simulated)")

    with pytest.raises(OSError, match="simulated"):
        create_demo(location, assets=3, recipe=SMALL, media=tmp_path / "media", report=fail_after_import)
    with pytest.raises(NotFoundError):
        Production.open(location, read_only=True)
    assert create_demo(location, assets=3, recipe=SMALL, media=tmp_path / "media").assets == 3
