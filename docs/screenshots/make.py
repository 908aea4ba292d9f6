"""Regenerate every screenshot in this folder (the README's and the user guides').

    .venv/bin/python docs/screenshots/make.py [OUT_DIR]

1. ``postproject demo create`` builds the demo production in a temporary folder (real
   clips, about ten seconds): jobs in every state, a render node that died holding a claim,
   failures with the executor's real diagnostics, and a re-delivered original whose proxy
   and the thumbnail made from that proxy are now stale.
2. Three registered workers (``register_worker``): render-03 claims a job and goes quiet (its
   lease runs out: a stuck claim, and an offline worker), render-02 (capacity 2) and render-04
   claim three of the waiting jobs (render-04 after releasing one), so the pictures show live
   leases, attempts and the Workers tab; a thread sends their heartbeats while the pictures
   are taken.
3. Each window view is taken by the monitor's own headless snapshot mode, light and dark,
   at 1920x1080 (``NAME-THEME.png``) and at the smallest supported size, 1024x700
   (``NAME-THEME-1024.png``): ``postproject-monitor PROD --snapshot OUT.png --theme T --size S --view ...``.
4. What snapshot mode does not open (the dialogs, the graph at 60 and 500 nodes) is
   rendered in-process by ``components.py``.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

from postproject import AgentIdentity, JobLease, JobState, Production, ToolIdentity
from postproject.executor.recipe import Recipe
from postproject.model.workers import HEARTBEAT_INTERVAL, OFFLINE_AFTER

HERE = Path(__file__).resolve().parent
ASSETS = "12"
NODE = ToolIdentity("PostProject reference executor", "0.1.0")


def claim_some(path: Path) -> None:
    """Registered workers take four waiting jobs (see the module docstring)."""
    with Production.open(path) as production:
        waiting = production.jobs(state=JobState.REQUESTED, limit=4).items
        with production.edit(origin="postproject-worker 0.1.0", message="Register workers") as tx:
            quiet = tx.register_worker("render-03", capacity=1, host="render-03.farm")
            tx.commit()
        with production.edit(origin="postproject-worker 0.1.0", message="Claim job") as tx:
            tx.claim_job_lease(
                waiting[3].id, NODE, timedelta(seconds=20), AgentIdentity("render-03/4410"), worker=quiet
            )
            tx.commit()


@contextmanager
def live_workers(path: Path) -> Iterator[None]:
    """render-02 and render-04 claim jobs and keep sending heartbeats until the block ends;
    render-03 (registered by :func:`claim_some`) has gone quiet by then."""
    stop = threading.Event()
    with Production.open(path) as production:
        waiting = production.jobs(state=JobState.REQUESTED, limit=3).items
        with production.edit(origin="postproject-worker 0.1.0", message="Register workers") as tx:
            two = tx.register_worker("render-02", capacity=2, host="render-02.farm")
            four = tx.register_worker("render-04", capacity=1, host="render-04.farm")
            tx.commit()
        running = []
        for job, session, agent in zip(
            waiting, (four, two, two), ("render-04/7781", "render-02/5120", "render-02/5120"), strict=False
        ):
            with production.edit(origin="postproject-worker 0.1.0", message="Claim job") as tx:
                lease = tx.claim_job_lease(
                    job.id, NODE, timedelta(minutes=10), AgentIdentity(agent), worker=session
                )
                tx.commit()
            running.append(lease)
            if session is four and job is waiting[0]:
                with production.edit(origin="postproject-worker 0.1.0", message="Release job claim") as tx:
                    tx.release_job_lease(lease)  # skipped here: its input is on another site
                    tx.commit()
        rest = production.jobs(state=JobState.REQUESTED, limit=1).items
        with production.edit(origin="postproject-worker 0.1.0", message="Claim job") as tx:
            running.append(
                tx.claim_job_lease(
                    rest[0].id, NODE, timedelta(minutes=10), AgentIdentity("render-04/7781"), worker=four
                )
            )
            tx.commit()

        def beat() -> None:  # its own connection: a production belongs to the thread that opened it
            with Production.open(path) as own:
                while not stop.wait(HEARTBEAT_INTERVAL.total_seconds()):
                    with own.edit() as tx:
                        tx.heartbeat(two)
                        tx.heartbeat(four)
                        tx.commit()

        thread = threading.Thread(target=beat, daemon=True)
        thread.start()
        time.sleep(OFFLINE_AFTER.total_seconds() + 1)  # render-03 is offline, its lease ran out
        report_progress(production, path, running[1:])
        with production.edit() as tx:
            tx.heartbeat(two)
            tx.heartbeat(four)
            tx.commit()
        try:
            yield
        finally:
            stop.set()
            thread.join()


PROGRESS = ((0.34, "encode", "frame 82 of 240"), (0.12, "decode", "frame 29 of 240"), (0.27, "encode", None))


def report_progress(production: Production, path: Path, leases: list[JobLease]) -> None:
    """The running attempts report progress (half a minute after their claims, so time left
    can be told), and each records its log file, as the reference executor does (in the
    outputs' media root: a job's log is read from a media root only)."""
    outputs = Recipe.load().outputs_root
    folder = next(root.path for root in production.media_roots() if root.name == outputs)
    assert folder is not None
    logs = Path(folder) / "logs"
    logs.mkdir(exist_ok=True)
    for number, (lease, (fraction, stage, message)) in enumerate(zip(leases, PROGRESS, strict=False)):
        log = logs / f"attempt-{number}.log"
        frames = int(fraction * 240)
        log.write_text(
            "postproject-worker 0.1.0: claimed, profile proxy-720p\n"
            "probe: 1920x1080 24 fps, 240 frames, prores\n"
            + "".join(f"encode: frame {f} of 240\n" for f in range(0, frames, 24)),
            encoding="utf-8",
        )
        with production.edit() as tx:
            tx.report_progress(lease, fraction=fraction, stage=stage, message=message)
            tx.record_attempt_log(lease, path=log)
            tx.commit()


def views(path: Path) -> dict[str, list[str]]:
    """The snapshot arguments of each picture, with ids read through the core."""
    with Production.open(path, read_only=True) as production:
        failed = production.jobs(state=JobState.FAILED, newest_first=True, limit=1).items[0].id
        stuck = production.claims_expiring(limit=1).items[0].id
        claimed = production.jobs(state=JobState.CLAIMED, newest_first=True, limit=20).items
        live = next(j.id for j in claimed if j.progress is not None)  # one that reports progress
        stale = production.stale_artifacts(limit=1000).items
        chain_end = next(k.representation_id for k in stale if k.reasons[0].code == "upstream_not_current")
    return {
        "jobs": [],
        "failed-job": ["--filter-state", "failed", "--view", f"job:{failed}"],
        "stuck-claims": ["--filter-state", "stuck", "--view", f"job:{stuck}"],
        "claimed-job": ["--view", f"job:{live}"],
        "lifecycle": ["--view", "lifecycle"],
        "artifacts": ["--view", "artifacts"],
        "artifacts-stale": ["--view", "artifacts", "--filter-state", "stale"],
        "provenance": ["--view", f"provenance:{chain_end}"],
        "dashboard": ["--view", "dashboard"],
        "workers": ["--view", "workers"],
        "search": ["--search", "proxy"],
    }


SIZES = {"": "1920x1080", "-1024": "1024x700"}  # file suffix -> window size


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "QT_LOGGING_RULES": "qt.qpa.*=false"}
    with tempfile.TemporaryDirectory() as folder:
        production = Path(folder) / "demo.pproj"
        command = [sys.executable, "-m", "postproject", "demo", "create", str(production), "--assets", ASSETS]
        subprocess.run(command, check=True, env=env)
        claim_some(production)
        with live_workers(production):
            shots = views(production)
            for (suffix, size), theme, (name, args) in itertools.product(
                SIZES.items(), ("light", "dark"), shots.items()
            ):
                target = out / f"{name}-{theme}{suffix}.png"
                monitor = [
                    sys.executable,
                    "-m",
                    "postproject_gui",
                    str(production),
                    "--snapshot",
                    str(target),
                ]
                subprocess.run([*monitor, "--theme", theme, "--size", size, *args], check=True, env=env)
                target.with_suffix(".json").unlink()
        subprocess.run(
            [sys.executable, str(HERE / "components.py"), str(production), str(out)], check=True, env=env
        )


if __name__ == "__main__":
    main()
