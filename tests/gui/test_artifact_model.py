"""The Artifacts table model: reconcile by id, knowledge and availability looks, stale filter."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QColor, QIcon
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from postproject import ArtifactState, Production, RepresentationId
from postproject_gui.look import artifact_states as looks
from postproject_gui.models.artifact_model import (
    ATTENTION_ROLE,
    AVAILABILITY_COLUMN,
    KNOWLEDGE_COLUMN,
    KNOWLEDGE_ROLE,
    REPRESENTATION_ID_ROLE,
    ArtifactTableModel,
)
from postproject_gui.models.artifact_proxy import ArtifactFilterProxy
from postproject_gui.models.documents import artifacts_document
from postproject_gui.services.artifact_rows import ArtifactRow, read_page, read_rows, stale_count
from tests.gui.provenance_fixtures import Chain


@pytest.fixture
def chain(production: Production, tmp_path: Path) -> Chain:
    return Chain(production, tmp_path / "media")


def rows_of(chain: Chain) -> list[ArtifactRow]:
    rows, cursor = read_page(chain.production, limit=100)
    assert cursor is None
    return list(rows)


def cell(model: ArtifactTableModel, rep_id: RepresentationId, column: int, role: int = 0) -> object:
    row = model.row_of(rep_id)
    assert row is not None
    return model.data(model.index(row, column), role or Qt.ItemDataRole.DisplayRole)


def test_rows_load_and_show_knowledge_with_glyph_text_and_colour(
    qtmodeltester: ModelTester, chain: Chain
) -> None:
    model = ArtifactTableModel()
    model.set_rows(rows_of(chain))
    qtmodeltester.check(model)

    assert model.rowCount() == 4  # original, proxy, render, thumbnail
    assert [model.row(i).id for i in range(4)] == sorted(r.id for r in model.rows())
    assert cell(model, chain.proxy, 0) == "A001_C002"
    assert cell(model, chain.proxy, 1) == "proxy"
    assert cell(model, chain.proxy, 2) == "proxies:A001_C002_proxy.mov"
    assert cell(model, chain.proxy, AVAILABILITY_COLUMN) == "online"
    assert cell(model, chain.proxy, KNOWLEDGE_COLUMN) == "Current"
    assert cell(model, chain.original, KNOWLEDGE_COLUMN) == "Source"
    assert cell(model, chain.original, KNOWLEDGE_COLUMN, KNOWLEDGE_ROLE) == "indeterminate"
    assert cell(model, chain.proxy, 0, REPRESENTATION_ID_ROLE) == str(chain.proxy)
    assert model.stale_count == 0

    unevaluated = dataclasses.replace(model.rows()[1], knowledge=None, availability=None)
    model.apply_changes({unevaluated.id: unevaluated})
    qtmodeltester.check(model)
    assert cell(model, unevaluated.id, KNOWLEDGE_COLUMN) == "not evaluated"
    assert cell(model, unevaluated.id, AVAILABILITY_COLUMN) == "not checked"
    assert cell(model, unevaluated.id, 5) == "" and model.stale_count == 0


def test_feed_changes_reconcile_in_place_and_count_stale(
    qtmodeltester: ModelTester, qtbot: QtBot, chain: Chain
) -> None:
    model = ArtifactTableModel()
    model.set_rows(rows_of(chain))
    resets: list[bool] = []
    model.modelReset.connect(lambda: resets.append(True))
    chain.change_original()
    changed = read_rows(chain.production, [chain.original, chain.proxy, chain.render, chain.thumbnail])

    with qtbot.waitSignal(model.stale_count_changed) as counted:
        model.apply_changes(changed)
    qtmodeltester.check(model)

    assert counted.args == [3] and model.stale_count == 3 == stale_count(model.rows())
    assert not resets
    assert cell(model, chain.render, KNOWLEDGE_COLUMN) == "Stale"
    assert cell(model, chain.render, KNOWLEDGE_COLUMN, Qt.ItemDataRole.ForegroundRole) == QColor(
        looks.LIGHT.knowledge(ArtifactState.STALE)
    )
    icon = cell(model, chain.render, KNOWLEDGE_COLUMN, Qt.ItemDataRole.DecorationRole)
    assert isinstance(icon, QIcon) and not icon.isNull()
    assert (
        cell(model, chain.render, KNOWLEDGE_COLUMN, Qt.ItemDataRole.AccessibleTextRole) == "Knowledge Stale"
    )
    assert str(cell(model, chain.proxy, 5)).startswith("input A001_C002 · original (A001_C002.mov) changed (")
    tip = str(cell(model, chain.render, 5, Qt.ItemDataRole.ToolTipRole))
    assert tip.startswith("Stale: ") and "upstream A001_C002 · proxy (A001_C002_proxy.mov) is stale" in tip


def test_rows_are_removed_inserted_and_go_offline(qtmodeltester: ModelTester, chain: Chain) -> None:
    model = ArtifactTableModel()
    rows = rows_of(chain)
    model.set_rows(rows[:2])
    model.set_rows(rows[1:])  # first leaves, two arrive
    qtmodeltester.check(model)
    assert [r.id for r in model.rows()] == [r.id for r in rows[1:]]

    chain.render_file.unlink()
    model.apply_changes(read_rows(chain.production, [chain.render]))
    model.apply_changes({chain.thumbnail: None})
    qtmodeltester.check(model)
    assert model.row_of(chain.thumbnail) is None
    assert cell(model, chain.render, AVAILABILITY_COLUMN) == "offline"
    assert cell(model, chain.render, AVAILABILITY_COLUMN, Qt.ItemDataRole.ForegroundRole) == QColor(
        looks.LIGHT.offline
    )
    with pytest.raises(ValueError, match="given under"):
        model.apply_changes({chain.proxy: model.get(chain.render)})


def test_stale_filter_keeps_only_stale_or_diverged(qtmodeltester: ModelTester, chain: Chain) -> None:
    model = ArtifactTableModel()
    model.set_rows(rows_of(chain))
    proxy = ArtifactFilterProxy()
    proxy.setSourceModel(model)
    proxy.set_attention_only(True)
    assert proxy.rowCount() == 0

    chain.change_original()
    model.apply_changes(read_rows(chain.production, [r.id for r in model.rows()]))
    qtmodeltester.check(proxy)
    shown = {proxy.index(i, 0).data(REPRESENTATION_ID_ROLE) for i in range(proxy.rowCount())}
    assert shown == {str(chain.proxy), str(chain.render), str(chain.thumbnail)}
    assert all(proxy.index(i, 0).data(ATTENTION_ROLE) for i in range(proxy.rowCount()))
    proxy.set_attention_only(False)
    assert proxy.rowCount() == 4
    proxy.sort(KNOWLEDGE_COLUMN, Qt.SortOrder.DescendingOrder)
    assert proxy.index(3, 0).data(REPRESENTATION_ID_ROLE) == str(chain.original)
    assert proxy.rowCount(QModelIndex()) == 4


def test_snapshot_document_of_rows(chain: Chain) -> None:
    chain.change_original()
    document = artifacts_document(rows_of(chain))
    assert document["stale_count"] == 3
    states = {item["id"]: item["state"] for item in document["items"]}
    assert states == {
        str(r): chain.production.evaluate_artifact(r).state.value for r in map(RepresentationId, states)
    }
