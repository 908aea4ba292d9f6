"""Races between spawned processes on one production (a file, or a PostgreSQL schema)."""

from __future__ import annotations

import multiprocessing
from collections import Counter
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from postproject import (
    ActivitySpec,
    FakeClock,
    JobRequest,
    JobState,
    Production,
    RepresentationKind,
)
from tests.races import workers

pytestmark = pytest.mark.race
CTX = multiprocessing.get_context("spawn")


class Processes:
    """Start spawned processes running functions of ``workers``; collect their results."""

    def __init__(self) -> None:
        self.queue = CTX.Queue()
        self.processes: list[multiprocessing.process.BaseProcess] = []

    def start(self, function: object, *args: object) -> int:
        index = len(self.processes)
        process = CTX.Process(target=workers.call, args=(self.queue, index, function, args))
        process.start()
        self.processes.append(process)
        return index

    def results(self, timeout: float = 300) -> list[object]:
        found: dict[int, object] = {}
        for _ in self.processes:
            index, ok, value = self.queue.get(timeout=timeout)
            assert ok, value
            found[index] = value
        for process in self.processes:
            process.join(30)
        return [found[i] for i in range(len(self.processes))]


Location = Callable[[str], str]


def seeded(tmp_path: Path, location: Location, jobs: int) -> str:
    path = location("race.pproj")
    source = tmp_path / "source.mov"
    source.write_bytes(b"source")
    with Production.create(path) as production, production.edit() as tx:
        asset = tx.create_asset("A")
        original = tx.add_representation(asset, RepresentationKind.ORIGINAL, source)
        for _ in range(jobs):
            tx.request_job(JobRequest("org.example:race", (original,), asset, RepresentationKind.PROXY))
        tx.commit()
    return path


def test_two_processes_committing_at_once_get_gap_free_sequences(production_location: Location) -> None:
    path = production_location("p.pproj")
    Production.create(path).close()
    barrier = CTX.Barrier(2)
    runs = Processes()
    for _ in range(2):
        runs.start(workers.commit_assets, str(path), 200, barrier)
    sequences: list[list[int]] = runs.results()  # type: ignore[assignment]
    assert sorted(sequences[0] + sequences[1]) == list(range(1, 401))
    with Production.open(path) as production:
        assert [r.sequence for r in production.changes_since(0, 1000)] == list(range(1, 401))
        assert len(production.assets(limit=1000).items) == 400


def test_a_waiter_in_another_process_is_woken_by_a_commit(production_location: Location) -> None:
    path = production_location("p.pproj")
    Production.create(path).close()
    ready = CTX.Barrier(2)
    runs = Processes()
    runs.start(workers.wait_for_one, str(path), 0, ready)
    ready.wait()
    with Production.open(path) as production, production.edit() as tx:
        tx.create_asset()
        tx.commit()
    assert runs.results(60) == [[1]]


@pytest.mark.slow
@pytest.mark.parametrize("calls", [False, True], ids=["edits", "executor_calls"])
def test_four_workers_complete_each_job_exactly_once(
    tmp_path: Path, production_location: Location, calls: bool
) -> None:
    """Four spawned workers drain 500 jobs (some leases lost): no job claimed twice at once, none
    lost, none completed twice; by the spec's edits, and by the reference executor's calls
    (on PostgreSQL one ``pp_claim_next`` per claim, the completion's check sent with its commit)."""
    jobs = 300 if calls else 500
    path = seeded(tmp_path, production_location, jobs)
    out = tmp_path / "out"
    out.mkdir()
    barrier = CTX.Barrier(4)
    runs = Processes()
    for seed in range(4):
        runs.start(workers.drain, str(path), str(out), seed, barrier, calls)
    results: list[dict[str, Any]] = runs.results()  # type: ignore[assignment]
    assert [e for r in results for e in r["errors"]] == []
    completed = [c for r in results for c in r["completed"]]
    assert Counter(job for job, _, _ in completed).most_common(1)[0][1] == 1
    with Production.open(path) as production:
        assert production.job_counts()[JobState.SUCCEEDED] == jobs
        assert len(completed) == jobs
        assert sum(1 for _ in iter_activities(production)) == jobs
        # Every accepted completion came from the job's latest claim: no fenced token published.
        last_claim: dict[str, int] = {}
        cursor = 0
        while True:
            page = production.changes_since(cursor, 1000)
            for revision in page:
                for event in revision.events:
                    if event.kind == "job_claimed":
                        last_claim[event["job_id"]] = revision.sequence
            if not page.revisions:
                break
            cursor = page.revisions[-1].sequence
        for job, claim_sequence, _ in completed:
            assert last_claim[job] == claim_sequence


def iter_activities(production: Production):  # type: ignore[no-untyped-def]
    cursor = None
    while True:
        page = production.activities(limit=1000, cursor=cursor)
        yield from page.items
        if (cursor := page.next_cursor) is None:
            return


def test_a_lost_lease_cannot_publish_but_the_reclaimer_can(
    tmp_path: Path, production_location: Location
) -> None:
    path = seeded(tmp_path, production_location, 1)
    claimed, reclaimed = CTX.Barrier(2), CTX.Barrier(2)
    runs = Processes()
    runs.start(workers.lost_lease_worker, path, str(tmp_path), workers.START.isoformat(), claimed, reclaimed)
    claimed.wait()
    clock = FakeClock(workers.START + timedelta(microseconds=200))
    with Production.open(path, clock=clock, allow_injected_clock=True) as production:
        job_id = production.jobs().items[0].id
        with production.edit() as tx:
            lease = tx.claim_job_lease(job_id, workers.TOOL, timedelta(seconds=10))
            tx.commit()
        reclaimed.wait()
        assert runs.results(60) == ["fenced"]
        clock.advance(timedelta(microseconds=100))  # the loser's clock reading raised the high-water mark
        job = production.job(job_id)
        output = tmp_path / "winner.bin"
        output.write_bytes(b"winner")
        with production.edit() as tx:
            rep = tx.add_representation(job.output_asset_id, RepresentationKind.PROXY, output)
            activity = tx.create_activity(ActivitySpec(job.kind, inputs=job.inputs, outputs=(rep,)))
            tx.complete_job_lease(lease, rep, activity)
            tx.commit()
        assert production.job(job_id).state is JobState.SUCCEEDED
        assert len(production.representations(kind=RepresentationKind.PROXY).items) == 1
