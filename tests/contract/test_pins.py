"""Pins: behaviours that a deliberate one-line bug once broke without any other test noticing.

They use only the public API, so they run on every engine the suite's fixtures provide.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from postproject import (
    ActivityId,
    ActivityRef,
    ActivitySpec,
    ArtifactState,
    Assertion,
    ConflictError,
    FakeClock,
    InvalidArgumentError,
    JobLease,
    JobRef,
    JobRequest,
    JobState,
    Production,
    Property,
    Reason,
    RegenerationPlan,
    RepresentationKind,
    StringValue,
    ToolIdentity,
)
from tests.core.jobs_helpers import AGENT, TOOL, Setup, at, make_setup, us

PROFILE = Property("https://example.com/transcode", "profile")


@pytest.fixture
def s(production: Production, clock: FakeClock, tmp_path: Path) -> Setup:
    at(clock, 0)
    return make_setup(production, clock, tmp_path)


def test_claim_next_honours_its_kinds_filter(s: Setup) -> None:
    older = s.request(kind="org.example:a")
    wanted = s.request(kind="org.example:b")
    with s.production.edit() as tx:
        lease = tx.claim_next_job_lease(TOOL, us(1000), kinds=["org.example:b"], agent=AGENT)
        assert tx.claim_next_job_lease(TOOL, us(1000), kinds=["org.example:c"]) is None
        tx.commit()
    assert lease is not None and lease.job_id == wanted
    assert s.production.job(older).state is JobState.REQUESTED


def test_import_token_refuses_a_token_exactly_at_expiry(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 100)  # claimed at 0, expires at 100 µs
    token = lease.export_token()
    at(s.clock, 99)
    assert JobLease.import_token(s.production, token).job_id == job
    at(s.clock, 100)
    with pytest.raises(ConflictError) as error:
        JobLease.import_token(s.production, token)
    assert error.value.reason == Reason.LEASE_LOST


def test_a_diverged_upstream_makes_its_consumer_stale(s: Setup) -> None:
    """The consumer's own edges are current (recorded after the upstream changed)."""
    production = s.production
    proxy_file = s.output_file("proxy.mov", b"proxy v1")
    with production.edit() as tx:
        proxy = tx.add_representation(s.asset, RepresentationKind.PROXY, proxy_file)
        tx.create_activity(ActivitySpec("org.example:transcode", inputs=(s.original,), outputs=(proxy,)))
        tx.commit()
    proxy_file.write_bytes(b"proxy edited by hand")
    with production.edit() as tx:
        assert tx.observe_representation(proxy)
        thumb = tx.add_representation(s.asset, RepresentationKind.DERIVED, s.output_file("thumb.jpg", b"t"))
        tx.create_activity(ActivitySpec("org.example:thumbnail", inputs=(proxy,), outputs=(thumb,)))
        tx.commit()
    assert production.evaluate_artifact(proxy).state is ArtifactState.DIVERGED
    assert production.evaluate_artifact(thumb).state is ArtifactState.STALE


def test_a_plan_keeps_every_value_of_a_repeated_parameter(s: Setup) -> None:
    production = s.production
    with production.edit() as tx:
        proxy = tx.add_representation(s.asset, RepresentationKind.PROXY, s.output_file())
        activity = tx.create_activity(
            ActivitySpec(
                "org.example:transcode",
                inputs=(s.original,),
                outputs=(proxy,),
                tool=ToolIdentity("transcoder", "1"),
            )
        )
        tx.add_metadata(ActivityRef(activity), PROFILE, "first")
        tx.add_metadata(ActivityRef(activity), PROFILE, "second")
        tx.commit()
    (plan,) = production.plan_regeneration([proxy])
    values = (Assertion(PROFILE, StringValue("first")), Assertion(PROFILE, StringValue("second")))
    assert plan.parameters == values
    with production.edit() as tx:
        job = tx.enqueue_plan(plan)
        tx.commit()
    assert production.metadata[JobRef(job)] == values


def test_a_failed_operations_events_never_reach_the_receipt(s: Setup) -> None:
    plan = RegenerationPlan(
        s.original,
        JobRequest("org.example:a", (s.original,), s.asset, RepresentationKind.PROXY),
        (Assertion(PROFILE, 1.5),),  # type: ignore[arg-type]  # floats are refused after the job is staged
        ActivityId.new(),
    )
    with s.production.edit() as tx:
        asset = tx.create_asset("kept")
        with pytest.raises(InvalidArgumentError):
            tx.enqueue_plan(plan)
        receipt = tx.commit()
    assert receipt.revision is not None
    assert [e.kind for e in receipt.revision.events] == ["asset_imported"]
    assert receipt.revision.events[0].payload["asset_id"] == str(asset)
    assert s.production.job_counts()[JobState.REQUESTED] == 0


def test_a_completion_output_must_be_added_in_the_same_edit(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 1000)
    with s.production.edit() as tx:
        early = tx.add_representation(s.asset, RepresentationKind.PROXY, s.output_file("early.mov"))
        tx.commit()
    with s.production.edit() as tx:
        activity = tx.create_activity(ActivitySpec("org.example:a", inputs=(s.original,), outputs=(early,)))
        with pytest.raises(InvalidArgumentError, match="same transaction"):
            tx.complete_job_lease(lease, early, activity)
    assert s.production.job(job).state is JobState.CLAIMED


def test_counts_per_state_after_claim_and_release(s: Setup) -> None:
    job = s.request()
    assert s.production.job_counts()[JobState.REQUESTED] == 1
    lease = s.claim(job, 1000)
    counts = s.production.job_counts()
    assert (counts[JobState.REQUESTED], counts[JobState.CLAIMED]) == (0, 1)
    with s.production.edit() as tx:
        tx.release_job_lease(lease)
        tx.commit()
    counts = s.production.job_counts()
    assert (counts[JobState.REQUESTED], counts[JobState.CLAIMED]) == (1, 0)
    assert sum(counts.values()) == 1
