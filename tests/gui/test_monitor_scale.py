"""The monitor at scale (issue 26, item 0): what one commit costs the window does not grow with
the number of jobs, and the Dashboard keeps a day in per-minute sums, not event by event."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QObject

from postproject import JobId
from postproject_gui.models.dashboard_data import DashboardData
from postproject_gui.services.dashboard_reads import DAY_MINUTES, DayTotals, History, JobEvent, requested_at
from postproject_gui.services.production_service import PAGE_SIZE, page_size
from postproject_gui.window.main_window import DASHBOARD
from tests.gui.conftest import WindowFactory
from tests.gui.helpers import ProductionBuilder, commit_from_another_process, ready, wait_for
from tests.reads_counting import counting


def reader(thread: str) -> bool:
    """The service's threads (its readers and its long reads), not the feed watcher, whose
    probes follow the clock."""
    return thread.startswith("pp-") and not thread.startswith("pp-feed")


def settled(qtbot: Any, reads: Any, tries: int = 20) -> None:
    """Once the window has read nothing for a whole second (the workers' watch reads at most
    once a second), with the count reset: its first reads are over. (A fixed second was not
    always enough on a loaded machine: a first read still going was counted as the commit's.)"""
    for _ in range(tries):
        reads.reset()
        qtbot.wait(1100)
        if not reads.statements_of(reader):
            return
    raise AssertionError(f"the window kept reading for {tries} s with nothing committed")


def one_commit(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> tuple[list[str], int, list[Any]]:
    """(statements, work) of the service's threads for one job requested by another process,
    from its commit until the window shows it with nothing left to read (the Dashboard shown:
    its day is read, and it follows every commit too), and what the busy waiter announced
    meanwhile (a read refused as busy is read again: not the commit's cost; kept to explain a
    failure)."""
    with counting(builder.production.location) as reads:
        window = make_window(builder.production.location)
        session = window.session
        window.tabs.setCurrentIndex(DASHBOARD)
        wait_for(qtbot, lambda: ready(window) and window.dashboard.ready, timeout=20000)
        # The Dashboard reads the workers every few seconds by the clock, not by commits: a poll
        # falling inside the measured window (a loaded machine stretches it) is not the commit's.
        session.workers.set_polling(False)
        busy: list[Any] = []
        session.waiter.changed.connect(busy.append)
        settled(qtbot, reads)
        head = builder.production.latest_sequence()
        (job,) = commit_from_another_process(builder)
        wait_for(
            qtbot,
            lambda: (
                session.table.row_of(JobId.parse(job)) is not None
                and ready(window, head + 1)
                and window.dashboard.ready
            ),
            timeout=20000,
        )
        qtbot.wait(1100)  # what the commit triggers later (the workers' watch)
        wait_for(qtbot, lambda: ready(window, head + 1) and window.dashboard.ready)
        window.close()
    return sorted(reads.statements_of(reader)), reads.work_of(reader), busy


@pytest.mark.slow
def test_one_commit_reads_the_same_at_ten_times_the_jobs(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    """Everything the window shows follows the commit (the table, counts, the claim outlook,
    the Dashboard's day): the statements are the same and the work within a
    page's worth (the new row's page may sit deeper in a bigger index)."""
    commit_from_another_process(builder)  # its kind is known from then on (a new kind is read once)
    figures = []
    made = 1
    for jobs in (300, 3000):
        builder.request(jobs - made)
        made = jobs
        figures.append(one_commit(qtbot, make_window, builder))
    (small, small_work, small_busy), (big, big_work, big_busy) = figures
    extra = {"small only": Counter(small) - Counter(big), "big only": Counter(big) - Counter(small)}
    assert small == big, (
        {side: {q[:400]: n for q, n in got.items()} for side, got in extra.items()},
        {"busy waits announced": (small_busy, big_busy)},
    )
    assert big_work <= small_work * 1.25 + 200, (small_work, big_work)


# --- the Dashboard's sums ----------------------------------------------------------------


def reference_backlog(events: list[JobEvent], backlog_now: int, ends: list[datetime]) -> list[int]:
    """The backlog at each end, walked back through every event (the former, exact algorithm)."""
    state: dict[JobId, str] = {}
    deltas = []
    for event in sorted(events, key=lambda e: e.at):
        before = state.get(event.job_id)
        change = 0
        if event.event in ("job_requested", "job_requeued", "job_claim_released", "job_lost"):
            change = 1
        elif event.event in ("job_claimed", "job_cancelled"):
            change = 0 if before == "job_claimed" else -1
        state[event.job_id] = event.event
        deltas.append((event.at, change))
    return [max(0, backlog_now - sum(c for at, c in deltas if at > end)) for end in ends]


def test_the_dashboard_keeps_a_day_in_minutes_and_draws_what_the_events_say() -> None:
    """A day of 20,000 job events: at most a day's minutes are kept (no event list), and the
    backlog walked back from them is the one walked back through every event."""
    now = datetime(2026, 12, 2, 18, 0, 30, tzinfo=UTC)
    rng = random.Random(26)
    jobs = [JobId.new() for _ in range(4000)]
    events: list[JobEvent] = []
    sequence = 0
    for job in jobs:
        at = now - timedelta(seconds=rng.uniform(0, 86_000))
        for kind in ("job_requested", "job_claimed", rng.choice(["job_succeeded", "job_failed", "job_lost"])):
            sequence += 1
            events.append(JobEvent(at, kind, job, sequence))
            at += timedelta(seconds=rng.uniform(1, 400))
    events = [e for e in events if e.at <= now]
    events.sort(key=lambda e: e.at)
    events = [JobEvent(e.at, e.event, e.job_id, n) for n, e in enumerate(events, start=1)]
    data = DashboardData()
    history = DayTotals()
    history.add(events[: len(events) // 2])
    data.load(History(history, len(events) // 2))
    data.add(events[len(events) // 2 :])
    data.add_kinds(dict.fromkeys(jobs, "org.example:proxy"))
    data.backlog_now = 1234
    assert len(data.totals.minutes) <= DAY_MINUTES + 1
    assert len(data.totals.claimed) <= sum(1 for e in events if e.event == "job_claimed")
    for span in ("hour", "day"):
        series = data.series(now, span)
        ends = [min(s + series.bucket, now) for s in series.starts]
        assert series.backlog == reference_backlog(events, 1234, ends)
        succeeded = sum(1 for e in events if e.event == "job_succeeded" and e.at >= series.starts[0])
        assert sum(series.throughput["org.example:proxy"]) == succeeded
    assert requested_at(jobs[0]) <= datetime.now(UTC)


LAZY_CHARTS = """
import sys
from postproject_gui.app import build_window, collecting_on_the_gui_thread
from postproject_gui.dialogs.error_presenter import ErrorPresenter
from postproject_gui.look.theme import ThemeManager, ThemeMode
from postproject_gui.settings import Settings
from postproject_gui.window.main_window import DASHBOARD
import qasync, asyncio
from PySide6.QtWidgets import QApplication
app = QApplication([])
loop = qasync.QEventLoop(app)
asyncio.set_event_loop(loop)
with collecting_on_the_gui_thread():
    theme = ThemeManager(ThemeMode.LIGHT)
    theme.apply()
    window = build_window(Settings.ephemeral(), theme, ErrorPresenter(interactive=False))
    window.show()
    session = window.open_production(sys.argv[1])
    while session.info is None or session.table.rowCount() == 0:
        app.processEvents()
    print("before", "pyqtgraph" in sys.modules, "numpy" in sys.modules)
    window.tabs.setCurrentIndex(DASHBOARD)
    app.processEvents()
    print("after", "pyqtgraph" in sys.modules, bool(window.dashboard.plots))
    window.close()
"""


def test_the_charts_and_their_libraries_load_when_the_dashboard_is_first_shown(
    builder: ProductionBuilder,
) -> None:
    """pyqtgraph and numpy (~50 MiB) are not loaded by a window that never shows the Dashboard."""
    builder.request(3)
    done = subprocess.run(
        [sys.executable, "-c", LAZY_CHARTS, builder.production.location],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["before False False", "after True True"]


def test_a_long_scroll_reads_a_few_large_pages_after_a_small_first_one() -> None:
    """Each page landing is inserted and painted once: at 200 rows a page, scrolling to 20,000
    rows cost 100 of them (4.7 s at 200,000 jobs, load 10); the pages after the first grow."""
    loaded, pages = 0, 0
    while loaded < 20_000:
        loaded += page_size(loaded)
        pages += 1
    assert page_size(0) == PAGE_SIZE == 200  # the first rows come as fast as before
    assert pages == 23


def test_pages_that_land_below_the_rows_shown_repaint_the_table_once_each(
    qtbot: Any, make_window: WindowFactory, big_copy: Any
) -> None:
    """Reading a long list page by page (scrolling to 20,000 rows is 23 pages) repaints the
    visible rows once per page: a page landing also said "loading" and "scroll for more" in
    the filter row, whose new layout repainted the rows twice more (3 paints a page before)."""
    window = make_window(big_copy)
    model = window.table.table_model()
    paints = []

    class Spy(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint:
                paints.append(model.rowCount())
            return False

    spy = Spy()
    window.table.viewport().installEventFilter(spy)
    qtbot.wait(200)
    paints.clear()
    pages = 10
    for _ in range(pages):
        model.fetchMore()
        wait_for(qtbot, lambda: not model.loading)
        qtbot.wait(20)  # the paint of the rows inserted
    assert model.rowCount() == 200 + 200 + 400 + 800 + 1000 * (pages - 3)  # pages grow with the list
    assert len(paints) <= pages + 3, paints
