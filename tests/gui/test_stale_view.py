"""The monitor says when its view may be behind (issue 28 item 6): a production read where
its WAL cannot be read (a read-only place without the ``-shm``; simulated, as the suite runs
as root, by the one check that decides it) shows a banner in the status bar that stays."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from postproject.storage.sqlite import connection
from postproject_gui.text.location import STALE_VIEW
from tests.cli.test_stale_reads import live_copy  # noqa: F401 - a fixture
from tests.gui.conftest import WindowFactory
from tests.gui.helpers import wait_for


def test_the_monitor_shows_a_banner_when_its_view_may_be_behind(
    live_copy: Path,  # noqa: F811 - the fixture
    make_window: WindowFactory,
    qtbot: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    Path(f"{live_copy}-shm").unlink()
    monkeypatch.setattr(connection, "_writable_beside", lambda path: False)
    window = make_window()
    window.open_production(live_copy)  # shows revision 0 of 2: not "ready" as the helper means it
    wait_for(qtbot, lambda: window.session is not None and window.session.info is not None)
    assert window.session is not None and window.session.info is not None
    assert window.session.info.possibly_stale
    qtbot.waitUntil(lambda: window.statusBar().currentMessage() == STALE_VIEW)
