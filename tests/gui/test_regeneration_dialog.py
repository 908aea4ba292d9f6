"""The regeneration preview: what it lists, when Enqueue is allowed, and that the plans it returns
are exactly the jobs that end up in the production."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtGui import QImage
from pytestqt.qtbot import QtBot

from postproject import JobId, JobRef, JobState, Production, RegenerationPlan, RepresentationId
from postproject_gui.dialogs.regeneration_dialog import RegenerationDialog
from postproject_gui.services.artifact_rows import ArtifactRow, read_rows
from tests.gui.provenance_fixtures import PROXY_KIND, RENDER_KIND, THUMB_KIND, Chain, add_ambiguous

Driver = Callable[[RegenerationDialog], None]


@pytest.fixture
def chain(production: Production, tmp_path: Path) -> Chain:
    return Chain(production, tmp_path / "media")


@pytest.fixture
def drive(monkeypatch: pytest.MonkeyPatch) -> Callable[[Driver], list[RegenerationDialog]]:
    """Replace ``exec`` with a function that works the dialog like a user, then returns its result."""

    def install(driver: Driver) -> list[RegenerationDialog]:
        seen: list[RegenerationDialog] = []

        def fake_exec(self: RegenerationDialog) -> int:
            seen.append(self)
            driver(self)
            return self.result()

        monkeypatch.setattr(RegenerationDialog, "exec", fake_exec)
        return seen

    return install


def rows_for(chain: Chain) -> dict[RepresentationId, ArtifactRow]:
    ids = [chain.original, chain.proxy, chain.render, chain.thumbnail]
    return {k: v for k, v in read_rows(chain.production, ids).items() if v is not None}


def test_preview_lists_each_job_and_enqueue_requests_exactly_those(
    qtbot: QtBot, chain: Chain, drive: Callable[[Driver], list[RegenerationDialog]], tmp_path: Path
) -> None:
    chain.change_original()
    downstream = chain.production.plan_downstream_regeneration(chain.original)
    assert downstream.unplannable == () and len(downstream.plans) == 3
    seen = drive(lambda dialog: dialog.enqueue.click())

    chosen = RegenerationDialog.ask(None, downstream.plans, downstream.unplannable, rows=rows_for(chain))

    dialog = seen[0]
    assert chosen == downstream.plans
    assert dialog.anyway.isHidden()
    assert dialog.enqueue.text() == "Enqueue 3 jobs"
    records = [dialog.plan_model.record(i) for i in range(dialog.plan_model.rowCount())]
    by_kind = {r[2]: r for r in records}
    steps = {r[2]: r[0] for r in records}  # dependency order, and the step each waits for
    assert steps["generate-proxy"] == "1" and steps["render-review"] == "2 ← 1"
    assert by_kind["generate-proxy"] == (
        "1",
        "A001_C002 · proxy\nproxies:A001_C002_proxy.mov",
        "generate-proxy",
        "A001_C002.mov (original)",
        "A001_C002 · proxy",
        "proxies",
        "profile = proxy-720p",
    )
    assert by_kind["render-review"][3] == "output of step 1 (new proxy)"
    assert by_kind["render-review"][6] == "lut = show-lut-v3\nburn_in = true"
    assert by_kind["render-review"][5] == "—"
    dialog.grab().save(str(tmp_path / "dialog.png"))
    assert not QImage(str(tmp_path / "dialog.png")).isNull()

    head = chain.production.latest_revision()
    assert head is not None
    with chain.production.edit() as tx:
        job_ids = [tx.enqueue_plan(plan) for plan in chosen]
        receipt = tx.commit()
    assert receipt.revision is not None and receipt.revision.sequence == head.sequence + 1  # one transaction
    assert_jobs_match(chain.production, job_ids, chosen)


def assert_jobs_match(
    production: Production, job_ids: list[JobId], plans: tuple[RegenerationPlan, ...]
) -> None:
    assert len(job_ids) == len(plans)
    for job_id, plan in zip(job_ids, plans, strict=True):
        job = production.job(job_id)
        assert job.state is JobState.REQUESTED
        assert (job.kind, tuple(job.inputs), job.output_asset_id) == (
            plan.job.kind,
            tuple(sorted(plan.job.inputs)),
            plan.job.output_asset_id,
        )
        assert (job.output_representation_kind, job.target_root) == (
            plan.job.output_representation_kind,
            plan.job.target_root,
        )
        assert production.metadata[JobRef(job.id)] == plan.parameters
    assert {production.job(j).kind for j in job_ids} <= {PROXY_KIND, RENDER_KIND, THUMB_KIND}


def test_unplannable_artifacts_block_until_the_user_chooses(
    chain: Chain, drive: Callable[[Driver], list[RegenerationDialog]]
) -> None:
    conform = add_ambiguous(chain)
    chain.change_original()
    downstream = chain.production.plan_downstream_regeneration(chain.original)
    assert [u.artifact_id for u in downstream.unplannable] == [conform]
    states: list[tuple[bool, bool]] = []

    def tick_then_enqueue(dialog: RegenerationDialog) -> None:
        states.append((dialog.enqueue.isEnabled(), dialog.selected_plans() is None))
        dialog.enqueue.click()  # disabled: nothing happens
        states.append((dialog.isVisible(), dialog.result() == 0))
        dialog.anyway.setChecked(True)
        states.append((dialog.enqueue.isEnabled(), dialog.selected_plans() is None))
        dialog.enqueue.click()

    seen = drive(tick_then_enqueue)
    chosen = RegenerationDialog.ask_downstream(None, downstream)

    assert states == [(False, True), (False, True), (True, False)]
    assert chosen == downstream.plans
    dialog = seen[0]
    assert dialog.unplannable_model.rowCount() == 1
    assert "ambiguous" in dialog.unplannable_model.record(0)[1]
    assert "cannot be planned" in dialog.summary.text()
    with chain.production.edit() as tx:
        job_ids = [tx.enqueue_plan(plan) for plan in chosen]
        tx.commit()
    assert_jobs_match(chain.production, job_ids, chosen)


def test_cancel_returns_none_and_nothing_is_requested(
    chain: Chain, drive: Callable[[Driver], list[RegenerationDialog]]
) -> None:
    chain.change_original()
    plans = chain.production.plan_regeneration([chain.proxy, chain.render])
    drive(lambda dialog: dialog.cancel.click())
    assert RegenerationDialog.ask(None, plans) is None


def test_nothing_plannable_never_enqueues(
    chain: Chain, drive: Callable[[Driver], list[RegenerationDialog]]
) -> None:
    conform = add_ambiguous(chain)
    chain.change_original()
    unplannable = [
        u
        for u in chain.production.plan_downstream_regeneration(chain.original).unplannable
        if u.artifact_id == conform
    ]

    def tick_and_accept(dialog: RegenerationDialog) -> None:
        dialog.anyway.setChecked(True)
        dialog.accept()

    seen = drive(tick_and_accept)
    assert RegenerationDialog.ask(None, (), unplannable) is None
    assert not seen[0].enqueue.isEnabled()
    assert seen[0].summary.text().startswith("Nothing can be planned.")


def test_preview_orders_jobs_upstream_first_whatever_order_they_come_in(qtbot: QtBot, chain: Chain) -> None:
    chain.change_original()
    downstream = chain.production.plan_downstream_regeneration(chain.original)
    backwards = tuple(reversed(downstream.plans))
    dialog = RegenerationDialog(backwards, rows=rows_for(chain))
    qtbot.addWidget(dialog)
    order = [p.artifact_id for p in dialog.plans]
    assert order.index(chain.proxy) < order.index(chain.render)
    assert dialog.selected_plans() == dialog.plans
    render = dialog.plan_model.record(order.index(chain.render))
    assert render[0] == f"{order.index(chain.render) + 1} ← {order.index(chain.proxy) + 1}"
    assert "output of step" in render[3]
