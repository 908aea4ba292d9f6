"""Job-store benchmark: perf-anchors.md Part C scenarios through the public API, as ratios.

Every figure is compared with a raw SQLite (or huey) baseline measured in the same run
(``baselines.py``, adapted from ``bench_queues.py``), because this 2-core VM is shared and
absolute numbers move by 15 % or more between runs. Nothing is asserted; it reports.

Scenarios (perf-anchors.md C1):
  S1   enqueue: one ``edit()`` + ``request_job`` + ``commit`` per job         vs raw / huey enqueue
  S3   claim + atomic completion, W=1, the spec's worker protocol:            vs raw / raw_proj / huey
       edit 1 = ``claim_next_job_lease``; then ``job()``, and edit 2 =
       ``add_representation`` (a small pre-written file per job) +
       ``create_activity`` + metadata copy + ``complete_job_lease``
  S4   S3 with W=4 spawned processes: aggregate jobs/s, claim latency,        vs own W=1 / raw_retry W=4
       min share, duplicates, lost jobs, busy errors surfaced
  S7   S3 on top of the history fixture (finished jobs + events)              vs own S3 (raw: same ratio)
  S9   ``jobs(limit=50)`` first / middle / last page, with and without        vs raw keyset page
       ``state=FAILED``, ``newest_first`` True and False, p50 per page
  S10  ``job_counts()``                                                        vs raw ``count(*)``
  S11  idle ``changes_since(head, 1)`` and ``wait_for_changes(head, 0)``,     vs raw feed poll /
       a 100-event page, and S3 with a follower polling every 100 ms          data_version / own S3
  diag WAL frames (pages) per commit written by request / claim / completion, and what one page
       costs per commit here: how much of the gap is the schema's page writes, how much Python;
       and the floor: the time spent inside SQLite alone (every statement the API sends, timed,
       COMMIT included) per request and per job, i.e. the rate the API could reach if its Python
       cost nothing

The history fixture (S7, S9, S10, S11) is built once, through the public API, in large
transactions: ``request_job`` x 50k per edit, then every job cancelled (95 %) or claimed and
failed (5 %). If the projected build passes ``--history-budget`` seconds, it stops at 200k
jobs and says so.

Usage:
  .venv/bin/python benchmarks/bench_jobs.py --quick          # 1 small run (~1-2 min)
  .venv/bin/python benchmarks/bench_jobs.py --json benchmarks/results/jobs.json   # 3 runs
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import shutil
import sqlite3
import statistics
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import baselines
from postproject import (
    ActivityRef,
    ActivitySpec,
    AgentIdentity,
    AssetId,
    ConflictError,
    JobId,
    JobLease,
    JobRef,
    JobRequest,
    JobState,
    Production,
    RepresentationId,
    RepresentationKind,
    StorageError,
    ToolIdentity,
)

KIND = "org.example:bench"
TOOL = ToolIdentity("bench-worker", "1.0")
LEASE = timedelta(minutes=5)
PAGE = 50
FALLBACK_HISTORY = 200_000


@dataclass(frozen=True)
class Setup:
    """A production with one asset and one original representation, plus an outputs folder."""

    path: Path
    outputs: Path
    asset: AssetId
    original: RepresentationId

    def request(self) -> JobRequest:
        return JobRequest(KIND, (self.original,), self.asset, RepresentationKind.PROXY)


def new_production(root: Path, name: str) -> Setup:
    d = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=root))
    source = d / "A001.mov"
    source.write_bytes(b"original essence\n" * 4)
    outputs = d / "outputs"
    outputs.mkdir()
    with Production.create(d / "bench.pproj") as production, production.edit() as tx:
        asset = tx.create_asset("A001")
        original = tx.add_representation(asset, RepresentationKind.ORIGINAL, source)
        tx.commit()
    return Setup(d / "bench.pproj", outputs, asset, original)


def fill_jobs(setup: Setup, n: int, chunk: int = 25_000) -> list[JobId]:
    """Request ``n`` jobs in large transactions and pre-write each job's output file (untimed)."""
    ids: list[JobId] = []
    with Production.open(setup.path) as production:
        for start in range(0, n, chunk):
            with production.edit() as tx:
                ids.extend(tx.request_job(setup.request()) for _ in range(min(chunk, n - start)))
                tx.commit()
    for job_id in ids:
        (setup.outputs / f"{job_id}.out").write_bytes(f"proxy essence of {job_id}\n".encode())
    return ids


# --------------------------------------------------------------------------
# the worker protocol (tests/docs/test_spec_python_examples.py, run_proxy_job)
# --------------------------------------------------------------------------


def claim(production: Production, agent: AgentIdentity) -> JobLease | None:
    with production.edit() as tx:
        lease = tx.claim_next_job_lease(TOOL, LEASE, agent=agent)
        tx.commit()
    return lease


def complete(production: Production, lease: JobLease, outputs: Path, agent: AgentIdentity) -> None:
    with lease:
        job = production.job(lease.job_id)
        output = outputs / f"{job.id}.out"  # the "work" was done before timing started
        with production.edit() as tx:
            proxy_id = tx.add_representation(job.output_asset_id, job.output_representation_kind, output)
            activity_id = tx.create_activity(
                ActivitySpec(job.kind, inputs=tuple(job.inputs), outputs=(proxy_id,), tool=TOOL, agent=agent)
            )
            for parameter in production.metadata[JobRef(job.id)]:
                tx.add_metadata(ActivityRef(activity_id), parameter.property, parameter.value)
            tx.complete_job_lease(lease, proxy_id, activity_id)
            tx.commit()


def api_worker_main(
    path: str, outputs: str, wid: int, barrier: Any, results: Any, max_seconds: float
) -> None:
    """Claim and complete until nothing is claimable; report ids, latencies and errors."""
    try:
        production = Production.open(path)
        agent = AgentIdentity(f"bench-w{wid}")
        out_dir = Path(outputs)
        ids: list[str] = []
        claim_lat: list[float] = []
        job_lat: list[float] = []
        busy = conflicts = 0
        first_error: str | None = None
        barrier.wait()
        t_end = time.perf_counter() + max_seconds
        while True:
            t0 = time.perf_counter()
            try:
                lease = claim(production, agent)
            except StorageError as exc:
                if exc.reason != "busy":
                    raise
                busy += 1
                first_error = first_error or f"claim: {exc}"
                continue
            t1 = time.perf_counter()
            claim_lat.append(t1 - t0)
            if lease is None:
                break  # claims run under the write lock: None means nothing is claimable
            job_id = str(lease.job_id)
            try:
                complete(production, lease, out_dir, agent)
            except StorageError as exc:
                if exc.reason != "busy":
                    raise
                busy += 1
                first_error = first_error or f"complete: {exc}"
                continue
            except ConflictError as exc:
                conflicts += 1
                first_error = first_error or f"complete: {exc}"
                continue
            job_lat.append(time.perf_counter() - t0)
            ids.append(job_id)
            if time.perf_counter() > t_end:
                break
        done = time.perf_counter()
        production.close()
        results.put(
            {
                "wid": wid,
                "ids": ids,
                "busy": busy,
                "conflicts": conflicts,
                "first_error": first_error,
                "done": done,
                "claim_lat": claim_lat,
                "job_lat": job_lat,
            }
        )
    except BaseException:
        results.put({"wid": wid, "fatal": traceback.format_exc()})


def follower_main(path: str, barrier: Any, stop: Any, results: Any, interval: float) -> None:
    """Follow the revision feed every ``interval`` seconds (read-only), paging until caught up."""
    try:
        production = Production.open(path, read_only=True)
        head = production.latest_revision()
        cursor = head.sequence if head else 0
        polls = events = revisions = 0
        lat: list[float] = []
        barrier.wait()
        while not stop.is_set():
            t0 = time.perf_counter()
            while True:
                changes = production.changes_since(cursor, 100)
                revisions += len(changes)
                events += sum(len(r.events) for r in changes)
                cursor = changes.through_sequence
                if len(changes) < 100:
                    break
            lat.append(time.perf_counter() - t0)
            polls += 1
            stop.wait(interval)
        production.close()
        results.put({"polls": polls, "events": events, "revisions": revisions, "lat": lat})
    except BaseException:
        results.put({"fatal": traceback.format_exc()})


def api_drain(
    setup: Setup, n: int, workers: int, max_seconds: float, follower: bool = False
) -> dict[str, Any]:
    """Drain the ``n`` requested jobs of ``setup`` with ``workers`` spawned processes."""
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(workers + 1 + (1 if follower else 0))
    results = ctx.Queue()
    procs = [
        ctx.Process(
            target=api_worker_main,
            args=(str(setup.path), str(setup.outputs), w, barrier, results, max_seconds),
        )
        for w in range(workers)
    ]
    stop = ctx.Event()
    fresults = ctx.Queue()
    fproc = ctx.Process(target=follower_main, args=(str(setup.path), barrier, stop, fresults, 0.1))
    for p in procs:
        p.start()
    if follower:
        fproc.start()
    barrier.wait()
    t0 = time.perf_counter()
    outs = [results.get() for _ in procs]
    stop.set()
    fout = fresults.get() if follower else None
    for p in procs:
        p.join()
    if follower:
        fproc.join()
    fatal = [o["fatal"] for o in outs if "fatal" in o] + ([fout["fatal"]] if fout and "fatal" in fout else [])
    if fatal:
        print(fatal[0], flush=True)
        return {"error": fatal[0].strip().splitlines()[-1], "ops": float("nan")}
    dt = max(o["done"] for o in outs) - t0
    all_ids = [i for o in outs for i in o["ids"]]
    uniq = set(all_ids)
    claim_lat = [x for o in outs for x in o["claim_lat"]]
    job_lat = [x for o in outs for x in o["job_lat"]]
    per_worker = sorted(len(o["ids"]) for o in outs)
    mean = sum(per_worker) / len(per_worker)
    with Production.open(setup.path, read_only=True) as production:
        counts = production.job_counts()
    out: dict[str, Any] = {
        "ops": len(uniq) / dt,
        "secs": dt,
        "completed": len(all_ids),
        "duplicates": len(all_ids) - len(uniq),
        "lost": n - len(uniq),
        "left_requested": counts[JobState.REQUESTED],
        "left_claimed": counts[JobState.CLAIMED],
        "succeeded_in_store": counts[JobState.SUCCEEDED],
        "busy_errors": sum(o["busy"] for o in outs),
        "conflicts": sum(o["conflicts"] for o in outs),
        "first_error": next((o["first_error"] for o in outs if o.get("first_error")), None),
        "per_worker": per_worker,
        "min_share": per_worker[0] / mean if mean else 0.0,
        "claim_p50_ms": 1000 * baselines.percentile(claim_lat, 0.50),
        "claim_p99_ms": 1000 * baselines.percentile(claim_lat, 0.99),
        "claim_max_ms": 1000 * max(claim_lat, default=0.0),
        "job_p50_ms": 1000 * baselines.percentile(job_lat, 0.50),
        "job_p99_ms": 1000 * baselines.percentile(job_lat, 0.99),
        "job_max_ms": 1000 * max(job_lat, default=0.0),
    }
    if fout is not None:
        out["follower"] = {
            "polls": fout["polls"],
            "events": fout["events"],
            "revisions": fout["revisions"],
            "poll_p50_ms": 1000 * baselines.percentile(fout["lat"], 0.5),
            "poll_max_ms": 1000 * max(fout["lat"], default=0.0),
        }
    return out


def _wal_frames(path: Path, action: Callable[[], object], k: int) -> float:
    """WAL frames per call of ``action`` (k calls after a truncating checkpoint, few enough that no
    automatic checkpoint runs: SQLite's default starts one at 1000 frames)."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        for _ in range(k):
            action()
        _, frames, _ = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    finally:
        conn.close()
    return float(frames) / k


def api_frames(setup: Setup, k: int = 12) -> dict[str, float]:
    """Pages written per commit by one request, one claim and one completion (through the API)."""
    fill_jobs(setup, k)
    agent = AgentIdentity("bench-frames")
    leases: list[JobLease] = []
    with Production.open(setup.path) as production:

        def request() -> None:
            with production.edit() as tx:
                tx.request_job(setup.request())
                tx.commit()

        def claim_one() -> None:
            lease = claim(production, agent)
            assert lease is not None
            leases.append(lease)

        return {
            "frames_per_request": _wal_frames(setup.path, request, k),
            "frames_per_claim": _wal_frames(setup.path, claim_one, k),
            "frames_per_completion": _wal_frames(
                setup.path, lambda: complete(production, leases.pop(0), setup.outputs, agent), k
            ),
        }


class _TimedConnection(sqlite3.Connection):
    """Adds up the time spent inside SQLite by every statement a connection runs."""

    spent = 0.0

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        t0 = time.perf_counter()
        try:
            return super().execute(sql, parameters)
        finally:
            _TimedConnection.spent += time.perf_counter() - t0

    def executemany(self, sql: str, parameters: Any, /) -> sqlite3.Cursor:
        t0 = time.perf_counter()
        try:
            return super().executemany(sql, parameters)
        finally:
            _TimedConnection.spent += time.perf_counter() - t0


def api_sqlite_floor(setup: Setup, n: int) -> dict[str, float]:
    """Microseconds spent inside SQLite (statements, their triggers and index writes, COMMIT's
    page writes) per request and per claim + completion, through the API in this process. With
    no Python at all, an operation could not be faster than this: the engine's floor."""
    real = sqlite3.connect

    def timed(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        return real(*args, **{**kwargs, "factory": _TimedConnection})

    sqlite3.connect = timed  # type: ignore[assignment]
    agent = AgentIdentity("bench-floor")
    try:
        with Production.open(setup.path) as production:
            request = setup.request()
            _TimedConnection.spent = 0.0
            ids = []
            for _ in range(n):
                with production.edit() as tx:
                    ids.append(tx.request_job(request))
                    tx.commit()
            per_request = _TimedConnection.spent / n
            for job in ids:  # (outside SQLite: not counted)
                (setup.outputs / f"{job}.out").write_bytes(b"proxy essence\n")
            _TimedConnection.spent = 0.0
            done = 0
            while (lease := claim(production, agent)) is not None:
                complete(production, lease, setup.outputs, agent)
                done += 1
            per_job = _TimedConnection.spent / max(1, done)
    finally:
        sqlite3.connect = real  # type: ignore[assignment]
    return {"floor_request_us": 1e6 * per_request, "floor_job_us": 1e6 * per_job}


def api_enqueue(setup: Setup, n: int) -> dict[str, float]:
    request = setup.request()
    with Production.open(setup.path) as production:
        t0 = time.perf_counter()
        for _ in range(n):
            with production.edit() as tx:
                tx.request_job(request)
                tx.commit()
        dt = time.perf_counter() - t0
    return {"ops": n / dt, "secs": dt}


# --------------------------------------------------------------------------
# history fixture and read-side measurements
# --------------------------------------------------------------------------


def build_history(setup: Setup, target: int, budget: float) -> dict[str, Any]:
    """``target`` finished jobs through the public API: request in large edits, then cancel 95 %
    and claim+fail 5 % in large edits. Falls back to 200k if the projection exceeds ``budget``."""
    chunk = min(50_000, max(1, target))
    built = 0
    reason = None
    t0 = time.perf_counter()
    request_secs = finish_secs = 0.0
    with Production.open(setup.path) as production:
        request = setup.request()
        while built < target:
            n = min(chunk, target - built)
            t1 = time.perf_counter()
            with production.edit(message="benchmark history: requests") as tx:
                ids = [tx.request_job(request) for _ in range(n)]
                tx.commit()
            t2 = time.perf_counter()
            with production.edit(message="benchmark history: finish") as tx:
                for i, job_id in enumerate(ids):
                    if (built + i) % 20 == 0:
                        tx.fail_job_lease(tx.claim_job_lease(job_id, TOOL, LEASE), "synthetic failure")
                    else:
                        tx.cancel_job(job_id)
                tx.commit()
            request_secs += t2 - t1
            finish_secs += time.perf_counter() - t2
            built += n
            elapsed = time.perf_counter() - t0
            print(f"    history: {built:>9,} jobs in {elapsed:6.1f} s", flush=True)
            if reason is None and built >= 2 * chunk and target > FALLBACK_HISTORY:
                projected = elapsed / built * target
                if projected > budget:
                    reason = (
                        f"building {target:,} through the public API was projected at {projected:.0f} s "
                        f"(> {budget:.0f} s budget) after {built:,} jobs in {elapsed:.0f} s; capped at "
                        f"{max(built, FALLBACK_HISTORY):,}"
                    )
                    print(f"    {reason}", flush=True)
                    target = max(built, FALLBACK_HISTORY)
        head = production.latest_revision()
    events = _count_events(setup.path)
    return {
        "jobs": built,
        "events": events,
        "revisions": head.sequence if head else 0,
        "build_secs": time.perf_counter() - t0,
        "request_secs": request_secs,
        "finish_secs": finish_secs,
        "reduced_reason": reason,
        "file_mb": _file_mb(setup.path),
    }


def _count_events(path: Path) -> int:
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT count(*) FROM revision_events").fetchone()[0])
    finally:
        conn.close()


def _file_mb(path: Path) -> float:
    return sum(Path(f"{path}{s}").stat().st_size for s in ("", "-wal") if Path(f"{path}{s}").exists()) / 1e6


PageSpec = tuple[JobState | None, bool]  # (state filter, newest_first)
PAGE_SPECS: dict[str, PageSpec] = {
    "all_newest": (None, True),
    "all_oldest": (None, False),
    "failed_newest": (JobState.FAILED, True),
    "failed_oldest": (JobState.FAILED, False),
}


def walk_to(
    production: Production, spec: PageSpec, position: int, cursor: str | None, pos: int
) -> tuple[str | None, int]:
    """Page forward (1000 rows at a time) from ``cursor`` at ``pos`` to ``position`` rows in."""
    state, newest = spec
    while pos < position:
        page = production.jobs(
            limit=min(1000, position - pos), cursor=cursor, state=state, newest_first=newest
        )
        pos += len(page.items)
        cursor = page.next_cursor
        if cursor is None:
            break
    return cursor, pos


def page_cursors(production: Production) -> dict[str, Any]:
    """Cursors for the first, middle and last 50-row page of each page spec, found by walking
    the list with 1000-row pages (the cursor does not bind the limit). Also reports walk speed."""
    counts = production.job_counts()
    found: dict[str, Any] = {}
    for name, spec in PAGE_SPECS.items():
        total = counts[spec[0]] if spec[0] else sum(counts.values())
        t0 = time.perf_counter()
        mid, pos = walk_to(production, spec, total // 2, None, 0)
        last, walked = walk_to(production, spec, max(0, total - PAGE), mid, pos)
        dt = time.perf_counter() - t0
        found[name] = {
            "total": total,
            "first": None,
            "mid": mid,
            "last": last,
            "walk_rows": walked,
            "walk_secs": dt,
            "walk_rows_per_s": walked / dt if dt else 0.0,
        }
    return found


def median_us(fn: Callable[[], object], reps: int) -> float:
    return baselines.median_us(fn, reps)


def measure_pages(production: Production, cursors: dict[str, Any], reps: int) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, (state, newest) in PAGE_SPECS.items():
        for depth in ("first", "mid", "last"):
            cursor = cursors[name][depth]

            def page(
                cursor: str | None = cursor, state: JobState | None = state, newest: bool = newest
            ) -> object:
                return production.jobs(limit=PAGE, cursor=cursor, state=state, newest_first=newest)

            page()  # warm the cache
            out[f"page_{name}_{depth}_us"] = median_us(page, reps)
        out[f"page_{name}_last_over_first"] = out[f"page_{name}_last_us"] / out[f"page_{name}_first_us"]
    return out


def measure_counts(production: Production, path: Path, reps: int) -> dict[str, float]:
    out = {
        "job_counts_us": median_us(production.job_counts, reps),
        "job_counts_kind_us": median_us(lambda: production.job_counts(KIND), reps),
    }
    # what recomputing would cost on the same file (raw count(*), read-only connection)
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        out["own_file_count_all_us"] = median_us(
            lambda: conn.execute("SELECT count(*) FROM jobs").fetchone(), 5
        )
        out["own_file_count_failed_us"] = median_us(
            lambda: conn.execute("SELECT count(*) FROM jobs WHERE state = 4").fetchone(), 5
        )
    finally:
        conn.close()
    return out


def measure_feed(production: Production, reps: int) -> dict[str, float]:
    """Idle polls at the head, then a page of exactly 100 one-event revisions."""
    head = production.latest_revision()
    assert head is not None
    seq = head.sequence
    out = {
        "feed_changes_since_idle_us": median_us(lambda: production.changes_since(seq, 1), reps),
        "feed_wait_for_changes_0_us": median_us(lambda: production.wait_for_changes(seq, 0), reps),
    }
    # 100 one-event revisions (asset imports), so a 100-revision page is a 100-event page
    with Production.open(production.path) as writer:
        for i in range(100):
            with writer.edit() as tx:
                tx.create_asset(f"feed-{i}")
                tx.commit()
    head = production.latest_revision()
    assert head is not None
    start = head.sequence - 100
    changes = production.changes_since(start, 100)
    out["feed_page_events"] = float(sum(len(r.events) for r in changes))
    out["feed_page_100_us"] = median_us(lambda: production.changes_since(start, 100), reps)
    out["feed_latest_revision_us"] = median_us(production.latest_revision, reps)  # a one-event head
    return out


def measure_counts_small(setup: Setup, reps: int) -> float:
    with Production.open(setup.path, read_only=True) as production:
        return median_us(production.job_counts, reps)


# --------------------------------------------------------------------------
# one run
# --------------------------------------------------------------------------


@dataclass
class Config:
    runs: int
    enqueue: int
    drain: int
    history: int
    history_budget: float
    reps: int
    only: set[str]
    max_seconds: float


def one_run(cfg: Config, root: Path, fixture: dict[str, Any] | None) -> dict[str, Any]:
    r: dict[str, Any] = {"loadavg_start": os.getloadavg()[0]}
    huey = baselines.huey_available()
    n, m = cfg.enqueue, cfg.drain
    rs = str(root)

    def say(text: str) -> None:
        print(f"  {text}", flush=True)

    if "S1" in cfg.only:
        for lib in ("raw", "raw_proj", *(("huey",) if huey else ())):
            got = baselines.scenario_enqueue(lib, n, rs)
            r[f"{lib}_enqueue"] = got["ops"]
            say(f"{lib:10s} enqueue      {got['ops']:9.0f} ops/s (synchronous={got['sync']})")
        setup = new_production(root, "s1")
        got = api_enqueue(setup, n)
        r["S1_enqueue"] = got["ops"]
        say(f"{'API':10s} enqueue      {got['ops']:9.0f} ops/s  (S1, one edit per request_job)")
        shutil.rmtree(setup.path.parent, ignore_errors=True)

    if "S3" in cfg.only or "S4" in cfg.only or "S7" in cfg.only or "S11" in cfg.only:
        for lib in ("raw", "raw_proj", *(("huey",) if huey else ())):
            got = baselines.drain(lib, m, 1, rs)
            r[f"{lib}_drain_w1"] = got["ops"]
            say(f"{lib:10s} drain w=1    {got['ops']:9.0f} jobs/s")
        setup = new_production(root, "s3")
        fill_jobs(setup, m)
        got = api_drain(setup, m, 1, cfg.max_seconds)
        r["S3"] = got
        r["S3_ops"] = got["ops"]
        say(
            f"{'API':10s} drain w=1    {got['ops']:9.0f} jobs/s  (S3; claim p50 {got['claim_p50_ms']:.2f} ms, "
            f"job p50 {got['job_p50_ms']:.2f} ms, lost {got['lost']}, dup {got['duplicates']})"
        )
        r["job_counts_small_us"] = measure_counts_small(setup, cfg.reps)
        shutil.rmtree(setup.path.parent, ignore_errors=True)
        # diagnostic: pages written per commit by the API, and what a page costs here
        setup = new_production(root, "diag")
        got = api_frames(setup) | baselines.commit_page_cost(rs)
        r["diag"] = got
        per_job = got["frames_per_claim"] + got["frames_per_completion"]
        if "S1_enqueue" in r:
            r["diag_request_page_share"] = (
                got["frames_per_request"] * got["us_per_page"] * r["S1_enqueue"] / 1e6
            )
        r["diag_job_page_share"] = per_job * got["us_per_page"] * r["S3_ops"] / 1e6
        say(
            f"diag: WAL frames per commit: request {got['frames_per_request']:.1f}, claim {got['frames_per_claim']:.1f}"
            f", completion {got['frames_per_completion']:.1f}; a page costs {got['us_per_page']:.1f} us per commit"
            f" -> page writes are ~{100 * r.get('diag_request_page_share', 0):.0f} % of S1 time and "
            f"~{100 * r['diag_job_page_share']:.0f} % of S3 time"
        )
        shutil.rmtree(setup.path.parent, ignore_errors=True)
        # diagnostic: the engine's floor, SQLite's own time per operation (Python costing nothing)
        setup = new_production(root, "floor")
        got = api_sqlite_floor(setup, min(m, 1000))
        r["diag"].update(got)
        r["S1_floor_ops"] = 1e6 / got["floor_request_us"]
        r["S3_floor_ops"] = 1e6 / got["floor_job_us"]
        say(
            f"diag: inside SQLite per request {got['floor_request_us']:.0f} us, per claim + completion "
            f"{got['floor_job_us']:.0f} us -> with no Python at all: S1 {r['S1_floor_ops']:.0f} ops/s, "
            f"S3 {r['S3_floor_ops']:.0f} jobs/s"
        )
        shutil.rmtree(setup.path.parent, ignore_errors=True)

    if "S4" in cfg.only:
        got = baselines.drain("raw_retry", m, 4, rs)
        r["raw_retry_w4"] = got
        r["raw_retry_w4_ops"] = got["ops"]
        for key in ("p99_ms", "max_ms", "min_share"):
            r[f"raw_retry_w4_{key}"] = got[key]
        say(
            f"{'raw_retry':10s} drain w=4    {got['ops']:9.0f} jobs/s  (p99 {got['p99_ms']:.1f} ms, max "
            f"{got['max_ms']:.1f} ms, per worker {got['per_worker']})"
        )
        setup = new_production(root, "s4")
        fill_jobs(setup, m)
        got = api_drain(setup, m, 4, cfg.max_seconds)
        r["S4"] = got
        if "error" not in got:
            for key in (
                "ops",
                "claim_p50_ms",
                "claim_p99_ms",
                "claim_max_ms",
                "min_share",
                "duplicates",
                "lost",
            ):
                r[f"S4_{key}"] = got[key]
            r["S4_lock_errors"] = got["busy_errors"]
            say(
                f"{'API':10s} drain w=4    {got['ops']:9.0f} jobs/s  (S4; claim p50/p99/max {got['claim_p50_ms']:.2f}/"
                f"{got['claim_p99_ms']:.1f}/{got['claim_max_ms']:.1f} ms, per worker {got['per_worker']}, dup "
                f"{got['duplicates']}, lost {got['lost']}, busy {got['busy_errors']}, conflicts {got['conflicts']})"
            )
        shutil.rmtree(setup.path.parent, ignore_errors=True)

    if "S11" in cfg.only:
        # paired: the same drain without and then with the follower, back to back, so that
        # load from other work on the machine hits both halves alike
        for follower in (False, True):
            setup = new_production(root, "s11")
            fill_jobs(setup, m)
            got = api_drain(setup, m, 1, cfg.max_seconds, follower=follower)
            shutil.rmtree(setup.path.parent, ignore_errors=True)
            r["S11_follower" if follower else "S11_base"] = got
            r["S11_follower_ops" if follower else "S11_base_ops"] = got["ops"]
        fol = got.get("follower", {})
        say(
            f"{'API':10s} drain w=1 + follower {got['ops']:9.0f} jobs/s vs {r['S11_base_ops']:.0f} without "
            f"(S11; follower {fol.get('polls')} polls, {fol.get('events')} events, poll p50 "
            f"{fol.get('poll_p50_ms', 0):.2f} ms)"
        )

    if fixture is not None:
        # raw 1e6 anchors (B5), same history size as ours
        d, secs = baselines.build_raw_history(rs, fixture["info"]["jobs"], m)
        r["raw_history_build_secs"] = secs
        got = baselines.raw_history_drain(d, m, rs)
        r.update({f"raw_{k}": v for k, v in got.items()})
        r.update(
            {f"raw_{k}": v for k, v in baselines.raw_pages(d, fixture["info"]["jobs"], m, cfg.reps).items()}
        )
        r.update({f"raw_{k}": v for k, v in baselines.raw_counts(d).items()})
        r.update({f"raw_{k}": v for k, v in baselines.raw_feed(d, cfg.reps).items()})
        shutil.rmtree(d, ignore_errors=True)
        say(
            f"raw history: build {secs:.1f} s, drain w=1 {got['drain_w1_with_history']:.0f} vs "
            f"{got['drain_w1_empty_history']:.0f} jobs/s empty ({got['history_ratio']:.2f}x)"
        )
        setup: Setup = fixture["setup"]
        with Production.open(setup.path, read_only=True) as production:
            if "S9" in cfg.only:
                r.update(measure_pages(production, fixture["cursors"], cfg.reps))
                say(
                    "pages p50 us: "
                    + ", ".join(
                        f"{name} {r[f'page_{name}_first_us']:.0f}/{r[f'page_{name}_mid_us']:.0f}/"
                        f"{r[f'page_{name}_last_us']:.0f}"
                        for name in PAGE_SPECS
                    )
                )
            if "S10" in cfg.only:
                r.update(measure_counts(production, setup.path, cfg.reps))
                say(
                    f"job_counts {r['job_counts_us']:.1f} us (kind {r['job_counts_kind_us']:.1f} us); count(*) on "
                    f"the same file {r['own_file_count_all_us']:.0f} us, raw {r['raw_count_all_us']:.0f} us"
                )
            if "S11" in cfg.only:
                r.update(measure_feed(production, cfg.reps))
                say(
                    f"feed idle: changes_since {r['feed_changes_since_idle_us']:.1f} us, wait_for_changes(0) "
                    f"{r['feed_wait_for_changes_0_us']:.1f} us, latest_revision {r['feed_latest_revision_us']:.1f} us;"
                    f" 100-event page {r['feed_page_100_us']:.0f} us"
                )
        if "S7" in cfg.only:
            fill_jobs(setup, m)
            got = api_drain(setup, m, 1, cfg.max_seconds)
            r["S7"] = got
            r["S7_ops"] = got["ops"]
            say(f"{'API':10s} drain w=1 on history {got['ops']:9.0f} jobs/s  (S7; lost {got['lost']})")
    r["loadavg_end"] = os.getloadavg()[0]
    return r


# --------------------------------------------------------------------------
# summary
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    scenario: str
    figure: str  # label
    key: str  # figure key in a run
    unit: str
    base: str | None  # baseline key in a run
    base_label: str
    target: str
    met: Callable[[float, float | None], bool] | None  # (figure, ratio) -> met


def _ratio_at_least(x: float) -> Callable[[float, float | None], bool]:
    return lambda f, q: q is not None and q >= x


def _ratio_at_most(x: float) -> Callable[[float, float | None], bool]:
    return lambda f, q: q is not None and q <= x


def _value_at_most(x: float) -> Callable[[float, float | None], bool]:
    return lambda f, q: f <= x


def _rows() -> list[Row]:
    # fmt: off
    rows = [
        Row("S1", "enqueue ops/s", "S1_enqueue", "ops/s", "raw_enqueue", "raw enqueue", ">= 0.40x raw",
            _ratio_at_least(0.40)),
        Row("S1", "enqueue ops/s", "S1_enqueue", "ops/s", "huey_enqueue", "huey enqueue", ">= 3x huey",
            _ratio_at_least(3.0)),
        Row("S1", "enqueue ops/s", "S1_enqueue", "ops/s", "raw_proj_enqueue", "raw_proj enqueue", "(info)", None),
        Row("S1", "share of time in page writes", "diag_request_page_share", "", None, "", "(diag)", None),
        Row("S1", "floor, SQLite alone, ops/s", "S1_floor_ops", "ops/s", "raw_proj_enqueue",
            "raw_proj enqueue", "(diag) #11: 0.5x", None),
        Row("S3", "claim+complete jobs/s", "S3_ops", "jobs/s", "raw_drain_w1", "raw drain w=1", ">= 0.35x raw",
            _ratio_at_least(0.35)),
        Row("S3", "claim+complete jobs/s", "S3_ops", "jobs/s", "huey_drain_w1", "huey drain w=1", ">= 3x huey",
            _ratio_at_least(3.0)),
        Row("S3", "claim+complete jobs/s", "S3_ops", "jobs/s", "raw_proj_drain_w1", "raw_proj drain w=1",
            "(info; ~0.7x)", None),
        Row("S3", "share of time in page writes", "diag_job_page_share", "", None, "", "(diag)", None),
        Row("S3", "floor, SQLite alone, jobs/s", "S3_floor_ops", "jobs/s", "raw_proj_drain_w1",
            "raw_proj drain w=1", "(diag) #11: 0.3x", None),
        Row("S3", "floor, SQLite alone, jobs/s", "S3_floor_ops", "jobs/s", "huey_drain_w1",
            "huey drain w=1", "(diag) #11: 1.5x", None),
        Row("S4", "aggregate jobs/s W=4", "S4_ops", "jobs/s", "S3_ops", "own S3 (W=1)", ">= 0.8x own W=1",
            _ratio_at_least(0.8)),
        Row("S4", "aggregate jobs/s W=4", "S4_ops", "jobs/s", "raw_retry_w4_ops", "raw_retry w=4", "(info)", None),
        Row("S4", "claim p50 ms", "S4_claim_p50_ms", "ms", None, "", "(info)", None),
        Row("S4", "claim p99 ms", "S4_claim_p99_ms", "ms", "raw_retry_w4_p99_ms", "raw_retry p99 (claim+ack)",
            "<= 25 ms", _value_at_most(25.0)),
        Row("S4", "claim max ms (max of runs)", "S4_claim_max_ms", "ms", "raw_retry_w4_max_ms",
            "raw_retry max (claim+ack)", "<= 250 ms", _value_at_most(250.0)),
        Row("S4", "min share", "S4_min_share", "", "raw_retry_w4_min_share", "raw_retry min share", ">= 0.5",
            lambda f, q: f >= 0.5),
        Row("S4", "duplicates (max of runs)", "S4_duplicates", "", None, "", "0", _value_at_most(0)),
        Row("S4", "lost jobs (max of runs)", "S4_lost", "", None, "", "0", _value_at_most(0)),
        Row("S4", "busy errors surfaced (max)", "S4_lock_errors", "", None, "", "0", _value_at_most(0)),
        Row("S7", "S3 on history jobs/s", "S7_ops", "jobs/s", "S3_ops", "own S3 (empty)", ">= 0.8x own S3",
            _ratio_at_least(0.8)),
        Row("S7", "raw: history / empty", "raw_history_ratio", "x", None, "", "(info; ref 0.81)", None),
    ]
    for name in PAGE_SPECS:
        raw = "raw_page_keyset_failed" if name.startswith("failed") else "raw_page_keyset"
        for depth, raw_depth in (("first", "p0"), ("mid", "mid"), ("last", "end")):
            rows.append(Row("S9", f"page {name} {depth} us", f"page_{name}_{depth}_us", "us",
                            f"{raw}_{raw_depth}_us", f"raw keyset {raw_depth}", "p50 <= 1000 us",
                            _value_at_most(1000.0)))
        rows.append(Row("S9", f"page {name} last/first", f"page_{name}_last_over_first", "x", None, "", "<= 1.5x",
                        _value_at_most(1.5)))
    rows += [
        Row("S10", "job_counts() us", "job_counts_us", "us", "raw_count_all_us", "raw count(*)",
            "<= 0.1x count(*)", _ratio_at_most(0.1)),
        Row("S10", "job_counts() us", "job_counts_us", "us", "own_file_count_all_us", "count(*) same file",
            "<= 0.1x count(*)", _ratio_at_most(0.1)),
        Row("S10", "job_counts() us", "job_counts_us", "us", "job_counts_small_us", "job_counts, small store",
            "<= 2x (size-free)", _ratio_at_most(2.0)),
        Row("S11", "changes_since(head,1) us", "feed_changes_since_idle_us", "us", "raw_feed_poll_caught_up_us",
            "raw feed poll, idle", "<= 50 us", _value_at_most(50.0)),
        Row("S11", "wait_for_changes(head,0) us", "feed_wait_for_changes_0_us", "us", "raw_feed_data_version_us",
            "raw data_version", "<= 50 us", _value_at_most(50.0)),
        Row("S11", "latest_revision() us", "feed_latest_revision_us", "us", "raw_feed_head_us", "raw max(seq)",
            "(info)", None),
        Row("S11", "latest_revision(), bulk head", "history_latest_revision_us", "us", "raw_feed_head_us",
            "raw max(seq)", "(info)", None),
        Row("S11", "100-event page us", "feed_page_100_us", "us", "raw_feed_poll_100_behind_us",
            "raw 100 behind", "<= 1000 us", _value_at_most(1000.0)),
        Row("S11", "S3 + follower jobs/s", "S11_follower_ops", "jobs/s", "S11_base_ops", "own S3, paired",
            ">= 0.9x own S3", _ratio_at_least(0.9)),
        Row("S11", "S3 + follower jobs/s", "S11_follower_ops", "jobs/s", "S3_ops", "own S3 (early in run)",
            "(info)", None),
    ]
    # fmt: on
    return rows


MAX_KEYS = {"S4_duplicates", "S4_lost", "S4_lock_errors", "S4_claim_max_ms"}


def summarise(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    table = []
    for row in _rows():
        values = [run[row.key] for run in runs if row.key in run]
        if not values:
            continue
        figure = max(values) if row.key in MAX_KEYS else statistics.median(values)
        base = ratio = None
        if row.base is not None:
            pairs = [(run[row.key], run[row.base]) for run in runs if row.key in run and row.base in run]
            if pairs:
                base = statistics.median(b for _, b in pairs)
                ratios = [f / b for f, b in pairs if b]
                ratio = statistics.median(ratios) if ratios else None
        met = None if row.met is None else row.met(figure, ratio)
        table.append(
            {
                "scenario": row.scenario,
                "figure": row.figure,
                "value": figure,
                "unit": row.unit,
                "baseline": row.base_label,
                "baseline_value": base,
                "ratio": ratio,
                "target": row.target,
                "met": met,
                "runs": values,
            }
        )
    return table


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def print_table(table: list[dict[str, Any]]) -> None:
    print(
        f"\n{'scen':4s} {'figure':30s} {'value':>9s} {'baseline':26s} {'base':>9s} {'ratio':>7s} "
        f"{'target':20s} met"
    )
    for t in table:
        met = "-" if t["met"] is None else ("yes" if t["met"] else "NO")
        ratio = "-" if t["ratio"] is None else f"{t['ratio']:.3f}"
        print(
            f"{t['scenario']:4s} {t['figure'][:30]:30s} {_fmt(t['value']):>9s} {t['baseline'][:26]:26s} "
            f"{_fmt(t['baseline_value']):>9s} {ratio:>7s} {t['target'][:20]:20s} {met}"
        )


# --------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------


def _git_head() -> str:
    """The checkout's commit (and whether core/ has uncommitted changes), for the record."""
    import subprocess

    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=here, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "../core"],
            cwd=here,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head}{' (core modified)' if dirty else ''}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="1 run, 2k enqueue, 1k drain, 20k history")
    ap.add_argument("--runs", type=int, default=None)
    ap.add_argument("--enqueue", type=int, default=None, help="S1 jobs (default 10000)")
    ap.add_argument("--drain", type=int, default=None, help="jobs per drain scenario (default 5000)")
    ap.add_argument("--history", type=int, default=None, help="finished jobs in the fixture (default 1e6)")
    ap.add_argument("--history-budget", type=float, default=180.0, help="seconds before falling back to 200k")
    ap.add_argument("--reps", type=int, default=None, help="repetitions per latency figure (default 200)")
    ap.add_argument("--only", default="S1,S3,S4,S7,S9,S10,S11")
    ap.add_argument("--max-seconds", type=float, default=120.0, help="cap per drain")
    ap.add_argument("--dir", default=None, help="parent folder for scratch files (default: system temp)")
    ap.add_argument("--json", default=None, help="write every figure to this file")
    args = ap.parse_args()
    quick = args.quick
    cfg = Config(
        runs=args.runs or (1 if quick else 3),
        enqueue=args.enqueue or (2_000 if quick else 10_000),
        drain=args.drain or (1_000 if quick else 5_000),
        history=args.history or (20_000 if quick else 1_000_000),
        history_budget=args.history_budget,
        reps=args.reps or (50 if quick else 200),
        only={s.strip().upper() for s in args.only.split(",") if s.strip()},
        max_seconds=args.max_seconds,
    )
    env = {
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "cpus": os.cpu_count(),
        "huey": baselines.huey_available(),
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "loadavg": os.getloadavg(),
        "git": _git_head(),
    }
    print(
        f"python {env['python']}  sqlite {env['sqlite']}  cpus {env['cpus']}  runs {cfg.runs}  enqueue "
        f"{cfg.enqueue}  drain {cfg.drain}  history {cfg.history}  loadavg {env['loadavg'][0]:.2f}  git {env['git']}",
        flush=True,
    )
    root = Path(tempfile.mkdtemp(prefix="bench-jobs-", dir=args.dir))
    t_all = time.perf_counter()
    runs: list[dict[str, Any]] = []
    fixture: dict[str, Any] | None = None
    extra: dict[str, Any] = {}
    try:
        extra["raw_reference_frames"] = frames = baselines.raw_reference_frames(str(root))
        print(
            "WAL frames per commit, reference loops: " + ", ".join(f"{k} {v:.1f}" for k, v in frames.items())
        )
        if cfg.only & {"S7", "S9", "S10", "S11"}:
            print(f"building the history fixture ({cfg.history:,} jobs) through the public API", flush=True)
            setup = new_production(root, "history")
            info = build_history(setup, cfg.history, cfg.history_budget)
            print(
                f"  built {info['jobs']:,} finished jobs, {info['events']:,} events in {info['revisions']} revisions, "
                f"{info['file_mb']:.0f} MB, in {info['build_secs']:.1f} s (requests {info['request_secs']:.1f} s,"
                f" cancel/fail {info['finish_secs']:.1f} s)",
                flush=True,
            )
            t0 = time.perf_counter()
            with Production.open(setup.path, read_only=True) as production:
                head = production.latest_revision()
                info["head_events"] = len(head.events) if head else 0
                info["latest_revision_us"] = median_us(production.latest_revision, 3)
                print(
                    f"  latest_revision() with the last bulk edit as head ({info['head_events']:,} events): "
                    f"{info['latest_revision_us'] / 1000:.1f} ms",
                    flush=True,
                )
                cursors = page_cursors(production) if "S9" in cfg.only else {}
            walk = {
                k: {
                    kk: vv
                    for kk, vv in v.items()
                    if kk in ("total", "walk_rows", "walk_secs", "walk_rows_per_s")
                }
                for k, v in cursors.items()
            }
            print(
                f"  page cursors found in {time.perf_counter() - t0:.1f} s: "
                + ", ".join(f"{k} {v['walk_rows_per_s']:,.0f} rows/s" for k, v in walk.items()),
                flush=True,
            )
            fixture = {"setup": setup, "info": info, "cursors": cursors}
            extra["history"] = info
            extra["page_walks"] = walk
        for i in range(cfg.runs):
            t0 = time.perf_counter()
            print(f"run {i + 1}/{cfg.runs}", flush=True)
            runs.append(one_run(cfg, root, fixture))
            runs[-1]["run_secs"] = time.perf_counter() - t0
            print(
                f"  run took {runs[-1]['run_secs']:.1f} s (loadavg {runs[-1]['loadavg_start']:.2f} -> "
                f"{runs[-1]['loadavg_end']:.2f})",
                flush=True,
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    consts = {"history_latest_revision_us": fixture["info"]["latest_revision_us"]} if fixture else {}
    table = summarise([consts | run for run in runs])
    print(
        f"\nmedian of {cfg.runs} run(s); ratio = median of per-run figure / baseline (same run); "
        f"total {time.perf_counter() - t_all:.0f} s"
    )
    print_table(table)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(
                {
                    "env": env,
                    "config": {**cfg.__dict__, "only": sorted(cfg.only)},
                    "extra": extra,
                    "table": table,
                    "runs": runs,
                },
                f,
                indent=1,
                default=str,
            )
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
