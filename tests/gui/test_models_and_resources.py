"""qtmodeltester on the other models, and the resources (themes, icons) the GUI loads."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from postproject import JobState, Revision, RevisionEvent, RevisionId
from postproject_gui.dialogs.request_job_dialog import RequestJobDialog
from postproject_gui.look import resources, theme
from postproject_gui.look.states import HEALTH_LOOKS, STATE_LOOKS
from postproject_gui.models import roles
from postproject_gui.models.event_log_model import MAX_ROWS, EventLogModel
from postproject_gui.models.parameter_model import ParameterModel
from postproject_gui.models.record_model import RecordTableModel
from postproject_gui.services.types import RepresentationChoice, RequestChoices
from postproject_gui.settings import Settings
from tests.gui.test_pure import make_job

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def revision(sequence: int, *events: tuple[str, str]) -> Revision:
    return Revision(
        RevisionId.new(),
        sequence,
        NOW,
        "other-process",
        "Request job",
        tuple(RevisionEvent(i, kind, {"job_id": subject}) for i, (kind, subject) in enumerate(events)),
    )


def test_event_log_model(qtmodeltester: Any) -> None:
    model = EventLogModel()
    qtmodeltester.check(model)
    job = str(make_job().id)
    model.add(
        [
            revision(5, ("job_claimed", job)),
            revision(6, ("job_failed", job), ("job_failed", str(make_job().id))),
        ]
    )
    model.add([revision(4, ("job_requested", job))])  # an older one goes to the bottom
    qtmodeltester.check(model)
    assert [model.entry(r).sequence for r in range(3)] == [6, 5, 4]
    assert model.index(0, 2).data() == "job_failed ×2" and model.index(0, 3).data() == "several"
    assert model.data(model.index(1, 0), roles.JOB_ID_ROLE) == job
    model.add([revision(n, ("job_requested", job)) for n in range(7, 7 + MAX_ROWS)])
    assert model.rowCount() == MAX_ROWS and model.entry(0).sequence == 6 + MAX_ROWS
    qtmodeltester.check(model)


def test_event_log_shows_who_a_service_revision_acted_for(qtmodeltester: Any) -> None:
    """Issue 25: a revision written through the service names its token (``principal``)."""
    model = EventLogModel()
    job = str(make_job().id)
    by_service = dataclasses.replace(revision(2, ("job_cancelled", job)), principal="supervisor-ana")
    model.add([revision(1, ("job_requested", job)), by_service])
    qtmodeltester.check(model)
    assert model.index(0, 4).data() == "other-process · Request job · by supervisor-ana"
    assert model.index(1, 4).data() == "other-process · Request job"


def test_record_and_parameter_models(qtmodeltester: Any) -> None:
    records = RecordTableModel(("Rev", "Time", "Event"))
    qtmodeltester.check(records)
    records.set_rows([("1", "12:00", "job_requested"), ("2", "12:01")])
    qtmodeltester.check(records)
    assert records.index(1, 2).data() == ""
    params = ParameterModel()
    qtmodeltester.check(params)
    params.add("profile", "string", "proxy-720p")
    params.add("https://x.example/ns#fps", "rational", "24000/1001")
    row = params.add("bad", "i64", "x")
    qtmodeltester.check(params)
    assert params.errors() == [(row, "i64: invalid literal for int() with base 10: 'x'")]
    assert params.index(row, 2).data(Qt.ItemDataRole.BackgroundRole) is not None
    assert not params.setData(params.index(row, 1), "float")  # not a type
    assert params.setData(params.index(row, 2), "42")
    assert [p.name for p, _ in params.values()] == ["profile", "fps", "bad"]
    params.remove(0)
    qtmodeltester.check(params)


def test_request_dialog_input_list(qtbot: Any, qtmodeltester: Any) -> None:
    from postproject import AssetId, RepresentationId, RepresentationKind

    asset = AssetId.new()
    choices = RequestChoices(
        ("org.postproject:generate-proxy",),
        ((asset, "A001"),),
        tuple(
            RepresentationChoice(
                RepresentationId.new(), asset, "A001", RepresentationKind.ORIGINAL, f"/m/clip{i}.mov"
            )
            for i in range(5)
        ),
        ("proxies",),
    )
    dialog = RequestJobDialog(choices)
    qtbot.addWidget(dialog)
    qtmodeltester.check(dialog.input_proxy)
    dialog.input_filter.setText("clip3")
    assert dialog.input_proxy.rowCount() == 1
    qtmodeltester.check(dialog.input_proxy)


def test_resources_are_found_and_every_icon_renders(qapp: QApplication) -> None:
    root = resources.root()
    assert (root / "themes" / "light.qss").is_file() and (root / "themes" / "dark.qss").is_file()
    for name in ("light", "dark"):
        sheet = theme.style_sheet(name)
        assert "@ICONS@" not in sheet and "#stateSummary" in sheet
    for svg in (root / "icons").glob("*.svg"):
        icon = theme.icon(svg.stem, "#336699")
        assert not icon.pixmap(16, 16).toImage().isNull(), svg.name
    for state in JobState:
        assert not theme.state_icon(state, None, theme.THEMES["dark"].states).isNull()
    for health in HEALTH_LOOKS:
        assert not theme.state_icon(JobState.CLAIMED, health, theme.THEMES["light"].states).isNull()
    assert len({look.glyph for look in STATE_LOOKS.values()}) == len(JobState)  # a shape per state


def test_theme_manager_applies_palettes(qapp: QApplication) -> None:
    manager = theme.ThemeManager(theme.ThemeMode.DARK)
    names: list[str] = []
    manager.changed.connect(names.append)
    manager.apply()
    assert qapp.palette().color(QPalette.ColorRole.Window).name() == theme.DARK_UI.window
    manager.set_mode(theme.ThemeMode.LIGHT)
    assert names == ["dark", "light"] and qapp.palette().color(QPalette.ColorRole.Base).name() == "#ffffff"


@pytest.mark.parametrize("factory", [Settings.user, Settings.ephemeral])
def test_settings_round_trip(factory: Any, tmp_path: Any) -> None:
    settings = factory()
    assert settings.recent() == [] and settings.theme() is theme.ThemeMode.SYSTEM
    for name in ("a", "b", "a"):
        settings.add_recent(tmp_path / f"{name}.pproj")
    assert settings.recent() == [str(tmp_path / "a.pproj"), str(tmp_path / "b.pproj")]
    uri = "postgresql://render:secret@db.studio/farm?production=show"
    settings.add_recent(uri)  # a URI is kept without its password
    assert settings.recent()[0] == "postgresql://render@db.studio/farm?production=show"
    settings.set_theme(theme.ThemeMode.DARK)
    settings.set_strings("cols", ["inputs"])
    settings.sync()
    again = factory() if factory is Settings.user else settings
    assert again.theme() is theme.ThemeMode.DARK and again.strings("cols") == ["inputs"]
