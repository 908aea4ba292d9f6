"""Completing a job: one revision with everything, outputs and activities that match the job,
fenced tokens, the clock's high-water mark, snapshots (acceptance checks 23-33 of the notes §8)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from postproject import (
    ActivityRef,
    ActivitySpec,
    ConflictError,
    FakeClock,
    InvalidArgumentError,
    JobLease,
    JobRef,
    JobRequest,
    JobState,
    LeaseState,
    NotFoundError,
    Production,
    Property,
    RepresentationKind,
)
from tests.conftest import START
from tests.core.jobs_helpers import KIND, TOOL, Setup, at, make_setup, us

PARAM = Property("https://example.com/transcode", "profile")


@pytest.fixture
def s(production: Production, clock: FakeClock, tmp_path: Path) -> Setup:
    return make_setup(production, clock, tmp_path)


def events_of(setup: Setup, sequence: int) -> list[str]:
    (revision,) = setup.production.changes_since(sequence - 1, 1)
    return [event.kind for event in revision.events]


def test_23_completion_publishes_everything_in_one_revision(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 1000)
    head = s.head()
    rep = s.complete(lease)
    assert s.head() == head + 1
    kinds = events_of(s, s.head())
    assert kinds[-1] == "job_succeeded"
    assert kinds[:2] == ["representation_added", "activity_created"]
    stored = s.production.job(job)
    assert stored.state is JobState.SUCCEEDED and stored.completion is not None
    assert stored.completion.representation_id == rep
    activity = s.production.activity(stored.completion.activity_id)
    assert [e.representation_id for e in activity.outputs] == [rep]


@pytest.mark.parametrize("mismatch", ["asset", "kind"])
def test_24_output_for_another_asset_or_kind_is_invalid(s: Setup, mismatch: str) -> None:
    job = s.request()
    lease = s.claim(job, 1000)
    with s.production.edit() as tx:
        asset = tx.create_asset("other") if mismatch == "asset" else s.asset
        kind = RepresentationKind.DERIVED if mismatch == "kind" else RepresentationKind.PROXY
        rep = tx.add_representation(asset, kind, s.output_file())
        activity = tx.create_activity(ActivitySpec(KIND, inputs=(s.original,), outputs=(rep,)))
        with pytest.raises(InvalidArgumentError):
            tx.complete_job_lease(lease, rep, activity)
        # the edit is still usable and the lease still works
    assert s.production.job(job).state is JobState.CLAIMED
    s.complete(lease)


def test_25_activity_io_must_match_the_job(s: Setup, media: Callable[..., Path]) -> None:
    with s.production.edit() as tx:
        extra = tx.add_representation(s.asset, RepresentationKind.OPTIMIZED, media("extra.mov", b"x"))
        tx.commit()
    job = s.request()
    lease = s.claim(job, 1000)
    # A failed completion poisons its edit (notes §2.6), so each mismatch gets its own edit.
    for index in range(4):
        with s.production.edit() as tx:
            rep = tx.add_representation(s.asset, RepresentationKind.PROXY, s.output_file(f"a{index}.mov"))
            second = tx.add_representation(
                s.asset, RepresentationKind.PROXY, s.output_file(f"b{index}.mov", b"b")
            )
            spec = [
                ActivitySpec(KIND, inputs=(), outputs=(rep,)),
                ActivitySpec(KIND, inputs=(s.original, extra), outputs=(rep,)),
                ActivitySpec(KIND, inputs=(s.original,), outputs=(rep, second)),
                ActivitySpec(KIND, inputs=(s.original,), outputs=(second,)),
            ][index]
            activity = tx.create_activity(spec)
            with pytest.raises(InvalidArgumentError):
                tx.complete_job_lease(lease, rep, activity)


def test_26_old_tokens_are_fenced_by_a_reclaim(
    s: Setup, production_factory: Callable[..., Production]
) -> None:
    job = s.request()
    at(s.clock, 100)
    lease_a = s.claim(job, 100)
    token_a = lease_a.export_token()
    at(s.clock, 200)
    lease_b = s.claim(job, 1000)
    head = s.head()
    with s.production.edit() as tx:
        for action in (
            lambda: tx.renew_job_lease(lease_a, us(10_000)),
            lambda: tx.release_job_lease(lease_a),
            lambda: tx.fail_job_lease(lease_a, "late"),
        ):
            with pytest.raises(ConflictError):
                action()
        rep = tx.add_representation(s.asset, RepresentationKind.PROXY, s.output_file())
        activity = tx.create_activity(ActivitySpec(KIND, inputs=(s.original,), outputs=(rep,)))
        with pytest.raises(ConflictError):
            tx.complete_job_lease(lease_a, rep, activity)
    assert s.head() == head
    assert s.production.representations(kind=RepresentationKind.PROXY).items == ()
    with pytest.raises(ConflictError):
        JobLease.import_token(s.production, token_a)
    s.complete(lease_b)
    assert s.production.job(job).state is JobState.SUCCEEDED


def test_27_completion_that_outlives_its_lease_publishes_nothing(s: Setup) -> None:
    job = s.request()
    at(s.clock, 100)
    lease = s.claim(job, 100)
    head = s.head()
    at(s.clock, 150)
    with s.production.edit() as tx:
        rep = tx.add_representation(s.asset, RepresentationKind.PROXY, s.output_file())
        activity = tx.create_activity(ActivitySpec(KIND, inputs=(s.original,), outputs=(rep,)))
        tx.complete_job_lease(lease, rep, activity)
        at(s.clock, 200)
        with pytest.raises(ConflictError):
            tx.commit()
    assert s.head() == head
    with pytest.raises(NotFoundError):
        s.production.representation(rep)
    assert lease.state is LeaseState.ACTIVE


def test_28_the_high_water_mark_survives_failure_and_reopen(s: Setup) -> None:
    test_27_completion_that_outlives_its_lease_publishes_nothing(s)
    path = s.production.location
    s.production.close()
    job = Production.open(path, clock=FakeClock(START + us(199)), allow_injected_clock=True)
    with job:
        pending = job.jobs(state=JobState.CLAIMED).items[0].id
        with job.edit() as tx, pytest.raises(ConflictError, match="backward"):
            tx.claim_job_lease(pending, TOOL, us(100))
    later = Production.open(path, clock=FakeClock(START + us(200)), allow_injected_clock=True)
    with later, later.edit() as tx:
        tx.claim_job_lease(pending, TOOL, us(100))
        tx.commit()


def test_29_claim_and_complete_in_one_edit(s: Setup) -> None:
    job = s.request()
    head = s.head()
    with s.production.edit() as tx:
        lease = tx.claim_job_lease(job, TOOL, us(1000))
        rep = tx.add_representation(s.asset, RepresentationKind.PROXY, s.output_file())
        activity = tx.create_activity(ActivitySpec(KIND, inputs=(s.original,), outputs=(rep,)))
        tx.complete_job_lease(lease, rep, activity)
        tx.commit()
    assert s.head() == head + 1
    kinds = events_of(s, s.head())
    assert kinds[0] == "job_claimed" and kinds[-1] == "job_succeeded"
    assert lease.state is LeaseState.CLOSED
    with s.production.edit() as tx, pytest.raises(ConflictError):
        tx.release_job_lease(lease)


def test_30_an_input_changed_after_the_claim_makes_completion_a_conflict(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 10_000_000)
    (s.root / "media" / "A001.mov").write_bytes(b"re-graded essence")
    with s.production.edit() as tx:
        assert tx.observe_representation(s.original)
        receipt = tx.commit()
    assert receipt.revision is not None
    token = lease.export_token()
    for handle in (lease, JobLease.import_token(s.production, token)):
        head = s.head()
        with s.production.edit() as tx:
            rep = tx.add_representation(s.asset, RepresentationKind.PROXY, s.output_file())
            activity = tx.create_activity(ActivitySpec(KIND, inputs=(s.original,), outputs=(rep,)))
            with pytest.raises(ConflictError, match=f"revision {receipt.revision.sequence}") as raised:
                tx.complete_job_lease(handle, rep, activity)
            assert str(s.original) in str(raised.value)
        assert s.head() == head
    assert s.production.job(job).state is JobState.CLAIMED
    with s.production.edit() as tx:
        tx.release_job_lease(lease)
        tx.commit()


def test_33_snapshots_carry_the_commit_sequence_and_no_parameters_are_copied(s: Setup) -> None:
    with s.production.edit() as tx:
        job = tx.request_job(JobRequest(KIND, (s.original,), s.asset, RepresentationKind.PROXY))
        tx.add_metadata(JobRef(job), PARAM, "proxy-720p")
        tx.commit()
    lease = s.claim(job, 1000)
    rep = s.complete(lease)
    completion = s.production.job(job).completion
    assert completion is not None
    activity = s.production.activity(completion.activity_id)
    for edge in activity.inputs + activity.outputs:
        assert edge.snapshot is not None and edge.snapshot.revision_sequence == s.head()
    assert activity.outputs[0].snapshot.fingerprints == s.production.representation(rep).fingerprints  # type: ignore[union-attr]
    assert activity.inputs[0].snapshot.fingerprints == s.production.representation(s.original).fingerprints  # type: ignore[union-attr]
    assert s.production.metadata[ActivityRef(activity.id)] == ()
