"""Progress, cancellation and logs (issue 15): what live progress costs, how fast a stop lands.

Nothing is asserted; it reports (as every benchmark here, ratios in the same run: the 2-core
VM is shared and absolute numbers move).

  P1  cost of progress on a worker's throughput: the same PyAV proxy encode (real media,
      ``make_proxy``) with and without a reporter thread that calls ``report_progress``
      every 100 ms on its own handle (as the executor's renewer does), interleaved A/B runs,
      median ratio; and the job store's claim + completion loop (S3 shape) with and without
      such a reporter on the claimed job
  P2  one progress report: median and p95 wall time of an edit holding ``report_progress``
      (stored state, no revision), and the revisions it published (must be 0)
  P3  coalescing: 100 reports in one second make how many progress signals
  P4  prompt cancellation: a ``worker run`` process encoding a long clip; ``cancel_job`` from
      this process; time until the worker's confirmation (``stopped_at``) is committed: it
      noticed, stopped the encode, removed its partial output and confirmed. Goal: every stop
      confirmed within 10 s, median within 1 s (the suite's test checks only that the stop lands
      part way through the encode: tests assert no wall-clock times)

Usage:
  .venv/bin/python benchmarks/bench_progress.py --quick
  .venv/bin/python benchmarks/bench_progress.py --json benchmarks/results/progress.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from postproject import (
    ActivitySpec,
    AgentIdentity,
    JobLease,
    JobRequest,
    Production,
    RepresentationKind,
    ToolIdentity,
)
from postproject.executor import jobs
from postproject.executor.media import make_proxy
from postproject.executor.profiles import PROXY_PROFILES
from postproject.executor.testclip import generate_test_clip
from postproject.model.refs import JobRef
from postproject.model.values import StringValue

TOOL = ToolIdentity("bench", "1")
AGENT = AgentIdentity("bench")
KIND = "org.example:bench"


class Reporter:
    """A thread reporting progress on ``token``'s lease every ``every`` seconds (own handle)."""

    def __init__(self, path: Path, every: float = 0.1) -> None:
        self._path, self._every = path, every
        self._token: str | None = None
        self._halt = threading.Event()
        self._lock = threading.Lock()
        self.reports = 0
        self.signals = 0
        self._thread = threading.Thread(target=self._run, daemon=True)

    def follow(self, token: str | None) -> None:
        with self._lock:
            self._token = token

    def __enter__(self) -> Reporter:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._halt.set()
        self._thread.join()

    def _run(self) -> None:
        with Production.open(self._path) as production:
            fraction = 0.0
            current: tuple[str, JobLease] | None = None
            while not self._halt.wait(self._every):
                with self._lock:
                    token = self._token
                if token is None:
                    continue
                try:
                    if current is None or current[0] != token:
                        current = (token, JobLease.import_token(production, token))
                    fraction = (fraction + 0.01) % 1.0
                    with production.edit() as tx:
                        self.signals += tx.report_progress(
                            current[1], fraction=fraction, stage="encode", message="frame n of m"
                        )
                        tx.commit()
                    self.reports += 1
                except Exception:  # the job ended meanwhile: next one
                    current = None


def setup(folder: Path, clip: Path | None = None) -> tuple[Path, Any, Any]:
    path = folder / "bench.pproj"
    source = clip or folder / "in.bin"
    if clip is None:
        source.write_bytes(b"input")
    with Production.create(path) as production, production.edit() as tx:
        asset = tx.create_asset("A")
        original = tx.add_representation(asset, RepresentationKind.ORIGINAL, source)
        tx.commit()
    return path, asset, original


# --- P1: encode throughput ---------------------------------------------------------------


def encode_once(clip: Path, out: Path, reporter: Reporter | None, lease_token: str | None) -> float:
    if reporter is not None:
        reporter.follow(lease_token)
    started = time.perf_counter()
    make_proxy(clip, out, PROXY_PROFILES["proxy-720p"])
    took = time.perf_counter() - started
    if reporter is not None:
        reporter.follow(None)
    out.unlink()
    return took


def p1_encode(folder: Path, frames: int, rounds: int) -> dict[str, Any]:
    clip = folder / "clip.mov"
    generate_test_clip(clip, name="BENCH", frames=frames, size=(640, 360))
    (folder / "p1").mkdir()
    path, asset, original = setup(folder / "p1", clip)
    with Production.open(path) as production:
        with production.edit() as tx:
            job = tx.request_job(JobRequest(KIND, (original,), asset, RepresentationKind.PROXY))
            tx.commit()
        with production.edit() as tx:
            lease = tx.claim_job_lease(job, TOOL, timedelta(hours=1), agent=AGENT)
            tx.commit()
        token = lease.export_token()
    plain: list[float] = []
    reported: list[float] = []
    with Reporter(path) as reporter:
        encode_once(clip, folder / "warm.mp4", None, None)
        for _ in range(rounds):
            plain.append(encode_once(clip, folder / "a.mp4", None, None))
            reported.append(encode_once(clip, folder / "b.mp4", reporter, token))
    base, withp = statistics.median(plain), statistics.median(reported)
    return {
        "frames": frames,
        "rounds": rounds,
        "plain_s": round(base, 4),
        "reporting_every_100ms_s": round(withp, 4),
        "throughput_ratio": round(base / withp, 4),
        "cost_percent": round((withp / base - 1) * 100, 2),
        "reports": reporter.reports,
        "signals": reporter.signals,
    }


# --- P1b: the job store's claim + completion loop -------------------------------------------


def store_loop(path: Path, asset: Any, original: Any, count: int, reporter: Reporter | None) -> float:
    output = path.parent / "out.bin"
    output.write_bytes(b"out")
    with Production.open(path) as production:
        with production.edit() as tx:
            for _ in range(count):
                tx.request_job(JobRequest(KIND, (original,), asset, RepresentationKind.PROXY))
            tx.commit()
        started = time.perf_counter()
        for _ in range(count):
            with production.edit() as tx:
                lease = tx.claim_next_job_lease(TOOL, timedelta(minutes=5), agent=AGENT)
                tx.commit()
            assert lease is not None
            if reporter is not None:
                reporter.follow(lease.export_token())
            job = production.job(lease.job_id)
            with production.edit() as tx:
                rep = tx.add_representation(job.output_asset_id, job.output_representation_kind, output)
                act = tx.create_activity(ActivitySpec(KIND, inputs=job.inputs, outputs=(rep,), tool=TOOL))
                tx.complete_job_lease(lease, rep, act)
                tx.commit()
        took = time.perf_counter() - started
    if reporter is not None:
        reporter.follow(None)
    return count / took


def p1_store(folder: Path, count: int, rounds: int) -> dict[str, Any]:
    plain: list[float] = []
    reported: list[float] = []
    for n in range(rounds):
        for label, into in (("a", plain), ("b", reported)):
            sub = folder / f"p1b-{label}{n}"
            sub.mkdir()
            path, asset, original = setup(sub)
            if label == "a":
                into.append(store_loop(path, asset, original, count, None))
            else:
                with Reporter(path) as reporter:
                    into.append(store_loop(path, asset, original, count, reporter))
    base, withp = statistics.median(plain), statistics.median(reported)
    return {
        "jobs": count,
        "rounds": rounds,
        "plain_jobs_per_s": round(base, 1),
        "reporting_jobs_per_s": round(withp, 1),
        "throughput_ratio": round(withp / base, 4),
        "cost_percent": round((1 - withp / base) * 100, 2),
    }


# --- P2, P3: one report, coalescing --------------------------------------------------------


def p2_p3(folder: Path, reports: int) -> dict[str, Any]:
    sub = folder / "p2"
    sub.mkdir()
    path, asset, original = setup(sub)
    with Production.open(path) as production:
        with production.edit() as tx:
            job = tx.request_job(JobRequest(KIND, (original,), asset, RepresentationKind.PROXY))
            tx.commit()
        with production.edit() as tx:
            lease = tx.claim_job_lease(job, TOOL, timedelta(hours=1), agent=AGENT)
            tx.commit()
        head = production.latest_sequence()
        times = []
        for n in range(reports):
            started = time.perf_counter()
            with production.edit() as tx:
                tx.report_progress(lease, fraction=n / reports, stage="encode", message=f"frame {n}")
                tx.commit()
            times.append(time.perf_counter() - started)
        published = production.latest_sequence() - head
        # P3: 100 reports spread over one second
        token = production.progress_token()
        started = time.perf_counter()
        for n in range(100):
            with production.edit() as tx:
                tx.report_progress(lease, fraction=n / 100)
                tx.commit()
            time.sleep(max(0.0, started + (n + 1) / 100 - time.perf_counter()))
        signals = production.progress_token() - token
    times.sort()
    return {
        "p2_reports": reports,
        "p2_report_median_us": round(statistics.median(times) * 1e6, 1),
        "p2_report_p95_us": round(times[int(len(times) * 0.95)] * 1e6, 1),
        "p2_revisions_published": published,
        "p3_reports_in_one_second": 100,
        "p3_progress_signals": signals,
    }


# --- P4: cancellation latency ---------------------------------------------------------------


P4_GOAL_MEDIAN_S = 1.0
P4_GOAL_MAX_S = 10.0  # what tests/executor/test_cancel_process.py asserted until it went relative


def p4_cancel(folder: Path, runs: int, frames: int) -> dict[str, Any]:
    clip = folder / "long.mov"
    generate_test_clip(clip, name="LONG", frames=frames, size=(320, 180))
    latencies = []
    for n in range(runs):
        sub = folder / f"p4-{n}"
        sub.mkdir()
        path, asset, original = setup(sub, clip)
        with Production.open(path) as production, production.edit() as tx:
            job = tx.request_job(JobRequest(jobs.PROXY_KIND, (original,), asset, RepresentationKind.PROXY))
            tx.add_metadata(JobRef(job), jobs.PROFILE, StringValue("proxy-1080p"))
            tx.commit()
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "postproject",
                "worker",
                "run",
                str(path),
                "--once",
                "--lease",
                "30s",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            with Production.open(path) as production:
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:
                    progress = production.job(job).progress
                    if progress is not None and progress.stage == "encode":
                        break
                    time.sleep(0.01)
                with production.edit() as tx:
                    tx.cancel_job(job)
                    tx.commit()
                asked = time.perf_counter()
                while time.perf_counter() - asked < 30:
                    attempt = production.job(job).attempts[0]
                    if attempt.stopped_at is not None:
                        latencies.append(time.perf_counter() - asked)
                        break
                    production.wait_for_changes(production.latest_sequence(), 0.05)
            worker.wait(30)
        finally:
            if worker.poll() is None:
                worker.kill()
                worker.wait()
    latencies.sort()
    median = statistics.median(latencies) if latencies else None
    return {
        "runs": runs,
        "confirmed": len(latencies),
        "stop_confirmed_median_s": round(median, 3) if median is not None else None,
        "stop_confirmed_max_s": round(max(latencies), 3) if latencies else None,
        "goal": f"every stop confirmed within {P4_GOAL_MAX_S:g} s, median within {P4_GOAL_MEDIAN_S:g} s",
        "goal_met": len(latencies) == runs
        and median is not None
        and median <= P4_GOAL_MEDIAN_S
        and max(latencies) <= P4_GOAL_MAX_S,
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    quick = args.quick
    results: dict[str, Any] = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "quick": quick,
    }
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        results["p1_encode"] = p1_encode(folder, 120 if quick else 360, 3 if quick else 7)
        print("P1 encode:", results["p1_encode"], flush=True)
        results["p1_store"] = p1_store(folder, 200 if quick else 1000, 2 if quick else 5)
        print("P1 store loop:", results["p1_store"], flush=True)
        results["p2_p3"] = p2_p3(folder, 200 if quick else 2000)
        print("P2/P3 reports:", results["p2_p3"], flush=True)
        results["p4_cancel"] = p4_cancel(folder, 2 if quick else 5, 2400)
        print("P4 cancel:", results["p4_cancel"], flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
