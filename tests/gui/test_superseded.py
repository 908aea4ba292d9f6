"""Superseded artifacts in the provenance graph: drawn faded with a dashed arrow to their
replacement, hidden on request; the legend names the state; the Stale card leaves them out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication
from shiboken6 import Shiboken

from postproject import ArtifactState, Production
from postproject_gui.diagram.provenance_scene import SUPERSEDED_OPACITY, ProvenanceScene
from postproject_gui.look.artifact_states import KNOWLEDGE_LOOKS, KnowledgeGlyph
from postproject_gui.look.theme import THEMES
from postproject_gui.views.provenance_tab import LEGEND_ORDER
from tests.gui.conftest import WindowFactory
from tests.gui.helpers import wait_for
from tests.gui.provenance_fixtures import Chain, supersede_proxy


@pytest.fixture
def chain(production: Production, tmp_path: Path) -> Chain:
    return Chain(production, tmp_path / "media")


def test_superseded_artifact_is_faded_with_an_arrow_to_its_replacement_and_can_be_hidden(
    qapp: QApplication, chain: Chain
) -> None:
    new_proxy = supersede_proxy(chain)
    scene = ProvenanceScene(THEMES["light"])
    graph = chain.production.provenance(chain.original)
    scene.show_graph(graph, {chain.proxy: chain.production.evaluate_artifact(chain.proxy)})
    old, new = scene.nodes[str(chain.proxy)], scene.nodes[str(new_proxy)]
    assert old.opacity() == SUPERSEDED_OPACITY and new.opacity() == 1.0
    (arrow,) = scene.supersessions
    assert arrow.path.pointAtPercent(0.0).y() == pytest.approx(old.sceneBoundingRect().center().y(), abs=1)
    assert arrow.path.pointAtPercent(1.0).y() == pytest.approx(new.sceneBoundingRect().center().y(), abs=1)
    state = next(n for n in scene.describe()["nodes"] if n["id"] == str(chain.proxy))["state"]
    assert state == ArtifactState.SUPERSEDED.value

    scene.set_show_superseded(False)
    assert str(chain.proxy) not in scene.nodes and str(new_proxy) in scene.nodes
    assert scene.supersessions == []
    assert all(str(chain.proxy) not in key for key in scene.edges)
    scene.update_graph(chain.production.provenance(chain.original))  # a live update keeps them hidden
    assert str(chain.proxy) not in scene.nodes
    scene.set_show_superseded(True)
    assert str(chain.proxy) in scene.nodes and len(scene.supersessions) == 1
    Shiboken.delete(scene)  # on the GUI thread, not whenever (and wherever) the collector runs


def test_superseded_has_its_own_look_in_the_legend() -> None:
    look = KNOWLEDGE_LOOKS[ArtifactState.SUPERSEDED]
    assert look.glyph is KnowledgeGlyph.SUPERSEDED
    assert len({KNOWLEDGE_LOOKS[s].glyph for s in KNOWLEDGE_LOOKS}) == len(KNOWLEDGE_LOOKS)  # all distinct
    assert ArtifactState.SUPERSEDED in LEGEND_ORDER


def test_stale_card_leaves_superseded_artifacts_out(
    qtbot: Any, make_window: WindowFactory, chain: Chain
) -> None:
    supersede_proxy(chain)
    window = make_window(chain.production.path, chain.production.clock)
    # The old proxy is superseded (not stale); the render made from it and the thumbnail still are.
    expected = len(chain.production.stale_artifacts().items)
    assert chain.proxy not in {k.representation_id for k in chain.production.stale_artifacts().items}
    wait_for(qtbot, lambda: window.summary.stale_card.count_text == str(expected), timeout=10_000)
    window.knowledge.show_graph(chain.original)
    tab = window.knowledge.provenance
    wait_for(qtbot, lambda: tab.read is not None and str(chain.proxy) in tab.scene.nodes)
    tab.show_superseded.setChecked(False)
    assert str(chain.proxy) not in tab.scene.nodes
