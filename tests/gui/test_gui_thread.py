"""The GUI thread never runs a query: every SQL statement the monitor executes runs on one of
the service's threads (checked with SQLite's trace callback on every connection it opens)."""

from __future__ import annotations

import sqlite3
import threading
from typing import Any

import pytest
from PySide6.QtWidgets import QTabWidget

from postproject.storage.sqlite import connection
from tests.gui.conftest import WindowFactory
from tests.gui.helpers import ProductionBuilder, commit_from_another_process, wait_for


@pytest.mark.sqlite_only("counts statements with SQLite's trace callback")
def test_no_statement_runs_on_the_gui_thread(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = builder.request(3)
    builder.fail(ids[0], "ffmpeg exited with status 1")
    on_gui_thread: list[str] = []
    statements = [0]
    connect = connection._connect

    def traced(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = connect(*args, **kwargs)

        def trace(sql: str) -> None:
            statements[0] += 1
            if threading.current_thread() is threading.main_thread():
                on_gui_thread.append(sql)

        conn.set_trace_callback(trace)
        return conn

    monkeypatch.setattr(connection, "_connect", traced)
    window = make_window(builder.production.location, builder.production.clock)
    session = window.session
    assert session is not None
    window.select_job(ids[0])
    wait_for(qtbot, lambda: window.detail.detail is not None)
    head = session.applied_revision
    commit_from_another_process(builder)
    wait_for(qtbot, lambda: session.applied_revision == head + 1, timeout=10_000)
    tabs = window.findChild(QTabWidget)
    assert tabs is not None
    for index in range(tabs.count()):  # Jobs, Artifacts, Provenance
        tabs.setCurrentIndex(index)
        qtbot.wait(200)
    assert statements[0] > 0  # the monitor did read through traced connections
    assert on_gui_thread == []
