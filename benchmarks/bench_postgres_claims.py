"""PostgreSQL claims: S3 and S4 through the public API against raw SKIP LOCKED loops, same server, same run.

One throwaway server (``LocalServer(durable=True)``: default fsync and synchronous commit)
serves every scenario. Nothing is asserted; it reports (the machine is shared: compare ratios).

  S3/S4    the spec's worker protocol (bench_jobs.py's): edit 1 = ``claim_next_job_lease``; then
           ``job()``; edit 2 = ``add_representation`` + ``create_activity`` + metadata copy +
           ``complete_job_lease``. W = 1, 4, 8 spawned processes drain N jobs: jobs/s, claim
           p50/p99, duplicates, lost jobs, CPU per job (client processes + server).
  calls    ours, one call per operation (the reference executor's path, migrations 0013-0014):
           the claim is ``Production.claim_next_job`` (one server call, its own commit, with the
           job and its parameters read in the same round trip), and the completion is
           ``Production.complete_job`` (what the completion edit above records, as one
           ``pp_complete`` call: one round trip, one statement).
  raw      a bare claim/ack loop on one table: ``UPDATE ... WHERE id = (SELECT ... FOR UPDATE
           SKIP LOCKED) RETURNING``, then ``UPDATE ... SET state = 3`` (autocommit), W = 1, 4, 8.
  raw_proj a project-shaped raw loop: the claim as above; the completion inserts an output row,
           an activity row and an event row and marks the job done, in one transaction.
  floor    the schema's floor (``pg_floor.py``): the same job's rows, each written once with its
           final revision number, by one PL/pgSQL call per transaction from a client with no core;
           what no change to the core's Python, statements or round trips can beat.
  trips    round trips per claim, per claim by a registered worker and per completion (W = 1,
           counted on the client).
  lock     how long the revision-numbering lock is held per commit (from taking it in
           ``pp_publish`` to the COMMIT's reply, on the server's clock), p50/p99, during S4.
  wake     commit-to-wake latency of ``wait_for_changes`` in another process (LISTEN/NOTIFY).
           Goal: every wake within 1 s of its commit (the suite's tests check only that a
           notification, not the wait's timeout, ended the wait: tests assert no wall-clock times).
  procrastinate, S1  procrastinate's defer and worker on the same server, and request rates
           (the API, a raw insert, a project-shaped raw insert, procrastinate's defer): see
           ``pg_peers.py``.
  CPU      per job, client (the worker processes' getrusage) and server (the postmaster's
           processes in /proc, once the ended workers' backends are reaped), for every loop.
  rounds   ``--rounds N`` runs every loop N times interleaved (within a round: raw, raw_proj,
           ours, the floor, procrastinate, one after the other, so the machine's load hits all
           alike; before each, the server settles: earlier drains' schemas dropped, a
           checkpoint, no autovacuum running); the report holds medians (and each round's rate), the machine's one-minute
           load average before and after each run, and before and after the whole benchmark,
           and the share of CPU time the hypervisor gave other guests during each drain
           (``steal_pct``, from /proc/stat: this machine's drains run up to 2x slower when it
           is high, the same code one drain apart). ``round_ratios_wN`` holds each round's
           ratios, and ``..._steady`` the rounds in which neither drain lost more than
           ``STEADY_STEAL_PCT`` (2 %); ``--redo-stolen N`` drains again, up to N times, a drain
           that lost more (``redone`` says how often; the last one counts).
  --quick  400 jobs and 200 requests, W = 1, 4, 8 like the full run.
  --baseline-core DIR  another checkout's ``core`` (say the previous commit's, from ``git
           archive``) drains the same way in each round beside ours (``api_before``, its
           processes started with that core first on their path; ``api_calls_before``: its
           executor path, by :func:`calls_worker`), so before and after are measured in one
           run against the same floor and procrastinate; and ``api_calls_child``: this
           checkout's executor path drained the same way as the baseline's (a child process
           with its core first on the path), for the before/after ratio
           (``calls_child_vs_calls_before``): an A/A run (one core on both sides) measured the
           in-process drain 1.01-1.16x the child's at 1 worker and 0.85-0.93x at 4, as large
           a difference as the changes measured, so before and after are drained alike.

Usage:
  .venv/bin/python benchmarks/bench_postgres_claims.py --quick
  .venv/bin/python benchmarks/bench_postgres_claims.py --jobs 1500 --requests 600 --rounds 2 \
      --json benchmarks/results/postgres_claims.json
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg
from psycopg import sql

import pg_floor
import pg_peers
from postproject import (
    ActivityRef,
    ActivitySpec,
    AgentIdentity,
    JobRef,
    JobRequest,
    JobState,
    Production,
    Property,
    RepresentationKind,
    ToolIdentity,
)
from postproject.base.handle import ProductionHandle
from postproject.storage.postgresql.localserver import ADMIN, LocalServer

TOOL = ToolIdentity("bench-worker", "1")
LEASE = timedelta(minutes=5)
PROFILE = Property("https://example.com/transcode", "profile")
KIND = "org.example:bench"


STEADY_STEAL_PCT = 2.0  # a round's pair counts as steady when neither drain lost more CPU to other guests


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def server_cpu(data: Path) -> float:
    """CPU seconds used by the server so far: the postmaster, its live children and the reaped ones."""
    pid = int((data / "postmaster.pid").read_text().split()[0])
    tick = os.sysconf("SC_CLK_TCK")

    def times(p: int, children: bool) -> float:
        fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        used = int(fields[11]) + int(fields[12]) + (int(fields[13]) + int(fields[14]) if children else 0)
        return used / tick

    total = times(pid, True)
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid:
                    total += times(int(entry.name), False)
            except (OSError, IndexError, ValueError):
                continue
    return total


# --- the API ----------------------------------------------------------------------------


def seed(location: str, n: int, outputs: Path) -> None:
    source = outputs / "source.mov"
    source.write_bytes(b"source")
    with Production.create(location) as production:
        with production.edit() as tx:
            asset = tx.create_asset("A")
            original = tx.add_representation(asset, RepresentationKind.ORIGINAL, source)
            tx.commit()
        for start in range(0, n, 5000):
            with production.edit() as tx:
                for _ in range(min(5000, n - start)):
                    job = tx.request_job(JobRequest(KIND, (original,), asset, RepresentationKind.PROXY))
                    tx.add_metadata(JobRef(job), PROFILE, "proxy-720p")
                    (outputs / f"{job}.out").write_bytes(b"x")
                tx.commit()


def api_worker(location: str, outputs: str, wid: int, barrier: Any, results: Any) -> None:
    try:
        production = Production.open(location)
        engine = ProductionHandle.of(production).engine
        agent = AgentIdentity(f"bench-w{wid}")
        ids: list[str] = []
        claim_lat: list[float] = []
        holds: list[float] = []
        server_clock = production.clock
        barrier.wait()
        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        while True:
            t0 = time.perf_counter()
            with production.edit() as tx:
                lease = tx.claim_next_job_lease(TOOL, LEASE, agent=agent)
                tx.commit()
            claim_lat.append(time.perf_counter() - t0)
            holds.append(_held(engine, server_clock))
            if lease is None:
                break
            job = production.job(lease.job_id)
            with production.edit() as tx:
                rep = tx.add_representation(
                    job.output_asset_id, job.output_representation_kind, Path(outputs) / f"{job.id}.out"
                )
                activity = tx.create_activity(
                    ActivitySpec(job.kind, inputs=job.inputs, outputs=(rep,), tool=TOOL, agent=agent)
                )
                for parameter in production.metadata[JobRef(job.id)]:
                    tx.add_metadata(ActivityRef(activity), parameter.property, parameter.value)
                tx.complete_job_lease(lease, rep, activity)
                tx.commit()
            holds.append(_held(engine, server_clock))
            ids.append(str(job.id))
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        done = time.perf_counter()
        production.close()
        cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
        results.put({"ids": ids, "claim_lat": claim_lat, "holds": holds, "done": done, "cpu": cpu})
    except BaseException:
        results.put({"fatal": traceback.format_exc()})


def calls_worker(location: str, outputs: str, wid: int, barrier: Any, results: Any) -> None:
    """:func:`api_worker` by the reference executor's calls: the claim is one call, its own
    commit; the completion is ``Production.complete_job`` (the same edit's rows and events, on
    PostgreSQL one ``pp_complete`` call)."""
    try:
        production = Production.open(location)
        engine = ProductionHandle.of(production).engine
        agent = AgentIdentity(f"bench-w{wid}")
        ids: list[str] = []
        claim_lat: list[float] = []
        holds: list[float] = []
        server_clock = production.clock
        barrier.wait()
        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        while True:
            t0 = time.perf_counter()
            work = production.claim_next_job(TOOL, LEASE, agent=agent)
            claim_lat.append(time.perf_counter() - t0)
            holds.append(_held(engine, server_clock))
            if work is None:
                break
            lease, job = work.lease, work.job
            production.complete_job(lease, Path(outputs) / f"{job.id}.out", tool=TOOL, agent=agent)
            holds.append(_held(engine, server_clock))
            ids.append(str(job.id))
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        done = time.perf_counter()
        production.close()
        cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
        results.put({"ids": ids, "claim_lat": claim_lat, "holds": holds, "done": done, "cpu": cpu})
    except BaseException:
        results.put({"fatal": traceback.format_exc()})


def _held(engine: Any, server_clock: Any) -> float:
    """Seconds from taking the numbering lock (pp_publish) to the COMMIT's reply, of the last commit."""
    locked = getattr(engine, "last_locked_at", None)
    if locked is None:
        return float("nan")
    engine.last_locked_at = None
    from postproject.model.clock import to_micros

    return (to_micros(server_clock.now()) - locked) / 1e6


def api_drain(server: LocalServer, n: int, workers: int, root: Path, worker: Any = None) -> dict[str, Any]:
    """W processes drain N seeded jobs through the API (``worker``: :func:`api_worker`, the spec's
    protocol, or :func:`calls_worker`)."""
    outputs = Path(tempfile.mkdtemp(prefix=f"out{workers}_", dir=root))
    location = server.uri("bench", production=f"s_{workers}_{outputs.name.rsplit('_', 1)[1].lower()}")
    seed(location, n, outputs)
    args = [(location, str(outputs), w) for w in range(workers)]
    outs, t0, cpu_server = pg_peers.run_workers(server, server_cpu, worker or api_worker, args)
    fatal = [o["fatal"] for o in outs if "fatal" in o]
    if fatal:
        print(fatal[0], flush=True)
        return {"error": fatal[0].strip().splitlines()[-1]}
    dt = max(o["done"] for o in outs) - t0
    ids = [i for o in outs for i in o["ids"]]
    with Production.open(location, read_only=True) as production:
        counts = production.job_counts()
    holds = [h for o in outs for h in o["holds"] if h == h]
    claims = [x for o in outs for x in o["claim_lat"]]
    return {
        "jobs_per_s": len(set(ids)) / dt,
        "duplicates": len(ids) - len(set(ids)),
        "lost": n - len(set(ids)),
        "succeeded_in_store": counts[JobState.SUCCEEDED],
        "claim_p50_ms": 1000 * percentile(claims, 0.5),
        "claim_p99_ms": 1000 * percentile(claims, 0.99),
        "lock_hold_p50_ms": 1000 * percentile(holds, 0.5),
        "lock_hold_p99_ms": 1000 * percentile(holds, 0.99),
        "cpu_ms_per_job_client": 1000 * sum(o["cpu"] for o in outs) / max(1, len(ids)),
        "cpu_ms_per_job_server": 1000 * cpu_server / max(1, len(ids)),
    }


class _Served:
    """The benchmark's server as a drain run by another core sees it (its URI and data folder)."""

    def __init__(self, uri: str, data: str) -> None:
        self.base, self.data = uri, Path(data)

    def uri(self, dbname: str = "bench", *, production: str | None = None) -> str:
        assert dbname == "bench"
        return self.base if production is None else f"{self.base}?production={quote(production)}"


def baseline_drain(
    server: LocalServer, n: int, workers: int, root: Path, core: Path, calls: bool = False
) -> dict[str, Any]:
    """:func:`api_drain` run by another checkout's core (``core`` first on the path of a child
    process and of the workers it spawns), on this server; ``calls``: by :func:`calls_worker`."""
    env = os.environ | {
        "PYTHONPATH": os.pathsep.join((str(core), str(Path(__file__).parent))),
        "PP_BENCH_URI": server.uri("bench"),
        "PP_BENCH_DATA": str(server.data),
        "PP_BENCH_ROOT": str(root),
    }
    command = [sys.executable, __file__, "--drain", str(workers), "--jobs", str(n)] + (
        ["--calls"] if calls else []
    )
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=3600, check=False)
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1]}
    got: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return got


OWN_CORE = Path(__file__).resolve().parents[1] / "core"


def settle(server: LocalServer) -> None:
    """Between two drains: drop what the drains before made (their schemas in ``bench``,
    procrastinate's databases), so that no autovacuum of their leftovers runs inside the next
    drain's measurement (the server's CPU counts every server process), then checkpoint and
    wait for running autovacuum workers to end (at most 30 s)."""
    with psycopg.connect(
        host=str(server.socket_dir), port=server.port, user=ADMIN, dbname="bench", autocommit=True
    ) as conn:
        made = conn.execute("SELECT nspname FROM pg_namespace WHERE nspname ~ '^[sf]_[0-9]+_'").fetchall()
        for (name,) in made:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(name)))
    admin = server.admin()
    for (name,) in admin.execute(
        "SELECT datname FROM pg_database WHERE datname LIKE 'procrastinate%'"
    ).fetchall():
        admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))
    admin.execute("CHECKPOINT")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        row = admin.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'"
        ).fetchone()
        if not row or row[0] == 0:
            return
        time.sleep(0.2)


# --- raw baselines ------------------------------------------------------------------------


def raw_worker(conninfo: str, project: bool, barrier: Any, results: Any) -> None:
    try:
        conn = psycopg.connect(conninfo, autocommit=True)
        claim = (
            "UPDATE raw_jobs SET state = 2 WHERE id = (SELECT id FROM raw_jobs WHERE state = 1 "
            "ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id"
        )
        barrier.wait()
        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        done = 0
        claim_lat: list[float] = []
        while True:
            t0 = time.perf_counter()
            row = conn.execute(claim).fetchone()
            claim_lat.append(time.perf_counter() - t0)
            if row is None:
                break
            if project:
                with conn.transaction():
                    conn.execute("INSERT INTO raw_outputs (job, path) VALUES (%s, %s)", (row[0], "x"))
                    conn.execute("INSERT INTO raw_activities (job, kind) VALUES (%s, %s)", (row[0], KIND))
                    conn.execute("INSERT INTO raw_events (job, kind) VALUES (%s, 'job_succeeded')", (row[0],))
                    conn.execute("UPDATE raw_jobs SET state = 3 WHERE id = %s", (row[0],))
            else:
                conn.execute("UPDATE raw_jobs SET state = 3 WHERE id = %s", (row[0],))
            done += 1
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        results.put(
            {
                "done": done,
                "end": time.perf_counter(),
                "claim_lat": claim_lat,
                "cpu": cpu1.ru_utime - cpu0.ru_utime + cpu1.ru_stime - cpu0.ru_stime,
            }
        )
    except BaseException:
        results.put({"fatal": traceback.format_exc()})


def raw_drain(server: LocalServer, n: int, workers: int, project: bool) -> dict[str, Any]:
    conninfo = server.uri("bench")
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(
            "DROP TABLE IF EXISTS raw_jobs, raw_outputs, raw_activities, raw_events; "
            "CREATE TABLE raw_jobs (id bigserial PRIMARY KEY, state int NOT NULL, payload text); "
            "CREATE INDEX raw_ready ON raw_jobs (id) WHERE state = 1; "
            "CREATE TABLE raw_outputs (id bigserial PRIMARY KEY, job bigint, path text); "
            "CREATE TABLE raw_activities (id bigserial PRIMARY KEY, job bigint, kind text); "
            "CREATE TABLE raw_events (id bigserial PRIMARY KEY, job bigint, kind text)"
        )
        conn.execute("INSERT INTO raw_jobs (state, payload) SELECT 1, 'x' FROM generate_series(1, %s)", (n,))
        conn.execute("VACUUM ANALYZE raw_jobs")
    outs, t0, cpu_server = pg_peers.run_workers(
        server, server_cpu, raw_worker, [(conninfo, project)] * workers
    )
    if any("fatal" in o for o in outs):
        return {"error": next(o["fatal"] for o in outs if "fatal" in o)}
    done = sum(o["done"] for o in outs)
    claims = [x for o in outs for x in o["claim_lat"]]
    return {
        "jobs_per_s": done / (max(o["end"] for o in outs) - t0),
        "claim_p50_ms": 1000 * percentile(claims, 0.5),
        "claim_p99_ms": 1000 * percentile(claims, 0.99),
        "cpu_ms_per_job_client": 1000 * sum(o["cpu"] for o in outs) / max(1, done),
        "cpu_ms_per_job_server": 1000 * cpu_server / max(1, done),
    }


# --- round trips and wake-ups -----------------------------------------------------------


def round_trips(server: LocalServer, root: Path) -> dict[str, int]:
    """Round trips of one claim and one completion (the write connection's pipelines and
    statements, and the reads in between), and the statements sent for each (``*_statements``,
    BEGIN and COMMIT included): counted by wrapping the driver's connection."""
    location = server.uri("bench", production="trips")
    outputs = root / "trips"
    outputs.mkdir()
    seed(location, 4, outputs)
    trips = {"n": 0, "statements": 0}
    pipeline, execute = psycopg.Connection.pipeline, psycopg.Cursor.execute

    def counted_pipeline(self: Any) -> Any:
        trips["n"] += 1
        return pipeline(self)

    def counted_execute(self: Any, *args: Any, **kwargs: Any) -> Any:
        trips["statements"] += 1
        if self.connection.pgconn.pipeline_status == psycopg.pq.PipelineStatus.OFF:
            trips["n"] += 1
        return execute(self, *args, **kwargs)

    figures: dict[str, int] = {}
    with Production.open(location) as production:
        job = production.jobs(limit=1).items[0]
        psycopg.Connection.pipeline = counted_pipeline  # type: ignore[method-assign]
        psycopg.Cursor.execute = counted_execute  # type: ignore[method-assign]
        try:
            with production.edit() as tx:
                lease = tx.claim_next_job_lease(TOOL, LEASE)
                tx.commit()
            figures["claim"], trips["n"] = trips["n"], 0
            figures["claim_statements"], trips["statements"] = trips["statements"], 0
            assert lease is not None
            job = production.job(lease.job_id)
            figures["job_read"], trips["n"] = trips["n"], 0
            figures["job_read_statements"], trips["statements"] = trips["statements"], 0
            with production.edit() as tx:
                rep = tx.add_representation(
                    job.output_asset_id, job.output_representation_kind, outputs / f"{job.id}.out"
                )
                activity = tx.create_activity(
                    ActivitySpec(job.kind, inputs=job.inputs, outputs=(rep,), tool=TOOL)
                )
                tx.add_metadata(ActivityRef(activity), PROFILE, "proxy-720p")
                tx.complete_job_lease(lease, rep, activity)
                tx.commit()
            figures["completion"], trips["n"] = trips["n"], 0
            figures["completion_statements"], trips["statements"] = trips["statements"], 0
            with production.edit() as tx:
                session = tx.register_worker("bench", capacity=1)
                tx.commit()
            trips["n"] = trips["statements"] = 0
            with production.edit() as tx:
                tx.claim_next_job_lease(TOOL, LEASE, worker=session)
                tx.commit()
            figures["claim_by_registered_worker"] = trips["n"]
            # on a warm connection (the first claim's count includes the session settings, sent once)
            figures["claim_by_registered_worker_statements"] = trips["statements"]
            # the executor's calls (0013): the claim as one call, the completion's check at commit
            trips["n"] = trips["statements"] = 0
            work = production.claim_next_job(TOOL, LEASE)
            figures["claim_one_call"], trips["n"] = trips["n"], 0
            figures["claim_one_call_statements"], trips["statements"] = trips["statements"], 0
            assert work is not None
            lease, job = work.lease, work.job
            trips["n"] = trips["statements"] = 0
            with production.edit(defer_lease_checks=True) as tx:
                rep = tx.add_representation(
                    job.output_asset_id, job.output_representation_kind, outputs / f"{job.id}.out"
                )
                activity = tx.create_activity(
                    ActivitySpec(job.kind, inputs=job.inputs, outputs=(rep,), tool=TOOL)
                )
                tx.add_metadata(ActivityRef(activity), PROFILE, "proxy-720p")
                tx.complete_job_lease(lease, rep, activity)
                tx.commit()
            figures["completion_deferred"] = trips["n"]
            figures["completion_deferred_statements"] = trips["statements"]
            # the executor's completion since 0014: Production.complete_job, one pp_complete call
            work = production.claim_next_job(TOOL, LEASE)
            assert work is not None
            trips["n"] = trips["statements"] = 0
            production.complete_job(work.lease, outputs / f"{work.job.id}.out", tool=TOOL)
            figures["complete_job"] = trips["n"]
            figures["complete_job_statements"] = trips["statements"]
        finally:
            psycopg.Connection.pipeline = pipeline  # type: ignore[method-assign]
            psycopg.Cursor.execute = execute  # type: ignore[method-assign]
    return figures


def waiter(location: str, ready: Any, results: Any, rounds: int) -> None:
    with Production.open(location, read_only=True) as production:
        after = production.latest_sequence()
        production.wait_for_changes(after, 0)
        ready.set()
        woke = []
        for _ in range(rounds):
            page = production.wait_for_changes(after, 10)
            woke.append(time.time())
            after = page.revisions[-1].sequence if page.revisions else after
        results.put(woke)


WAKE_GOAL_MS = 1000.0  # what tests/postgresql/test_wakeups.py asserted until it went relative


def wake_latency(server: LocalServer, rounds: int) -> dict[str, float]:
    """Commit-to-wake of a waiter in another process (both on this host's wall clock)."""
    location = server.uri("bench", production="wake")
    Production.create(location).close()
    ctx = mp.get_context("spawn")
    ready, results = ctx.Event(), ctx.Queue()
    proc = ctx.Process(target=waiter, args=(location, ready, results, rounds))
    proc.start()
    ready.wait(30)
    committed = []
    with Production.open(location) as production:
        for _ in range(rounds):
            time.sleep(0.05)
            with production.edit() as tx:
                tx.create_asset()
                tx.commit()
            committed.append(time.time())
    woke = results.get(timeout=60)
    proc.join()
    lat = [1000 * (w - c) for w, c in zip(woke, committed, strict=True)]
    return {
        "wake_p50_ms": statistics.median(lat),
        "wake_p95_ms": percentile(lat, 0.95),
        "wake_max_ms": max(lat),
    }


def median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Each numeric figure's median over rounds (an error from any round is reported instead)."""
    errors = [r["error"] for r in runs if "error" in r]
    if errors:
        return {"error": errors[0]}
    keys = [k for k, v in runs[0].items() if all(isinstance(r.get(k), int | float) for r in runs)]
    merged: dict[str, Any] = {k: statistics.median(r[k] for r in runs) for k in keys}
    if len(runs) > 1:
        merged["rounds"] = len(runs)
        merged["jobs_per_s_all"] = [r.get("jobs_per_s", r.get("ops")) for r in runs]
        merged["load1_all"] = [r.get("load1_before") for r in runs]
        merged["steal_pct_all"] = [r.get("steal_pct") for r in runs]
    return merged


def load() -> dict[str, float]:
    """The machine's load averages (1, 5, 15 min) and CPU count: other processes share it."""
    one, five, fifteen = os.getloadavg()
    return {"load1": one, "load5": five, "load15": fifteen, "cpus": os.cpu_count() or 0}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small runs (400 jobs, 200 requests)")
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--requests", type=int, default=None, help="S1 requests per run")
    parser.add_argument("--rounds", type=int, default=1, help="interleaved rounds (medians reported)")
    parser.add_argument("--workers", type=str, default=None, help="comma-separated worker counts")
    parser.add_argument(
        "--skip", type=str, default="", help="comma-separated: s1, procrastinate, wake, floor, api_calls"
    )
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--baseline-core", type=Path, default=None, help="another checkout's core/")
    parser.add_argument(
        "--redo-stolen",
        type=int,
        default=0,
        help=f"drain again, up to N times, a drain that lost more than {STEADY_STEAL_PCT:g} %% of the CPU to other guests",
    )
    parser.add_argument("--drain", type=int, default=None, help=argparse.SUPPRESS)  # baseline_drain's child
    parser.add_argument("--calls", action="store_true", help=argparse.SUPPRESS)  # ... by calls_worker
    args = parser.parse_args()
    if args.drain is not None:
        import postproject

        served = _Served(os.environ["PP_BENCH_URI"], os.environ["PP_BENCH_DATA"])
        worker = calls_worker if args.calls else None
        got = api_drain(served, args.jobs, args.drain, Path(os.environ["PP_BENCH_ROOT"]), worker)  # type: ignore[arg-type]
        mine = {"core": str(Path(postproject.__file__).parent), "steal_pct": pg_peers.take_steal()}
        print(json.dumps(got | mine, default=float))
        return 0
    n = args.jobs or (400 if args.quick else 2000)
    requests = args.requests or (200 if args.quick else 1000)
    counts = tuple(int(w) for w in args.workers.split(",")) if args.workers else (1, 4, 8)
    skip = set(filter(None, args.skip.split(",")))
    report: dict[str, Any] = {"jobs": n, "requests": requests, "rounds": args.rounds, "load_before": load()}
    with tempfile.TemporaryDirectory(prefix="pp-bench-pg-") as tmp, LocalServer(durable=True) as server:
        root = Path(tmp)
        server.create_database("bench")
        report["server_version"] = server.version
        report["trips"] = round_trips(server, root)
        print("round trips:", report["trips"], flush=True)
        if "wake" not in skip:
            report["wake"] = wake_latency(server, 10 if args.quick else 40)
            print("wake:", {k: round(v, 2) for k, v in report["wake"].items()}, flush=True)
            report["wake_goal"] = {
                "goal": f"every wake within {WAKE_GOAL_MS:g} ms",
                "met": report["wake"]["wake_max_ms"] <= WAKE_GOAL_MS,
            }
            print("wake goal:", report["wake_goal"], flush=True)
        if "s1" not in skip:
            s1: dict[str, list[dict[str, Any]]] = {}
            for _ in range(args.rounds):
                for name, run in (
                    ("api", lambda: pg_peers.s1_api(server, requests, root, server_cpu)),
                    ("raw", lambda: pg_peers.s1_raw(server, requests, False, server_cpu)),
                    ("raw_proj", lambda: pg_peers.s1_raw(server, requests, True, server_cpu)),
                    ("procrastinate", lambda: pg_peers.s1_procrastinate(server, requests, server_cpu)),
                ):
                    if name == "procrastinate" and "procrastinate" in skip:
                        continue
                    load1 = os.getloadavg()[0]
                    got = run()
                    got["load1_before"], got["load1_after"] = load1, os.getloadavg()[0]
                    s1.setdefault(name, []).append(got)
            report["s1"] = {name: median_of(runs) for name, runs in s1.items()}
            for name, got in report["s1"].items():
                print(f"S1 {name:13s}: {shown(got)}", flush=True)
        for workers in counts:
            runs: dict[str, list[dict[str, Any]]] = {}
            for _ in range(args.rounds):
                for name, run in (
                    ("raw", lambda w=workers: raw_drain(server, n, w, project=False)),
                    ("raw_proj", lambda w=workers: raw_drain(server, n, w, project=True)),
                    ("api", lambda w=workers: api_drain(server, n, w, root)),
                    ("api_calls", lambda w=workers: api_drain(server, n, w, root, calls_worker)),
                    (
                        "api_calls_child",
                        lambda w=workers: baseline_drain(server, n, w, root, OWN_CORE, calls=True),
                    ),
                    (
                        "api_before",
                        lambda w=workers: baseline_drain(server, n, w, root, args.baseline_core),
                    ),
                    (
                        "api_calls_before",
                        lambda w=workers: baseline_drain(server, n, w, root, args.baseline_core, calls=True),
                    ),
                    ("floor", lambda w=workers: pg_floor.floor_drain(server, n, w, root, seed, server_cpu)),
                    (
                        "procrastinate",
                        lambda w=workers: pg_peers.procrastinate_drain(server, n, w, server_cpu),
                    ),
                ):
                    if name in ("procrastinate", "floor", "api_calls") and name in skip:
                        continue
                    if (
                        name in ("api_before", "api_calls_before", "api_calls_child")
                        and args.baseline_core is None
                    ):
                        continue
                    if name in ("api_calls_before", "api_calls_child") and "api_calls" in skip:
                        continue
                    for attempt in range(args.redo_stolen + 1):
                        settle(server)
                        load1 = os.getloadavg()[0]
                        got = run()
                        got["load1_before"], got["load1_after"] = load1, os.getloadavg()[0]
                        stolen = pg_peers.take_steal()  # (a child's drain reports its own)
                        if got.get("steal_pct") is None and stolen is not None:
                            got["steal_pct"] = stolen
                        got["redone"] = attempt
                        if (got.get("steal_pct") or 0.0) <= STEADY_STEAL_PCT or attempt == args.redo_stolen:
                            break
                        print(
                            f"{name:13s} W={workers}: {got['steal_pct']} % stolen: drained again", flush=True
                        )
                    runs.setdefault(name, []).append(got)
                    print(f"{name:13s} W={workers}: {shown(got)}", flush=True)
            for name, got_runs in runs.items():
                report[f"{name}_w{workers}"] = median_of(got_runs)
    report["load_after"] = load()
    api1 = report.get("api_w1", {}).get("jobs_per_s")
    for workers in counts:
        api = report.get(f"api_w{workers}", {}).get("jobs_per_s")
        proj = report.get(f"raw_proj_w{workers}", {}).get("jobs_per_s")
        peer = report.get(f"procrastinate_w{workers}", {}).get("jobs_per_s")
        if api and proj and api1:
            ratios = {"api_vs_raw_proj": api / proj, "api_vs_own_w1": api / api1}
            if peer:
                ratios["api_vs_procrastinate"] = api / peer
            floor = report.get(f"floor_w{workers}", {}).get("jobs_per_s")
            if floor:
                ratios["api_vs_floor"] = api / floor
                ratios["floor_vs_raw_proj"] = floor / proj
                if peer:
                    ratios["floor_vs_procrastinate"] = floor / peer
            before = report.get(f"api_before_w{workers}", {}).get("jobs_per_s")
            if before:
                ratios["api_vs_before"] = api / before
                if floor:
                    ratios["before_vs_floor"] = before / floor
                if peer:
                    ratios["before_vs_procrastinate"] = before / peer
            calls = report.get(f"api_calls_w{workers}", {}).get("jobs_per_s")
            calls_before = report.get(f"api_calls_before_w{workers}", {}).get("jobs_per_s")
            if calls_before:
                for other, rate in (("floor", floor), ("procrastinate", peer)):
                    if rate:
                        ratios[f"calls_before_vs_{other}"] = calls_before / rate
            if calls:  # the executor's path: one call per operation
                for other, rate in (
                    ("floor", floor),
                    ("procrastinate", peer),
                    ("before", before),
                    ("calls_before", calls_before),
                    ("api", api),
                ):
                    if rate:
                        ratios[f"calls_vs_{other}"] = calls / rate
            child = report.get(f"api_calls_child_w{workers}", {}).get("jobs_per_s")
            if child and calls_before:  # before and after drained alike (children)
                ratios["calls_child_vs_calls_before"] = child / calls_before
            report[f"ratios_w{workers}"] = ratios
            report[f"round_ratios_w{workers}"] = steady = round_ratios(report, workers)
            for key in ("api_calls_vs_floor_steady", "api_calls_vs_procrastinate_steady"):
                if key in steady:
                    shown_rounds = ", ".join(f"{v:.2f}" for v in steady[key]) or "none"
                    print(
                        f"W={workers}: {key} (rounds with <= {STEADY_STEAL_PCT:g} % stolen): {shown_rounds}"
                    )
            print(
                f"W={workers}: API {api:.0f} jobs/s: " + ", ".join(f"{k} {v:.2f}x" for k, v in ratios.items())
            )
    if "s1" in report and "api" in report["s1"]:
        api_s1 = report["s1"]["api"]["ops"]
        report["s1_ratios"] = {
            f"api_vs_{k}": api_s1 / v["ops"] for k, v in report["s1"].items() if k != "api" and v.get("ops")
        }
        print("S1:", {k: round(v, 2) for k, v in report["s1_ratios"].items()})
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, default=float) + "\n")
    return 0


def round_ratios(report: dict[str, Any], workers: int) -> dict[str, list[float]]:
    """Ours (both rows) and the baseline core's against the floor, procrastinate and each other,
    round by round; ``..._steady``: only the rounds in which neither drain of the pair had more
    than ``STEADY_STEAL_PCT`` of the machine's CPU time stolen (a drain at 15 % stolen runs
    about half as fast as the same drain at 0 %: such a round's ratio is the host's, not ours)."""
    names = (
        "api",
        "api_calls",
        "api_calls_child",
        "api_before",
        "api_calls_before",
        "floor",
        "procrastinate",
    )
    rates = {name: report.get(f"{name}_w{workers}", {}).get("jobs_per_s_all") for name in names}
    steal = {name: report.get(f"{name}_w{workers}", {}).get("steal_pct_all") for name in names}
    found: dict[str, list[float]] = {}
    for mine in ("api", "api_calls", "api_calls_child", "api_before", "api_calls_before"):
        for other in ("floor", "procrastinate", "api_before", "api_calls_before", "api"):
            if mine != other and rates[mine] and rates[other]:
                pairs = list(zip(rates[mine], rates[other], strict=True))
                found[f"{mine}_vs_{other}"] = [a / b for a, b in pairs]
                if steal[mine] and steal[other]:
                    found[f"{mine}_vs_{other}_steady"] = [
                        a / b
                        for (a, b), x, y in zip(pairs, steal[mine], steal[other], strict=True)
                        if x is not None and y is not None and max(x, y) <= STEADY_STEAL_PCT
                    ]
    return found


def shown(got: dict[str, Any]) -> dict[str, Any]:
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in got.items() if not isinstance(v, list)}


if __name__ == "__main__":
    sys.exit(main())
