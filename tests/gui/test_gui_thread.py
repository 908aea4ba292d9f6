"""The GUI thread never runs a query: every SQL statement the monitor executes runs on one of
the service's threads (checked with SQLite's trace callback on every connection it opens).
And the service's threads never destroy a Qt object: Python's cyclic garbage is collected on
the GUI thread only."""

from __future__ import annotations

import gc
import sqlite3
import threading
import weakref
from typing import Any

import pytest
from PySide6.QtCore import QObject
from PySide6.QtWidgets import QTabWidget

from postproject.storage.sqlite import connection
from postproject_gui.app import collecting_on_the_gui_thread
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


def _allocate() -> None:
    """What a service thread does all day: allocate (enough to cross the collector's threshold)."""
    for _ in range(20):
        junk = [[] for _ in range(5000)]
        del junk


def test_qt_objects_left_to_the_garbage_collector_die_on_the_gui_thread(qapp: Any) -> None:
    """A Qt object in a reference cycle is freed by Python's cyclic collector, which runs on
    whichever thread crosses its threshold. The monitor collects on the GUI thread only
    (``collecting_on_the_gui_thread``, as app.py runs it), so a service thread that allocates
    never destroys a widget or a QObject of the GUI thread (Qt does not survive that)."""
    with collecting_on_the_gui_thread():
        died_on: list[str] = []
        cycle = QObject()
        cycle.itself = cycle  # type: ignore[attr-defined]  # only the cyclic collector frees it
        weakref.finalize(cycle, lambda: died_on.append(threading.current_thread().name))
        del cycle
        reader = threading.Thread(target=_allocate, name="reader")
        reader.start()
        reader.join()
        assert died_on == []  # the reader thread collected nothing
        gc.collect()  # what the GUI thread's collector does on its timer
        assert died_on == [threading.main_thread().name]
