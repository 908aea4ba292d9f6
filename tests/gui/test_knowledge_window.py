"""The Artifacts and Provenance tabs through the real window, service and revision feed, on a
real production: original -> proxy (made by a job) -> render, and original -> thumbnail."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QItemSelectionModel, Qt

from postproject import (
    ActivitySpec,
    AgentIdentity,
    JobRef,
    JobState,
    Production,
    RegenerationPlan,
    RepresentationId,
)
from postproject.knowledge.provenance import RepresentationNode
from postproject_gui.dialogs.regeneration_dialog import RegenerationDialog
from postproject_gui.models.artifact_model import (
    AVAILABILITY_COLUMN,
    KNOWLEDGE_COLUMN,
    REPRESENTATION_ID_ROLE,
)
from postproject_gui.window.knowledge_tabs import ARTIFACTS, JOBS, PROVENANCE
from postproject_gui.window.main_window import MainWindow
from tests.gui.conftest import WindowFactory
from tests.gui.helpers import wait_for
from tests.gui.provenance_fixtures import (
    FFMPEG,
    Chain,
    change_original_elsewhere,
    complete_thumbnail_of_proxy,
)


@pytest.fixture
def chain(production: Production, tmp_path: Path) -> Chain:
    return Chain(production, tmp_path / "media")


def states(window: MainWindow) -> dict[RepresentationId, str]:
    """What the Artifacts table shows in its Knowledge column, by representation."""
    assert window.session is not None
    model = window.session.knowledge.artifacts
    return {
        RepresentationId.parse(model.data(model.index(r, 0), REPRESENTATION_ID_ROLE)): model.data(
            model.index(r, KNOWLEDGE_COLUMN)
        )
        for r in range(model.rowCount())
    }


def show_artifacts(qtbot: Any, window: MainWindow, count: int) -> None:
    window.actions_.tabs[ARTIFACTS].trigger()
    assert window.session is not None
    model = window.session.knowledge.artifacts
    wait_for(qtbot, lambda: model.rowCount() == count and not window.session.busy)  # type: ignore[union-attr]


def graph_states(window: MainWindow) -> dict[str, str]:
    nodes = window.knowledge.provenance.scene.describe()["nodes"]
    return {n["id"]: n["state"] for n in nodes if n["type"] == "representation"}


def select_artifacts(window: MainWindow, ids: list[RepresentationId]) -> None:
    table = window.knowledge.artifacts.table
    table.clearSelection()
    for rep_id in ids:
        proxy = table.model()
        for row in range(proxy.rowCount()):
            if proxy.index(row, 0).data(REPRESENTATION_ID_ROLE) == str(rep_id):
                table.selectionModel().select(
                    proxy.index(row, 0),
                    QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows,
                )


def test_artifacts_tab_lists_the_chain_with_states(
    qtbot: Any, make_window: WindowFactory, chain: Chain
) -> None:
    window = make_window(chain.production.location, chain.production.clock)
    assert window.tabs.currentIndex() == JOBS and window.tabs.tabText(ARTIFACTS) == "Artifacts"
    assert window.summary.stale_card.count_text == "0"
    show_artifacts(qtbot, window, 4)
    assert states(window) == {
        chain.original: "Source",
        chain.proxy: "Current",
        chain.render: "Current",
        chain.thumbnail: "Current",
    }
    assert window.knowledge.artifacts.shown.text().startswith("4 artifacts · 0 stale or diverged")


def test_a_change_elsewhere_turns_rows_graph_and_count_stale(
    qtbot: Any, make_window: WindowFactory, chain: Chain
) -> None:
    window = make_window(chain.production.location, chain.production.clock)
    session = window.session
    assert session is not None
    show_artifacts(qtbot, window, 4)
    window.knowledge.show_graph(chain.render)
    wait_for(qtbot, lambda: window.knowledge.provenance.read is not None and not session.busy)
    assert window.tabs.currentIndex() == PROVENANCE
    assert set(graph_states(window).values()) == {"indeterminate", "current"}

    change_original_elsewhere(chain)

    stale = {chain.proxy: "Stale", chain.render: "Stale", chain.thumbnail: "Stale"}
    wait_for(qtbot, lambda: states(window) == {chain.original: "Source", **stale}, timeout=10_000)
    wait_for(qtbot, lambda: window.summary.stale_card.count_text == "3")
    shown = graph_states(window)
    assert shown[str(chain.proxy)] == shown[str(chain.render)] == "stale"
    with Production.open(chain.production.location, read_only=True) as production:
        graph = production.provenance(chain.render)
        assert {str(n.id): n.state.value for n in graph.nodes if isinstance(n, RepresentationNode)} == shown
    render = window.knowledge.provenance.scene.node_document(str(chain.render))
    assert render is not None and render["reasons"][0]["code"] == "upstream_not_current"
    assert window.knowledge.provenance.detail.document == render  # the focus stays selected
    assert "A001_C002 · proxy" in window.knowledge.provenance.detail.why.text()
    window.summary.stale_card.click()
    assert window.tabs.currentIndex() == ARTIFACTS and window.knowledge.artifacts.attention.isChecked()
    assert session.knowledge.proxy.rowCount() == 3 and window.summary.stale_card.isChecked()


def test_plan_and_enqueue_request_exactly_the_previewed_jobs_and_select_them(
    qtbot: Any, make_window: WindowFactory, chain: Chain, monkeypatch: pytest.MonkeyPatch
) -> None:
    chain.change_original()
    window = make_window(chain.production.location, chain.production.clock)
    show_artifacts(qtbot, window, 4)
    previewed: list[tuple[RegenerationPlan, ...]] = []

    def ask(cls: type, parent: object, plans: tuple[RegenerationPlan, ...], *args: Any, **kwargs: Any) -> Any:
        previewed.append(tuple(plans))
        return tuple(plans)

    monkeypatch.setattr(RegenerationDialog, "ask", classmethod(ask))
    select_artifacts(window, [chain.proxy, chain.render])
    assert window.knowledge.actions.plan.isEnabled()
    window.knowledge.actions.plan.trigger()
    wait_for(qtbot, lambda: previewed and window.table.selected_rows(), timeout=10_000)
    (plans,) = previewed
    assert [p.artifact_id for p in plans] == sorted([chain.proxy, chain.render], key=lambda r: r.int)
    production = chain.production
    new = production.jobs(state=JobState.REQUESTED).items
    assert len(new) == 2
    # Requested as one DAG (enqueue_plans): an input another plan regenerates is bound to
    # that plan's job output, and the job waits for that job.
    by_artifact = {j.regenerates: j for j in new}
    for plan in plans:
        job = by_artifact[plan.artifact_id]
        upstream = [by_artifact[i].id for i in plan.job.inputs if i in by_artifact]
        assert [b.output.job_id for b in job.bound_inputs] == upstream
        assert list(job.waiting_on) == upstream
        assert (
            job.kind,
            tuple(i for i in job.inputs),
            job.output_asset_id,
            job.output_representation_kind,
            job.target_root,
        ) == (
            plan.job.kind,
            tuple(i for i in plan.job.inputs if i not in by_artifact),
            plan.job.output_asset_id,
            plan.job.output_representation_kind,
            plan.job.target_root,
        )
        assert production.metadata[JobRef(job.id)] == plan.parameters
    assert window.tabs.currentIndex() == JOBS
    wait_for(qtbot, lambda: {r.id for r in window.table.selected_rows()} == {j.id for j in new})
    latest = production.latest_revision()
    assert latest is not None and latest.origin is not None and "postproject-monitor" in latest.origin


def test_downstream_plan_of_the_changed_original_from_the_graph(
    qtbot: Any, make_window: WindowFactory, chain: Chain, monkeypatch: pytest.MonkeyPatch
) -> None:
    chain.change_original()
    window = make_window(chain.production.location, chain.production.clock)
    window.knowledge.show_graph(chain.original)
    wait_for(qtbot, lambda: window.knowledge.provenance.read is not None and not window.session.busy)  # type: ignore[union-attr]
    assert window.knowledge.provenance.selected_representation() == chain.original
    previewed: list[Any] = []
    monkeypatch.setattr(
        RegenerationDialog, "ask", classmethod(lambda cls, parent, plans, *a, **k: previewed.append(plans))
    )
    window.knowledge.actions.downstream.trigger()
    wait_for(qtbot, lambda: previewed)
    assert previewed[0][0].artifact_id == chain.proxy  # inputs first
    assert {p.artifact_id for p in previewed[0]} == {chain.proxy, chain.render, chain.thumbnail}
    assert chain.production.jobs(state=JobState.REQUESTED).items == ()  # cancelled: nothing requested


def test_live_completion_redraws_keeping_zoom_and_selection(
    qtbot: Any, make_window: WindowFactory, chain: Chain
) -> None:
    window = make_window(chain.production.location, chain.production.clock)
    show_artifacts(qtbot, window, 4)
    tab = window.knowledge.provenance
    window.knowledge.show_graph(chain.proxy)
    wait_for(qtbot, lambda: tab.read is not None and not window.session.busy)  # type: ignore[union-attr]
    tab.scene.select(str(chain.render))
    tab.view.set_zoom(1.3)
    transform = tab.view.transform()
    before = tab.view.mapFromScene(tab.scene.nodes[str(chain.render)].centre)

    job, rep = complete_thumbnail_of_proxy(chain)

    wait_for(qtbot, lambda: str(rep) in tab.scene.nodes and str(job) in tab.scene.nodes)
    assert tab.view.transform() == transform
    assert tab.scene.selected_id() == str(chain.render)
    after = tab.view.mapFromScene(tab.scene.nodes[str(chain.render)].centre)
    assert abs(after.x() - before.x()) <= 1 and abs(after.y() - before.y()) <= 1
    assert tab.detail.document is not None and tab.detail.document["id"] == str(chain.render)
    wait_for(qtbot, lambda: states(window).get(rep) == "Current")  # the new row is listed too
    assert len(states(window)) == 5


def test_show_provenance_of_a_job_and_click_through_to_it(
    qtbot: Any, make_window: WindowFactory, chain: Chain
) -> None:
    window = make_window(chain.production.location, chain.production.clock)
    assert window.table.select_job(chain.job)
    wait_for(qtbot, lambda: window.detail.detail is not None)
    window.detail.provenance.click()
    tab = window.knowledge.provenance
    wait_for(qtbot, lambda: tab.read is not None)
    assert tab.focus() == chain.proxy  # what the job produced
    assert window.tabs.currentIndex() == PROVENANCE
    window.table.clearSelection()
    tab.scene.activate(str(chain.job))
    assert window.tabs.currentIndex() == JOBS
    wait_for(qtbot, lambda: [r.id for r in window.table.selected_rows()] == [chain.job])
    window.actions_.tabs[ARTIFACTS].trigger()
    wait_for(qtbot, lambda: window.session.knowledge.artifacts.rowCount() == 4)  # type: ignore[union-attr]
    select_artifacts(window, [chain.thumbnail])
    window.knowledge.artifacts.table.activated_artifact.emit(str(chain.thumbnail))
    wait_for(qtbot, lambda: tab.focus() == chain.thumbnail)
    assert window.tabs.currentIndex() == PROVENANCE


def run_every_job(production: Production, media: Path) -> int:
    """A worker in the test: claim each claimable job in turn and complete it with a new
    representation made from its (resolved) inputs; how many it ran."""
    done = 0
    while True:
        with production.edit() as tx:
            lease = tx.claim_next_job_lease(FFMPEG, timedelta(minutes=5), agent=AgentIdentity("render-09"))
            tx.commit()
        if lease is None:
            return done
        job = production.job(lease.job_id)
        out = media / f"{job.kind.rsplit(':', 1)[-1]}_{done}.bin"
        out.write_bytes(f"made by {job.id}".encode())
        with lease, production.edit() as tx:
            rep = tx.add_representation(job.output_asset_id, job.output_representation_kind, out)
            activity = tx.create_activity(
                ActivitySpec(job.kind, inputs=tuple(job.inputs), outputs=(rep,), tool=FFMPEG)
            )
            tx.complete_job_lease(lease, rep, activity)
            tx.commit()
        done += 1


def test_after_regeneration_the_stale_list_drops_what_was_replaced_and_what_descends_from_it(
    qtbot: Any, make_window: WindowFactory, chain: Chain
) -> None:
    """Issue 26 item 1: the Artifacts list (Stale or diverged only) follows the Stale card to
    0 after "regenerate stale downstream" and the workers' run, without a refresh: the
    artifacts a regeneration superseded (``representation_superseded``) are read again."""
    window = make_window(chain.production.location, chain.production.clock)
    session = window.session
    assert session is not None
    show_artifacts(qtbot, window, 4)
    change_original_elsewhere(chain)
    wait_for(qtbot, lambda: window.summary.stale_card.count_text == "3", timeout=10_000)
    window.summary.stale_card.click()
    assert window.knowledge.artifacts.attention.isChecked()
    assert window.focusWidget() is window.knowledge.artifacts.table  # Ctrl+A selects them at once
    wait_for(qtbot, lambda: session.knowledge.proxy.rowCount() == 3)

    production = chain.production
    found = production.plan_downstream_regeneration(chain.original)
    with production.edit() as tx:
        tx.enqueue_plans(found.plans)
        tx.commit()
    assert run_every_job(production, chain.media) == 3
    assert production.stale_artifacts().items == ()

    wait_for(qtbot, lambda: window.summary.stale_card.count_text == "0", timeout=10_000)
    wait_for(qtbot, lambda: session.knowledge.proxy.rowCount() == 0 and not session.busy, timeout=10_000)
    assert states(window)[chain.proxy] == "Superseded"
    assert states(window)[chain.render] == "Superseded" and states(window)[chain.thumbnail] == "Superseded"
    assert window.knowledge.artifacts.shown.text().startswith("0 of 7 shown · 0 stale or diverged")


def availability(window: MainWindow, rep_id: RepresentationId) -> str:
    assert window.session is not None
    model = window.session.knowledge.artifacts
    row = model.row_of(rep_id)
    assert row is not None
    return str(model.data(model.index(row, AVAILABILITY_COLUMN)))


def test_a_re_delivered_original_shows_on_its_row_and_re_read_file_records_it(
    qtbot: Any, make_window: WindowFactory, chain: Chain
) -> None:
    """Issue 26 item 9: the monitor could not record a re-delivered original."""
    window = make_window(chain.production.location, chain.production.clock)
    session = window.session
    assert session is not None
    show_artifacts(qtbot, window, 4)
    assert availability(window, chain.original) == "online"
    chain.original_file.write_bytes(b"camera original, re-delivered with a new grade" * 40)
    window.actions_.refresh.trigger()  # F5 reads the rows (and stats their files) again
    wait_for(qtbot, lambda: availability(window, chain.original) == "online · changed on disk")
    assert "no longer matches" in str(
        session.knowledge.artifacts.data(
            session.knowledge.artifacts.index(
                session.knowledge.artifacts.row_of(chain.original), AVAILABILITY_COLUMN
            ),
            Qt.ItemDataRole.ToolTipRole,
        )
    )
    assert window.summary.stale_card.count_text == "0"  # nothing recorded yet
    select_artifacts(window, [chain.original])
    reread = window.knowledge.actions.reread
    assert reread.isEnabled() and reread in window.knowledge.artifacts.table.row_actions
    reread.trigger()
    wait_for(qtbot, lambda: window.summary.stale_card.count_text == "3", timeout=10_000)
    wait_for(qtbot, lambda: availability(window, chain.original) == "online")
    stale = {chain.proxy: "Stale", chain.render: "Stale", chain.thumbnail: "Stale"}
    wait_for(qtbot, lambda: states(window) == {chain.original: "Source", **stale}, timeout=10_000)
    latest = chain.production.latest_revision()
    assert latest is not None and latest.message == "Re-read 1 file"
    assert [e.kind for e in latest.events] == ["representation_fingerprint_observed"]
    assert window.status.currentMessage() == (
        f"Re-read 1 file: 1 changed, recorded in revision {latest.sequence} (what was made from them is now stale)"
    )
