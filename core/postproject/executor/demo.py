"""``postproject demo create``: a demo production with real media and a realistic mix of jobs.

The recipe (:mod:`postproject.executor.recipe`) names the clips and the story each tells.
Creation shoots the clips with PyAV (ProRes or DNxHR test patterns with the clip's name and
timecode burnt in), imports them as originals under the media root ``media``, and replays
the stories on a *story clock* that runs from 45 minutes ago to now, so the monitor shows a
plausible afternoon rather than everything stamped with the same second:

- T-45 min  clips imported;
- T-40 min  the jobs whose outcome is ``run`` are requested and run by the reference
  executor, in process (they succeed, or fail with the executor's real diagnostic);
- T-30 min  jobs made *from those proxies* (thumbnails of proxies) are requested and run;
- T-12 min  ``abandon`` jobs (a review render) are claimed by a render node that then
  "dies": its 2-minute lease expired ten minutes ago and the job is still claimed; no
  reference worker renders reviews and ``demo run``'s workers do not sweep lost work, so it
  stays stuck until a supervisor finalises it;
- T-6 min   re-delivered originals are rewritten (another hue) and observed, so outputs
  made from them turn stale;
- T-2 min   the remaining jobs are requested and left waiting.

The story clock only moves forward, so the production's clock high-water mark stays
behind the wall clock and later workers (``demo run``) use the system clock as usual.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal

from postproject import locations
from postproject.executor import jobs
from postproject.executor.recipe import AssetPlan, JobStep, Recipe
from postproject.executor.worker import Worker, WorkerConfig, WorkerEvent
from postproject.model import names
from postproject.model.assets import RepresentationKind
from postproject.model.clock import SystemClock
from postproject.model.errors import AlreadyExistsError, InvalidArgumentError, NotFoundError, PostProjectError
from postproject.model.identity import AgentIdentity
from postproject.model.ids import AssetId, JobId, RepresentationId
from postproject.model.jobs import JobRequest
from postproject.model.lifecycle import JobState
from postproject.model.metadata import Property
from postproject.model.refs import AssetRef, JobRef
from postproject.production import Production
from postproject.transaction import Transaction

DEMO_VOCABULARY = "https://postproject.org/ns/demo/1"
STORY = Property(DEMO_VOCABULARY, "story")
DEAD_AGENT = AgentIdentity("render-node-03/48213")
# The dead render node's job: a kind no reference worker takes, so its expired claim stays
# stuck until a supervisor finalises it (the demo workers do not sweep lost work either).
REVIEW_KIND = "org.postproject.demo:render-review"
DEAD_LEASE = timedelta(minutes=2)
ORIGIN = "postproject demo"

Report = Callable[[str, int, int], None]  # (what is happening, steps done, steps in all)


class StoryClock:
    """The wall clock minus an offset that only shrinks: a story told from the past to now."""

    def __init__(self, minutes_ago: float) -> None:
        self._system = SystemClock()
        self._offset = timedelta(minutes=minutes_ago)

    def at(self, minutes_ago: float) -> None:
        self._offset = min(self._offset, timedelta(minutes=minutes_ago))

    def now(self) -> datetime:
        return self._system.now() - self._offset


@dataclass(frozen=True, slots=True)
class DemoSummary:
    path: Path | str  # the production file, or the URI without its password
    media: Path
    assets: int
    jobs: dict[JobState, int]


@dataclass
class _Asset:
    plan: AssetPlan
    clip: Path
    id: AssetId | None = None
    original: RepresentationId | None = None
    proxy: RepresentationId | None = None


DemoLocation = Path | str  # a .pproj path, or a postgresql:// URI (a production in a database)


def media_folder(location: DemoLocation, media: Path | None = None) -> Path:
    """Where a demo production keeps its files: ``media`` when given, else ``<dir>/<stem>-media``
    beside a production file, or ``./<production name>-media`` for a production in a database."""
    if media is not None:
        return media.resolve()
    if locations.is_location_uri(location):
        return (Path.cwd() / f"{locations.parse_postgres_uri(str(location)).production}-media").resolve()
    path = Path(location)
    return path.parent / f"{path.stem}-media"


def demo_exists(location: DemoLocation) -> bool:
    """Whether a production already lives at ``location`` (a file, or a schema of a database)."""
    if not locations.is_location_uri(location):
        return Path(location).exists()
    try:
        Production.open(str(location), read_only=True).close()
    except NotFoundError:
        return False
    return True


def create_demo(
    path: DemoLocation,
    *,
    assets: int = 6,
    seed: int = 0,
    recipe: Recipe | None = None,
    report: Report | None = None,
    media: Path | None = None,
) -> DemoSummary:
    """Create the demo production at ``path`` (a file, or a ``postgresql://`` URI; its clips go
    to ``media``, by default :func:`media_folder`; see the module docstring).

    Raises:
        AlreadyExistsError: (already_exists) a production exists at ``path``.
        InvalidArgumentError: (invalid_argument) a bad asset count or recipe.
    """
    location: DemoLocation = str(path) if locations.is_location_uri(path) else Path(path).resolve()
    recipe = recipe or Recipe.load()
    plans = recipe.plan(assets, seed)
    if demo_exists(location):
        raise AlreadyExistsError(
            f"a production already exists at {locations.display_location(location)}; "
            "delete it or use 'demo run --fresh'"
        )
    media = media_folder(location, media)
    names.utf8_text("the demo's media folder", str(media))  # it becomes a media root: refused before any clip
    run_steps = sum(s.outcome == "run" for p in plans for s in p.story.jobs)
    progress = _Progress(report, len(plans) + run_steps + 3)
    items = _shoot(recipe, plans, media / "originals", progress)
    clock = StoryClock(45)
    production = Production.create(location, clock=clock, allow_injected_clock=True)  # behind the server's
    try:
        summary = _tell_stories(production, location, recipe, items, media, clock, progress)
    except BaseException:
        production.close()
        with contextlib.suppress(PostProjectError):  # the first error is the one to report
            locations.remove(location)  # never a half-made demo that a rerun reports as existing
        raise
    production.close()
    return summary


def _tell_stories(
    production: Production,
    location: DemoLocation,
    recipe: Recipe,
    items: list[_Asset],
    media: Path,
    clock: StoryClock,
    progress: _Progress,
) -> DemoSummary:
    """Replay the stories into the new production (see the module docstring)."""
    _import(production, recipe, items, media)
    progress.step("Imported originals")
    for minutes, source in ((40, "original"), (30, "proxy")):
        clock.at(minutes)
        _run_round(production, location, recipe, items, source, clock, progress)
    clock.at(12)
    _abandon(production, recipe, items)
    clock.at(6)
    _redeliver(production, recipe, items)
    progress.step("Re-delivered originals")
    clock.at(2)
    _request_rest(production, recipe, items)
    progress.step("Requested remaining work")
    shown = location if isinstance(location, Path) else production.location
    return DemoSummary(shown, media, len(items), production.job_counts())


class _Progress:
    def __init__(self, report: Report | None, total: int) -> None:
        self._report, self._done, self.total = report, 0, total

    def step(self, what: str) -> None:
        self._done += 1
        if self._report is not None:
            self._report(what, self._done, self.total)


def _shoot(recipe: Recipe, plans: list[AssetPlan], folder: Path, progress: _Progress) -> list[_Asset]:
    folder.mkdir(parents=True, exist_ok=True)
    items = []
    for plan in plans:
        clip = folder / f"{jobs.safe_name(plan.name)}.mov"
        _shoot_clip(recipe, plan, clip, plan.hue)
        if plan.story.truncate is not None:
            with open(clip, "r+b") as handle:
                handle.truncate(int(os.path.getsize(clip) * plan.story.truncate))
        items.append(_Asset(plan, clip))
        progress.step(f"Shot {plan.name}")
    return items


def _shoot_clip(recipe: Recipe, plan: AssetPlan, clip: Path, hue: int) -> None:
    """Write ``plan``'s clip at ``clip`` (a copy of the same clip made before, when there is one:
    :mod:`postproject.executor.clipcache`)."""
    from postproject.executor import clipcache
    from postproject.executor.testclip import generate_test_clip  # (PyAV: loaded when first used)

    codec: Literal["prores", "dnxhd"] = "prores" if plan.codec == "prores" else "dnxhd"
    shoot = functools.partial(
        generate_test_clip,
        name=plan.name,
        frames=recipe.frames,
        rate=recipe.rate,
        size=recipe.size,
        codec=codec,
        hue=hue,
    )
    clipcache.shoot(clip, shoot.keywords, shoot)


def _import(production: Production, recipe: Recipe, items: list[_Asset], media: Path) -> None:
    (media / "proxies").mkdir(parents=True, exist_ok=True)
    with production.edit(origin=ORIGIN, message="Import camera originals") as tx:
        tx.add_media_root(recipe.originals_root, media / "originals")
        tx.add_media_root(recipe.outputs_root, media / "proxies")
        for item in items:
            item.id = tx.create_asset(item.plan.name)
            tx.add_metadata(AssetRef(item.id), STORY, item.plan.story.name)
            item.original = tx.add_representation(
                item.id, RepresentationKind.ORIGINAL, item.clip, root=recipe.originals_root
            )
        tx.commit()


def _request(tx: Transaction, recipe: Recipe, item: _Asset, step: JobStep) -> JobId:
    assert item.id is not None
    assert item.original is not None
    source = item.proxy if step.source == "proxy" else item.original
    if source is None:
        raise InvalidArgumentError(
            f"demo asset {item.plan.name!r}: a job from the proxy needs a proxy, but making it failed"
        )
    kind, output = {
        "proxy": (jobs.PROXY_KIND, RepresentationKind.PROXY),
        "thumbnail": (jobs.THUMBNAIL_KIND, RepresentationKind.DERIVED),
        "review": (REVIEW_KIND, RepresentationKind.DERIVED),
    }[step.make]
    job_id = tx.request_job(JobRequest(kind, (source,), item.id, output, recipe.outputs_root))
    tx.add_metadata(JobRef(job_id), jobs.PROFILE, step.profile)
    return job_id


def _run_round(
    production: Production,
    location: DemoLocation,
    recipe: Recipe,
    items: list[_Asset],
    source: str,
    clock: StoryClock,
    progress: _Progress,
) -> None:
    """Request the ``run`` jobs made from ``source`` and let the reference executor run them."""
    requested: dict[JobId, _Asset] = {}
    with production.edit(origin=ORIGIN, message="Request jobs") as tx:
        for item in items:
            for step in item.plan.story.jobs:
                if step.outcome == "run" and step.source == source:
                    requested[_request(tx, recipe, item, step)] = item
        tx.commit()
    if not requested:
        return

    def on_event(event: WorkerEvent) -> None:
        if event.action in ("succeeded", "failed"):
            progress.step(f"{event.action.capitalize()}: {event.label}")

    # The location as given (a URI keeps its password): production.location has none.
    config = WorkerConfig(location, clock=clock, concurrency=2, agent=AgentIdentity("ingest-station-1"))
    Worker(config, on_event).run()
    for job_id, item in requested.items():
        job = production.job(job_id)
        if job.kind == jobs.PROXY_KIND and job.completion is not None:
            item.proxy = job.completion.representation_id


def _abandon(production: Production, recipe: Recipe, items: list[_Asset]) -> None:
    """Claims by a render node that died: never renewed, long expired, still ``claimed``."""
    steps = [(item, s) for item in items for s in item.plan.story.jobs if s.outcome == "abandon"]
    if not steps:
        return
    with production.edit(origin=ORIGIN, message="Request jobs") as tx:
        job_ids = [_request(tx, recipe, item, step) for item, step in steps]
        tx.commit()
    with production.edit(origin=f"{jobs.TOOL.name} {jobs.TOOL.version}", message="Claim job") as tx:
        for job_id in job_ids:
            tx.claim_job_lease(job_id, jobs.TOOL, DEAD_LEASE, agent=DEAD_AGENT)
        tx.commit()


def _redeliver(production: Production, recipe: Recipe, items: list[_Asset]) -> None:
    changed = [item for item in items if item.plan.story.hue_shift is not None]
    for item in changed:
        shift = item.plan.story.hue_shift or 0
        _shoot_clip(recipe, item.plan, item.clip, item.plan.hue + shift)
    if not changed:
        return
    with production.edit(origin=ORIGIN, message="Observe re-delivered originals") as tx:
        for item in changed:
            assert item.original is not None
            tx.observe_representation(item.original)
        tx.commit()


def _request_rest(production: Production, recipe: Recipe, items: list[_Asset]) -> None:
    with production.edit(origin=ORIGIN, message="Request jobs") as tx:
        for item in items:
            for step in item.plan.story.jobs:
                if step.outcome == "request":
                    _request(tx, recipe, item, step)
        tx.commit()
