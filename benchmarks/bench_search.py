"""Job search at farm scale: the first page of a store-side search over 1,000,000 jobs.

    .venv/bin/python benchmarks/bench_search.py [--jobs N] [--production PATH] [--json PATH]
    .venv/bin/python benchmarks/bench_search.py --postgresql DIR [--jobs N] [--json PATH]

Builds (timed apart, reported as the build time) a production of N jobs (default 1,000,000)
through the public API in large transactions (50,000 requests per edit): 1,000 output assets
named like ``seq042_shot_04217_comp`` (N/1000 jobs each), four kinds, priorities -2..2, a
typed parameter per job (a ticket ``TCK-054321``, unique, asserted with the request), and
1 % of the jobs claimed by one of 20 agents and failed with one of 8 diagnostic shapes. With
``--production`` an existing file of that shape is reused (built there if missing). With
``--postgresql DIR`` the production is a schema on a local PostgreSQL server kept in DIR
(started there, initialised the first time; the production is built once and reused).

Then, on a freshly opened production, the median time of the first page (100 jobs) of:

- the plain keyset page (``jobs(limit=100, newest_first=True)``): the baseline;
- searches: one shot's asset name (N/1000 matches), a job id tail (1 match), a ticket held
  in one job's parameters (1 match), an agent name
  (~N/2000), a diagnostic phrase (~N/800), a two-word search across documents, a term
  shorter than a trigram, and a kind name that matches every job (the worst case);
- a requested-within-the-last-hour filter, sorts by kind, by priority (descending), by
  finished time (newest finished first) and by worker;
- ``failure_groups()``.

Each search is also timed with the ordered window walk switched off (``*_gather``: every
match gathered through the term indexes, then sorted: the behaviour before the walk),
interleaved rep by rep with the default. Each figure is printed in ms and as a ratio to the
baseline of the same run; the target is every search's first page <= 100 ms. Nothing is
asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from postproject import (
    AgentIdentity,
    AssetId,
    JobRef,
    JobRequest,
    JobState,
    PostProjectError,
    Production,
    Property,
    RepresentationKind,
    ToolIdentity,
)
from postproject.areas import search as job_search
from postproject.storage.postgresql.localserver import LocalServer

KINDS = ("org.example:generate-proxy", "org.example:transcode", "org.example:conform", "org.example:grade")
ASSETS = 1000
AGENTS = 20
BATCH = 50_000
TOOL = ToolIdentity("bench-worker", "1")
TICKET = Property("https://example.com/editorial", "ticket")
GOAL_MS = 100.0  # every search's first page (issue 26 item 6)
DIAGNOSTICS = (
    "unsupported profile '{p}' in /mnt/plates/{a}/{n}.mov",
    "decoder error at frame {n}: invalid NAL unit",
    "timed out after {n} s waiting for /mnt/cache/{a}",
    "ffmpeg exited with status {n}",
    "missing input representation {a}",
    "out of memory allocating {n} bytes",
    "colour space '{p}' not supported by this build",
    "license server unavailable (attempt {n})",
)


def asset_name(index: int) -> str:
    return f"seq{index // 100:03d}_shot_{index:05d}_comp"


def ticket(index: int) -> str:
    return f"TCK-{index:06d}"


def build(path: Path | str, jobs: int) -> dict[str, Any]:
    started = time.perf_counter()
    with Production.create(path) as production:
        with production.edit() as tx:
            assets = [tx.create_asset(asset_name(i)) for i in range(ASSETS)]
            tx.commit()
        made = 0
        while made < jobs:
            count = min(BATCH, jobs - made)
            with production.edit() as tx:
                ids = []
                for n in range(made, made + count):
                    asset: AssetId = assets[n % ASSETS]
                    request = JobRequest(
                        KINDS[n % len(KINDS)], (), asset, RepresentationKind.PROXY, priority=(n % 5) - 2
                    )
                    job = tx.request_job(request)
                    tx.add_metadata(JobRef(job), TICKET, ticket(n))
                    ids.append(job)
                for n, job in zip(range(made, made + count), ids, strict=True):
                    if n % 100 == 7:
                        agent = AgentIdentity(f"render-{(n // 100) % AGENTS:02d}")
                        lease = tx.claim_job_lease(job, TOOL, timedelta(minutes=5), agent=agent)
                        shape = DIAGNOSTICS[(n // 100) % len(DIAGNOSTICS)]
                        profile = ("ProRes 4444 XQ", "DNxHR 444", "ACEScct", "HEVC Main12")[n % 4]
                        text = shape.format(p=profile, a=asset_name(n % ASSETS), n=n)
                        tx.fail_job_lease(lease, text)
                tx.commit()
            made += count
            print(f"  built {made:,} jobs ({time.perf_counter() - started:.0f} s)", flush=True)
    return {"jobs": jobs, "build_s": round(time.perf_counter() - started, 1)}


def median_ms(fn: Callable[[], object], reps: int) -> float:
    fn()  # warm the page cache and the statement cache
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1000


def paired_ms(fn: Callable[[], object], reps: int) -> tuple[float, float]:
    """Median ms of ``fn`` with the window walk on and off, interleaved rep by rep."""
    walk = job_search.WINDOW_PER_ROW
    samples: tuple[list[float], list[float]] = ([], [])
    try:
        for rep in range(reps + 1):
            for mode, per_row in enumerate((walk, 0)):
                job_search.WINDOW_PER_ROW = per_row
                t0 = time.perf_counter()
                fn()
                if rep:  # the first round warms the caches
                    samples[mode].append(time.perf_counter() - t0)
    finally:
        job_search.WINDOW_PER_ROW = walk
    return round(statistics.median(samples[0]) * 1000, 2), round(statistics.median(samples[1]) * 1000, 2)


def measure(path: Path | str, reps: int) -> dict[str, Any]:
    with Production.open(path, read_only=True) as production:
        jobs = sum(production.job_counts().values())
        newest = production.jobs(limit=1, newest_first=True).items[0]
        tail = str(newest.id)[-12:]
        hour_ago = newest.requested_at - timedelta(hours=1)
        cases: dict[str, Callable[[], object]] = {
            "plain_keyset_page": lambda: production.jobs(limit=100, newest_first=True),
            "search_asset_name": lambda: production.jobs(limit=100, search="shot_00421"),
            "search_id_tail": lambda: production.jobs(limit=100, search=tail),
            "search_ticket": lambda: production.jobs(limit=100, search=ticket(jobs // 3)),
            "search_agent": lambda: production.jobs(limit=100, search="render-13"),
            "search_diagnostic": lambda: production.jobs(
                limit=100, search="license server", newest_first=True
            ),
            "search_two_words": lambda: production.jobs(limit=100, search="shot_00042 unsupported"),
            "search_short_term": lambda: production.jobs(limit=100, search="XQ", state=JobState.FAILED),
            "search_every_job": lambda: production.jobs(limit=100, search="transcode"),
            "requested_last_hour": lambda: production.jobs(
                limit=100, requested_after=hour_ago, newest_first=True
            ),
            "sort_kind": lambda: production.jobs(limit=100, sort="kind"),
            "sort_priority_desc": lambda: production.jobs(limit=100, sort="priority", descending=True),
            "sort_finished_desc": lambda: production.jobs(limit=100, sort="finished", descending=True),
            "sort_worker": lambda: production.jobs(limit=100, sort="worker"),
            "failure_groups": lambda: production.failure_groups(),
        }
        counts = {
            "search_asset_name": len(production.jobs(limit=1000, search="shot_00421").items),
            "search_id_tail": len(production.jobs(limit=1000, search=tail).items),
            "search_ticket": len(production.jobs(limit=1000, search=ticket(jobs // 3)).items),
        }
        figures: dict[str, Any] = {}
        for name, fn in cases.items():
            if not name.startswith("search_"):
                figures[name] = round(median_ms(fn, reps), 2)
        for name in [n for n in cases if n.startswith("search_")]:
            figures[name], figures[f"{name}_gather"] = paired_ms(cases[name], reps)
    base = figures["plain_keyset_page"]
    figures["ratios"] = {
        name: round(value / base, 1) for name, value in figures.items() if isinstance(value, float)
    }
    figures["matches"] = counts
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--production", type=Path, help="reuse (or build) the fixture here")
    parser.add_argument("--postgresql", type=Path, help="a local PostgreSQL server's directory (kept)")
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch, contextlib.ExitStack() as stack:
        fixture: dict[str, Any] = {"jobs": args.jobs, "build_s": None}
        target: Path | str
        if args.postgresql is not None:
            server = stack.enter_context(LocalServer(args.postgresql))
            database = "bench_search"
            if (
                not server.admin()
                .execute("SELECT 1 FROM pg_database WHERE datname = %s", (database,))
                .fetchone()
            ):
                server.create_database(database)
            target = server.uri(database, production=f"jobs{args.jobs}")
            try:
                Production.open(target, read_only=True).close()
            except PostProjectError:
                print(f"building {args.jobs:,} jobs on PostgreSQL in {args.postgresql}", flush=True)
                fixture = build(target, args.jobs)
        else:
            target = args.production or Path(scratch) / "search.pproj"
            if not target.exists():
                print(f"building {args.jobs:,} jobs in {target}", flush=True)
                fixture = build(target, args.jobs)
        figures = measure(target, args.reps)
    figures["fixture"] = fixture
    figures["load_average"] = list(os.getloadavg())
    for name, value in figures.items():
        if isinstance(value, float):
            goal = ""
            if name.startswith("search_") and not name.endswith("_gather"):
                goal = f"   goal <= {GOAL_MS:.0f} ms: {'met' if value <= GOAL_MS else 'MISSED'}"
            print(f"{name:24} {value:9.2f} ms   {figures['ratios'][name]:7.1f}x plain page{goal}")
    figures["goal_ms"] = GOAL_MS
    print(f"load average: {' '.join(f'{v:.2f}' for v in figures['load_average'])}")
    print(f"fixture: {fixture}; matches: {figures['matches']}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
