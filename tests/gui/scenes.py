"""A realistic small production for GUI tests, snapshots and the README's screenshots.

Built through the public core API with a fake clock that walks from ``start`` forward, so
the file holds a morning's work: succeeded proxies and thumbnails, failures with real-looking
diagnostics, live claims held by several render nodes, stuck claims whose lease expired,
cancelled and requested work.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from postproject import (
    EXECUTOR_VOCABULARY,
    ActivityRef,
    ActivitySpec,
    AgentIdentity,
    FakeClock,
    JobId,
    JobLease,
    JobRef,
    JobRequest,
    Production,
    Property,
    RepresentationKind,
    ToolIdentity,
)

PROXY = "org.postproject:generate-proxy"
THUMB = "org.postproject:generate-thumbnail"
CONFORM = "com.northlight:conform-edl"
FFMPEG = ToolIdentity("ffmpeg", "6.1.1", "https://ffmpeg.org/")
EXECUTOR = ToolIdentity("PostProject reference executor", "0.1.0", "https://postproject.org/")
DIAGNOSTICS = (
    "ffmpeg exited with status 1\n[mov,mp4,m4a,3gp,3g2,mj2 @ 0x55d0c6a2e8c0] moov atom not found\n"
    "A003_C007.mov: Invalid data found when processing input",
    "input representation is offline: /Volumes/RAID-02/day3/B001_C004.mov not found on render-03",
    "target root 'thumbnails' is not mapped on render-02; map it with --root-map thumbnails=PATH",
    "encoder error: DNxHR LB needs an even width; source is 1921x1080 after crop",
)


@dataclass
class Demo:
    path: Path
    clock: FakeClock
    succeeded: list[JobId] = field(default_factory=list)
    failed: list[JobId] = field(default_factory=list)
    live: list[JobId] = field(default_factory=list)
    stuck: list[JobId] = field(default_factory=list)
    cancelled: list[JobId] = field(default_factory=list)
    requested: list[JobId] = field(default_factory=list)


def span(clips: int) -> timedelta:
    """How far the demo's clock walks (requests, then 14 done, 4 failed, 2 stuck, 5 live)."""
    return timedelta(minutes=7 * clips + 3 * 14 + 2 * 4 + 2 + 6, seconds=40 * 5)


def build_demo(path: Path, end: datetime, *, clips: int = 18) -> Demo:
    """Create the demo production at ``path``; its clock (``Demo.clock``) walks through about
    three hours of work and stops at ``end``, when one live claim has 50 seconds left."""
    clock = FakeClock(end - span(clips))
    demo = Demo(path, clock)
    media = path.parent / f"{path.stem}-media"
    media.mkdir(parents=True, exist_ok=True)
    with Production.create(path, clock=clock, allow_injected_clock=True) as production:
        sources = _sources(production, media, clips)
        jobs = _request_all(production, clock, sources)
        _work(production, clock, media, jobs, demo)
    return demo


def _sources(production: Production, media: Path, clips: int) -> list[tuple[object, object]]:
    found = []
    with production.edit(origin="ingest 2.3", message="Ingest day 3 camera A and B") as tx:
        tx.add_media_root("proxies", media / "proxies")
        tx.add_media_root("thumbnails", media / "thumbnails")
        for index in range(clips):
            name = f"{'AB'[index % 2]}{index // 4 + 1:03d}_C{index % 9 + 1:03d}"
            clip = media / f"{name}.mov"
            clip.write_bytes(name.encode() * 64)
            asset = tx.create_asset(name)
            found.append((asset, tx.add_representation(asset, RepresentationKind.ORIGINAL, clip)))
        tx.commit()
    return found


def _request_all(
    production: Production, clock: FakeClock, sources: list[tuple[object, object]]
) -> list[JobId]:
    ids: list[JobId] = []
    for index, (asset, rep) in enumerate(sources):
        clock.advance(timedelta(minutes=7))
        with production.edit(origin="postproject-cli 0.1.0", message="Request job") as tx:
            for kind, out, root, profile in (
                (PROXY, RepresentationKind.PROXY, "proxies", "proxy-720p" if index % 3 else "proxy-1080p"),
                (THUMB, RepresentationKind.DERIVED, "thumbnails", "thumbnail-640"),
            ):
                job = tx.request_job(JobRequest(kind, [rep], asset, out, root))  # type: ignore[list-item, arg-type]
                tx.add_metadata(JobRef(job), Property(EXECUTOR_VOCABULARY, "profile"), profile)
                ids.append(job)
            if index % 5 == 4:
                job = tx.request_job(JobRequest(CONFORM, [rep], asset, RepresentationKind.DERIVED))  # type: ignore[list-item, arg-type]
                tx.add_metadata(
                    JobRef(job), Property("https://northlight.example/ns/conform", "fps"), "24000/1001"
                )
                ids.append(job)
            tx.commit()
    return ids


def _claim(production: Production, job: JobId, agent: str, minutes: float) -> JobLease:
    with production.edit(origin="render-farm", message="Claim job") as tx:
        lease = tx.claim_job_lease(job, FFMPEG, timedelta(minutes=minutes), AgentIdentity(agent))
        tx.commit()
    return lease


def _work(production: Production, clock: FakeClock, media: Path, jobs: list[JobId], demo: Demo) -> None:
    agents = [f"render-{n:02d}" for n in range(1, 7)]
    done, failed, live, stuck, cancelled = jobs[:14], jobs[14:18], jobs[18:23], jobs[23:25], jobs[25:27]
    for n, job in enumerate(done):
        clock.advance(timedelta(minutes=3))
        _complete(production, media, job, _claim(production, job, agents[n % 3], 10), n)
        demo.succeeded.append(job)
    for n, job in enumerate(failed):
        clock.advance(timedelta(minutes=2))
        lease = _claim(production, job, agents[3 + n % 3], 10)
        with production.edit(origin="render-farm", message="Fail job") as tx:
            tx.fail_job_lease(lease, DIAGNOSTICS[n % len(DIAGNOSTICS)])
            tx.commit()
        demo.failed.append(job)
    for job in stuck:
        clock.advance(timedelta(minutes=1))
        _claim(production, job, "render-05", 2)
        demo.stuck.append(job)
    for job in cancelled:
        with production.edit(origin="postproject-monitor 0.1.0", message="Cancel 1 job") as tx:
            tx.cancel_job(job)
            tx.commit()
        demo.cancelled.append(job)
    clock.advance(timedelta(minutes=6))
    # The last one is claimed first, with a 210 s lease that nobody renews: at the end it has
    # 50 s of them left, less than a third: expiring.
    for job in (live[-1], *live[:-1]):
        n = live.index(job)
        clock.advance(timedelta(seconds=40))
        _claim(production, job, agents[n % 4], 210 / 60 if n == len(live) - 1 else 8 + n)
    demo.live.extend(live)
    demo.requested = jobs[27:]


def _complete(production: Production, media: Path, job_id: JobId, lease: JobLease, n: int) -> None:
    job = production.job(job_id)
    out = media / ("proxies" if job.output_representation_kind is RepresentationKind.PROXY else "thumbnails")
    out.mkdir(parents=True, exist_ok=True)
    name = production.asset(job.output_asset_id).name or str(job.output_asset_id)
    target = out / f"{name}_{job.output_representation_kind.value}{'.mov' if 'proxy' in job.kind else '.jpg'}"
    target.write_bytes(f"{job_id} output".encode())
    with lease, production.edit(origin="PostProject reference executor 0.1.0", message="Complete job") as tx:
        rep = tx.add_representation(job.output_asset_id, job.output_representation_kind, target)
        activity = tx.create_activity(
            ActivitySpec(job.kind, inputs=job.inputs, outputs=(rep,), tool=EXECUTOR)
        )
        for parameter in production.metadata[JobRef(job_id)]:  # parameters make it reproducible
            tx.add_metadata(ActivityRef(activity), parameter.property, parameter.value)
        tx.complete_job_lease(lease, rep, activity)
        tx.commit()
