"""A worker's cost per job in instructions (callgrind; with --server the server's too): figures this machine's speed does not move.

The CPU seconds a worker's process spends per job swing up to 2.5x between drains here (other
guests on the host; ``bench_postgres_claims.py`` reports the stolen share), more than any one
change to the core can move them. The instructions it executes do not: callgrind counts them
exactly (runs of the same code agree within ~0.5 %; the server's within ~1 %). Each path below drains ``N`` + 20 jobs and
20 jobs, each in a process of its own under ``valgrind --tool=callgrind``, and reports the
difference over ``N``: the instructions of one more job, start-up and warm-up cancelled out.

    executor    PostgreSQL, the reference executor's calls: ``Production.claim_next_job``
                (one ``pp_claim_next`` call) and ``Production.complete_job`` (one ``pp_complete``
                call), as bench_postgres_claims.py's ``api_calls`` row
    floor       PostgreSQL, pg_floor.py's client (two function calls a job, no core: the floor
                that bench_postgres_claims.py measures throughput against)
    edits       PostgreSQL, the spec's worker protocol: a claim edit, then a completion edit
    sqlite      SQLite, the spec's worker protocol (bench_jobs.py's S3 worker)

Only the worker's own process is counted (the PostgreSQL server runs outside valgrind).
``--server``: the server's side too, for the PostgreSQL paths: a second server runs under
callgrind (autovacuum off), the same drains run against it (the worker outside valgrind), and
the instructions of the server processes that served each drain (its connections' backends,
counted when they exit) are differenced the same way. The server's background processes (WAL
writer, checkpointer) are not counted.
``--baseline-core DIR``: the same paths (``executor`` only where that core has
``Production.claim_next_job``) with another checkout's ``core/``, and after/before ratios.

    python benchmarks/bench_client_instructions.py [--jobs 300] [--paths executor,floor,edits,sqlite]
        [--server] [--baseline-core /tmp/before/core] [--json benchmarks/results/client-instructions.json]

Needs valgrind (``python3 dev.py bench`` installs it where it can).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OWN_CORE = HERE.parent / "core"
WARM = 20  # jobs drained before the counted ones, in both runs of a pair
PATHS = ("executor", "floor", "edits", "sqlite")


# --- the children: one drain each, run under callgrind ----------------------------------------


def child(path: str, location: str, outputs: Path, schema: str) -> None:
    """Drain every job of ``location`` (``schema``: the floor's) by ``path``."""
    if path == "floor":
        import pg_floor

        class Barrier:
            def wait(self) -> None:
                pass

        class Results:
            def put(self, got: dict[str, Any]) -> None:
                if "fatal" in got:
                    sys.exit(got["fatal"])

        pg_floor.floor_worker(location, schema, str(outputs), 0, Barrier(), Results())
        return
    import bench_jobs  # (its imports are the public API's, which every core here has)
    from postproject import AgentIdentity, Production

    agent = AgentIdentity("w0")
    tool, lease_for = bench_jobs.TOOL, bench_jobs.LEASE
    with Production.open(location) as production:
        while True:
            if path == "executor":
                work = production.claim_next_job(tool, lease_for, agent=agent)
                if work is None:
                    return
                production.complete_job(work.lease, outputs / f"{work.job.id}.out", tool=tool, agent=agent)
            else:  # the spec's protocol (bench_jobs.py's worker), on either engine
                lease = bench_jobs.claim(production, agent)
                if lease is None:
                    return
                bench_jobs.complete(production, lease, outputs, agent)


# --- the parent -------------------------------------------------------------------------------


def seed(path: str, place: Path, schema: str, count: int, uri: str) -> dict[str, str]:
    """``count`` jobs for ``path`` to drain, made by the core under test (a production's schema
    is its core's: another core refuses a newer one): where they are and their outputs."""
    if path == "sqlite":
        import bench_jobs

        setup = bench_jobs.new_production(place, "s3")
        bench_jobs.fill_jobs(setup, count)
        return {"location": str(setup.path), "outputs": str(setup.outputs)}
    from urllib.parse import quote

    import bench_postgres_claims

    location = f"{uri}?production={quote(schema)}"
    bench_postgres_claims.seed(location, count, place)
    if path == "floor":
        import pg_floor

        pg_floor.install(uri, schema)
        location = uri
    return {"location": location, "outputs": str(place)}


def seeded(server: Any, root: Path, path: str, core: Path, count: int) -> tuple[dict[str, str], str]:
    """A production (a schema) of ``count`` jobs for ``path``, made by ``core`` in a child."""
    env = os.environ | {"PYTHONPATH": os.pathsep.join((str(core), str(HERE)))}
    place = Path(tempfile.mkdtemp(prefix=f"{path}{count}_", dir=root))
    schema = f"ci_{place.name.lower()}"
    made = subprocess.run(
        [sys.executable, __file__, "--seed", path, str(place), schema, str(count), server.uri("bench")],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if made.returncode != 0:
        raise RuntimeError(f"seeding {path} with {core} failed: {made.stderr[-2000:]}")
    return json.loads(made.stdout.strip().splitlines()[-1]), schema


def per_job(server: Any, root: Path, path: str, core: Path, n: int) -> float:
    """Instructions of one job by ``path`` with ``core``: (drain of WARM + n) - (drain of WARM), over n."""
    env = os.environ | {"PYTHONPATH": os.pathsep.join((str(core), str(HERE)))}
    runs = []
    for count in (WARM, WARM + n):
        where, schema = seeded(server, root, path, core, count)
        place = Path(where["outputs"])
        out = place / "callgrind.out"
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, __file__]
        command += ["--child", path, where["location"], where["outputs"], schema]
        runs.append(
            (out, subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        )
    counts = []
    for out, process in runs:  # (the two run side by side: instructions do not depend on the load)
        _, err = process.communicate()
        if process.returncode != 0:
            raise RuntimeError(f"{path} with {core} failed: {err.decode(errors='replace')[-2000:]}")
        counts.append(_totals(out))
    return (counts[1] - counts[0]) / n


def server_per_job(server: Any, dumps: Path, root: Path, path: str, core: Path, n: int) -> float:
    """The server's instructions for one job by ``path`` with ``core`` (``server`` runs under
    callgrind, writing each process's counts to ``dumps`` when it exits): the backends that
    served a drain of WARM + n jobs, less those of a drain of WARM, over n."""
    env = os.environ | {"PYTHONPATH": os.pathsep.join((str(core), str(HERE)))}
    counts = []
    for count in (WARM, WARM + n):
        known = set(dumps.iterdir())
        where, schema = seeded(server, root, path, core, count)
        before = known | set(_settled(dumps, known, empty=True))  # (the seeding's backends, exited)
        command = [sys.executable, __file__, "--child", path, where["location"], where["outputs"], schema]
        drained = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        if drained.returncode != 0:
            raise RuntimeError(f"{path} with {core} failed: {drained.stderr[-2000:]}")
        counts.append(sum(_totals(f) for f in _settled(dumps, before)))
    return (counts[1] - counts[0]) / n


def _settled(dumps: Path, before: set[Path], *, empty: bool = False) -> list[Path]:
    """The count files written since ``before`` once no more come (a backend writes its own as
    it exits, after its client has gone), each whole (``empty``: there may be none)."""
    seen: list[Path] = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        time.sleep(1.5)
        now = sorted(set(dumps.iterdir()) - before)
        if (now or empty) and now == seen and all(_totals(f) for f in now):
            return now
        seen = now
    raise RuntimeError(f"the server's counts did not settle in {dumps}")


def _totals(dump: Path) -> int:
    """The instructions a callgrind file counts (its ``summary:`` or ``totals:`` line; 0 while
    it is being written)."""
    for line in dump.read_text(errors="replace").splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    return 0


def has_claim_next_job(core: Path) -> bool:
    return "def claim_next_job(" in (core / "postproject" / "production.py").read_text()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=300, help="jobs counted per path (default 300)")
    parser.add_argument("--paths", default=",".join(PATHS), help=f"comma-separated, of {', '.join(PATHS)}")
    parser.add_argument("--baseline-core", type=Path, default=None, help="another checkout's core/")
    parser.add_argument("--server", action="store_true", help="the server's instructions too (PostgreSQL)")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--child", nargs=4, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--seed", nargs=5, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.seed is not None:
        path, place, schema, count, uri = args.seed
        print(json.dumps(seed(path, Path(place), schema, int(count), uri)))
        return 0
    if args.child is not None:
        path, location, outputs, schema = args.child
        child(path, location, Path(outputs), schema)
        return 0
    if not shutil.which("valgrind"):
        print("valgrind is missing (sudo apt-get install valgrind): skipped, nothing measured")
        return 0
    from postproject.storage.postgresql.localserver import LocalServer

    paths = [p for p in args.paths.split(",") if p]
    unknown = set(paths) - set(PATHS)
    if unknown:
        parser.error(f"unknown paths: {', '.join(sorted(unknown))}")
    cores = {"after": OWN_CORE} | ({"before": args.baseline_core.resolve()} if args.baseline_core else {})
    report: dict[str, Any] = {"jobs": args.jobs, "cores": {k: str(v) for k, v in cores.items()}}
    with tempfile.TemporaryDirectory(prefix="pp-bench-ci-") as tmp, LocalServer(durable=True) as server:
        server.create_database("bench")
        for path in paths:
            for side, core in cores.items():
                if path == "floor" and side == "before":
                    continue  # (no core: the same client)
                if path == "executor" and not has_claim_next_job(core):
                    continue
                got = per_job(server, Path(tmp), path, core, args.jobs)
                report.setdefault(path, {})[side] = got
                print(f"{path:9s} {side:6s} {got / 1e6:7.3f} M instructions per job", flush=True)
    if args.server:
        measure_server(report, [p for p in paths if p != "sqlite"], cores, args.jobs)
    for kind in ("", "server_"):
        floor = report.get("floor", {}).get(f"{kind}after")
        for path in ("executor", "edits"):
            mine = report.get(path, {}).get(f"{kind}after")
            if floor and mine:
                report[path][f"{kind}after_vs_floor"] = mine / floor
                print(f"{path} / floor ({kind or 'client_'}instructions): {mine / floor:.2f}x")
        for path in paths:
            sides = report.get(path, {})
            if f"{kind}after" in sides and f"{kind}before" in sides:
                sides[f"{kind}after_vs_before"] = sides[f"{kind}after"] / sides[f"{kind}before"]
                print(
                    f"{path} after / before ({kind or 'client_'}instructions): {sides[f'{kind}after_vs_before']:.3f}"
                )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


def measure_server(report: dict[str, Any], paths: list[str], cores: dict[str, Path], n: int) -> None:
    """``--server``: each path's server instructions per job, on a server run under callgrind."""
    from postproject.storage.postgresql.localserver import LocalServer

    dumps = Path(tempfile.mkdtemp(prefix="pp-bench-ci-server-"))  # (the server's account writes here)
    dumps.chmod(0o777)
    wrap = ("valgrind", "--tool=callgrind", f"--callgrind-out-file={dumps}/cg.%p")
    try:
        with (
            tempfile.TemporaryDirectory(prefix="pp-bench-ci-") as tmp,
            LocalServer(durable=True, wrap=wrap) as server,
        ):
            server.create_database("bench")
            server.admin().execute("ALTER SYSTEM SET autovacuum = off")  # (its work would land in a drain)
            server.admin().execute("SELECT pg_reload_conf()")
            for path in paths:
                for side, core in cores.items():
                    if (path == "floor" and side == "before") or (
                        path == "executor" and not has_claim_next_job(core)
                    ):
                        continue
                    got = server_per_job(server, dumps, Path(tmp), path, core, n)
                    report.setdefault(path, {})[f"server_{side}"] = got
                    print(f"{path:9s} {side:6s} {got / 1e6:7.3f} M server instructions per job", flush=True)
    finally:
        shutil.rmtree(dumps, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
