"""Job queries: limits, pages in id order, cursors bound to their filters and production,
weakly consistent pages (acceptance checks 41-47 of the notes §8), and the reads the
monitor relies on (expiring claims, a job's history)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from postproject import (
    FakeClock,
    InvalidArgumentError,
    JobState,
    Production,
)
from tests.core.jobs_helpers import Setup, at, make_setup


@pytest.fixture
def s(production: Production, clock: FakeClock, tmp_path: Path) -> Setup:
    return make_setup(production, clock, tmp_path)


def test_41_limits(s: Setup) -> None:
    for limit in (0, 1001):
        with pytest.raises(InvalidArgumentError):
            s.production.jobs(limit=limit)
    with pytest.raises(TypeError):
        s.production.jobs(limit=True)
    s.production.jobs(limit=1000)


def test_42_pages_in_id_order(s: Setup) -> None:
    jobs = sorted(s.request() for _ in range(3))
    seen, cursors = [], []
    cursor = None
    while True:
        page = s.production.jobs(limit=1, cursor=cursor)
        seen.extend(job.id for job in page.items)
        cursors.append(page.next_cursor)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == jobs
    assert [c is not None for c in cursors] == [True, True, False]


def test_43_cursors_are_bound_to_their_filters_and_production(
    s: Setup, production_factory: Callable[..., Production]
) -> None:
    for _ in range(2):
        s.request()
    cursor = s.production.jobs(limit=1, state=JobState.REQUESTED).next_cursor
    assert cursor is not None
    other = production_factory("other.pproj")
    for call in (
        lambda: s.production.jobs(limit=1, cursor=cursor, state=JobState.CLAIMED),
        lambda: s.production.jobs(limit=1, cursor=cursor, state=JobState.REQUESTED, kind="org.example:other"),
        lambda: s.production.jobs(limit=1, cursor=cursor),
        lambda: other.jobs(limit=1, cursor=cursor, state=JobState.REQUESTED),
    ):
        with pytest.raises(InvalidArgumentError):
            call()
    assert len(s.production.jobs(limit=1, cursor=cursor, state=JobState.REQUESTED).items) == 1


def test_44_altered_cursors_are_rejected(s: Setup) -> None:
    for _ in range(2):
        s.request()
    cursor = s.production.jobs(limit=1).next_cursor
    assert cursor is not None
    fields = cursor.split("|")
    last = fields[-2]
    altered = [
        cursor.replace(last, last.upper()),
        cursor.replace("ppq2", "ppq1", 1),
        cursor[:-1] + ("0" if cursor[-1] != "0" else "1"),
        "|".join([*fields[:-2], "00" * 16, fields[-1]]),
        "garbage",
    ]
    for bad in altered:
        with pytest.raises(InvalidArgumentError):
            s.production.jobs(limit=1, cursor=bad)


def test_45_kind_filter(s: Setup) -> None:
    s.request()
    with pytest.raises(InvalidArgumentError):
        s.production.jobs(kind="bad")
    page = s.production.jobs(kind="org.example:nothing-here")
    assert page.items == () and page.next_cursor is None


def test_46_pages_are_weakly_consistent(s: Setup) -> None:
    first, second = s.request(), s.request()
    page = s.production.jobs(limit=1)
    assert page.items[0].id == first
    later = s.request()
    rest = []
    cursor = page.next_cursor
    while cursor:
        page = s.production.jobs(limit=1, cursor=cursor)
        rest.extend(job.id for job in page.items)
        cursor = page.next_cursor
    assert rest == [second, later]


def test_47_claimed_filter_includes_expired_claims(s: Setup) -> None:
    job = s.request()
    at(s.clock, 0)
    s.claim(job, 100)
    at(s.clock, 10_000)
    assert [j.id for j in s.production.jobs(state=JobState.CLAIMED).items] == [job]
    stuck = s.production.claims_expiring()
    assert [j.id for j in stuck.items] == [job]


# --- reads the monitor relies on ----------------------------------------------------------


def test_claims_expiring_pages_keep_their_bound_and_filter_by_kind(s: Setup) -> None:
    jobs = [s.request() for _ in range(3)] + [s.request(kind="org.example:other")]
    for index, job in enumerate(jobs):
        at(s.clock, index)
        s.claim(job, 100)
    at(s.clock, 102)  # the first three have expired, the fourth (expires at 103) has not
    first = s.production.claims_expiring(limit=2)
    assert [j.id for j in first.items] == jobs[:2] and first.next_cursor is not None
    at(s.clock, 10_000)  # time moves on; the cursor keeps the first page's bound
    rest = s.production.claims_expiring(limit=2, cursor=first.next_cursor)
    assert [j.id for j in rest.items] == [jobs[2]] and rest.next_cursor is None
    other = s.production.claims_expiring(kind="org.example:other")
    assert [j.id for j in other.items] == [jobs[3]]
    with pytest.raises(InvalidArgumentError):
        s.production.claims_expiring(limit=2, cursor=first.next_cursor, kind="org.example:other")


def test_job_history_names_who_and_why(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 1000)
    with s.production.edit(origin="supervisor-console 2", message="Stuck on render-07") as tx:
        tx.cancel_job(job)
        tx.commit()
    history = s.production.job_history(job)
    assert [entry.kind for entry in history] == ["job_requested", "job_claimed", "job_cancelled"]
    assert (history[-1].origin, history[-1].message) == ("supervisor-console 2", "Stuck on render-07")
    assert [entry.sequence for entry in history] == sorted(entry.sequence for entry in history)
    del lease
