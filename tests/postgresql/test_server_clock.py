"""Hosts whose clocks disagree cooperate on one PostgreSQL production: it takes the server's time."""

from __future__ import annotations

import multiprocessing
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from postproject import JobRequest, JobState, Production, RepresentationKind
from tests.postgresql import race_workers

CTX = multiprocessing.get_context("spawn")
JOBS = 40


def seeded(location: str, tmp_path: Path) -> None:
    source = tmp_path / "source.mov"
    source.write_bytes(b"source")
    with Production.create(location) as production, production.edit() as tx:
        asset = tx.create_asset("A")
        original = tx.add_representation(asset, RepresentationKind.ORIGINAL, source)
        for _ in range(JOBS):
            tx.request_job(JobRequest("org.example:skew", (original,), asset, RepresentationKind.PROXY))
        tx.commit()


def run_skewed(location: str, tmp_path: Path, *, local_clock: bool) -> list[dict[str, Any]]:
    """Two processes, one 5 s ahead of the other, drain the jobs."""
    with CTX.Pool(2) as pool:
        barrier = CTX.Manager().Barrier(2)
        pending = [
            pool.apply_async(
                race_workers.skewed_worker, (location, str(tmp_path), skew, local_clock, barrier)
            )
            for skew in (0.0, 5.0)
        ]
        return [p.get(timeout=300) for p in pending]


def test_two_processes_five_seconds_apart_share_one_stream_of_jobs(postgres_uri: str, tmp_path: Path) -> None:
    seeded(postgres_uri, tmp_path)
    results = run_skewed(postgres_uri, tmp_path, local_clock=False)
    assert [r["conflicts"] for r in results] == [[], []]  # never clock_regressed (nor anything else)
    done = [job for r in results for job in r["done"]]
    assert len(done) == JOBS and Counter(done).most_common(1)[0][1] == 1
    assert all(r["done"] for r in results)  # both took part
    with Production.open(postgres_uri, read_only=True) as production:
        assert production.job_counts()[JobState.SUCCEEDED] == JOBS


@pytest.mark.parametrize("control", ["the same processes on their own clocks"])
def test_the_skew_is_real(postgres_uri: str, tmp_path: Path, control: str) -> None:
    """Control: with their local clocks, the process behind is refused (clock_regressed)."""
    seeded(postgres_uri, tmp_path)
    results = run_skewed(postgres_uri, tmp_path, local_clock=True)
    assert "clock_regressed" in results[0]["conflicts"]
