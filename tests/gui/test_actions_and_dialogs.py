"""Request and cancel through the dialogs (driven through their ask() methods), copy
actions, the diagram's clickable transitions and the error presenter."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QDialog

from postproject import (
    EXECUTOR_VOCABULARY,
    Action,
    FakeClock,
    JobRef,
    JobState,
    RepresentationKind,
    StorageError,
    StringValue,
)
from postproject_gui.app import build_window
from postproject_gui.dialogs.cancel_dialog import CancelDialog
from postproject_gui.dialogs.error_presenter import ErrorPresenter
from postproject_gui.dialogs.request_job_dialog import RequestJobDialog
from postproject_gui.look.theme import ThemeManager, ThemeMode
from postproject_gui.services.types import JobRow, RequestSpec
from postproject_gui.settings import Settings
from postproject_gui.window.main_window import MainWindow
from tests.gui.helpers import KIND, LoopRunner, ProductionBuilder, wait_for


@pytest.fixture
def window(qtbot: Any, qloop: LoopRunner, builder: ProductionBuilder, clock: FakeClock) -> MainWindow:
    main = build_window(Settings.ephemeral(), ThemeManager(ThemeMode.LIGHT), ErrorPresenter(), clock=clock)
    qtbot.addWidget(main)
    main.show()
    return main


def open_and_wait(qtbot: Any, window: MainWindow, builder: ProductionBuilder) -> None:
    window.open_production(builder.production.location)
    wait_for(
        qtbot,
        lambda: (
            window.session is not None and window.session.applied_revision >= 1 and not window.session.busy
        ),
    )


def later(action: Callable[[], None]) -> None:
    """Run ``action`` once the dialog that is about to open is showing."""

    def attempt() -> None:
        dialog = QApplication.activeModalWidget()
        if dialog is None:
            QTimer.singleShot(10, attempt)
        else:
            action()

    QTimer.singleShot(0, attempt)


def test_request_dialog_validates_as_you_type(
    qtbot: Any, qloop: LoopRunner, builder: ProductionBuilder, window: MainWindow
) -> None:
    open_and_wait(qtbot, window, builder)
    choices = qloop.run(window.session.service.request_choices())  # type: ignore[union-attr]
    dialog = RequestJobDialog(choices, builder.production.location)
    qtbot.addWidget(dialog)
    assert KIND in [dialog.kind.itemText(i) for i in range(dialog.kind.count())]
    dialog.kind.setCurrentText("not a kind")
    assert not dialog.ok.isEnabled() and "kind" in dialog.error.text()
    dialog.kind.setCurrentText(KIND)
    dialog.set_inputs([builder.rep])
    dialog.root.setCurrentIndex(dialog.root.findData("proxies"))
    row = dialog.param_model.add("profile", "i64", "not a number")
    assert not dialog.ok.isEnabled() and "parameter 1 (profile)" in dialog.error.text()
    dialog.param_model.setData(dialog.param_model.index(row, 1), "string")
    assert dialog.ok.isEnabled() and dialog.error.text() == ""
    assert "--profile 'not a number'" in dialog.preview.text()
    spec = dialog.spec()
    assert (
        spec.inputs == (builder.rep,)
        and spec.output_asset_id == builder.asset
        and spec.target_root == "proxies"
    )
    assert spec.parameters[0][0].vocabulary == EXECUTOR_VOCABULARY


def test_request_dialog_ask_returns_the_request(
    qtbot: Any, qloop: LoopRunner, builder: ProductionBuilder, window: MainWindow
) -> None:
    open_and_wait(qtbot, window, builder)
    choices = qloop.run(window.session.service.request_choices())  # type: ignore[union-attr]

    def fill_and_accept() -> None:
        dialog = QApplication.activeModalWidget()
        assert isinstance(dialog, RequestJobDialog)
        dialog.set_inputs([builder.rep])
        dialog.param_model.add("profile", "string", "proxy-720p")
        qtbot.mouseClick(dialog.ok, Qt.MouseButton.LeftButton)

    later(fill_and_accept)
    spec = RequestJobDialog.ask(window, choices, builder.production.location)
    assert (
        spec is not None
        and spec.inputs == (builder.rep,)
        and spec.parameters[0][1] == StringValue("proxy-720p")
    )
    later(lambda: QApplication.activeModalWidget().reject())  # type: ignore[union-attr]
    assert RequestJobDialog.ask(window, choices) is None


def test_request_action_writes_the_job_and_selects_it(
    qtbot: Any,
    builder: ProductionBuilder,
    window: MainWindow,
    monkeypatch: pytest.MonkeyPatch,
    presented: list[Any],
) -> None:
    open_and_wait(qtbot, window, builder)
    profile = (builder_property(), StringValue("proxy-1080p"))
    spec = RequestSpec(KIND, (builder.rep,), builder.asset, RepresentationKind.PROXY, "proxies", (profile,))
    asked: list[Any] = []
    monkeypatch.setattr(RequestJobDialog, "ask", classmethod(lambda cls, *args: asked.append(args) or spec))
    window.jobs.request.trigger()
    wait_for(qtbot, lambda: window.detail.detail is not None)
    job = window.detail.detail.job  # type: ignore[union-attr]
    assert job.kind == KIND and job.state is JobState.REQUESTED
    assert builder.production.metadata[JobRef(job.id)][0].value == StringValue("proxy-1080p")
    wait_for(qtbot, lambda: window.table.current_row() is not None)
    assert window.table.current_row().id == job.id  # type: ignore[union-attr]
    assert window.status.currentMessage().startswith("Requested job")
    assert not presented


def builder_property() -> Any:
    from postproject import Property

    return Property(EXECUTOR_VOCABULARY, "profile")


def test_cancel_dialog_lists_fenced_claims_and_asks(
    qtbot: Any, builder: ProductionBuilder, clock: FakeClock
) -> None:
    from postproject_gui.services.types import JobRow as Row

    ids = builder.request(3)
    builder.claim(ids[0], seconds=300)
    builder.fail(ids[2], "x")
    rows = [Row(builder.production.job(i)) for i in ids]
    now = clock.now()

    def confirm() -> None:
        dialog = QApplication.activeModalWidget()
        assert isinstance(dialog, CancelDialog)
        assert dialog.windowTitle() == "Cancel 2 jobs?"
        assert "render-07" in dialog.message.text() and "1 already finished" in dialog.message.text()
        assert dialog.model.rowCount() == 3
        assert dialog.keep.isDefault()
        dialog.confirm.click()

    later(confirm)
    assert CancelDialog.ask(None, rows, now) is True
    later(lambda: QApplication.activeModalWidget().reject())  # type: ignore[union-attr]
    assert CancelDialog.ask(None, rows, now) is False
    assert CancelDialog.ask(None, rows[2:], now) is False  # nothing cancellable: no dialog at all


def test_bulk_cancel_through_the_action(
    qtbot: Any,
    builder: ProductionBuilder,
    window: MainWindow,
    monkeypatch: pytest.MonkeyPatch,
    presented: list[Any],
) -> None:
    ids = builder.request(3)
    builder.claim(ids[1], seconds=300)
    open_and_wait(qtbot, window, builder)
    window.table.selectAll()
    seen: list[list[JobRow]] = []
    monkeypatch.setattr(
        CancelDialog, "ask", classmethod(lambda cls, parent, rows, now: seen.append(list(rows)) or True)
    )
    head = builder.production.latest_revision().sequence  # type: ignore[union-attr]
    window.jobs.cancel.trigger()
    session = window.session
    assert session is not None
    wait_for(qtbot, lambda: session.applied_revision == head + 1 and not session.busy)
    assert {r.id for r in seen[0]} == set(ids)
    assert [builder.production.job(i).state for i in ids] == [JobState.CANCELLED] * 3
    assert [session.table.row(i).job.state for i in range(3)] == [JobState.CANCELLED] * 3
    assert window.summary.cards[JobState.CANCELLED].count_text == "3"
    assert window.status.currentMessage() == f"Cancelled 3 jobs in revision {head + 1}"
    assert not presented


def test_cancel_failure_reaches_the_presenter_and_changes_nothing(
    qtbot: Any,
    builder: ProductionBuilder,
    window: MainWindow,
    monkeypatch: pytest.MonkeyPatch,
    presented: list[Any],
) -> None:
    """A failure other than a busy database (see test_busy_and_feed.py) is presented."""
    (job,) = builder.request(1)
    open_and_wait(qtbot, window, builder)
    session = window.session
    assert session is not None

    async def broken(ids: Any) -> Any:
        raise StorageError("database disk image is malformed", reason="corrupt")

    monkeypatch.setattr(session.service, "cancel_jobs", broken)
    monkeypatch.setattr(CancelDialog, "ask", classmethod(lambda cls, *args: True))
    window.table.selectRow(0)
    window.jobs.cancel.trigger()
    wait_for(qtbot, lambda: presented)
    assert presented[0].title == "Cancelling 1 job failed: production unavailable" and not presented[0].retry
    assert builder.production.job(job).state is JobState.REQUESTED
    assert window.status.currentMessage().startswith("Cancelling 1 job failed")
    assert not window.busy.isVisible()
    presented.clear()


def test_diagram_cancel_transition_cancels_the_shown_job(
    qtbot: Any,
    builder: ProductionBuilder,
    window: MainWindow,
    monkeypatch: pytest.MonkeyPatch,
    presented: list[Any],
) -> None:
    (job,) = builder.request(1)
    builder.claim(job, seconds=300)
    open_and_wait(qtbot, window, builder)
    window.select_job(job)
    wait_for(qtbot, lambda: window.detail.detail is not None)
    arrow = window.detail.scene.arrows[(JobState.CLAIMED, JobState.CANCELLED)]
    assert (
        arrow.clickable and not window.detail.scene.arrows[(JobState.CLAIMED, JobState.SUCCEEDED)].clickable
    )
    asked: list[Any] = []
    monkeypatch.setattr(
        CancelDialog, "ask", classmethod(lambda cls, parent, rows, now: asked.append(rows) or True)
    )
    arrow.clicked.emit()
    wait_for(qtbot, lambda: builder.production.job(job).state is JobState.CANCELLED)
    assert [r.id for r in asked[0]] == [job]
    wait_for(
        qtbot,
        lambda: window.detail.detail is not None and window.detail.detail.job.state is JobState.CANCELLED,
    )
    assert (
        window.detail.scene.state.highlighted is JobState.CANCELLED and not window.detail.cancel.isEnabled()
    )


def test_production_diagram_states_filter_and_request_opens_the_dialog(
    qtbot: Any, builder: ProductionBuilder, window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    builder.request(2)
    open_and_wait(qtbot, window, builder)
    scene = window.detail.scene
    assert scene.state.variant == "production" and scene.state.counts[JobState.REQUESTED] == 2
    scene.nodes[JobState.REQUESTED].clicked.emit()
    assert window.session is not None and window.session.filter.state is JobState.REQUESTED
    asked: list[Any] = []
    monkeypatch.setattr(RequestJobDialog, "ask", classmethod(lambda cls, *args: asked.append(args)))
    request_arrow = scene.arrows[(None, JobState.REQUESTED)]
    assert request_arrow.clickable and request_arrow.action is Action.REQUEST
    request_arrow.clicked.emit()
    wait_for(qtbot, lambda: asked)


def test_copy_id_and_cli(qtbot: Any, builder: ProductionBuilder, window: MainWindow) -> None:
    ids = builder.request(2)
    open_and_wait(qtbot, window, builder)
    window.table.selectAll()
    window.jobs.copy_id.trigger()
    assert set(QGuiApplication.clipboard().text().splitlines()) == {str(i) for i in ids}
    window.jobs.copy_cli.trigger()
    wait_for(qtbot, lambda: QGuiApplication.clipboard().text().startswith("postproject job request"))
    lines = QGuiApplication.clipboard().text().splitlines()
    assert len(lines) == 2 and all(f"--input {builder.rep}" in line for line in lines)


def test_dialog_result_codes_are_plain(qtbot: Any) -> None:
    assert QDialog.DialogCode.Accepted != QDialog.DialogCode.Rejected
