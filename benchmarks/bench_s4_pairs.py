"""S4 as pairs: a W=1 drain and then a W=4 drain of the same size, back to back, per round.

The ratio W=4 / W=1 of each pair is taken within seconds, so load from other work on the
machine hits both halves alike; with ``--before TREE`` the rounds alternate between that
source tree (``core/`` on ``PYTHONPATH``, its workers too) and this checkout. Prints each
pair and the medians; ``--json`` keeps them.

    python benchmarks/bench_s4_pairs.py --rounds 6 --before /tmp/before --json benchmarks/results/s4.json
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
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def pair(n: int) -> dict[str, Any]:
    """One W=1 drain and one W=4 drain of ``n`` jobs each, through the public API."""
    sys.path.insert(0, str(HERE))
    import bench_jobs as bj

    root = Path(tempfile.mkdtemp(prefix="s4-pairs-"))
    out: dict[str, Any] = {"loadavg": os.getloadavg()[0]}
    try:
        for workers in (1, 4):
            setup = bj.new_production(root, f"w{workers}")
            bj.fill_jobs(setup, n)
            got = bj.api_drain(setup, n, workers, 120.0)
            out[f"w{workers}_ops"] = got["ops"]
            if workers == 4:
                for key in ("claim_p99_ms", "claim_max_ms", "min_share", "duplicates", "lost", "busy_errors"):
                    out[key] = got[key]
    finally:
        shutil.rmtree(root, ignore_errors=True)
    out["ratio"] = out["w4_ops"] / out["w1_ops"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("-n", type=int, default=1000, help="jobs per drain")
    ap.add_argument("--before", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(pair(args.n)))
        return
    sides: dict[str, list[dict[str, Any]]] = ({"before": []} if args.before else {}) | {"after": []}
    for i in range(args.rounds):
        for side in sides:
            env = dict(os.environ)
            if side == "before":
                env["PYTHONPATH"] = str(args.before / "core")
            done = subprocess.run(
                [sys.executable, str(Path(__file__)), "--one", "-n", str(args.n)],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            )
            got = json.loads(done.stdout.strip().splitlines()[-1])
            sides[side].append(got)
            print(
                f"round {i + 1} {side:6s} W=1 {got['w1_ops']:.0f}/s W=4 {got['w4_ops']:.0f}/s ratio {got['ratio']:.2f} "
                f"p99 {got['claim_p99_ms']:.1f} ms max {got['claim_max_ms']:.1f} ms load {got['loadavg']:.1f}",
                flush=True,
            )
    medians = {
        side: {
            k: statistics.median(r[k] for r in runs) for k in ("ratio", "w1_ops", "w4_ops", "claim_p99_ms")
        }
        | {
            "claim_max_ms": max(r["claim_max_ms"] for r in runs),
            "min_share": min(r["min_share"] for r in runs),
        }
        for side, runs in sides.items()
    }
    for side, m in medians.items():
        print(f"{side:6s} " + ", ".join(f"{k} {v:.3g}" for k, v in m.items()))
    if args.json is not None:
        args.json.write_text(json.dumps({"n": args.n, "medians": medians, "rounds": sides}, indent=1))
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
