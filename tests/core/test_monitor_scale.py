"""What the monitor reads at a million jobs (issue 26, items 6, 7 and 11), on both engines:
per-worker outcome counts kept by the store, jobs found by their parameters' values, and
keyset sorts by finished time and by worker."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from postproject import (
    FakeClock,
    InvalidArgumentError,
    JobId,
    JobRef,
    JobRequest,
    JobState,
    LangStringValue,
    Production,
    Property,
    RepresentationKind,
    StringValue,
    UriValue,
)
from postproject.areas import search as job_search
from postproject.model.jobs import AttemptOutcome
from postproject.model.workers import WorkerSession
from postproject.storage.postgresql import schema as postgresql_schema
from postproject.storage.sql import versions
from postproject.storage.sqlite import schema as sqlite_schema
from tests.core.jobs_helpers import KIND, TOOL, Setup, at, make_setup, us
from tests.reads_counting import counting

VOCABULARY = "https://example.com/editorial"
TICKET, PROFILE, TAKES, FRAMES, NOTE, SOURCE, SHAPE = (
    Property(VOCABULARY, name) for name in ("ticket", "profile", "takes", "frames", "note", "source", "shape")
)


@pytest.fixture
def s(production: Production, clock: FakeClock, tmp_path: Path) -> Setup:
    at(clock, 0)
    return make_setup(production, clock, tmp_path)


def register(production: Production, name: str, capacity: int = 1) -> WorkerSession:
    with production.edit() as tx:
        session = tx.register_worker(name, capacity=capacity)
        tx.commit()
    return session


def run_attempts(s: Setup, worker: WorkerSession, count: int) -> None:
    """``count`` jobs, each claimed by ``worker`` and failed (one edit)."""
    jobs = [s.request() for _ in range(count)]
    with s.production.edit() as tx:
        for job in jobs:
            lease = tx.claim_job_lease(job, TOOL, us(10_000_000), worker=worker)
            tx.fail_job_lease(lease, "decoder error")
        tx.commit()


def outcomes_of_attempts(production: Production, name: str) -> Counter[AttemptOutcome]:
    return Counter(
        attempt.outcome for _job, attempt in production.worker_attempts(name, 1000) if attempt.outcome
    )


# --- item 11: per-worker outcome counts --------------------------------------------------


def test_worker_outcomes_are_counted_as_attempts_end(s: Setup) -> None:
    render = register(s.production, "render-01", capacity=4)
    other = register(s.production, "render-02")
    run_attempts(s, render, 3)
    done = s.request()
    with s.production.edit() as tx:
        lease = tx.claim_job_lease(done, TOOL, us(10_000_000), worker=render)
        tx.commit()
    s.complete(lease)
    released = s.request()
    with s.production.edit() as tx:
        lease = tx.claim_job_lease(released, TOOL, us(10_000_000), worker=other)
        tx.release_job_lease(lease)
        tx.commit()
    stopped = s.request()  # cancelled while its holder runs it, which never confirms: lost
    with s.production.edit() as tx:
        tx.claim_job_lease(stopped, TOOL, us(1_000_000), worker=render)
        tx.commit()
    with s.production.edit() as tx:
        tx.cancel_job(stopped)
        tx.commit()
    assert s.production.workers()[0].outcomes[AttemptOutcome.CANCELLED] == 1
    s.clock.advance(timedelta(seconds=2))
    with s.production.edit() as tx:
        tx.finalize_lost()
        tx.commit()
    workers = {w.name: w for w in s.production.workers()}
    assert workers["render-01"].outcomes == {
        AttemptOutcome.FAILED: 3,
        AttemptOutcome.SUCCEEDED: 1,
        AttemptOutcome.LOST: 1,
    }
    assert workers["render-02"].outcomes == {AttemptOutcome.RELEASED: 1}
    for name, worker in workers.items():
        assert worker.outcomes == outcomes_of_attempts(s.production, name)


def test_listing_workers_reads_the_same_at_ten_times_the_attempts(s: Setup) -> None:
    """Before the counts were kept, listing the workers grouped every attempt (work grew with them)."""
    worker = register(s.production, "render-01")
    figures = []
    for more in (20, 180):
        run_attempts(s, worker, more)
        with (
            counting(s.production.location) as reads,
            Production.open(
                s.production.location, read_only=True, clock=s.clock, allow_injected_clock=True
            ) as reader,
        ):
            reader.workers()  # the first read of a connection prepares its statements
            reads.reset()
            listed = reader.workers()
        assert listed[0].outcomes[AttemptOutcome.FAILED] in (20, 200)
        figures.append((reads.statements, reads.work))
        sent = [" ".join(text.split()).lower() for _thread, text in reads.texts]
        assert sent and not [t for t in sent if "job_attempts" in t], sent  # counts kept, not grouped
    assert figures[0] == figures[1]


# --- item 7: sorts by finished time and by worker ----------------------------------------


def every_page(production: Production, **options: object) -> list[JobId]:
    """Every job the query lists, two per page (keyset cursors)."""
    found: list[JobId] = []
    cursor = None
    while True:
        page = production.jobs(limit=2, cursor=cursor, **options)  # type: ignore[arg-type]
        found.extend(job.id for job in page.items)
        if page.next_cursor is None:
            return found
        cursor = page.next_cursor


@pytest.fixture
def mixed(s: Setup) -> list[JobId]:
    """Eleven jobs: requested, claimed by two workers and by an agent only, finished at
    different times (succeeded, failed, cancelled), in an order unlike their ids."""
    render_b = register(s.production, "render-b", capacity=4)
    render_a = register(s.production, "render-a", capacity=4)
    jobs = [s.request() for _ in range(11)]
    with s.production.edit() as tx:
        for job, worker in (
            (jobs[1], render_b),
            (jobs[4], render_a),
            (jobs[7], render_b),
            (jobs[9], render_a),
        ):
            tx.claim_job_lease(job, TOOL, timedelta(hours=1), worker=worker)
        tx.commit()
    s.claim(jobs[10], 3_600_000_000)  # an agent's claim, no registered worker
    for job, finish in ((jobs[8], "fail"), (jobs[2], "cancel"), (jobs[5], "succeed"), (jobs[0], "fail")):
        s.clock.advance(timedelta(seconds=5))
        if finish == "cancel":
            with s.production.edit() as tx:
                tx.cancel_job(job)
                tx.commit()
            continue
        lease = s.claim(job, 60_000_000)
        if finish == "succeed":
            s.complete(lease)
        else:
            with s.production.edit() as tx:
                tx.fail_job_lease(lease, "decoder error")
                tx.commit()
    return jobs


def finished_key(production: Production, job_id: JobId) -> tuple[object, ...]:
    job = production.job(job_id)
    return (0, job.id.bytes) if job.finished_at is None else (1, job.finished_at, job.id.bytes)


def worker_key(production: Production, job_id: JobId) -> tuple[object, ...]:
    job = production.job(job_id)
    name = job.claim.worker if job.claim is not None else None
    return (1, job.id.bytes) if name is None else (0, name, job.id.bytes)


@pytest.mark.parametrize("sort", ["finished", "worker"])
@pytest.mark.parametrize("descending", [False, True])
def test_sorts_by_finished_time_and_by_worker_page_in_order(
    s: Setup, mixed: list[JobId], sort: str, descending: bool
) -> None:
    production = s.production
    key = finished_key if sort == "finished" else worker_key
    expected = sorted(mixed, key=lambda j: key(production, j), reverse=descending)  # type: ignore[operator]
    assert every_page(production, sort=sort, descending=descending) == expected
    for state in (JobState.FAILED, JobState.CLAIMED, JobState.REQUESTED):
        listed = [j for j in expected if production.job(j).state is state]
        assert every_page(production, sort=sort, descending=descending, state=state) == listed
    # A search pages the same through the ordered walk and the gather (the kind: every job).
    walked = every_page(production, sort=sort, descending=descending, search="proxy")
    walk, job_search.WINDOW_PER_ROW = job_search.WINDOW_PER_ROW, 0
    try:
        gathered = every_page(production, sort=sort, descending=descending, search="proxy")
    finally:
        job_search.WINDOW_PER_ROW = walk
    assert walked == gathered == expected


def test_newest_finished_first_lists_the_latest_failure_first(s: Setup, mixed: list[JobId]) -> None:
    page = s.production.jobs(limit=1, state=JobState.FAILED, sort="finished", descending=True)
    assert [j.id for j in page.items] == [mixed[0]]
    with pytest.raises(InvalidArgumentError):
        s.production.jobs(limit=1, cursor=page.next_cursor, state=JobState.FAILED, sort="worker")


# --- item 6: jobs found by their parameters' values ---------------------------------------


def requested_with(s: Setup, *parameters: tuple[Property, object]) -> JobId:
    """A job and its parameters in one edit (how the CLI, the monitor and plans request them)."""
    with s.production.edit() as tx:
        job = tx.request_job(JobRequest(KIND, s.original_inputs, s.asset, RepresentationKind.PROXY))
        for prop, value in parameters:
            tx.add_metadata(JobRef(job), prop, value)
        tx.commit()
    return job


def test_search_finds_a_job_by_its_parameters_values(s: Setup) -> None:
    plain = s.request()
    ticket = requested_with(s, (TICKET, "TCK-054321"), (PROFILE, "proxy-720p"))
    take = requested_with(s, (TAKES, [StringValue("take 7"), StringValue("TCK-000999")]), (FRAMES, 24))
    shot = requested_with(
        s, (NOTE, LangStringValue("Plan serré Q7", "fr")), (SOURCE, UriValue("https://x.example/sh010"))
    )
    nested = requested_with(s, (SHAPE, {"ticket": "TCK-777000", "frames": 12}))
    production = s.production
    assert every_page(production, search="TCK-054321") == [ticket]
    assert every_page(production, search="tck-054321") == [ticket]  # case-insensitive
    assert every_page(production, search="054321") == [ticket]  # part of a value
    assert every_page(production, search="TCK") == [ticket, take, nested]
    assert every_page(production, search="take TCK-000999") == [take]  # two values of one list
    assert every_page(production, search="Q7") == [shot]  # shorter than a trigram
    assert every_page(production, search="Q7", state=JobState.REQUESTED) == [shot]  # looked up per job
    assert every_page(production, search="sh010") == [shot]  # a URI
    assert every_page(production, search="serré") == [shot]  # a language-tagged string
    assert every_page(production, search="TCK-777000") == [nested]  # inside a structure
    assert every_page(production, search="24") == []  # numbers are not string values
    assert every_page(production, search="TCK-054321", state=JobState.FAILED) == []
    assert plain not in every_page(production, search="proxy-720p")


def test_a_term_shorter_than_a_trigram_is_looked_up_among_one_states_jobs_walked_or_gathered(
    s: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No index finds two letters, so with a state each of that state's jobs has its own
    parameters looked up, on the walk and on the gather alike (PostgreSQL scanned every
    parameter value on both before)."""
    shot = requested_with(s, (NOTE, LangStringValue("Plan serré Q7", "fr")))
    others = [requested_with(s, (TICKET, f"TCK-{n:06d}")) for n in range(5)]
    with s.production.edit() as tx:
        lease = tx.claim_job_lease(others[0], TOOL, us(10_000_000))
        tx.fail_job_lease(lease, "decoder error")
        tx.commit()
    for window in (job_search.WINDOW_PER_ROW, 0):
        monkeypatch.setattr(job_search, "WINDOW_PER_ROW", window)
        assert every_page(s.production, search="Q7", state=JobState.REQUESTED) == [shot]
        assert every_page(s.production, search="q7 serré", state=JobState.REQUESTED) == [shot]
        assert every_page(s.production, search="Q7", state=JobState.FAILED) == []
        assert every_page(s.production, search="TC", state=JobState.FAILED) == [others[0]]


def test_a_parameter_every_job_has_pages_the_same_walked_or_gathered(s: Setup) -> None:
    jobs = [requested_with(s, (PROFILE, "proxy-720p"), (TICKET, f"TCK-{n:06d}")) for n in range(30)]
    for descending in (False, True):
        expected = sorted(jobs, reverse=descending)
        walked = every_page(s.production, search="proxy-720p", descending=descending)
        walk, job_search.WINDOW_PER_ROW = job_search.WINDOW_PER_ROW, 0
        try:
            gathered = every_page(s.production, search="proxy-720p", descending=descending)
        finally:
            job_search.WINDOW_PER_ROW = walk
        assert walked == gathered == expected


# --- the migration fills the new structures ---------------------------------------------


def test_an_older_production_gets_its_parameters_indexed_and_outcomes_counted(
    production_location: Callable[[str], str],
    clock: FakeClock,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A production made before schema 0010 has jobs with parameters and workers' attempts;
    opened by this release, its parameters are searchable and its workers' outcomes counted,
    as if it had always had them."""
    at(clock, 0)
    with monkeypatch.context() as before_0010:
        for module in (sqlite_schema, postgresql_schema):
            older = [(name, script) for number, name, script in module.MIGRATIONS.files if number < 10]
            before_0010.setattr(module, "MIGRATIONS", versions.checked(older))
        old = Production.create(
            production_location("older.pproj"), clock=clock, allow_injected_clock=True
        )  # not the template
        s = make_setup(old, clock, tmp_path)
        worker = register(old, "render-01", capacity=4)
        run_attempts(s, worker, 3)
        ticket = requested_with(s, (TICKET, "TCK-054321"), (TAKES, ["take 7"]))
        location = old.location
        old.close()
    with Production.open(location, clock=clock, allow_injected_clock=True) as production:
        assert every_page(production, search="TCK-054321") == [ticket]
        assert every_page(production, search="take 7") == [ticket]
        assert every_page(production, search="TC") == [ticket]  # shorter than a trigram
        (listed,) = production.workers()
        assert listed.outcomes == {AttemptOutcome.FAILED: 3}
        s.production = production
        run_attempts(s, worker, 1)  # counted on from there
        assert production.workers()[0].outcomes == {AttemptOutcome.FAILED: 4}
