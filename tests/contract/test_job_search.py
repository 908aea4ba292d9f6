"""Job search over the whole store (issue 16): terms, time ranges, sorts with keyset paging,
and failure groups. Runs through the public API on every engine (the PostgreSQL mirror too)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from postproject import (
    AgentIdentity,
    FakeClock,
    InvalidArgumentError,
    JobId,
    JobRequest,
    JobState,
    Production,
    RepresentationKind,
    ToolIdentity,
)
from postproject.areas import search as job_search
from tests.conftest import START

TOOL = ToolIdentity("Proxy Worker", "1.0")


def _setup(production: Production, tmp_path: Path) -> dict[str, object]:
    source = tmp_path / "media" / "A001.mov"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_bytes(b"original essence")
    with production.edit() as tx:
        shot = tx.create_asset("shot_0420_comp")
        other = tx.create_asset("plate_0077")
        original = tx.add_representation(shot, RepresentationKind.ORIGINAL, source)
        tx.commit()
    return {"shot": shot, "other": other, "original": original}


def _request(production: Production, asset: object, kind: str, priority: int = 0) -> JobId:
    with production.edit() as tx:
        job = tx.request_job(JobRequest(kind, (), asset, RepresentationKind.PROXY, priority=priority))  # type: ignore[arg-type]
        tx.commit()
    return job


def _fail(production: Production, job: JobId, diagnostic: str, agent: str = "render-07") -> None:
    with production.edit() as tx:
        lease = tx.claim_job_lease(job, TOOL, timedelta(minutes=1), agent=AgentIdentity(agent))
        tx.fail_job_lease(lease, diagnostic)
        tx.commit()


def _all(production: Production, **options: object) -> list[JobId]:
    found: list[JobId] = []
    cursor = None
    while True:
        page = production.jobs(limit=2, cursor=cursor, **options)  # type: ignore[arg-type]
        found.extend(job.id for job in page.items)
        if page.next_cursor is None:
            return found
        cursor = page.next_cursor


@pytest.fixture
def farm(production: Production, tmp_path: Path, clock: FakeClock) -> dict[str, object]:
    made = _setup(production, tmp_path)
    jobs = []
    for index in range(6):
        clock.advance(timedelta(minutes=10))
        kind = "org.example:proxy" if index % 2 else "org.example:transcode"
        asset = made["shot"] if index < 3 else made["other"]
        jobs.append(_request(production, asset, kind, priority=index % 3))
    clock.advance(timedelta(minutes=10))
    _fail(production, jobs[0], "unsupported profile 'ProRes 4444 XQ' in /mnt/a/b.mov", agent="render-07")
    clock.advance(timedelta(minutes=10))
    _fail(production, jobs[3], "unsupported profile 'DNxHR 444' in /mnt/c/d.mov", agent="render-09")
    clock.advance(timedelta(minutes=10))
    _fail(production, jobs[4], "decoder crashed at frame 1200")
    made["jobs"] = jobs
    return made


def test_search_finds_by_asset_kind_id_agent_and_diagnostic(
    production: Production, farm: dict[str, object]
) -> None:
    jobs: list[JobId] = farm["jobs"]  # type: ignore[assignment]
    assert _all(production, search="shot_0420") == jobs[:3]
    assert _all(production, search="SHOT_0420") == jobs[:3]  # case-insensitive
    assert _all(production, search="transcode") == [jobs[0], jobs[2], jobs[4]]
    assert _all(production, search=str(jobs[5])[-12:]) == [jobs[5]]
    assert _all(production, search="render-09") == [jobs[3]]
    assert _all(production, search="unsupported profile") == [jobs[0], jobs[3]]
    assert _all(production, search="unsupported plate") == [jobs[3]]  # terms across documents
    assert _all(production, search="XQ") == [jobs[0]]  # shorter than a trigram
    assert _all(production, search="nothing-like-this") == []
    assert _all(production, search="shot", state=JobState.FAILED) == [jobs[0]]


def test_time_ranges(production: Production, farm: dict[str, object]) -> None:
    jobs: list[JobId] = farm["jobs"]  # type: ignore[assignment]
    requested = [production.job(j).requested_at for j in jobs]
    assert _all(production, requested_after=requested[2], requested_before=requested[4]) == jobs[2:4]
    finished = production.job(jobs[3]).finished_at
    assert finished is not None
    assert production.job(jobs[1]).finished_at is None
    assert _all(production, finished_after=finished) == [jobs[3], jobs[4]]
    assert _all(production, finished_before=finished) == [jobs[0]]
    with pytest.raises(InvalidArgumentError):
        production.jobs(requested_after=START + timedelta(days=1), requested_before=START)
    with pytest.raises(InvalidArgumentError):
        production.jobs(requested_after=START.replace(tzinfo=None))


@pytest.mark.parametrize("sort", ["requested", "kind", "state", "priority"])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_pages_in_order_without_gaps(
    production: Production, farm: dict[str, object], sort: str, descending: bool
) -> None:
    jobs: list[JobId] = farm["jobs"]  # type: ignore[assignment]
    every = [production.job(j) for j in jobs]
    key: Callable[..., object] = {
        "requested": lambda j: j.id.bytes,
        "kind": lambda j: (j.kind, j.id.bytes),
        "state": lambda j: (j.state.code, j.id.bytes),
        "priority": lambda j: (j.priority, j.id.bytes),
    }[sort]
    expected = [j.id for j in sorted(every, key=key, reverse=descending)]  # type: ignore[arg-type]
    assert _all(production, sort=sort, descending=descending) == expected


def test_cursors_are_bound_to_the_query(production: Production, farm: dict[str, object]) -> None:
    page = production.jobs(limit=1, search="shot")
    assert page.next_cursor is not None
    with pytest.raises(InvalidArgumentError):
        production.jobs(limit=1, cursor=page.next_cursor, search="plate")
    with pytest.raises(InvalidArgumentError):
        production.jobs(limit=1, cursor=page.next_cursor, search="shot", sort="kind")
    with pytest.raises(InvalidArgumentError):
        production.jobs(sort="colour")


def test_failure_groups(production: Production, farm: dict[str, object]) -> None:
    jobs: list[JobId] = farm["jobs"]  # type: ignore[assignment]
    groups = production.failure_groups()
    assert [(g.count, g.reason) for g in groups] == [
        (2, "unsupported profile <text> in <path>"),
        (1, "decoder crashed at frame #"),
    ]
    assert groups[0].search == "unsupported profile"
    top = groups[0]
    assert top.summary().startswith("2 failed: unsupported profile")
    assert top.latest_job == jobs[3]
    listed = _all(production, state=JobState.FAILED, search=top.search)
    assert listed == [jobs[0], jobs[3]]
    assert production.failure_groups(kind="org.example:proxy")[0].count == 1


@pytest.mark.parametrize("sort", ["requested", "kind", "priority", "finished", "worker"])
@pytest.mark.parametrize("descending", [False, True])
def test_a_common_term_pages_the_same_through_the_window_walk_or_the_gather(
    production: Production, tmp_path: Path, sort: str, descending: bool
) -> None:
    """A kind every old job has and no new one: ascending, the window walk fills each page;
    descending, the walk meets only new jobs (60 per page of 2) and the gather finds the rest. Either way
    the pages are exactly the matches in order, with and without the walk."""
    made = _setup(production, tmp_path)
    with production.edit() as tx:
        for index in range(120):
            kind = "org.example:transcode" if index < 40 else "org.example:proxy"
            request = JobRequest(kind, (), made["shot"], RepresentationKind.PROXY, priority=index % 3)  # type: ignore[arg-type]
            tx.request_job(request)
        tx.commit()
    every = production.jobs(limit=1000).items
    key: Callable[..., object] = {
        "requested": lambda j: j.id.bytes,
        "kind": lambda j: (j.kind, j.id.bytes),
        "priority": lambda j: (j.priority, j.id.bytes),
        "finished": lambda j: j.id.bytes,  # none finished, none held by a worker: id order
        "worker": lambda j: j.id.bytes,
    }[sort]
    matching = [j for j in every if "transcode" in j.kind]
    expected = [j.id for j in sorted(matching, key=key, reverse=descending)]  # type: ignore[arg-type]

    walked = _all(production, search="transcode", sort=sort, descending=descending)
    walk, job_search.WINDOW_PER_ROW = job_search.WINDOW_PER_ROW, 0
    try:
        gathered = _all(production, search="transcode", sort=sort, descending=descending)
    finally:
        job_search.WINDOW_PER_ROW = walk
    assert walked == gathered == expected
    assert _all(production, search="transcode proxy") == []  # every term must match
