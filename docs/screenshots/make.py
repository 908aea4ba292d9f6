"""Regenerate the monitor screenshots in this folder (used by the README and docs/monitor.md).

    .venv/bin/python docs/screenshots/make.py [OUT_DIR]

Builds the demo production of ``tests/gui/scenes.py`` in a temporary folder (its clock ends
now, so ages and lease countdowns are realistic), then takes each view with the monitor's
own headless snapshot mode (``postproject-monitor PROD --snapshot OUT.png ...``). The
dialogs, which snapshot mode does not open, are rendered in-process by ``dialogs.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.gui.scenes import build_demo  # noqa: E402


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent
    with tempfile.TemporaryDirectory() as folder:
        demo = build_demo(Path(folder) / "day3.pproj", datetime.now(UTC))
        views = {
            "jobs": [],
            "failed-job": ["--filter-state", "failed", "--view", f"job:{demo.failed[0]}"],
            "stuck-claims": ["--filter-state", "stuck", "--view", f"job:{demo.stuck[0]}"],
            "claimed-job": ["--view", f"job:{demo.live[0]}"],
            "lifecycle": ["--view", "lifecycle"],
        }
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
        for theme in ("light", "dark"):
            for name, args in views.items():
                target = out / f"{name}-{theme}.png"
                command = [sys.executable, "-m", "postproject_gui", str(demo.path), "--snapshot", str(target)]
                subprocess.run([*command, "--theme", theme, *args], check=True, env=env)
                target.with_suffix(".json").unlink()
        subprocess.run(
            [sys.executable, str(Path(__file__).with_name("dialogs.py")), str(demo.path), str(out)],
            check=True,
            env=env,
        )


if __name__ == "__main__":
    main()
