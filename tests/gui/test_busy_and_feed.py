"""A busy database and a stalled feed (issue 16): non-modal waiting with Retry, and a feed
indicator that turns amber instead of saying "Live"."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from postproject import JobState, Production, Reason, StorageError
from postproject_gui.dialogs.cancel_dialog import CancelDialog
from postproject_gui.services.feed_watcher import STALL_SECONDS, FeedWatcher
from tests.gui.conftest import WindowFactory
from tests.gui.helpers import LoopRunner, ProductionBuilder, wait_for


@pytest.mark.sqlite_only(
    "holds SQLite's write lock (BEGIN IMMEDIATE); PostgreSQL writers do not block each other"
)
def test_a_busy_database_waits_without_a_modal_and_retry_finishes_the_cancel(
    qtbot: Any,
    make_window: WindowFactory,
    builder: ProductionBuilder,
    monkeypatch: pytest.MonkeyPatch,
    presented: list[Any],
) -> None:
    (job,) = builder.request(1)
    window = make_window(builder.production.location, builder.production.clock)
    monkeypatch.setattr(CancelDialog, "ask", classmethod(lambda cls, *args: True))
    holder = Production.open(builder.production.location)
    tx = holder.edit()
    tx.create_asset("holds the write lock")  # another program is writing: BEGIN IMMEDIATE held
    try:
        window.table.selectRow(0)
        window.jobs.cancel.trigger()
        wait_for(qtbot, lambda: window.busy.isVisible(), timeout=10_000)
        assert not presented  # no modal error
        text = window.busy.text.text()
        assert text.startswith("Waiting for the database… Cancelling 1 job") and "Nothing was changed" in text
        assert (
            window.status.feed_state == "waiting"
            and window.status.live.text() == "◐ Waiting for the database"
        )
        assert builder.production.job(job).state is JobState.REQUESTED
    finally:
        tx.rollback()
        holder.close()
    window.busy.retry.click()  # the other program is done
    wait_for(qtbot, lambda: builder.production.job(job).state is JobState.CANCELLED, timeout=10_000)
    wait_for(qtbot, lambda: not window.busy.isVisible() and window.status.feed_state == "live")
    assert not presented


@pytest.mark.sqlite_only(
    "holds SQLite's write lock (BEGIN IMMEDIATE); PostgreSQL writers do not block each other"
)
def test_giving_up_forgets_what_waits(
    qtbot: Any,
    make_window: WindowFactory,
    builder: ProductionBuilder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (job,) = builder.request(1)
    window = make_window(builder.production.location, builder.production.clock)
    monkeypatch.setattr(CancelDialog, "ask", classmethod(lambda cls, *args: True))
    with Production.open(builder.production.location) as holder:
        tx = holder.edit()
        tx.create_asset("holds the write lock")
        window.table.selectRow(0)
        window.jobs.cancel.trigger()
        wait_for(qtbot, lambda: window.busy.isVisible(), timeout=10_000)
        window.busy.give_up.click()
        assert not window.busy.isVisible() and window.session.waiter.waiting is None  # type: ignore[union-attr]
        tx.rollback()
    assert builder.production.job(job).state is JobState.REQUESTED


def test_a_feed_that_stops_answering_is_stalled(
    qtbot: Any, qloop: LoopRunner, builder: ProductionBuilder, tmp_path: Path
) -> None:
    """The watcher thread stamps each probe's answer with its timer; the GUI measures the
    silence with the same timer. A timer that stands still for the thread (as a probe that
    never returns would) and moves on for the GUI makes the feed stalled."""
    now = [0.0]

    def timer() -> float:
        return 0.0 if threading.current_thread().name == "pp-feed" else now[0]

    watcher = FeedWatcher(builder.production.location, after=0, loop=qloop.loop, timer=timer)
    watcher.start()
    try:
        wait_for(qtbot, lambda: watcher.live)
        now[0] = STALL_SECONDS - 1
        assert not watcher.stalled
        now[0] = STALL_SECONDS + 5
        assert watcher.stalled and watcher.silence() == STALL_SECONDS + 5
    finally:
        watcher.stop()
    assert not watcher.stalled  # a stopped watcher is not stalled, just stopped


def test_the_status_bar_says_stalled_in_amber(make_window: WindowFactory, builder: ProductionBuilder) -> None:
    builder.request(1)
    window = make_window(builder.production.location, builder.production.clock)
    status = window.status
    assert status.feed_state == "live" and status.live.property("live") == "true"
    status.set_stalled(12.4)
    assert status.feed_state == "stalled" and status.live.text() == "◐ Feed stalled (12 s)"
    assert status.live.property("live") == "amber"
    status.set_stalled(0)
    assert status.live.text() == "● Live"


def test_a_read_that_cannot_reach_the_server_is_the_feeds_to_show_not_a_dialog(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder, presented: list[Any]
) -> None:
    """A background read that fails because the server cannot be reached (stopped, restarting,
    refusing connections) or because its connection was lost is the feed's to show ("Not
    live"), and the views are read again once live: no dialog. Before, "Reading the workers
    failed: production unavailable" popped up during an outage the status bar already showed.
    Any other failure still reaches the presenter."""
    builder.request(1)
    window = make_window(builder.production.location, builder.production.clock)
    session = window.session
    assert session is not None

    async def failing(reason: Reason) -> None:
        raise StorageError(f"the read failed ({reason.value})", reason=reason)

    for reason in (Reason.UNREACHABLE, Reason.CONNECTION_LOST, Reason.PERMISSION_DENIED):
        session.spawn(failing(reason), "Reading the workers")  # failed in this order
    wait_for(qtbot, lambda: len(presented) > 0)  # the first failure presented is the last one
    assert [p.text.splitlines()[0] for p in presented] == ["the read failed (permission_denied)"]
    presented.clear()  # (the window's fixture checks that nothing else was presented)
