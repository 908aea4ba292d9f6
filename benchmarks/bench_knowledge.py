"""Time artifact knowledge on a production of 100 000 representations in chains.

The fixture (built through the public API, outside timing) holds ``--chains`` chains of
``--length`` representations: an original, then derived representations each made from
the previous one by an activity with a tool and one parameter. One chain in a hundred has
its original rewritten and observed, so its whole chain is stale.

Figures (one line each, medians; JSON with ``--json PATH``): one ``evaluate_artifact`` of
the end of a stale chain (deepest evaluation), a whole-production ``stale_artifacts`` page
(limit 100), a ``stale_artifacts`` page from one changed original, ``plan_regeneration``
of 10 000 artifacts, ``plan_downstream_regeneration`` of one changed original and a
``provenance`` graph. Nothing is asserted.

Run: ``.venv/bin/python benchmarks/bench_knowledge.py --json knowledge.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from postproject import (
    ActivityRef,
    ActivitySpec,
    ArtifactState,
    Production,
    Property,
    RepresentationId,
    RepresentationKind,
    ToolIdentity,
)

TOOL = ToolIdentity("Bench Transcoder", "1.0")
PROFILE = Property("https://example.com/transcode", "profile")
CHAINS_PER_EDIT = 500


def build(folder: Path, chains: int, length: int) -> tuple[Production, list[list[RepresentationId]], float]:
    """Create the fixture; return the production, the chains (ids in order) and the seconds it took."""
    start = time.perf_counter()
    originals = folder / "originals"
    derived = folder / "derived"
    originals.mkdir()
    derived.mkdir()
    pool = []
    for index in range(1, length):  # derived files are shared: only their fingerprints matter here
        path = derived / f"step{index}.mov"
        path.write_bytes(b"derived step %d" % index)
        pool.append(path)
    production = Production.create(folder / "bench.pproj")
    all_chains: list[list[RepresentationId]] = []
    for first in range(0, chains, CHAINS_PER_EDIT):
        with production.edit(message="bench fixture") as tx:
            for number in range(first, min(chains, first + CHAINS_PER_EDIT)):
                asset = tx.create_asset(f"clip {number:06d}")
                path = originals / f"clip{number:06d}.mov"
                path.write_bytes(b"original %d" % number)
                chain = [tx.add_representation(asset, RepresentationKind.ORIGINAL, path)]
                for step in range(1, length):
                    rep = tx.add_representation(asset, RepresentationKind.DERIVED, pool[step - 1])
                    activity = tx.create_activity(
                        ActivitySpec(
                            f"org.example:step-{step}", inputs=(chain[-1],), outputs=(rep,), tool=TOOL
                        )
                    )
                    tx.add_metadata(ActivityRef(activity), PROFILE, f"profile-{step}")
                    chain.append(rep)
                all_chains.append(chain)
            tx.commit()
    with production.edit(message="bench: new takes") as tx:
        for number in range(0, chains, 100):
            (originals / f"clip{number:06d}.mov").write_bytes(b"new take %d" % number)
            tx.observe_representation(all_chains[number][0])
        tx.commit()
    return production, all_chains, time.perf_counter() - start


def median_ms(action: Callable[[], object], runs: int) -> float:
    action()  # warm the page cache and the statement cache
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        action()
        times.append(time.perf_counter() - began)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chains", type=int, default=10_000)
    parser.add_argument("--length", type=int, default=10, help="representations per chain")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--runs", type=int, default=200, help="runs of the fast figures")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-knowledge-") as tmp:
        production, chains, build_seconds = build(Path(tmp), args.chains, args.length)
        with production:
            stale_end = chains[0][-1]
            current_end = chains[1][-1]
            assert production.evaluate_artifact(stale_end).state is ArtifactState.STALE
            first_page = production.stale_artifacts(limit=100)
            derived = [rep for chain in chains for rep in chain[1:]]
            artifacts = derived[:: max(1, len(derived) // 10_000)][:10_000]
            plans = production.plan_regeneration(artifacts)
            downstream = production.plan_downstream_regeneration(chains[0][0])
            graph = production.provenance(chains[0][args.length // 2], check_files=False)
            few = max(5, args.runs // 20)
            results: dict[str, Any] = {
                "representations": args.chains * args.length,
                "activities": args.chains * (args.length - 1),
                "chain_length": args.length,
                "fixture_build_s": round(build_seconds, 1),
                "file_mib": round((Path(tmp) / "bench.pproj").stat().st_size / 2**20, 1),
                "evaluate_stale_chain_end_ms": median_ms(
                    lambda: production.evaluate_artifact(stale_end), args.runs
                ),
                "evaluate_current_chain_end_ms": median_ms(
                    lambda: production.evaluate_artifact(current_end), args.runs
                ),
                "stale_page_limit_100_ms": median_ms(lambda: production.stale_artifacts(limit=100), few),
                "stale_page_items": len(first_page.items),
                "stale_page_from_source_ms": median_ms(
                    lambda: production.stale_artifacts(source=chains[0][0]), args.runs
                ),
                "plan_regeneration_10000_ms": median_ms(lambda: production.plan_regeneration(artifacts), 5),
                "plans": len(plans),
                "plan_downstream_ms": median_ms(
                    lambda: production.plan_downstream_regeneration(chains[0][0]), args.runs
                ),
                "downstream_plans": len(downstream.plans),
                "provenance_graph_ms": median_ms(
                    lambda: production.provenance(chains[0][args.length // 2], check_files=False), few
                ),
                "provenance_nodes": len(graph.nodes),
                "python": platform.python_version(),
                "sqlite": sqlite3.sqlite_version,
                "machine": f"{platform.system()} {platform.machine()}",
            }
    for name, value in results.items():
        print(f"{name:32} {value:.3f}" if isinstance(value, float) else f"{name:32} {value}")
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
