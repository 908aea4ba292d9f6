"""The reference executor, in process, on real clips: success, failure, lost leases, stopping."""

from __future__ import annotations

import threading
from datetime import timedelta
from pathlib import Path

import pytest

from postproject import (
    ActivityRef,
    AgentIdentity,
    JobId,
    JobRef,
    JobState,
    Production,
    RepresentationKind,
    StringValue,
)
from postproject.executor import jobs
from postproject.executor.attemptlog import LOGS
from postproject.executor.media import probe
from postproject.executor.testclip import generate_test_clip
from postproject.executor.worker import Worker, WorkerConfig, WorkerEvent
from tests.executor.conftest import AGENT, Recorder, Studio

OTHER = AgentIdentity("other-node/2")


def claim_elsewhere(studio: Studio, job_id: JobId) -> None:
    """Another worker (its own handle) claims the job; the first one's lease must have expired."""
    with (
        Production.open(studio.path, clock=studio.clock, allow_injected_clock=True) as other,
        other.edit() as tx,
    ):
        tx.claim_job_lease(job_id, jobs.TOOL, timedelta(seconds=60), agent=OTHER)
        tx.commit()


def activity_count(production: Production) -> int:
    return len(production.activities().items)


# --- success ----------------------------------------------------------------------------


def test_proxy_end_to_end(studio: Studio) -> None:
    job_id = studio.request(profile="proxy-720p")
    recorder = Recorder()
    worker = studio.run(recorder)

    job = studio.production.job(job_id)
    assert job.state is JobState.SUCCEEDED
    assert job.completion is not None
    rep = studio.production.representation(job.completion.representation_id)
    assert (rep.kind, rep.asset_id, rep.root) == (RepresentationKind.PROXY, studio.asset, "proxies")
    assert str(rep.path) == "A001_C003_Harbour_dawn_proxy-720p.mp4"
    output = studio.production.resolve(rep)
    assert output == studio.proxies / rep.path
    info = probe(output)
    assert (info.codec, info.height, info.frames) == ("h264", 720, 12)
    assert studio.outputs() == [output.name]  # no temporary file left behind

    activity = studio.production.activity(job.completion.activity_id)
    assert activity.kind == jobs.PROXY_KIND
    assert [e.representation_id for e in activity.inputs] == [studio.original]
    assert [e.representation_id for e in activity.outputs] == [rep.id]
    assert (activity.tool, activity.agent) == (jobs.TOOL, AGENT)
    assert activity.started_at == activity.finished_at == studio.clock.now()
    params = studio.production.metadata[ActivityRef(activity.id)]
    assert [(a.property, a.value) for a in params] == [(jobs.PROFILE, StringValue("proxy-720p"))]

    assert recorder.actions() == ["claimed", "succeeded"]
    progress = [e.fraction for e in recorder.events if e.action == "progress"]
    assert progress[-1] == 1.0
    assert worker.stats["succeeded"] == 1


def test_thumbnail_made_from_the_proxy(studio: Studio) -> None:
    studio.request(profile="proxy-1080p")
    studio.run(proxy_format="mov")
    (proxy_rep,) = studio.production.representations(kind=RepresentationKind.PROXY).items
    assert str(proxy_rep.path).endswith("_proxy-1080p.mov")

    job_id = studio.request(jobs.THUMBNAIL_KIND, "thumbnail-640", inputs=(proxy_rep.id,))
    studio.run(thumbnail_format="png")
    job = studio.production.job(job_id)
    assert job.state is JobState.SUCCEEDED
    assert job.completion is not None
    rep = studio.production.representation(job.completion.representation_id)
    assert rep.kind is RepresentationKind.DERIVED
    info = probe(studio.proxies / rep.path)
    assert (info.codec, info.width) == ("png", 640)
    activity = studio.production.activity(job.completion.activity_id)
    assert [e.representation_id for e in activity.inputs] == [proxy_rep.id]


def test_same_output_name_gets_a_number(studio: Studio) -> None:
    studio.request(profile="proxy-720p")
    studio.request(profile="proxy-720p")
    worker = studio.run(concurrency=2)
    assert worker.stats["succeeded"] == 2
    assert studio.outputs() == [
        "A001_C003_Harbour_dawn_proxy-720p-2.mp4",
        "A001_C003_Harbour_dawn_proxy-720p.mp4",
    ]


def test_without_target_root_the_output_goes_next_to_the_input(studio: Studio) -> None:
    job_id = studio.request(jobs.THUMBNAIL_KIND, "thumbnail-1280", target_root=None)
    studio.run()
    job = studio.production.job(job_id)
    assert job.completion is not None
    rep = studio.production.representation(job.completion.representation_id)
    assert rep.root is None
    assert Path(rep.path) == studio.media / "A001_C003_Harbour_dawn_thumbnail-1280.jpg"
    assert probe(Path(rep.path)).width == 1280


def test_once_runs_one_job(studio: Studio) -> None:
    first, second = studio.request(), studio.request(jobs.THUMBNAIL_KIND, "thumbnail-640")
    worker = studio.run(once=True, concurrency=2)
    assert worker.stats["succeeded"] == 1
    assert studio.production.job(first).state is JobState.SUCCEEDED
    assert studio.production.job(second).state is JobState.REQUESTED


def test_kind_filter(studio: Studio) -> None:
    proxy, thumbnail = studio.request(), studio.request(jobs.THUMBNAIL_KIND, "thumbnail-640")
    studio.run(kinds=(jobs.THUMBNAIL_KIND,))
    assert studio.production.job(proxy).state is JobState.REQUESTED
    assert studio.production.job(thumbnail).state is JobState.SUCCEEDED


# --- failures ---------------------------------------------------------------------------


def test_tool_failure_fails_the_job_and_leaves_nothing(studio: Studio) -> None:
    asset, corrupt = studio.add_original("broken", studio.media / "A001_C003.mov")
    (studio.media / "broken.mov").write_bytes(b"\x00" * 4096)  # changed after import: the decoder fails
    job_id = studio.request(inputs=(corrupt,), asset=asset)
    studio.run()
    job = studio.production.job(job_id)
    assert job.state is JobState.FAILED
    assert job.failure is not None
    diagnostic = job.failure.diagnostic
    assert diagnostic.startswith("generate-proxy proxy-720p failed: cannot make proxy of ")
    assert 0 < len(diagnostic.encode()) <= 4096
    assert "\n" not in diagnostic
    assert studio.outputs() == []
    assert activity_count(studio.production) == 0


@pytest.mark.parametrize(
    ("profile", "expected"),
    [
        (
            "proxy-4k",
            "unsupported profile 'proxy-4k' for generate-proxy (supported: proxy-720p, proxy-1080p)",
        ),
        (None, "exactly one property 'profile'"),
    ],
)
def test_unusable_profile_fails_with_a_clear_diagnostic(
    studio: Studio, profile: str | None, expected: str
) -> None:
    job_id = studio.request(profile=profile)
    recorder = Recorder()
    studio.run(recorder)
    job = studio.production.job(job_id)
    assert job.state is JobState.FAILED
    assert job.failure is not None
    assert expected in job.failure.diagnostic
    assert recorder.actions() == ["claimed", "failed"]
    assert studio.outputs() == []


def test_two_profiles_and_wrong_output_kind_fail(studio: Studio) -> None:
    twice = studio.request(profile="proxy-720p")
    with studio.production.edit() as tx:
        tx.add_metadata(JobRef(twice), jobs.PROFILE, "proxy-1080p")
        tx.commit()
    wrong_kind = studio.request(jobs.THUMBNAIL_KIND, "thumbnail-640", output_kind=RepresentationKind.PROXY)
    studio.run()
    failures = {j: studio.production.job(j).failure for j in (twice, wrong_kind)}
    assert "it has 2" in str(failures[twice])
    assert "makes a derived representation; the job requests a proxy" in str(failures[wrong_kind])


def test_input_of_another_asset_fails(studio: Studio) -> None:
    other_asset, _ = studio.add_original("B001", studio.media / "A001_C003.mov")
    job_id = studio.request(asset=other_asset)  # input is the first asset's original
    studio.run()
    failure = studio.production.job(job_id).failure
    assert failure is not None
    assert "not to the output asset" in failure.diagnostic


def test_offline_input_is_released_and_skipped(studio: Studio) -> None:
    asset, missing = studio.add_original("gone", studio.media / "A001_C003.mov")
    (studio.media / "gone.mov").unlink()
    skipped = studio.request(inputs=(missing,), asset=asset)
    later = studio.request(jobs.THUMBNAIL_KIND, "thumbnail-640")
    recorder = Recorder()
    studio.run(recorder)
    assert studio.production.job(skipped).state is JobState.REQUESTED
    assert studio.production.job(skipped).claim is None
    assert studio.production.job(later).state is JobState.SUCCEEDED  # claimed by id past the skipped one
    assert recorder.actions() == ["skipped", "claimed", "succeeded"]
    assert "is offline here" in recorder.events[0].detail


def test_unmapped_target_root_is_released(studio: Studio) -> None:
    with studio.production.edit() as tx:
        tx.add_media_root("vault")  # no directory on this machine
        tx.commit()
    job_id = studio.request(target_root="vault")
    recorder = Recorder()
    studio.run(recorder)
    assert studio.production.job(job_id).state is JobState.REQUESTED
    assert "--root-map vault=PATH" in recorder.events[0].detail
    mapped = studio.run(root_map={"vault": studio.root / "vault"})
    assert mapped.stats["succeeded"] == 1
    assert [p.name for p in (studio.root / "vault").iterdir() if p.name != LOGS] == [
        "A001_C003_Harbour_dawn_proxy-720p.mp4"
    ]


# --- lost leases, stopping, changed inputs ----------------------------------------------


def test_lease_lost_before_completion_publishes_nothing(studio: Studio) -> None:
    job_id = studio.request()

    def expire_and_reclaim(event: WorkerEvent) -> None:
        studio.clock.advance(timedelta(seconds=61))
        claim_elsewhere(studio, job_id)

    recorder = Recorder(expire_and_reclaim)
    worker = studio.run(recorder)
    job = studio.production.job(job_id)
    assert job.state is JobState.CLAIMED
    assert job.claim is not None
    assert job.claim.agent == OTHER
    assert recorder.actions() == ["claimed", "lease_lost"]
    assert worker.stats["lease_lost"] == 1
    assert studio.outputs() == []
    assert activity_count(studio.production) == 0
    assert studio.production.representations(kind=RepresentationKind.PROXY).items == ()


def test_lease_lost_during_renewal_stops_the_work(studio: Studio) -> None:
    job_id = studio.request(profile="proxy-1080p")
    lost = threading.Event()

    def expire_and_reclaim(event: WorkerEvent) -> None:
        studio.clock.advance(timedelta(seconds=61))
        claim_elsewhere(studio, job_id)
        assert lost.wait(10), "the renewer did not notice the lost lease"

    recorder = Recorder(expire_and_reclaim)

    def listener(event: WorkerEvent) -> None:
        if event.action == "lease_lost":
            lost.set()
        recorder(event)

    studio.run(listener, renew_interval=0.01)
    progress = [e for e in recorder.events if e.action == "progress"]
    assert len(progress) == 1  # stopped at the next frame
    assert recorder.actions() == ["claimed", "lease_lost"]
    assert studio.outputs() == []
    assert activity_count(studio.production) == 0
    claim = studio.production.job(job_id).claim
    assert claim is not None
    assert claim.agent == OTHER


def test_stop_releases_the_claim(studio: Studio) -> None:
    job_id = studio.request()
    workers: list[Worker] = []
    worker = Worker(studio.config(), Recorder(lambda event: workers[0].stop()))
    workers.append(worker)
    worker.run()
    job = studio.production.job(job_id)
    assert job.state is JobState.REQUESTED
    assert job.claim is None
    assert worker.stats["released"] == 1
    assert studio.outputs() == []


def test_changed_input_releases_for_fresh_work(studio: Studio) -> None:
    job_id = studio.request()

    def redeliver(event: WorkerEvent) -> None:
        generate_test_clip(studio.media / "A001_C003.mov", name="A001_C003 v2", frames=2, size=(320, 180))
        with (
            Production.open(studio.path, clock=studio.clock, allow_injected_clock=True) as other,
            other.edit() as tx,
        ):
            tx.observe_representation(studio.original)
            tx.commit()

    recorder = Recorder(redeliver)
    studio.run(recorder, once=True)
    assert recorder.actions() == ["claimed", "released"]
    assert "input changed" in recorder.events[-1].detail
    assert studio.production.job(job_id).state is JobState.REQUESTED
    assert studio.outputs() == []
    studio.run()
    assert studio.production.job(job_id).state is JobState.SUCCEEDED


# --- watching -----------------------------------------------------------------------------


def test_watch_picks_up_new_work_until_stopped(studio: Studio) -> None:
    done = threading.Event()
    worker = Worker(studio.config(watch=True), lambda e: done.set() if e.action == "succeeded" else None)
    thread = threading.Thread(target=worker.run)
    thread.start()
    try:
        job_id = studio.request(jobs.THUMBNAIL_KIND, "thumbnail-640")
        assert done.wait(30)
        assert studio.production.job(job_id).state is JobState.SUCCEEDED
    finally:
        worker.stop()
        thread.join(10)
    assert not thread.is_alive()


def test_bounded_diagnostic() -> None:
    text = "é" * 5000 + "\n\x00tail"
    cut = jobs.bounded(text)
    assert len(cut.encode()) <= 4096
    assert cut.endswith("…")
    assert jobs.bounded("  a\nb  ") == "a b"
    assert jobs.bounded("") == "unknown error"


def test_renewals_keep_a_short_lease_alive_on_the_wall_clock(studio: Studio, tmp_path: Path) -> None:
    long_clip = tmp_path / "long.mov"
    generate_test_clip(long_clip, name="LONG", frames=120, size=(320, 180))
    asset, original = studio.add_original("long", long_clip)
    job_id = studio.request(profile="proxy-720p", inputs=(original,), asset=asset)
    with Production.open(studio.path) as production:  # the system clock, as a real worker uses
        lease = timedelta(milliseconds=900)
        worker = Worker(WorkerConfig(production.location, agent=AGENT, lease=lease))
        worker.run()
        assert production.job(job_id).state is JobState.SUCCEEDED
        events = [entry.kind for entry in production.job_history(job_id)]
    assert events.count("job_claim_renewed") >= 1
    assert worker.stats["succeeded"] == 1
