"""Before/after of the job path: ``bench_jobs.py`` on two source trees, runs interleaved.

Each run of ``bench_jobs.py`` measures its own baselines (raw SQLite, raw_proj, huey), so a
ratio is always against the baselines of its own run; the two trees alternate (before,
after, before, after, ...) so that load from other work on the machine hits both alike.
Reports the median of the per-run ratios of each side, and the statements per operation of
each tree (``bench_statements.py``).

    git archive <commit> core benchmarks | tar -x -C /tmp/before
    python benchmarks/bench_compare.py --before /tmp/before --runs 3 --json benchmarks/results/x.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# (name, figure, baseline) of each ratio reported; baseline None: the value itself
RATIOS: list[tuple[str, str, str | None]] = [
    ("S1 / raw_proj enqueue", "S1_enqueue", "raw_proj_enqueue"),
    ("S1 / raw enqueue", "S1_enqueue", "raw_enqueue"),
    ("S1 / huey enqueue", "S1_enqueue", "huey_enqueue"),
    ("S3 / raw_proj drain", "S3_ops", "raw_proj_drain_w1"),
    ("S3 / raw drain", "S3_ops", "raw_drain_w1"),
    ("S3 / huey drain", "S3_ops", "huey_drain_w1"),
    ("S4 W=4 / own W=1", "S4_ops", "S3_ops"),
    ("S4 claim p99 ms", "S4_claim_p99_ms", None),
    ("S4 min share", "S4_min_share", None),
    ("S4 duplicates + lost + busy", "S4_bad", None),
    ("WAL frames per request", "frames_per_request", None),
    ("WAL frames per claim", "frames_per_claim", None),
    ("WAL frames per completion", "frames_per_completion", None),
    ("loadavg at start", "loadavg_start", None),
]


def run_tree(tree: Path | None, args: argparse.Namespace, out: Path) -> dict[str, Any]:
    """One ``bench_jobs.py`` run on ``tree`` (None: this checkout); its single run's figures."""
    env = dict(os.environ)
    bench = HERE
    if tree is not None:
        env["PYTHONPATH"] = str(tree / "core")
        bench = tree / "benchmarks"
    command = [sys.executable, str(bench / "bench_jobs.py"), "--quick", "--runs", "1"]
    command += ["--only", args.only, "--enqueue", str(args.enqueue), "--drain", str(args.drain)]
    command += ["--json", str(out)]
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    run: dict[str, Any] = json.loads(out.read_text())["runs"][0]
    diag = run.get("diag", {})
    for key in ("frames_per_request", "frames_per_claim", "frames_per_completion"):
        if key in diag:
            run[key] = diag[key]
    if "S4_ops" in run:
        run["S4_bad"] = run["S4_duplicates"] + run["S4_lost"] + run["S4_lock_errors"]
    return run


def statements(tree: Path | None) -> dict[str, int]:
    env = dict(os.environ)
    bench = HERE
    if tree is not None:
        env["PYTHONPATH"] = str(tree / "core")
        bench = tree / "benchmarks"
    done = subprocess.run(
        [sys.executable, str(bench / "bench_statements.py"), "--json"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return dict(json.loads(done.stdout))


def figure(run: dict[str, Any], key: str, base: str | None) -> float | None:
    if key not in run or (base is not None and not run.get(base)):
        return None
    return float(run[key]) / float(run[base]) if base is not None else float(run[key])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", type=Path, required=True, help="a source tree with core/ and benchmarks/")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default="S1,S3,S4")
    ap.add_argument("--enqueue", type=int, default=2000)
    ap.add_argument("--drain", type=int, default=1000)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    sides: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
    with tempfile.TemporaryDirectory() as scratch:
        for i in range(args.runs):
            for side, tree in (("before", args.before), ("after", None)):
                run = run_tree(tree, args, Path(scratch) / f"{side}-{i}.json")
                sides[side].append(run)
                shown = ", ".join(
                    f"{name} {value:.3g}"
                    for name, key, base in RATIOS[:7]
                    if (value := figure(run, key, base)) is not None
                )
                print(f"run {i + 1} {side:6s} {shown}", flush=True)
    table = []
    for name, key, base in RATIOS:
        row: dict[str, Any] = {"figure": name}
        for side, runs in sides.items():
            values = [v for run in runs if (v := figure(run, key, base)) is not None]
            row[side] = statistics.median(values) if values else None
            row[f"{side}_runs"] = values
        table.append(row)
    counts = {"before": statements(args.before), "after": statements(None)}
    print(f"\n{'figure':32s} {'before':>10s} {'after':>10s}   (median of {args.runs} interleaved runs)")
    for row in table:
        before, after = row["before"], row["after"]
        print(
            f"{row['figure']:32s} {before if before is None else f'{before:10.3f}'} "
            f"{after if after is None else f'{after:10.3f}'}"
        )
    for op in counts["after"]:
        print(f"statements per {op:28s} {counts['before'].get(op)!s:>10s} {counts['after'][op]:>10d}")
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                {"before_tree": str(args.before), "table": table, "statements": counts, "runs": sides},
                indent=1,
                default=str,
            )
        )
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
