"""The job detail panel never crashes the monitor at any window size.

Its body sits in a scroll area; with the vertical bar shown "as needed", a body whose wrapped
labels were just too tall beside the bar and just short enough without it made Qt show and
hide the bar for ever, recursing until the stack overflowed: the monitor crashed (a
segmentation fault) when a requested job was selected in a window of its default size
(1380 x 860, light theme). The window runs in a process of its own, so a crash fails this
test instead of ending the test run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = r"""
import asyncio, sys, time
from pathlib import Path
import qasync
from PySide6.QtWidgets import QApplication
from postproject import JobRequest, Production, RepresentationKind

folder = Path(sys.argv[1])
clip = folder / "clip.mov"
clip.write_bytes(b"clip")
with Production.create(folder / "p.pproj") as production, production.edit() as tx:
    asset = tx.create_asset("A shot with a rather long name that wraps in the panel")
    rep = tx.add_representation(asset, RepresentationKind.ORIGINAL, clip)
    job = tx.request_job(JobRequest("org.example:proxy", (rep,), asset, RepresentationKind.PROXY))
    tx.commit()

app = QApplication([])
asyncio.set_event_loop(qasync.QEventLoop(app))  # the window's reads run on it, as in the application
from postproject_gui.dialogs.error_presenter import ErrorPresenter
from postproject_gui.settings import Settings
from postproject_gui.look.theme import ThemeManager, ThemeMode
from postproject_gui.app import build_window

theme = ThemeManager(ThemeMode.LIGHT)
theme.apply()  # as the application does
window = build_window(Settings.ephemeral(), theme, ErrorPresenter(interactive=False))
window.show()  # its default size
window.open_production(folder / "p.pproj")
deadline = time.monotonic() + 60


def until(condition):
    while not condition():
        app.processEvents()
        time.sleep(0.002)  # another thread reads the production
        if time.monotonic() > deadline:
            sys.exit("the window never got there")


until(lambda: window.session is not None and window.session.applied_revision >= 1 and not window.session.busy)
window.select_job(job)
until(lambda: window.detail.detail is not None)
default = window.size()
for width in range(default.width() - 40, default.width() + 41, 4):
    for height in range(default.height() - 60, default.height() + 61, 6):
        window.resize(width, height)
        app.processEvents()
print("shown at", default.width(), "x", default.height())
"""


@pytest.mark.slow
def test_selecting_a_job_and_resizing_around_the_default_size_never_crashes(tmp_path: Path) -> None:
    screen = tmp_path / "screen.json"  # room for the default size (the first window fits the screen)
    screen.write_text('{"screens": [{"name": "s", "x": 0, "y": 0, "width": 1920, "height": 1080}]}')
    env = dict(
        os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={screen}", QT_LOGGING_RULES="qt.qpa.*=false"
    )
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-3000:])
    assert done.stdout.strip() == "shown at 1380 x 860"
