"""Run every benchmark and keep their JSON figures in benchmarks/results/ (``python3 dev.py bench``).

    python benchmarks/run_all.py            # the full runs (about 15 minutes here)
    python benchmarks/run_all.py --quick    # short versions, to check they work

Each benchmark compares with a baseline measured in its own run and prints its table.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"

# name (script[:variant]), full-run arguments, quick-run arguments
BENCHMARKS: list[tuple[str, list[str], list[str]]] = [
    ("bench_jobs", [], ["--quick"]),
    ("bench_knowledge", [], ["--chains", "1000"]),
    ("bench_graph_layout", [], ["100"]),
    ("bench_provenance_graph", [], ["100"]),
    ("bench_monitor", [], ["--jobs", "20000", "--commits", "5"]),
    (
        "bench_monitor:postgresql",
        ["--engine", "postgresql", "--jobs", "20000"],
        ["--engine", "postgresql", "--jobs", "2000", "--commits", "5"],
    ),
    ("bench_postgres_claims", [], ["--quick"]),
    ("bench_queue_depth", [], ["--counts", "200,400", "--rounds", "1"]),
    ("bench_client_instructions", ["--server"], ["--jobs", "50", "--paths", "executor,floor"]),
    ("bench_progress", [], ["--quick"]),
    ("bench_service", [], ["--quick"]),
]


def main() -> int:
    quick = "--quick" in sys.argv[1:]
    RESULTS.mkdir(exist_ok=True)
    failed = []
    for name, full, short in BENCHMARKS:
        script = HERE / f"{name.partition(':')[0]}.py"
        if not script.exists():
            continue
        args = [sys.executable, str(script), *(short if quick else full)]
        if name != "bench_graph_layout":
            args += [
                "--json",
                str(
                    RESULTS
                    / f"{name.removeprefix('bench_').replace(':', '-')}{'-quick' if quick else ''}.json"
                ),
            ]
        print(f"\n=== {name} {' '.join(args[2:])}", flush=True)
        if subprocess.call(args) != 0:
            failed.append(name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
