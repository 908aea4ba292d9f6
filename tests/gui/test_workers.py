"""The farm in the monitor (issue 13, item 9): the Workers tab, liveness and its notifications,
the attempts timeline, the farm actions, the Priority column and the worker in "Claimed by",
and worker utilisation on the dashboard. Real productions with workers registered through
the core (``register_worker`` / ``heartbeat`` on a FakeClock)."""

from __future__ import annotations

import json
import shlex
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from postproject import FakeClock, JobRef, JobState, Production, Property, RepresentationKind
from postproject.model.jobs import AttemptOutcome
from postproject.model.workers import OFFLINE_AFTER, WorkerState
from postproject_gui.dialogs.farm_dialogs import ConfirmDialog, PriorityDialog
from postproject_gui.dialogs.request_job_dialog import RequestJobDialog
from postproject_gui.models import roles
from postproject_gui.models.columns import COLUMNS, column
from postproject_gui.models.dashboard_data import DashboardData
from postproject_gui.models.worker_model import ATTEMPT_KEYS, WORKER_KEYS, AttemptTableModel, WorkerTableModel
from postproject_gui.services import reads, writes
from postproject_gui.services.filters import JobFilter
from postproject_gui.services.types import RequestSpec, liveness
from postproject_gui.text import cli_command, timefmt
from postproject_gui.window.main_window import DASHBOARD, JOBS, WORKERS, MainWindow
from tests.gui.conftest import WindowFactory
from tests.gui.farm_scene import Farm, build_farm, claim_as
from tests.gui.helpers import KIND, ProductionBuilder, ready, wait_for


@pytest.fixture
def farm(builder: ProductionBuilder, clock: FakeClock) -> Farm:
    return build_farm(builder, clock)


@pytest.fixture
def window(
    make_window: WindowFactory, builder: ProductionBuilder, clock: FakeClock, farm: Farm
) -> MainWindow:
    return make_window(builder.production.location, clock)


def workers_shown(window: MainWindow) -> dict[str, str]:
    model = window.workers.model
    return {model.worker(r).name: model.text(model.worker(r), "state") for r in range(model.rowCount())}


def show_workers(qtbot: Any, window: MainWindow) -> None:
    window.tabs.setCurrentIndex(WORKERS)
    wait_for(qtbot, lambda: window.workers.ready and window.workers.model.rowCount() > 0)


# --- models ------------------------------------------------------------------------------


def test_worker_and_attempt_models_pass_the_model_tester(
    qtmodeltester: Any, builder: ProductionBuilder, clock: FakeClock, farm: Farm
) -> None:
    production = builder.production
    workers = reads.workers(production, clock.now())
    model = WorkerTableModel(clock.now)
    model.set_list(workers)
    qtmodeltester.check(model, force_py=True)
    assert [model.worker(r).name for r in range(3)] == ["render-01", "render-02", "render-03"]
    index = model.index(0, 5)
    assert index.data() == "1/2" and model.index(2, 0).data() == "Offline"
    assert model.index(0, 0).data(roles.WORKER_ROLE) == "render-01"
    model.set_list(reads.workers(production, clock.now()))  # the same names: updated in place
    qtmodeltester.check(model, force_py=True)
    attempts = AttemptTableModel(clock.now)
    attempts.set_attempts("render-02", reads.worker_attempts(production, "render-02"))
    qtmodeltester.check(attempts, force_py=True)
    assert attempts.rowCount() == 1 and attempts.index(0, 0).data() == "lost"
    assert attempts.index(0, 0).data(roles.JOB_ID_ROLE) == str(attempts.attempt(0).job_id)


# --- the Workers tab ---------------------------------------------------------------------


def test_workers_tab_shows_liveness_capacity_outcomes_and_attempts(
    qtbot: Any, window: MainWindow, builder: ProductionBuilder, clock: FakeClock, farm: Farm
) -> None:
    show_workers(qtbot, window)
    tab = window.workers
    assert workers_shown(window) == {"render-01": "Online", "render-02": "Online", "render-03": "Offline"}
    with Production.open(
        builder.production.location, read_only=True, clock=clock, allow_injected_clock=True
    ) as production:
        truth = {w.name: w for w in production.workers()}
    model = tab.model
    row = model.row_of("render-01")
    assert row is not None
    assert model.index(row, 5).data() == f"{len(truth['render-01'].running)}/2"
    assert model.index(row, 7).data() == "1"  # its failed attempt
    assert "3 workers · 2 online · 1 offline · capacity used <b>1/3</b>" in tab.summary.text().replace(
        "<b>3</b>", "3"
    )
    assert tab.selected_name() == "render-01"  # the first worker is selected: its attempts show
    wait_for(qtbot, lambda: tab.ready and tab.attempts.rowCount() == 2)
    assert [a.attempt.outcome for a in tab.attempts.attempts()] == [None, AttemptOutcome.FAILED]
    assert tab.select_worker("render-02")
    wait_for(qtbot, lambda: tab.ready and tab.attempts.worker == "render-02")
    assert [(a.job_id, a.attempt.outcome) for a in tab.attempts.attempts()] == [
        (farm.lost, AttemptOutcome.LOST)
    ]
    # Double-clicking an attempt shows its job in the Jobs tab.
    tab.attempt_table.doubleClicked.emit(tab.attempts.index(0, 1))
    assert window.tabs.currentIndex() == JOBS
    wait_for(qtbot, lambda: window.detail.detail is not None)
    assert window.detail.detail is not None and window.detail.detail.job.id == farm.lost


def test_liveness_and_ages_move_with_the_clock_and_offline_is_notified_once(
    qtbot: Any, window: MainWindow, builder: ProductionBuilder, clock: FakeClock, farm: Farm
) -> None:
    show_workers(qtbot, window)
    session = window.session
    assert session is not None
    window.notifier.set_enabled(True)
    offline: list[list[str]] = []
    session.workers.went_offline.connect(offline.append)
    clock.advance(timedelta(seconds=20))
    farm.heartbeat(builder, "render-02")  # render-01 stops sending heartbeats
    clock.advance(timedelta(seconds=15))  # render-01 last seen 35 s ago
    window.workers.model.tick()
    assert workers_shown(window)["render-01"] == "Offline"  # derived at once, no read needed
    age = window.workers.model
    assert age.index(age.row_of("render-01") or 0, 3).data() == "35s ago"
    session.workers.refresh()  # what the liveness boundary timer does
    wait_for(qtbot, lambda: offline == [["render-01"]])
    window.notifier.flush()
    assert [n.topic for n in window.notifier.sent] == ["offline"]
    assert "render-01" in window.notifier.sent[0].text
    session.workers.refresh()  # still offline: not told again
    qtbot.wait(100)
    wait_for(qtbot, lambda: not session.workers.reading)
    assert offline == [["render-01"]]
    assert liveness(session.workers.current.worker("render-02"), clock.now()) is WorkerState.ONLINE  # type: ignore[union-attr]


def test_polling_runs_only_while_workers_or_the_dashboard_are_shown(qtbot: Any, window: MainWindow) -> None:
    session = window.session
    assert session is not None
    window.tabs.setCurrentIndex(JOBS)
    assert not session.workers.polling
    window.tabs.setCurrentIndex(WORKERS)
    assert session.workers.polling
    window.tabs.setCurrentIndex(DASHBOARD)
    assert session.workers.polling
    window.tabs.setCurrentIndex(JOBS)
    assert not session.workers.polling


def test_a_worker_registering_elsewhere_reaches_the_tab_through_the_feed(
    qtbot: Any, window: MainWindow, builder: ProductionBuilder
) -> None:
    window.tabs.setCurrentIndex(JOBS)  # no polling: only the feed can tell
    with builder.production.edit() as tx:
        tx.register_worker("render-04", capacity=4, host="node-d")
        tx.commit()
    wait_for(qtbot, lambda: window.workers.model.row_of("render-04") is not None, timeout=8000)
    assert workers_shown(window)["render-04"] == "Online"


def test_snapshot_mode_stays_read_only_and_never_sweeps(
    qtbot: Any, window: MainWindow, builder: ProductionBuilder, clock: FakeClock
) -> None:
    show_workers(qtbot, window)
    window.tabs.setCurrentIndex(JOBS)
    with Production.open(
        builder.production.location, read_only=True, clock=clock, allow_injected_clock=True
    ) as production:
        assert len(production.claims_expiring().items) == 1  # render-03's claim stays stuck


# --- the job detail ----------------------------------------------------------------------


def test_job_detail_shows_attempts_scheduling_and_retry_links(
    qtbot: Any, window: MainWindow, farm: Farm
) -> None:
    assert farm.retried is not None
    original, retry = farm.retried
    window.select_job(original)
    wait_for(qtbot, lambda: window.detail.detail is not None and window.detail.detail.job.id == original)
    facts = window.detail.facts
    assert f"job:{retry}" in facts.text("retried_as") and facts.values["retry_of"].isHidden()
    assert facts.text("priority").startswith("0")
    assert facts.text("attempts").startswith("1 (no limit) — failed")
    attempts = window.detail.attempt_model
    assert attempts.rowCount() == 1 and attempts.record(0)[:3] == ("1", "failed", "render-01")
    assert window.detail.farm.isHidden()  # already retried: no second Retry
    facts.link_activated.emit(f"job:{retry}")  # the link shows the retry
    wait_for(qtbot, lambda: window.detail.detail is not None and window.detail.detail.job.id == retry)
    assert f"job:{original}" in facts.text("retry_of")
    assert window.detail.attempts_title.text() == "Attempts — none yet"
    assert window.detail.farm.text() == "Priority…" and not window.detail.farm.isHidden()


def test_claimed_by_names_the_worker_and_priority_is_a_column(
    qtbot: Any, window: MainWindow, farm: Farm
) -> None:
    session = window.session
    assert session is not None
    job = farm.running["render-01"][0]
    row = session.table.row_of(job)
    assert row is not None
    assert session.table.index(row, column("claimed_by")).data() == "render-01 · ffmpeg 6.1"
    priority = next(c for c in COLUMNS if c.key == "priority")
    assert not priority.visible and session.table.index(row, column("priority")).data() == "0"
    assert window.table.isColumnHidden(column("priority"))
    session.set_filter(JobFilter(text="render-01"))  # the search knows workers too: every job
    # that ran there (the store searches attempts), the running one and the one that failed
    wait_for(qtbot, lambda: not session.busy and session.table.rowCount() == 2)
    assert job in {session.table.row(i).id for i in range(2)}


# --- actions -----------------------------------------------------------------------------


def confirm_all(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    asked: list[tuple[Any, ...]] = []
    monkeypatch.setattr(
        ConfirmDialog, "ask", classmethod(lambda cls, *args, **kw: asked.append(args) or True)
    )
    return asked


def test_retry_requests_failed_and_cancelled_jobs_again_in_one_transaction(
    qtbot: Any,
    window: MainWindow,
    builder: ProductionBuilder,
    clock: FakeClock,
    farm: Farm,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked = confirm_all(monkeypatch)
    session = window.session
    assert session is not None
    cancelled = farm.waiting[0]
    builder.cancel(cancelled)
    wait_for(
        qtbot,
        lambda: (
            ready(window)
            and session.table.row(session.table.row_of(cancelled) or 0).job.state is JobState.CANCELLED
        ),
    )
    head = session.applied_revision
    rows = [session.table.row(session.table.row_of(j) or 0) for j in (cancelled, farm.waiting[1])]
    window.jobs.retry_rows(rows)
    assert asked and asked[0][1] == "retryDialog"
    assert asked[0][4] == cli_command.retry(
        builder.production.location, [cancelled]
    )  # the equivalent command
    wait_for(qtbot, lambda: session.applied_revision == head + 1)
    with Production.open(
        builder.production.location, read_only=True, clock=clock, allow_injected_clock=True
    ) as production:
        again = production.job(cancelled).retried_as
        assert again is not None and production.job(again).retry_of == cancelled
        assert production.job(again).state is JobState.REQUESTED
    wait_for(qtbot, lambda: window.detail.detail is not None and window.detail.detail.job.id == again)


def test_requeue_returns_a_live_claim_and_fences_its_worker(
    qtbot: Any,
    window: MainWindow,
    builder: ProductionBuilder,
    clock: FakeClock,
    farm: Farm,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked = confirm_all(monkeypatch)
    session = window.session
    assert session is not None
    job = farm.running["render-01"][0]
    window.select_job(job)
    wait_for(qtbot, lambda: window.detail.detail is not None and window.detail.detail.job.id == job)
    assert window.detail.farm.text() == "Requeue…"
    assert any(t.action.value == "requeue" for t in window.detail.scene.state.offered)
    window.detail.farm.click()
    assert asked[0][1] == "requeueDialog" and "render-01" in asked[0][3]  # names the live holder
    wait_for(qtbot, lambda: session.table.row(session.table.row_of(job) or 0).job.state is JobState.REQUESTED)
    with Production.open(
        builder.production.location, read_only=True, clock=clock, allow_injected_clock=True
    ) as production:
        attempts = production.job(job).attempts
        assert attempts[-1].outcome is AttemptOutcome.RELEASED and attempts[-1].worker == "render-01"


def test_change_priority_on_requested_jobs(
    qtbot: Any,
    window: MainWindow,
    builder: ProductionBuilder,
    clock: FakeClock,
    farm: Farm,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    commands: list[str] = []
    monkeypatch.setattr(
        PriorityDialog, "ask", classmethod(lambda cls, parent, rows, command: commands.append(command) or 750)
    )
    session = window.session
    assert session is not None
    rows = [session.table.row(session.table.row_of(j) or 0) for j in farm.waiting[:2]]
    window.jobs.prioritize_rows(rows)
    assert commands and "{PRIORITY}" in commands[0]
    wait_for(
        qtbot,
        lambda: all(
            session.table.row(session.table.row_of(j) or 0).job.priority == 750 for j in farm.waiting[:2]
        ),
    )
    with Production.open(
        builder.production.location, read_only=True, clock=clock, allow_injected_clock=True
    ) as production:
        assert [production.job(j).priority for j in farm.waiting[:3]] == [750, 750, 0]


def test_finalize_lost_work_is_an_explicit_action(
    qtbot: Any,
    window: MainWindow,
    builder: ProductionBuilder,
    clock: FakeClock,
    farm: Farm,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked = confirm_all(monkeypatch)
    session = window.session
    assert session is not None
    stuck = farm.running["render-03"][0]
    assert session.outlook is not None and [c.job_id for c in session.outlook.stuck(clock.now())] == [stuck]
    messages: list[str] = []
    window.jobs.status.connect(messages.append)
    window.tabs.setCurrentIndex(WORKERS)
    window.workers.finalize.click()
    assert asked[0][1] == "finalizeDialog" and asked[0][4] == cli_command.sweep(
        builder.production.location, 100
    )
    wait_for(qtbot, lambda: any(m.startswith("Finalized 1 lost claim") for m in messages))
    with Production.open(
        builder.production.location, read_only=True, clock=clock, allow_injected_clock=True
    ) as production:
        job = production.job(stuck)
        assert job.state is JobState.REQUESTED and job.attempts[-1].outcome is AttemptOutcome.LOST
    window.jobs.finalize_lost_work()  # nothing left: says so, commits nothing
    wait_for(qtbot, lambda: messages[-1].startswith("Nothing to finalize"))


def test_request_similar_prefills_the_dialog_with_scheduling(
    qtbot: Any, window: MainWindow, farm: Farm, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[RequestSpec | None] = []
    monkeypatch.setattr(
        RequestJobDialog, "ask", classmethod(lambda cls, parent, choices, path, initial: seen.append(initial))
    )
    assert farm.retried is not None
    window.select_job(farm.retried[0])
    wait_for(qtbot, lambda: window.detail.detail is not None)
    window.detail.similar.click()
    wait_for(qtbot, lambda: bool(seen))
    spec = seen[0]
    assert spec is not None and spec.kind == KIND and spec.priority == 0 and spec.idempotency_key is None


def test_request_dialog_round_trips_scheduling_and_previews_the_command(
    qtbot: Any, window: MainWindow, qloop: Any, builder: ProductionBuilder, clock: FakeClock
) -> None:
    session = window.session
    assert session is not None
    choices = qloop.run(session.service.request_choices())
    when = clock.now() + timedelta(hours=2)
    spec = RequestSpec(
        KIND,
        (builder.rep,),
        builder.asset,
        RepresentationKind.PROXY,
        "proxies",
        (),
        priority=7,
        not_before=when.replace(microsecond=0),
        max_attempts=3,
        idempotency_key="dailies-0142",
    )
    dialog = RequestJobDialog(choices, builder.production.location)
    qtbot.addWidget(dialog)
    dialog.set_spec(spec)
    assert dialog.spec() == spec
    text = dialog.preview.text()
    assert "--priority 7" in text and "--max-attempts 3" in text and "--idempotency-key dailies-0142" in text
    assert f"--not-before {when.replace(microsecond=0).isoformat()}" in text
    dialog.priority.setValue(0)
    dialog.max_attempts.setValue(0)
    dialog.not_before_on.setChecked(False)
    dialog.key.clear()
    assert (dialog.spec().priority, dialog.spec().max_attempts, dialog.spec().not_before) == (0, None, None)
    assert "--priority" not in dialog.preview.text()


def test_a_keyed_request_replayed_returns_the_original_and_commits_nothing(
    builder: ProductionBuilder,
) -> None:
    production = builder.production
    spec = RequestSpec(
        KIND,
        (builder.rep,),
        builder.asset,
        RepresentationKind.PROXY,
        "proxies",
        ((Property("https://postproject.org/ns/executor", "profile"), "proxy-720p"),),
        priority=5,
        idempotency_key="edl-7",
    )
    first, revision = writes.request_job(production, spec)
    head = production.latest_sequence()
    again, replayed = writes.request_job(production, spec)
    assert (again, replayed) == (first, None) and revision is not None
    assert production.latest_sequence() == head  # nothing new, no duplicated parameters
    assert len(production.metadata[JobRef(first)]) == 1


# --- the dashboard -----------------------------------------------------------------------


def test_utilisation_is_time_weighted_from_samples() -> None:
    now = datetime(2026, 1, 1, 12, 0, 30, tzinfo=UTC)
    data = DashboardData(loaded=True)
    data.sample(now - timedelta(minutes=2, seconds=30), 1, 2)  # 50 % from 11:58:00 ...
    data.sample(now - timedelta(minutes=2), 2, 2)  # ... then 100 % from 11:58:30
    data.sample(now - timedelta(minutes=1, seconds=50), 2, 2)  # unchanged: not kept
    assert len(data.samples) == 2
    series = data.series(now, "hour")
    assert series.utilisation[-4] is None  # before the first sample
    assert series.utilisation[-3] == pytest.approx(75.0)
    assert series.utilisation[-2] == series.utilisation[-1] == pytest.approx(100.0)
    assert series.document()["utilisation"][-3] == 75.0


def test_the_dashboard_samples_utilisation_from_the_workers(
    qtbot: Any, window: MainWindow, farm: Farm
) -> None:
    window.tabs.setCurrentIndex(DASHBOARD)
    wait_for(qtbot, lambda: window.dashboard.ready and window.dashboard.data.samples)
    window.dashboard.redraw()
    series = window.dashboard.series
    assert series is not None
    assert series.utilisation[-1] == pytest.approx(100.0 / 3)  # 1 of the 3 online slots in use
    assert (
        window.dashboard.model.index(len(series.starts) - 1, window.dashboard.model.columnCount() - 1).data()
        == "33%"
    )


def test_the_scene_is_real_capacity_is_enforced(builder: ProductionBuilder, farm: Farm) -> None:
    """render-02 (capacity 1) holding a claim cannot take another."""
    from postproject import ConflictError

    claim_as(builder, farm.sessions["render-02"], farm.waiting[0])
    with pytest.raises(ConflictError):
        claim_as(builder, farm.sessions["render-02"], farm.waiting[1])


def test_snapshot_view_workers_lists_the_workers_shown(tmp_path: Path) -> None:
    """``--view workers`` in a real process (its clock is the system's: the farm is built so that
    its last heartbeats are now)."""
    from tests.gui.test_snapshot import PNG, monitor

    clock = FakeClock(datetime.now(UTC) - timedelta(minutes=4, seconds=45))
    with Production.create(tmp_path / "farm.pproj", clock=clock, allow_injected_clock=True) as production:
        farm = build_farm(ProductionBuilder(production, tmp_path / "media"), clock)
    out = tmp_path / "workers.png"
    done = monitor(tmp_path / "farm.pproj", "--snapshot", out, "--view", "workers", "--size", "1024x700")
    assert done.returncode == 0, done.stderr
    assert out.read_bytes().startswith(PNG) and "3 workers" in done.stdout
    shown = json.loads(out.with_suffix(".json").read_text())
    assert shown["view"] == "workers" and shown["size"] == [1024, 700]
    read_at = datetime.fromisoformat(shown["workers_read_at"])
    assert [w["name"] for w in shown["workers"]] == ["render-01", "render-02", "render-03"]
    for worker in shown["workers"]:
        fresh = read_at - datetime.fromisoformat(worker["last_seen"]) <= OFFLINE_AFTER
        assert worker["state"] == ("online" if fresh else "offline")
    assert shown["workers"][2]["state"] == "offline" and shown["workers"][0]["capacity"] == 2
    assert shown["selected_worker"] == "render-01"
    assert [a["outcome"] for a in shown["attempts"]] == [None, "failed"]
    assert shown["attempts"][0]["job_id"] == str(farm.running["render-01"][0])


def test_cli_commands_of_the_farm_actions(builder: ProductionBuilder, farm: Farm) -> None:
    location = builder.production.location
    path = shlex.quote(location)
    job = farm.waiting[0]
    assert cli_command.retry(location, [job]) == f"postproject job retry {path} {job}"
    assert cli_command.requeue(location, [job]) == f"postproject job requeue {path} {job}"
    assert cli_command.sweep(location, 100) == f"postproject job sweep {path} --limit 100"
    assert cli_command.priority(location, [job], 5) == f"postproject job priority {path} {job} 5"
    line = cli_command.request_line(
        location,
        KIND,
        [builder.rep],
        builder.asset,
        RepresentationKind.PROXY,
        None,
        priority=-3,
        max_attempts=2,
        idempotency_key="a b",
    )
    assert line.endswith("--priority -3 --max-attempts 2 --idempotency-key 'a b'")


def test_detail_actions_move_below_the_tools_when_the_panel_is_narrow(
    qtbot: Any, window: MainWindow, farm: Farm
) -> None:
    job = farm.running["render-01"][0]
    window.select_job(job)
    wait_for(qtbot, lambda: window.detail.detail is not None and window.detail.detail.job.id == job)
    detail = window.detail
    window.jobs_page.splitter.setSizes([400, 1000])
    qtbot.wait(50)
    assert detail._tools_row.indexOf(detail._actions) >= 0
    window.jobs_page.splitter.setSizes([1000, 390])
    qtbot.wait(50)
    assert detail._actions_row.indexOf(detail._actions) >= 0
    assert detail.farm.width() >= detail.farm.sizeHint().width()  # never squeezed


def test_an_expired_claim_never_reads_running_and_a_lost_attempt_names_its_worker_and_time(
    qtbot: Any, window: MainWindow, builder: ProductionBuilder, clock: FakeClock, farm: Farm
) -> None:
    """Issue 26 item 10: render-03's claim expired without renewal, yet its attempt read
    "running"; render-02's lost attempt named nobody and no time."""
    show_workers(qtbot, window)
    tab = window.workers
    assert tab.select_worker("render-03")
    wait_for(qtbot, lambda: tab.ready and tab.attempts.worker == "render-03" and tab.attempts.rowCount() == 1)
    outcome = tab.attempts.index(0, 0)
    assert outcome.data() == "expired · not renewed"
    assert "without renewal" in outcome.data(Qt.ItemDataRole.ToolTipRole)
    assert tab.select_worker("render-02")
    wait_for(qtbot, lambda: tab.ready and tab.attempts.worker == "render-02" and tab.attempts.rowCount() == 1)
    (lost,) = tab.attempts.attempts()
    assert lost.attempt.outcome is AttemptOutcome.LOST and lost.attempt.ended_at is not None
    diagnostic = tab.attempts.index(0, ATTEMPT_KEYS.index("diagnostic")).data()
    assert "worker render-02" in diagnostic and timefmt.stamp(lost.attempt.ended_at) in diagnostic, diagnostic
    # The job detail's attempts say the same.
    stuck = farm.running["render-03"][0]
    window.select_job(stuck)
    wait_for(qtbot, lambda: window.detail.detail is not None and window.detail.detail.job.id == stuck)
    assert window.detail.attempt_model.record(0)[1] == "expired · not renewed"


@pytest.mark.parametrize(("width", "height"), [(1024, 700), (1440, 900), (1600, 1000)])
def test_the_running_column_is_not_cut_while_kinds_takes_the_spare_width(
    qtbot: Any,
    make_window: WindowFactory,
    builder: ProductionBuilder,
    clock: FakeClock,
    farm: Farm,
    width: int,
    height: int,
) -> None:
    """Issue 26 item 10: render-01 runs two jobs with progress; their texts were cut while
    Kinds, the last column, kept the spare width."""
    second = claim_as(builder, farm.sessions["render-01"], farm.waiting[0], seconds=600)
    for lease, fraction in ((farm.leases[farm.lost], 0.62), (second, 0.3)):
        with builder.production.edit() as tx:
            tx.report_progress(lease, fraction=fraction, stage="encode")
            tx.commit()
    window = make_window(builder.production.location, clock)
    window.resize(width, height)
    show_workers(qtbot, window)
    QApplication.processEvents()
    table, model = window.workers.table, window.workers.model
    running, kinds = WORKER_KEYS.index("running"), WORKER_KEYS.index("kinds")
    row = model.row_of("render-01")
    assert row is not None and "62% · encode" in model.index(row, running).data()
    needed = table.sizeHintForColumn(running)
    header = table.horizontalHeader()
    spare = header.sectionSize(kinds) - table.sizeHintForColumn(kinds)
    assert header.sectionSize(running) >= needed or spare <= 120, (
        header.sectionSize(running),
        needed,
        header.sectionSize(kinds),
    )
    if width >= 1440:
        assert header.sectionSize(running) >= needed
