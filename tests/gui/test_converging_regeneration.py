"""Issue 14's acceptance through the monitor: after an original changed, the monitor's
"Regenerate stale downstream" (previewed in dependency order, requested as one DAG) and the
reference executor's run (in-process) bring the Stale card to 0; the job detail says why a
waiting job is still requested, with a link to the job it waits on."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from postproject import JobOutput, JobRef, JobRequest, JobState, Production, RepresentationKind
from postproject.executor import jobs
from postproject.executor.testclip import ClipInfo, generate_test_clip
from postproject.executor.worker import Worker, WorkerConfig
from postproject.model.identity import AgentIdentity
from postproject_gui.dialogs.regeneration_dialog import RegenerationDialog
from postproject_gui.window.knowledge_tabs import JOBS
from tests.gui.conftest import WindowFactory
from tests.gui.helpers import wait_for

SIZE, FRAMES = (320, 180), 12


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> ClipInfo:
    path = tmp_path_factory.mktemp("clips") / "A001_C001.mov"
    return generate_test_clip(path, name="A001_C001", frames=FRAMES, size=SIZE, hue=30)


def run_worker(path: Path) -> None:
    """The reference executor until no claimable work is left (on its own thread, as a farm
    node would be: the GUI thread keeps serving the window)."""
    failures: list[BaseException] = []

    def work() -> None:
        try:
            Worker(WorkerConfig(path, agent=AgentIdentity("gui-test/1"))).run()
        except BaseException as exc:  # reported on the test's thread
            failures.append(exc)

    thread = threading.Thread(target=work, name="test-worker")
    thread.start()
    thread.join(timeout=240)
    assert not thread.is_alive() and not failures, failures


def make_show(tmp_path: Path, clip: ClipInfo) -> tuple[Path, Any, Any]:
    """A proxy of the original and a thumbnail of the proxy, made by the executor."""
    media, proxies = tmp_path / "media", tmp_path / "proxies"
    media.mkdir()
    proxies.mkdir()
    shutil.copyfile(clip.path, media / "A001_C001.mov")
    path = tmp_path / "show.pproj"
    with Production.create(path) as production, production.edit(message="Import and request") as tx:
        tx.add_media_root("media", media)
        tx.add_media_root("proxies", proxies)
        asset = tx.create_asset("A001_C001")
        original = tx.add_representation(asset, RepresentationKind.ORIGINAL, "A001_C001.mov", root="media")
        proxy_job = tx.request_job(
            JobRequest(jobs.PROXY_KIND, (original,), asset, RepresentationKind.PROXY, "proxies")
        )
        tx.add_metadata(JobRef(proxy_job), jobs.PROFILE, "proxy-720p")
        thumb_job = tx.request_job(
            JobRequest(
                jobs.THUMBNAIL_KIND, (JobOutput(proxy_job),), asset, RepresentationKind.DERIVED, "proxies"
            )
        )
        tx.add_metadata(JobRef(thumb_job), jobs.PROFILE, "thumbnail-640")
        tx.commit()
    run_worker(path)
    generate_test_clip(
        media / "A001_C001.mov", name="A001_C001 re-delivered", frames=FRAMES, size=SIZE, hue=200
    )
    with Production.open(path) as production, production.edit() as tx:
        assert tx.observe_representation(original)
        tx.commit()
    return path, original, thumb_job


def test_regenerate_stale_downstream_then_the_workers_run_leaves_nothing_stale(
    qtbot: Any, make_window: WindowFactory, tmp_path: Path, clip: ClipInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, original, _ = make_show(tmp_path, clip)
    window = make_window(path)
    wait_for(qtbot, lambda: window.summary.stale_card.count_text == "2", timeout=10_000)
    previewed: list[RegenerationDialog] = []

    def ask(cls: type, parent: Any, plans: Any, unplannable: Any = (), **kwargs: Any) -> Any:
        dialog = RegenerationDialog(plans, unplannable, kwargs.get("rows"), parent=parent)
        previewed.append(dialog)
        return dialog.selected_plans()  # what "Enqueue" returns

    monkeypatch.setattr(RegenerationDialog, "ask", classmethod(ask))
    window.knowledge.show_graph(original)
    wait_for(qtbot, lambda: window.knowledge.provenance.read is not None and not window.session.busy)  # type: ignore[union-attr]
    window.knowledge.actions.downstream.trigger()
    with Production.open(path, read_only=True) as production:
        wait_for(qtbot, lambda: len(production.jobs(state=JobState.REQUESTED).items) == 2, timeout=10_000)
        requested = production.jobs(state=JobState.REQUESTED).items
    (dialog,) = previewed
    steps = [dialog.plan_model.record(r)[0] for r in range(dialog.plan_model.rowCount())]
    assert steps == ["1", "2 ← 1"]  # the thumbnail waits for the new proxy
    dialog.deleteLater()
    (thumb,) = [j for j in requested if j.waiting_on]
    (proxy,) = [j for j in requested if not j.waiting_on]
    assert thumb.waiting_on == (proxy.id,) and [b.output.job_id for b in thumb.bound_inputs] == [proxy.id]

    # The detail of the waiting job: why it is still requested, with a link to the job it waits on.
    window.actions_.tabs[JOBS].trigger()
    wait_for(qtbot, lambda: window.table.select_job(thumb.id), timeout=10_000)
    wait_for(qtbot, lambda: window.detail.detail is not None and window.detail.detail.job.id == thumb.id)
    assert window.detail.why.isVisibleTo(window.detail)
    assert f'href="job:{proxy.id}"' in window.detail.why.text()
    assert "waiting on job" in window.detail.why.text()
    assert f"job:{proxy.id}" in window.detail.facts.text("waiting_on")

    run_worker(path)
    wait_for(qtbot, lambda: window.summary.stale_card.count_text == "0", timeout=20_000)
    with Production.open(path, read_only=True) as production:
        assert production.stale_artifacts().items == ()
        done = production.job(thumb.id)
        assert done.state is JobState.SUCCEEDED
        assert done.inputs == (production.job(proxy.id).completion.representation_id,)  # type: ignore[union-attr]
    wait_for(
        qtbot,
        lambda: window.detail.detail is not None and window.detail.detail.job.state is JobState.SUCCEEDED,
    )
    assert window.detail.why.isHidden()
