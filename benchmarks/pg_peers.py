"""The PostgreSQL benchmark's peer and request-rate parts (used by bench_postgres_claims.py).

procrastinate  procrastinate's own ``defer`` and worker on the same server, in a database of
               its own (its schema applied there): a no-op task, one worker process per W
               with concurrency 1 and ``wait=False`` (it stops once the queue is empty).
S1             request rate, one client, one transaction per request: the API's
               ``edit()`` + ``request_job`` + ``commit``; a raw ``INSERT`` (autocommit); a
               project-shaped raw insert (the job, its revision and its event in one
               transaction); procrastinate's synchronous ``defer``.
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import os
import resource
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import procrastinate
import psycopg

from postproject import JobRequest, Production, RepresentationKind
from postproject.storage.postgresql.localserver import LocalServer

KIND = "org.example:bench"


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def settled_cpu(server: LocalServer, server_cpu: Callable[[Path], float]) -> float:
    """The server's CPU seconds once the backends of processes that just ended are reaped (an
    exiting backend is briefly neither listed nor counted in the postmaster's children's time)."""
    time.sleep(0.3)
    return server_cpu(server.data)


# The share of the machine's CPU time the hypervisor gave to others (``steal`` in /proc/stat)
# during the last :func:`run_workers`' timed span, or None (no such span, or no /proc/stat).
_last_steal: float | None = None


def _ticks() -> list[int] | None:
    try:
        with open("/proc/stat") as stat:
            return [int(x) for x in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None


def take_steal() -> float | None:
    """The percentage of CPU time stolen during the last drain (then forgotten): a drain's
    figures from a host busy with other guests are not this code's (measured here: 0 % stolen,
    320 jobs/s; 15 %, 171 jobs/s, the same code one drain apart)."""
    global _last_steal
    taken, _last_steal = _last_steal, None
    return None if taken is None else round(100 * taken, 2)


def run_workers(
    server: LocalServer,
    server_cpu: Callable[[Path], float],
    target: Callable[..., None],
    args: list[tuple[Any, ...]],
) -> tuple[list[dict[str, Any]], float, float]:
    """Spawn one process per ``args`` entry running ``target(*entry, barrier, results)``, start
    the clock when all wait at the barrier, and collect one result dict from each: (results,
    the start on ``time.perf_counter``, the server's CPU seconds spent meanwhile)."""
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(len(args) + 1), ctx.Queue()
    procs = [ctx.Process(target=target, args=(*entry, barrier, results)) for entry in args]
    for p in procs:
        p.start()
    barrier.wait()
    cpu0, t0, ticks0 = server_cpu(server.data), time.perf_counter(), _ticks()
    outs = [results.get() for _ in procs]
    ticks1 = _ticks()
    if ticks0 and ticks1 and len(ticks0) > 7:
        spent = [b - a for a, b in zip(ticks0, ticks1, strict=True)]
        global _last_steal
        _last_steal = spent[7] / max(1, sum(spent))
    for p in procs:
        p.join()
    return outs, t0, settled_cpu(server, server_cpu) - cpu0


def make_app(conninfo: str) -> tuple[procrastinate.App, Any]:
    """A procrastinate app with one no-op task (queue ``bench``)."""
    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=conninfo))

    @app.task(name="bench_noop", queue="bench")
    def noop(i: int) -> None:
        return None

    return app, noop


def procrastinate_database(server: LocalServer, name: str) -> str:
    """A fresh database with procrastinate's schema; its conninfo."""
    server.drop_database(name)
    conninfo = server.create_database(name)
    app, _ = make_app(conninfo)
    with app.open():
        app.schema_manager.apply_schema()
    return conninfo


def defer_jobs(conninfo: str, n: int) -> dict[str, float]:
    """Defer ``n`` no-op jobs one by one (each its own transaction); rate and client CPU."""
    app, noop = make_app(conninfo)
    with app.open():
        noop.defer(i=-1)  # connect and warm up outside the timing
        cpu0, t0 = _cpu(), time.perf_counter()
        for i in range(n):
            noop.defer(i=i)
        dt, cpu = time.perf_counter() - t0, _cpu() - cpu0
    return {"ops": n / dt, "cpu_ms_client": 1000 * cpu / n}


def procrastinate_worker(conninfo: str, barrier: Any, results: Any) -> None:
    """One worker process: its app (pool and first connection) is opened before the barrier,
    as ours opens its production before it, so the timing holds the drain alone (its
    ``run_worker`` would open the app inside the timing: at 400 jobs that start-up was a
    fifth of the drain)."""
    try:
        app, _ = make_app(conninfo)

        async def run() -> None:
            async with app.open_async():
                await app.check_connection_async()  # the pool's first connection, made now
                await asyncio.get_running_loop().run_in_executor(None, barrier.wait)
                cpu0 = _cpu()
                await app.run_worker_async(
                    queues=["bench"], wait=False, concurrency=1, install_signal_handlers=False
                )
                results.put({"end": time.perf_counter(), "cpu": _cpu() - cpu0})

        asyncio.run(run())
    except BaseException:
        results.put({"fatal": traceback.format_exc()})


def procrastinate_drain(
    server: LocalServer, n: int, workers: int, server_cpu: Callable[[Path], float]
) -> dict[str, Any]:
    conninfo = procrastinate_database(server, f"procrastinate_w{workers}")
    defer_jobs(conninfo, n)
    outs, t0, cpu_server = run_workers(server, server_cpu, procrastinate_worker, [(conninfo,)] * workers)
    if any("fatal" in o for o in outs):
        return {"error": next(o["fatal"] for o in outs if "fatal" in o).strip().splitlines()[-1]}
    with psycopg.connect(conninfo) as conn:
        row = conn.execute(
            "SELECT count(*) FILTER (WHERE status = 'succeeded'), count(*) FROM procrastinate_jobs WHERE args->>'i' <> '-1'"
        ).fetchone()
    done, total = (int(row[0]), int(row[1])) if row else (0, 0)
    server.drop_database(f"procrastinate_w{workers}")
    return {
        "jobs_per_s": done / (max(o["end"] for o in outs) - t0),
        "succeeded": done,
        "lost": total - done,
        "cpu_ms_per_job_client": 1000 * sum(o["cpu"] for o in outs) / max(1, done),
        "cpu_ms_per_job_server": 1000 * cpu_server / max(1, done),
    }


# --- S1: request rate ---------------------------------------------------------------------


def _timed(
    server: LocalServer, n: int, server_cpu: Callable[[Path], float], run: Callable[[], None]
) -> dict[str, float]:
    cpu0, s0, t0 = _cpu(), server_cpu(server.data), time.perf_counter()
    for _ in range(n):
        run()
    dt = time.perf_counter() - t0
    return {
        "ops": n / dt,
        "cpu_ms_client": 1000 * (_cpu() - cpu0) / n,
        "cpu_ms_server": 1000 * (server_cpu(server.data) - s0) / n,
    }


def s1_api(server: LocalServer, n: int, root: Path, server_cpu: Callable[[Path], float]) -> dict[str, float]:
    location = server.uri("bench", production=f"s1_{os.getpid()}_{int(time.time() * 1000)}")
    source = root / "s1_source.mov"
    source.write_bytes(b"source")
    with Production.create(location) as production:
        with production.edit() as tx:
            asset = tx.create_asset("A")
            original = tx.add_representation(asset, RepresentationKind.ORIGINAL, source)
            tx.commit()
        request = JobRequest(KIND, (original,), asset, RepresentationKind.PROXY)

        def one() -> None:
            with production.edit() as tx:
                tx.request_job(request)
                tx.commit()

        one()  # warm up (connections, prepared statements) outside the timing
        return _timed(server, n, server_cpu, one)


def s1_raw(
    server: LocalServer, n: int, project: bool, server_cpu: Callable[[Path], float]
) -> dict[str, float]:
    with psycopg.connect(server.uri("bench"), autocommit=True) as conn:
        conn.execute(
            "DROP TABLE IF EXISTS s1_jobs, s1_revisions, s1_events; "
            "CREATE TABLE s1_jobs (id bigserial PRIMARY KEY, state int NOT NULL, kind text, inputs bytea); "
            "CREATE INDEX s1_ready ON s1_jobs (id) WHERE state = 1; "
            "CREATE TABLE s1_revisions (sequence bigserial PRIMARY KEY, committed_at bigint); "
            "CREATE TABLE s1_events (id bigserial PRIMARY KEY, sequence bigint, kind text, job bigint)"
        )

        def raw() -> None:
            conn.execute("INSERT INTO s1_jobs (state, kind, inputs) VALUES (1, %s, %s)", (KIND, b"x" * 16))

        def shaped() -> None:
            with conn.transaction():
                job = conn.execute(
                    "INSERT INTO s1_jobs (state, kind, inputs) VALUES (1, %s, %s) RETURNING id",
                    (KIND, b"x" * 16),
                ).fetchone()
                rev = conn.execute(
                    "INSERT INTO s1_revisions (committed_at) VALUES (%s) RETURNING sequence",
                    (time.time_ns() // 1000,),
                ).fetchone()
                assert job is not None
                assert rev is not None
                conn.execute(
                    "INSERT INTO s1_events (sequence, kind, job) VALUES (%s, 'job_requested', %s)",
                    (rev[0], job[0]),
                )

        return _timed(server, n, server_cpu, shaped if project else raw)


def s1_procrastinate(server: LocalServer, n: int, server_cpu: Callable[[Path], float]) -> dict[str, float]:
    conninfo = procrastinate_database(server, "procrastinate_s1")
    s0 = server_cpu(server.data)
    got = defer_jobs(conninfo, n)
    got["cpu_ms_server"] = 1000 * (server_cpu(server.data) - s0) / n  # (includes the warm-up defer)
    server.drop_database("procrastinate_s1")
    return got
