"""The service against the direct path, and the service under a fleet's heartbeats (issue 25 item 6).

One throwaway PostgreSQL server (``LocalServer(durable=True)``) and one ``postproject serve``
process over a production in it, same run, so the figures are ratios on one machine (it is
shared: the load average is printed before and after). Nothing is asserted.

  loop     the executor's worker loop through its transport seam, without media: register,
           then claim (``WorkerBackend.claim``) and complete (``WorkerBackend.complete``: an
           output file, its representation, the activity, the attempt's log tail) until
           nothing is claimable. ``direct``: ``DirectBackend`` (the production itself);
           ``service``: ``HttpBackend`` (the Worker API). W = 1 and 8 spawned processes drain
           N jobs each time: jobs/s, claim p50/p99, duplicates, errors; the service/direct
           ratio of each round (``--rounds``: the modes alternate) and their median.
  fleet    200 simulated workers registered with the service, each heartbeating every 10 s
           (20 heartbeats/s from one thread, spread evenly), while 8 of them claim and
           complete for ``--fleet-seconds``: heartbeat and claim p50/p99, errors (any
           exception or non-2xx), the service's peak RSS and its peak database connections.

Usage:
  .venv/bin/python benchmarks/bench_service.py --quick
  .venv/bin/python benchmarks/bench_service.py --jobs 300 --rounds 3 --json benchmarks/results/service.json
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg

from baselines import percentile, run_together
from postproject import JobRef, JobRequest, Production, RepresentationKind
from postproject.executor.access import connect
from postproject.executor.backend import ClaimRequest, DirectBackend, Success
from postproject.executor.http_backend import HttpBackend
from postproject.model.access import ApiRole
from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.model.values import StringValue
from postproject.storage.postgresql.localserver import LocalServer

KIND = "org.postproject:generate-proxy"
TOOL = ToolIdentity("bench worker", "1")
LEASE = timedelta(seconds=60)
ROOT = Path(__file__).resolve().parents[1]


def seed(location: str, out: Path) -> tuple[str, Any, Any]:
    """A production with root ``out`` and an original: (a worker token's secret, the asset, the original)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "source.mov").write_bytes(b"source")
    with Production.create(location) as production, production.edit() as tx:
        tx.add_media_root("out", out)
        asset = tx.create_asset("A")
        original = tx.add_representation(asset, RepresentationKind.ORIGINAL, "source.mov", root="out")
        secret = tx.create_api_token("bench", ApiRole.WORKER).secret
        tx.commit()
    return secret, asset, original


def add_jobs(production: Production, asset: Any, original: Any, n: int) -> None:
    from postproject.executor.jobs import PROFILE

    for start in range(0, n, 2000):
        with production.edit() as tx:
            for _ in range(min(2000, n - start)):
                job = tx.request_job(JobRequest(KIND, (original,), asset, RepresentationKind.PROXY, "out"))
                tx.add_metadata(JobRef(job), PROFILE, StringValue("proxy-720p"))
            tx.commit()


def worker(
    mode: str, where: str, token: str, out: str, wid: int, until: float, barrier: Any, results: Any
) -> None:
    """One worker process: the executor's loop through ``mode``'s backend, without media."""
    try:
        if mode == "direct":
            backend: Any = DirectBackend(lambda: Production.open(where), where)
        else:
            backend = HttpBackend(connect(where, token, max_connections=4))
        agent = AgentIdentity(f"bench-{mode}-{wid}")
        stop = threading.Event()
        claims: list[float] = []
        ids: list[str] = []
        errors = 0
        with backend.attached():
            session = backend.register(f"bench-{mode}-{wid}-{uuid.uuid4().hex[:6]}", 1, (KIND,), "bench")
            barrier.wait()
            while time.time() < until:
                t0 = time.perf_counter()
                claim = backend.claim(ClaimRequest(session, (KIND,), TOOL, agent, LEASE), stop)
                claims.append(time.perf_counter() - t0)
                if claim is None:
                    break
                output = Path(out) / f"{claim.job.id}.mp4"
                output.write_bytes(b"x")
                started = backend.now()
                report = Success(
                    uuid.uuid4().hex, output, "out", RepresentationKind.PROXY, TOOL, agent,
                    started, backend.now(), claim.parameters, "done\n",
                )  # fmt: skip
                try:
                    backend.complete(claim.token, claim.job, report)
                except Exception:
                    errors += 1
                ids.append(str(claim.job.id))
        backend.close()
        results.put({"ids": ids, "claims": claims, "errors": errors, "done": time.perf_counter()})
    except BaseException:
        results.put({"fatal": traceback.format_exc()})


def run_loop(
    mode: str, where: str, token: str, out: Path, workers: int, until: float = 1e12
) -> dict[str, Any]:
    outs, t0 = run_together(
        worker,
        workers,
        lambda w, barrier, results: (mode, where, token, str(out), w, until, barrier, results),
    )
    fatal = [o["fatal"] for o in outs if "fatal" in o]
    if fatal:
        print(fatal[0], flush=True)
        return {"error": fatal[0].strip().splitlines()[-1]}
    ids = [i for o in outs for i in o["ids"]]
    claims = [c for o in outs for c in o["claims"]]
    dt = max(o["done"] for o in outs) - t0
    return {
        "jobs": len(ids),
        "jobs_per_s": len(set(ids)) / dt,
        "duplicates": len(ids) - len(set(ids)),
        "errors": sum(o["errors"] for o in outs),
        "claim_p50_ms": 1000 * percentile(claims, 0.5),
        "claim_p99_ms": 1000 * percentile(claims, 0.99),
    }


class Service:
    def __init__(self, location: str, log: Path, pool_size: int) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = int(sock.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "core"), str(ROOT / "gui")])}
        with log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "postproject", "serve", location, "--listen", f"127.0.0.1:{self.port}",
                 "--pool-size", str(pool_size), "--log-format", "json"],
                stdout=out, stderr=subprocess.STDOUT, env=env,
            )  # fmt: skip
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{self.url}/v1/health", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the service did not start; see {log}")
            time.sleep(0.1)

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(60)


def fleet(server: LocalServer, location: str, service: Service, secret: str, out: Path, seconds: float,
          fleet_size: int) -> dict[str, Any]:  # fmt: skip
    """``fleet_size`` heartbeating workers while 8 processes claim and complete for ``seconds``."""
    client = httpx.Client(base_url=service.url, headers={"Authorization": f"Bearer {secret}"}, timeout=30)
    sessions = []
    for n in range(fleet_size):
        answer = client.put(f"/v1/workers/fleet-{n}", json={"capacity": 1, "kinds": [KIND], "host": "sim"})
        answer.raise_for_status()
        sessions.append((f"fleet-{n}", answer.json()["session"]))
    latencies: list[float] = []
    errors = 0
    peak = {"rss": 0.0, "connections": 0}
    halt = threading.Event()

    def beat() -> None:
        nonlocal errors
        interval = 10.0 / fleet_size  # each worker every 10 s
        due = time.monotonic()
        i = 0
        while not halt.is_set():
            name, session = sessions[i % fleet_size]
            t0 = time.perf_counter()
            try:
                answer = client.post(f"/v1/workers/{name}/heartbeat", json={"session": session})
                if answer.status_code >= 300:
                    errors += 1
            except httpx.HTTPError:
                errors += 1
            latencies.append(time.perf_counter() - t0)
            i += 1
            due += interval
            halt.wait(max(0.0, due - time.monotonic()))

    def sample() -> None:
        with psycopg.connect(server.uri("bench"), autocommit=True) as conn:
            while not halt.is_set():
                (count,) = conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = 'bench' AND pid <> pg_backend_pid()"
                ).fetchone() or (0,)
                peak["connections"] = max(peak["connections"], int(count))
                peak["rss"] = max(peak["rss"], service.rss_mb())
                halt.wait(0.5)

    threads = [threading.Thread(target=beat), threading.Thread(target=sample)]
    for thread in threads:
        thread.start()
    loop = run_loop("service", service.url, secret, out, 8, until=time.time() + seconds)
    halt.set()
    for thread in threads:
        thread.join()
    client.close()
    return {
        "workers": fleet_size,
        "heartbeats": len(latencies),
        "heartbeat_p50_ms": 1000 * percentile(latencies, 0.5),
        "heartbeat_p99_ms": 1000 * percentile(latencies, 0.99),
        "heartbeat_errors": errors,
        "claiming": loop,
        "service_rss_mb": round(peak["rss"], 1),
        "db_connections_peak": peak["connections"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=400, help="jobs per drain")
    parser.add_argument("--fleet", type=int, default=200)
    parser.add_argument("--fleet-seconds", type=float, default=30.0)
    parser.add_argument("--pool-size", type=int, default=8, help="the service's production handles")
    parser.add_argument("--rounds", type=int, default=1, help="drains per mode and W, alternating")
    parser.add_argument("--quick", action="store_true", help="100 jobs, a 10 s fleet")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    if args.quick:
        args.jobs, args.fleet_seconds = 100, 10.0
    report: dict[str, Any] = {"load_before": os.getloadavg(), "pool_size": args.pool_size}
    with tempfile.TemporaryDirectory(prefix="bench_service_") as tmp, LocalServer(durable=True) as server:
        server.create_database("bench")
        location = server.uri("bench", production="svc")
        out = Path(tmp) / "out"
        secret, asset, original = seed(location, out)
        service = Service(location, Path(tmp) / "service.log", args.pool_size)
        try:
            with Production.open(location) as production:
                for workers in (1, 8):
                    ratios = []
                    for round_ in range(args.rounds):  # the modes alternate: a burst of load hits both
                        for mode in ("direct", "service"):
                            add_jobs(production, asset, original, args.jobs)
                            where = location if mode == "direct" else service.url
                            result = run_loop(mode, where, secret, out, workers)
                            report.setdefault(f"{mode}_w{workers}", []).append(result)
                            print(
                                f"{mode:8} W={workers} round {round_ + 1}: {json.dumps(result)}", flush=True
                            )
                        direct, served = report[f"direct_w{workers}"][-1], report[f"service_w{workers}"][-1]
                        if "jobs_per_s" in direct and "jobs_per_s" in served:
                            ratios.append(served["jobs_per_s"] / direct["jobs_per_s"])
                    if ratios:
                        report[f"ratio_w{workers}"] = [round(r, 2) for r in ratios]
                        report[f"ratio_w{workers}_median"] = round(statistics.median(ratios), 2)
                        print(f"service/direct at W={workers}: {report[f'ratio_w{workers}']}, median "
                              f"{report[f'ratio_w{workers}_median']}", flush=True)  # fmt: skip
                add_jobs(production, asset, original, 20_000)
            report["fleet"] = fleet(server, location, service, secret, out, args.fleet_seconds, args.fleet)
            print(f"fleet: {json.dumps(report['fleet'])}", flush=True)
        finally:
            service.stop()
    report["load_after"] = os.getloadavg()
    print(f"load average before {report['load_before']}, after {report['load_after']}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
