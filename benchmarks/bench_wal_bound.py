"""The SQLite WAL under sustained writes with polling readers attached (issue 28 item 5).

A writer process commits as fast as it can (each edit: an asset and a job request); reader
processes poll like the monitor and the library's followers (``wait_for_changes`` after the
newest revision seen, then a page of jobs and the counts, every 50 ms; with ``--hold``, a
slow poll holding its read transaction that long, as on a big production). It reports the WAL's
peak size (sampled every 20 ms), the writer's commits per second, and its commit latency
(median, p99, max). Goal: a peak of at most 256 MiB, commit p99 at most 50 ms.

Nothing is asserted; it reports (the 2-core VM is shared: read the load average with it).

Measured (45 s, 3 readers each holding a 20 ms read transaction back to back, load 2-3.5):
before the bound, the writer's truncating checkpoint ran with a zero busy timeout and lost to
every reader: WAL peak 4568 MiB, 1403 commits/s, commit p99 8.9 ms. With the bound (checked
every 64 commits, a truncating checkpoint past 64 MiB waiting up to 40 ms for readers): WAL
peak 79 MiB, 1870 commits/s, p99 3.8 ms, max 97 ms (benchmarks/results/wal_bound.json). 20 s, 2
readers holding 5 ms: 270 MiB -> 74 MiB, p99 10.3 -> 2.0 ms. The monitor's and the library's
readers already end their read transaction with each poll (one statement, or ``snapshot()``).

Usage:
  .venv/bin/python benchmarks/bench_wal_bound.py --seconds 30 --readers 2
  .venv/bin/python benchmarks/bench_wal_bound.py --json benchmarks/results/wal_bound.json
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from postproject import JobRequest, Production, RepresentationKind

KIND = "org.example:bench"


def writer(path: str, seconds: float, out: Any) -> None:
    latencies: list[float] = []
    with Production.open(path) as production:
        with production.edit() as tx:
            asset = tx.create_asset("source")
            source = Path(path).parent / "source.mov"
            source.write_bytes(b"x")
            original = tx.add_representation(asset, RepresentationKind.ORIGINAL, source)
            tx.commit()
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            started = time.perf_counter()
            with production.edit() as tx:
                made = tx.create_asset(None)
                tx.request_job(JobRequest(KIND, (original,), made, RepresentationKind.PROXY))
                tx.commit()
            latencies.append(time.perf_counter() - started)
    out.put(latencies)


def reader(path: str, seconds: float, stop: Any, pause: float, hold: float) -> None:
    if hold:  # a slow poll (a big production): one read transaction held ``hold`` seconds
        conn = sqlite3.connect(path, isolation_level=None)
        end = time.monotonic() + seconds
        while time.monotonic() < end and not stop.is_set():
            conn.execute("BEGIN")
            conn.execute("SELECT count(*) FROM jobs").fetchone()
            time.sleep(hold)
            conn.execute("COMMIT")
            time.sleep(pause)
        conn.close()
        return
    with Production.open(path, read_only=True) as production:
        head = 0
        end = time.monotonic() + seconds
        while time.monotonic() < end and not stop.is_set():
            changes = production.wait_for_changes(head, 0.05)
            head = max(head, changes.through_sequence)
            production.jobs(limit=100)
            production.job_counts()
            time.sleep(pause)


def run(seconds: float, readers: int, pause: float = 0.05, hold: float = 0.0) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="wal-bound-"))
    path = folder / "wal.pproj"
    Production.create(path).close()
    ctx = multiprocessing.get_context("spawn")
    out, stop = ctx.Queue(), ctx.Event()
    procs = [
        ctx.Process(target=reader, args=(str(path), seconds + 5, stop, pause, hold)) for _ in range(readers)
    ]
    for p in procs:
        p.start()
    time.sleep(1.0)  # readers attached
    w = ctx.Process(target=writer, args=(str(path), seconds, out))
    w.start()
    wal = Path(f"{path}-wal")
    peak = 0
    while w.is_alive():
        try:
            peak = max(peak, wal.stat().st_size)
        except OSError:
            pass
        time.sleep(0.02)
        if not out.empty():
            break
    latencies = out.get()
    w.join()
    stop.set()
    for p in procs:
        p.join()
    ordered = sorted(latencies)
    return {
        "seconds": seconds,
        "readers": readers,
        "reader_pause_s": pause,
        "reader_hold_s": hold,
        "commits": len(latencies),
        "commits_per_second": round(len(latencies) / seconds, 1),
        "wal_peak_mib": round(peak / 2**20, 1),
        "commit_median_ms": round(statistics.median(ordered) * 1000, 2),
        "commit_p99_ms": round(ordered[int(len(ordered) * 0.99)] * 1000, 2),
        "commit_max_ms": round(ordered[-1] * 1000, 2),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--readers", type=int, default=1)
    parser.add_argument("--pause", type=float, default=0.05, help="seconds between a reader's polls")
    parser.add_argument("--hold", type=float, default=0.0, help="seconds a reader holds each poll's snapshot")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result = run(args.seconds, args.readers, args.pause, args.hold)
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
