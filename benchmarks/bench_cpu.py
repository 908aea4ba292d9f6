"""CPU time per job operation, ours and the raw SQLite loops, in one process (S1 and S3 shapes).

On a loaded machine, throughput ratios move with whatever else runs (bench_jobs.py saw its
baselines move 3x between runs). CPU time per operation (``time.process_time``: this
process's user + system time, page writes to the WAL included) moves much less, so this
reports both, per round, for one worker:

  request   one edit + request_job + commit              vs raw / raw_proj enqueue (put)
  job       S3's worker protocol (claim edit, job(),       vs raw / raw_proj claim + ack
            completion edit with output, activity, metadata copy and complete)

``--before TREE`` runs a second source tree (with ``core/`` and ``benchmarks/``) in
alternating rounds, so load hits both alike; the medians of each side are printed and, with
``--json``, written with every round.

    python benchmarks/bench_cpu.py --rounds 5 --before /tmp/before --json benchmarks/results/cpu.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def timed(action: Any, n: int) -> tuple[float, float]:
    """(CPU µs, wall µs) per call of ``action`` over ``n`` calls."""
    c0, t0 = time.process_time(), time.perf_counter()
    for _ in range(n):
        action()
    return 1e6 * (time.process_time() - c0) / n, 1e6 * (time.perf_counter() - t0) / n


def raw_round(baselines: Any, lib: str, d: str, n: int) -> dict[str, float]:
    """A raw loop's put (enqueue) and one (claim + ack) over ``n`` jobs."""
    adapter = baselines.make_adapter(lib)
    adapter.init(d)
    h = adapter.open(d)
    count = iter(range(10**9))
    out: dict[str, float] = {}
    out[f"{lib}_put_cpu_us"], out[f"{lib}_put_wall_us"] = timed(lambda: adapter.put(h, next(count)), n)
    out[f"{lib}_job_cpu_us"], out[f"{lib}_job_wall_us"] = timed(lambda: adapter.one(h), n)
    adapter.close(h)
    return out


def one_round(n: int) -> dict[str, float]:
    """Every figure of one round, measured in this process."""
    import baselines
    import bench_jobs as bj
    from postproject import AgentIdentity, Production

    out: dict[str, float] = {}
    root = Path(tempfile.mkdtemp(prefix="bench-cpu-"))
    try:
        for lib in ("raw", "raw_proj"):
            out |= raw_round(baselines, lib, tempfile.mkdtemp(prefix=lib, dir=root), n)
        setup = bj.new_production(root, "cpu")
        bj.fill_jobs(setup, n)
        agent = AgentIdentity("bench-cpu")
        with Production.open(setup.path) as production:
            request = setup.request()

            def request_one() -> None:
                with production.edit() as tx:
                    tx.request_job(request)
                    tx.commit()

            def job_one() -> None:
                lease = bj.claim(production, agent)
                assert lease is not None
                bj.complete(production, lease, setup.outputs, agent)

            out["job_cpu_us"], out["job_wall_us"] = timed(job_one, n)
            out["request_cpu_us"], out["request_wall_us"] = timed(request_one, n)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    for lib in ("raw", "raw_proj"):
        for what, ours in (("put", "request"), ("job", "job")):
            for unit in ("cpu", "wall"):
                out[f"{ours}_vs_{lib}_{unit}"] = out[f"{lib}_{what}_{unit}_us"] / out[f"{ours}_{unit}_us"]
    out["loadavg"] = os.getloadavg()[0]
    return out


def run_side(tree: Path | None, n: int) -> dict[str, float]:
    env = dict(os.environ)
    script = Path(__file__)
    if tree is not None:
        env["PYTHONPATH"] = str(tree / "core")
    done = subprocess.run(
        [
            sys.executable,
            str(script),
            "--one",
            str(n),
            *(["--bench-dir", str(tree / "benchmarks")] if tree else []),
        ],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


SHOWN = (
    "request_cpu_us",
    "request_vs_raw_proj_cpu",
    "request_vs_raw_proj_wall",
    "job_cpu_us",
    "job_vs_raw_proj_cpu",
    "job_vs_raw_proj_wall",
    "job_vs_raw_cpu",
    "loadavg",
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("-n", type=int, default=1000, help="operations per figure and round")
    ap.add_argument("--before", type=Path, default=None, help="another source tree, run in alternate rounds")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--bench-dir", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one is not None:  # a child: one round, figures as JSON on the last line
        sys.path.insert(0, str(args.bench_dir or HERE))
        print(json.dumps(one_round(args.one)))
        return
    sides: dict[str, list[dict[str, float]]] = {"after": []} | ({"before": []} if args.before else {})
    for i in range(args.rounds):
        for side in sides:
            got = run_side(args.before if side == "before" else None, args.n)
            sides[side].append(got)
            print(f"round {i + 1} {side:6s} " + ", ".join(f"{k} {got[k]:.3g}" for k in SHOWN), flush=True)
    medians = {
        side: {k: statistics.median(r[k] for r in runs) for k in runs[0]} for side, runs in sides.items()
    }
    print(
        f"\n{'median of ' + str(args.rounds) + ' rounds':28s} " + " ".join(f"{side:>10s}" for side in sides)
    )
    for key in SHOWN:
        print(f"{key:28s} " + " ".join(f"{medians[side][key]:10.3f}" for side in sides))
    if args.json is not None:
        args.json.write_text(json.dumps({"n": args.n, "medians": medians, "rounds": sides}, indent=1))
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
