"""One worker's cost per job against the queue's length: ours, the floor and procrastinate.

bench_postgres_claims.py drains N jobs (``--jobs``, default 2000) and compares the three at
that N. procrastinate's claim gets slower as its table grows (a finished job stays in
``procrastinate_jobs``; measured here: its server CPU per job near 1 ms up to 1,000 jobs,
then 1.53 and 2.33 ms over 2,000 and 4,000, with or without autovacuum; its fetch query 154
us a job over 1,000 jobs, 837 us over 2,000), while ours and the floor's stay flat, so a
ratio against procrastinate is a ratio at one N. This runs
the three one-worker drains of bench_postgres_claims.py (ours: the executor's path,
``calls_worker``; the floor; procrastinate) at several N, interleaved (every N in each
round, each drain after the server settles), and reports per N the medians over the rounds:
jobs/s, client and server CPU per job, and ours against the floor and procrastinate.
Nothing is asserted.

Usage:
  .venv/bin/python benchmarks/bench_queue_depth.py --counts 1000,2000,4000 --rounds 2 \
      --json benchmarks/results/queue_depth.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from pathlib import Path
from typing import Any

import bench_postgres_claims as claims
import pg_floor
import pg_peers
from postproject.storage.postgresql.localserver import LocalServer

FIGURES = ("jobs_per_s", "cpu_ms_per_job_client", "cpu_ms_per_job_server")


def drains(server: LocalServer, n: int, root: Path) -> dict[str, dict[str, Any]]:
    """Ours, the floor and procrastinate, one worker each, over ``n`` jobs (the server settled first)."""
    got: dict[str, dict[str, Any]] = {}
    for name, run in (
        ("ours", lambda: claims.api_drain(server, n, 1, root, claims.calls_worker)),
        ("floor", lambda: pg_floor.floor_drain(server, n, 1, root, claims.seed, claims.server_cpu)),
        ("procrastinate", lambda: pg_peers.procrastinate_drain(server, n, 1, claims.server_cpu)),
    ):
        claims.settle(server)
        got[name] = run()
        got[name]["steal_pct"] = pg_peers.take_steal()
    return got


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default="1000,2000,4000", help="comma-separated job counts")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds (medians reported)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    runs: dict[int, list[dict[str, dict[str, Any]]]] = {n: [] for n in counts}
    report: dict[str, Any] = {"counts": counts, "rounds": args.rounds, "load_before": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory(prefix="pp-bench-depth-") as tmp, LocalServer(durable=True) as server:
        server.create_database("bench")
        report["server_version"] = server.version
        for _ in range(args.rounds):
            for n in counts:
                got = drains(server, n, Path(tmp))
                runs[n].append(got)
                print(
                    f"N={n}: "
                    + "; ".join(
                        f"{name} {g['jobs_per_s']:.0f} jobs/s, CPU {g['cpu_ms_per_job_client']:.2f} + "
                        f"{g['cpu_ms_per_job_server']:.2f} ms"
                        for name, g in got.items()
                    ),
                    flush=True,
                )
    report["load_after"] = os.getloadavg()[0]
    for n in counts:
        medians = {
            name: {f: statistics.median(r[name][f] for r in runs[n]) for f in FIGURES}
            for name in ("ours", "floor", "procrastinate")
        }
        per_round = {
            other: [r["ours"]["jobs_per_s"] / r[other]["jobs_per_s"] for r in runs[n]]
            for other in ("floor", "procrastinate")
        }
        report[f"n{n}"] = medians | {
            "ours_vs_floor": statistics.median(per_round["floor"]),
            "ours_vs_procrastinate": statistics.median(per_round["procrastinate"]),
            "rounds_ours_vs_floor": per_round["floor"],
            "rounds_ours_vs_procrastinate": per_round["procrastinate"],
            "steal_pct": [g.get("steal_pct") for r in runs[n] for g in r.values()],
        }
        print(
            f"N={n}: ours vs the floor {report[f'n{n}']['ours_vs_floor']:.2f}x, "
            f"vs procrastinate {report[f'n{n}']['ours_vs_procrastinate']:.2f}x; server CPU per job: "
            + ", ".join(f"{name} {m['cpu_ms_per_job_server']:.2f} ms" for name, m in medians.items())
        )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, default=float) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
