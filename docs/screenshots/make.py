"""Regenerate every screenshot in this folder (the README's and the user guides').

    .venv/bin/python docs/screenshots/make.py [OUT_DIR]

1. ``postproject demo create`` builds the demo production in a temporary folder (real
   clips, about ten seconds): jobs in every state, a render node that died holding a claim,
   failures with the executor's real diagnostics, and a re-delivered original whose proxy
   and the thumbnail made from that proxy are now stale.
2. Two render nodes claim three of the waiting jobs (one lease about to run out), so the
   pictures show live leases too.
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
from datetime import timedelta
from pathlib import Path

from postproject import AgentIdentity, JobState, Production, ToolIdentity

HERE = Path(__file__).resolve().parent
ASSETS = "12"
NODE = ToolIdentity("PostProject reference executor", "0.1.0")


def claim_some(path: Path) -> None:
    """Render nodes take three waiting jobs: two with a 10-minute lease, one 50 s from expiry."""
    with Production.open(path) as production:
        waiting = production.jobs(state=JobState.REQUESTED, limit=3).items
        for job, (agent, seconds) in zip(
            waiting, (("render-02/5120", 600), ("render-04/7781", 600), ("render-02/5120", 50)), strict=False
        ):
            with production.edit(origin="postproject-worker 0.1.0", message="Claim job") as tx:
                tx.claim_job_lease(job.id, NODE, timedelta(seconds=seconds), AgentIdentity(agent))
                tx.commit()


def views(path: Path) -> dict[str, list[str]]:
    """The snapshot arguments of each picture, with ids read through the core."""
    with Production.open(path, read_only=True) as production:
        failed = production.jobs(state=JobState.FAILED, newest_first=True, limit=1).items[0].id
        stuck = production.claims_expiring(limit=1).items[0].id
        live = production.jobs(state=JobState.CLAIMED, newest_first=True, limit=1).items[0].id
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
        shots = views(production)
        for (suffix, size), theme, (name, args) in itertools.product(
            SIZES.items(), ("light", "dark"), shots.items()
        ):
            target = out / f"{name}-{theme}{suffix}.png"
            monitor = [sys.executable, "-m", "postproject_gui", str(production), "--snapshot", str(target)]
            subprocess.run([*monitor, "--theme", theme, "--size", size, *args], check=True, env=env)
            target.with_suffix(".json").unlink()
        subprocess.run(
            [sys.executable, str(HERE / "components.py"), str(production), str(out)], check=True, env=env
        )


if __name__ == "__main__":
    main()
