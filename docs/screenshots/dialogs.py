"""Render the request and cancel dialogs of a production to PNG (light and dark).

.venv/bin/python docs/screenshots/dialogs.py PRODUCTION OUT_DIR
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import qasync
from PySide6.QtWidgets import QApplication, QWidget

from postproject import EXECUTOR_VOCABULARY, JobState, Production, Property, RepresentationKind, StringValue
from postproject_gui.dialogs.cancel_dialog import CancelDialog, CancelPlan
from postproject_gui.dialogs.request_job_dialog import RequestJobDialog
from postproject_gui.services.production_service import ProductionService
from postproject_gui.services.types import JobRow, RequestSpec
from postproject_gui.theme import ThemeManager, ThemeMode


def grab(widget: QWidget, path: Path) -> None:
    widget.show()
    QApplication.processEvents()
    widget.grab().save(str(path))
    widget.close()


def main() -> None:
    production, out = Path(sys.argv[1]), Path(sys.argv[2])
    app = QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    service = ProductionService(production, loop=loop)
    loop.run_until_complete(service.open())
    choices = loop.run_until_complete(service.request_choices())
    service.close()
    with Production.open(production, read_only=True) as p:
        claimed = p.jobs(state=JobState.CLAIMED, limit=3).items
        requested = p.jobs(state=JobState.REQUESTED, limit=2).items
        failed = p.jobs(state=JobState.FAILED, limit=1).items
        rows = [JobRow(j, p.asset(j.output_asset_id).name) for j in (*claimed, *requested, *failed)]
        now = p.clock.now()
    first = choices.representations[0]
    spec = RequestSpec(
        "org.postproject:generate-proxy",
        (first.id,),
        first.asset_id,
        RepresentationKind.PROXY,
        "proxies",
        ((Property(EXECUTOR_VOCABULARY, "profile"), StringValue("proxy-1080p")),),
    )
    for mode in (ThemeMode.LIGHT, ThemeMode.DARK):
        ThemeManager(mode).apply()
        request = RequestJobDialog(choices, production)
        request.set_spec(spec)
        request.resize(720, 560)
        grab(request, out / f"request-dialog-{mode.value}.png")
        cancel = CancelDialog(CancelPlan.of(rows, now), now)
        cancel.resize(760, 330)
        grab(cancel, out / f"cancel-dialog-{mode.value}.png")
    loop.close()


if __name__ == "__main__":
    main()
