"""The persona tasks of issue 26, played as a user plays them and counted: each test opens a
real production in the real window (the default workspace, 1440 x 900) and does one task to
its end through user-level input only (see :mod:`tests.gui.persona_user`: clicks where the
widget is on screen, one action per field typed, key presses), meeting the dialogs the task
meets. It checks the outcome in the store and pins the number of actions, so a change that
adds a click to one of these tasks fails here. Before the Failed card listed the most recent
failures first, (a) took 6 actions: the card, the table scrolled right to its Finished column,
a click on its header (oldest first), the table scrolled right again (a new order starts at
the left edge), the header again (newest first), the row. A header click now keeps the
table's scroll, and the Finished header's first click lists what finished last first.

====================================================  =======  ===========================================
Task                                                  Actions  What they are
====================================================  =======  ===========================================
(a) producer: the most recent failure, and why        2        the Failed card (most recently failed
                                                               first), its first row
    ... from the lifecycle diagram                    2        its Failed state, the first row
    ... from the whole list, by the Finished header   2        the Finished header, the row (before: 3,
                                                               the scroll bar's track first: the column
                                                               was past the right edge)
(b) producer: retry that failed job                   4        (a), Retry… in the job's detail, Retry
                                                               in the confirmation
(c) editor: an original re-delivered -> Stale 0       4        the Artifacts tab, the original's row,
                                                               Ctrl+Shift+D (regenerate stale downstream),
                                                               Enqueue 2 jobs in the preview; the workers
                                                               then run. With the mouse alone also 4: the
                                                               row's menu instead of a click and the keys
    ... from the Stale card                           5        the Stale card, the first stale artifact,
                                                               Shift+click the second, Plan regeneration…,
                                                               Enqueue 2 jobs
(d) supervisor: cancel a stuck claim                  4        the Stuck claims card, its row, Del,
                                                               Cancel 1 job in the confirmation
(e) supervisor: a job by its ticket number, detail    3        Ctrl+F, the ticket typed, the row found
    ... and the ticket read in the detail             4        the detail paged down once (its Parameters
                                                               are below the diagram and the facts)
====================================================  =======  ===========================================
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QScrollArea, QScrollBar, QStyle, QStyleOptionSlider, QToolButton, QWidget

from postproject import (
    FakeClock,
    JobId,
    JobRef,
    JobRequest,
    JobState,
    Production,
    Property,
    RepresentationKind,
    StringValue,
)
from postproject_gui.models.artifact_model import REPRESENTATION_ID_ROLE
from postproject_gui.models.columns import column
from postproject_gui.window.knowledge_tabs import ARTIFACTS, JOBS
from postproject_gui.window.main_window import MainWindow
from tests.gui.conftest import WindowFactory
from tests.gui.farm_scene import build_farm
from tests.gui.helpers import KIND, ProductionBuilder, ready, wait_for
from tests.gui.persona_user import RIGHT, User, in_view
from tests.gui.test_converging_regeneration import clip, make_show, run_worker  # noqa: F401 - a fixture
from tests.gui.test_monitor_postgresql import pg_builder  # noqa: F401 - a fixture

SIZE = (1440, 900)
TICKET = Property("https://example.com/editorial", "ticket")
CTRL_SHIFT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier

# The counts measured (each test asserts at most this many actions).
MOST_RECENT_FAILURE = 2
FINISHED_HEADER = 2
RETRY = 4
STALE_TO_ZERO = 4
STALE_CARD_TO_ZERO = 5
CANCEL_STUCK = 4
FIND_TICKET = 3
TICKET_READ = 4


def opened(
    qtbot: Any, make_window: WindowFactory, location: str | Path, clock: FakeClock | None
) -> MainWindow:
    """The window as it opens on ``location``: the default workspace, 1440 x 900, active."""
    window = make_window(location, clock)
    window.resize(*SIZE)
    window.activateWindow()
    wait_for(qtbot, lambda: window.isActiveWindow() and window.size().width() == SIZE[0])
    wait_for(qtbot, lambda: ready(window) and window.session is not None and window.session.table.rowCount())
    assert window.workspaces.current.key == "producer" and window.tabs.currentIndex() == JOBS
    return window


def listed(window: MainWindow) -> list[JobId]:
    table = window.session.table  # type: ignore[union-attr]
    return [table.row(i).id for i in range(table.rowCount())]


def shown_job(window: MainWindow) -> JobId | None:
    detail = window.detail.detail
    return detail.job.id if detail is not None else None


# --- (a) and (b): the producer -------------------------------------------------------------


def failures(builder: ProductionBuilder) -> tuple[list[JobId], JobId]:
    """40 jobs; five failed over the last half hour, and the one that failed last was requested
    early (its neighbours in request order are older failures): the most recent failure is not
    the newest failed job in request order."""
    clock: FakeClock = builder.production.clock  # type: ignore[assignment]
    ids = builder.request(40)
    for n, job in enumerate(ids[:30]):
        clock.advance(timedelta(minutes=1))
        if n % 7 == 3:
            builder.fail(job, f"ffmpeg exited with status 1: unsupported profile 'ProRes 4444 XQ' ({n})")
    clock.advance(timedelta(minutes=1))
    latest = ids[2]
    builder.fail(latest, "decoder crashed at frame 1200 of /mnt/media/A001_C002.mov: moov atom not found")
    return ids, latest


def find_most_recent_failure(qtbot: Any, window: MainWindow, user: User, latest: JobId) -> None:
    """The producer's path to the most recent failure and its diagnostic."""
    session = window.session
    assert session is not None
    user.click(window.summary.cards[JobState.FAILED], "click the Failed card")
    wait_for(qtbot, lambda: ready(window) and session.table.rowCount() == 5)
    table = window.table
    if session.filter.sort != "finished":  # not listed by when they failed
        sort_by_finished(qtbot, window, user)
    wait_for(qtbot, lambda: ready(window) and listed(window)[0] == latest)
    user.click_row(table, 0, column("kind"), "click the first row")
    wait_for(qtbot, lambda: shown_job(window) == latest)


def sort_by_finished(qtbot: Any, window: MainWindow, user: User) -> None:
    """Newest finished first, by the Finished column's header (scrolled into view first)."""
    session, table = window.session, window.table
    assert session is not None
    header = table.horizontalHeader()
    finished = column("finished")
    for _ in range(3):
        if session.filter.sort == "finished" and session.filter.newest_first:
            return
        if header.sectionViewportPosition(finished) + 20 > table.viewport().width():
            bar = table.horizontalScrollBar()
            user.click(bar, "click the scroll bar's track right of its handle", page_right(bar))
        pos = header.sectionViewportPosition(finished) + min(header.sectionSize(finished) // 2, 30)
        before = session.filter
        user.click(header, "click the Finished header", pos=QPoint(pos, header.height() // 2))
        wait_for(qtbot, lambda before=before: ready(window) and session.filter != before)
    raise AssertionError(f"not sorted newest finished first: {session.filter}")


def page_down(bar: QScrollBar) -> QPoint:
    return page_right(bar)


def page_right(bar: QScrollBar) -> QPoint:
    """A point on a scroll bar's track right of (or below) its handle: a click there pages on."""
    option = QStyleOptionSlider()
    bar.initStyleOption(option)
    rect = bar.style().subControlRect(
        QStyle.ComplexControl.CC_ScrollBar, option, QStyle.SubControl.SC_ScrollBarAddPage, bar
    )
    assert min(rect.width(), rect.height()) > 2, "the scroll bar's handle already touches its end"
    return rect.center()


def test_a_producer_finds_the_most_recent_failure_and_reads_why(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    _ids, latest = failures(builder)
    window = opened(qtbot, make_window, builder.production.location, builder.production.clock)  # type: ignore[arg-type]
    user = User(window)
    find_most_recent_failure(qtbot, window, user, latest)
    failure = window.detail.failure
    assert in_view(failure).height() == failure.height() > 0  # all of it on screen
    assert "moov atom not found" in failure.toPlainText()
    assert failure.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse
    done = user.done()
    assert len(done) <= MOST_RECENT_FAILURE, done


def test_a_from_the_lifecycle_diagram_the_failed_state_lists_the_most_recent_failure_first(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    """The same question from the production's lifecycle diagram (the detail panel as the
    window opens): its Failed state lists the failed jobs as the card does."""
    _ids, latest = failures(builder)
    window = opened(qtbot, make_window, builder.production.location, builder.production.clock)  # type: ignore[arg-type]
    user = User(window)
    view, node = window.detail.diagram, window.detail.scene.nodes[JobState.FAILED]
    point = view.mapFromScene(node.sceneBoundingRect().center())
    user.click(view.viewport(), "click Failed in the lifecycle diagram", point)
    wait_for(qtbot, lambda: ready(window) and window.session.filter.state is JobState.FAILED)  # type: ignore[union-attr]
    wait_for(qtbot, lambda: ready(window) and listed(window)[:1] == [latest])
    user.click_row(window.table, 0, column("kind"), "click the first row")
    wait_for(qtbot, lambda: shown_job(window) == latest)
    assert "moov atom not found" in window.detail.failure.toPlainText()
    done = user.done()
    assert len(done) <= MOST_RECENT_FAILURE, done


def test_a_from_the_whole_list_the_finished_header_puts_what_finished_last_first(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    """The same question from the list of every job: the Finished column's first click lists
    what finished last first, and the column stays in view (a sort keeps the table's scroll)."""
    _ids, latest = failures(builder)
    window = opened(qtbot, make_window, builder.production.location, builder.production.clock)  # type: ignore[arg-type]
    user = User(window)
    sort_by_finished(qtbot, window, user)
    table, header = window.table, window.table.horizontalHeader()
    wait_for(qtbot, lambda: ready(window) and listed(window)[0] == latest)
    left = header.sectionViewportPosition(column("finished"))
    assert left >= 0 and left + 20 <= table.viewport().width()  # the column clicked is in view
    user.click_row(table, 0, column("finished"), "click the first row")
    wait_for(qtbot, lambda: shown_job(window) == latest)
    assert "moov atom not found" in window.detail.failure.toPlainText()
    done = user.done()
    assert len(done) <= FINISHED_HEADER, done


def test_b_a_producer_retries_that_failed_job(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    _ids, latest = failures(builder)
    window = opened(qtbot, make_window, builder.production.location, builder.production.clock)  # type: ignore[arg-type]
    user = User(window)
    find_most_recent_failure(qtbot, window, user, latest)
    user.answer("Retry", "confirm: Retry")
    user.click(window.detail.farm, "click Retry… in the job's detail")
    production = builder.production
    wait_for(qtbot, lambda: production.job(latest).retried_as is not None)
    again = production.job(latest).retried_as
    assert again is not None and production.job(again).state is JobState.REQUESTED
    assert production.job(again).retry_of == latest
    wait_for(qtbot, lambda: shown_job(window) == again)  # the new job is shown
    done = user.done()
    assert len(done) <= RETRY, done


# --- (c): the editor -------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["shortcut", "row menu"])
def test_c_an_editor_regenerates_what_a_redelivered_original_made_stale(
    qtbot: Any,
    make_window: WindowFactory,
    tmp_path: Path,
    clip: Any,  # noqa: F811 - the fixture
    how: str,
) -> None:
    """The Artifacts tab, then "Regenerate stale downstream" on the original: by its shortcut
    (named in the Artifacts menu and the row's menu) once the row is selected, or with the
    mouse alone from the row's menu (the right click selects the row)."""
    path, original, _thumb_job = make_show(tmp_path, clip)
    window = opened(qtbot, make_window, path, None)
    stale = window.summary.stale_card
    wait_for(qtbot, lambda: stale.count_text == "2", timeout=10_000)
    user = User(window)
    bar = window.tabs.tabBar()
    user.click(bar, "click the Artifacts tab", bar.tabRect(ARTIFACTS).center())
    table = window.knowledge.artifacts.table
    proxy = table.model()
    wait_for(qtbot, lambda: row_of(proxy, str(original)) is not None)
    row = row_of(proxy, str(original))
    assert row is not None
    user.answer("Enqueue 2 jobs", "confirm the preview: Enqueue 2 jobs")
    if how == "shortcut":
        user.click_row(table, row, 1, "click the original's row")
        assert window.knowledge.targets() == [original]
        user.press(Qt.Key.Key_D, "Ctrl+Shift+D: regenerate stale downstream", CTRL_SHIFT)
    else:
        user.choose("Regenerate stale downstream…", "choose Regenerate stale downstream… in its menu")
        user.click_row(table, row, 1, "right-click the original's row", button=RIGHT)
    the_farm_brings_stale_to_zero(qtbot, window, path)
    done = user.done()
    assert len(done) <= STALE_TO_ZERO, done


def test_c_from_the_stale_card_an_editor_regenerates_the_stale_artifacts(
    qtbot: Any,
    make_window: WindowFactory,
    tmp_path: Path,
    clip: Any,  # noqa: F811 - the fixture
) -> None:
    """The same task from the Stale card: it lists the two stale artifacts; both selected,
    *Plan regeneration* previews them as one graph (the thumbnail waits for the new proxy)."""
    path, _original, _thumb_job = make_show(tmp_path, clip)
    window = opened(qtbot, make_window, path, None)
    stale = window.summary.stale_card
    wait_for(qtbot, lambda: stale.count_text == "2", timeout=10_000)
    user = User(window)
    user.click(stale, "click the Stale artifacts card")
    table = window.knowledge.artifacts.table
    wait_for(qtbot, lambda: window.tabs.currentIndex() == ARTIFACTS and table.model().rowCount() == 2)
    user.click_row(table, 0, 1, "click the first stale artifact")
    user.click_row(table, 1, 1, "Shift+click the second", keys=Qt.KeyboardModifier.ShiftModifier)
    assert len(window.knowledge.targets()) == 2
    user.answer("Enqueue 2 jobs", "confirm the preview: Enqueue 2 jobs")
    plan = button_for(window.knowledge.artifacts, window.knowledge.actions.plan)
    user.click(plan, "click Plan regeneration… above the table")
    the_farm_brings_stale_to_zero(qtbot, window, path)
    done = user.done()
    assert len(done) <= STALE_CARD_TO_ZERO, done


def button_for(parent: QWidget, action: QAction) -> QToolButton:
    (button,) = [b for b in parent.findChildren(QToolButton) if b.defaultAction() is action]
    return button


def the_farm_brings_stale_to_zero(qtbot: Any, window: MainWindow, path: Path) -> None:
    """Two regeneration jobs requested, the thumbnail's waiting for the proxy's; the workers
    run them (the farm, not the user); the Stale card reaches 0 and the store agrees."""
    with Production.open(path, read_only=True) as production:
        wait_for(qtbot, lambda: len(production.jobs(state=JobState.REQUESTED).items) == 2, timeout=10_000)
        assert sum(bool(j.waiting_on) for j in production.jobs(state=JobState.REQUESTED).items) == 1
    run_worker(path)
    wait_for(qtbot, lambda: window.summary.stale_card.count_text == "0", timeout=20_000)
    with Production.open(path, read_only=True) as production:
        assert production.stale_artifacts().items == ()
        assert not production.jobs(state=JobState.REQUESTED).items


def row_of(model: Any, rep_id: str) -> int | None:
    for row in range(model.rowCount()):
        if str(model.index(row, 0).data(REPRESENTATION_ID_ROLE)) == rep_id:
            return row
    return None


# --- (d) and (e): the supervisor -------------------------------------------------------------


def cancel_the_stuck_claim(qtbot: Any, window: MainWindow, user: User, stuck: JobId) -> None:
    session = window.session
    assert session is not None
    user.click(window.summary.stuck_card, "click the Stuck claims card")
    wait_for(qtbot, lambda: ready(window) and session.filter.stuck and listed(window) == [stuck])
    user.click_row(window.table, 0, column("claimed_by"), "click the stuck claim's row")
    wait_for(qtbot, lambda: shown_job(window) == stuck)
    user.answer("Cancel 1 job", "confirm: Cancel 1 job")
    user.press(Qt.Key.Key_Delete, "Del: cancel the selected job")


def test_d_a_supervisor_cancels_a_stuck_claim(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder, clock: FakeClock
) -> None:
    farm = build_farm(builder, clock)  # render-03 went quiet 5 minutes ago holding a claim
    (stuck,) = farm.running["render-03"]
    window = opened(qtbot, make_window, builder.production.location, clock)
    user = User(window)
    cancel_the_stuck_claim(qtbot, window, user, stuck)
    wait_for(qtbot, lambda: builder.production.job(stuck).state is JobState.CANCELLED)
    assert all(builder.production.job(j).state is JobState.CLAIMED for j in farm.running["render-01"])
    done = user.done()
    assert len(done) <= CANCEL_STUCK, done


def test_d_on_postgresql_a_supervisor_cancels_a_stuck_claim(
    qtbot: Any,
    make_window: WindowFactory,
    pg_builder: ProductionBuilder,  # noqa: F811 - the fixture
    postgres_uri: str,
) -> None:
    ids = pg_builder.request(6)
    pg_builder.claim(ids[0], seconds=600, agent="render-01")  # a live claim
    pg_builder.claim(ids[1], seconds=1, agent="render-03")  # its worker stops renewing
    production = pg_builder.production
    wait_for(qtbot, lambda: [c.id for c in production.claims_expiring().items] == [ids[1]])  # it expired
    window = opened(qtbot, make_window, postgres_uri, None)
    user = User(window)
    cancel_the_stuck_claim(qtbot, window, user, ids[1])
    wait_for(qtbot, lambda: production.job(ids[1]).state is JobState.CANCELLED)
    assert production.job(ids[0]).state is JobState.CLAIMED
    done = user.done()
    assert len(done) <= CANCEL_STUCK, done


def test_e_a_supervisor_finds_a_job_by_its_ticket_number(
    qtbot: Any, make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    production = builder.production
    with production.edit(message="Request 300 jobs with tickets") as tx:
        tickets = {}
        for n in range(300):
            job = tx.request_job(
                JobRequest(KIND, [builder.rep], builder.asset, RepresentationKind.PROXY, "proxies")
            )
            tx.add_metadata(JobRef(job), TICKET, StringValue(f"TCK-{54100 + n:06d}"))
            tickets[f"TCK-{54100 + n:06d}"] = job
        tx.commit()
    wanted = tickets["TCK-054321"]
    window = opened(qtbot, make_window, production.location, production.clock)  # type: ignore[arg-type]
    session = window.session
    assert session is not None and wanted not in listed(window)[:40]  # not on the first screen
    user = User(window)
    user.press(Qt.Key.Key_F, "Ctrl+F: the search field", Qt.KeyboardModifier.ControlModifier)
    user.type("TCK-054321", "type the ticket number")
    wait_for(qtbot, lambda: ready(window) and listed(window) == [wanted])
    user.click_row(window.table, 0, column("kind"), "click the job found")
    wait_for(qtbot, lambda: shown_job(window) == wanted)
    params = window.detail.param_model
    assert [params.record(r)[2] for r in range(params.rowCount())] == ["TCK-054321"]
    done = list(user.done())
    assert len(done) <= FIND_TICKET, done
    # The ticket itself is in the Parameters, below the diagram, the facts and the attempts:
    # reading it takes the detail paged down (what the count above leaves out).
    view = window.detail.params_view
    bar = window.detail.findChild(QScrollArea).verticalScrollBar()  # type: ignore[union-attr]
    for _ in range(6):
        if in_view(view).height() == view.height():
            break
        user.click(bar, "click the detail's scroll bar below its handle", page_down(bar))
    assert in_view(view).height() == view.height(), "the ticket never came into view"
    assert len(user.done()) <= TICKET_READ, user.done()
