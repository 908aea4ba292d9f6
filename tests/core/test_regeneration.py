"""Regeneration plans (notes §5.2, checks 54-57), downstream planning, enqueueing, reproducibility."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from postproject import (
    ActivityId,
    ActivityRef,
    ActivitySpec,
    AgentIdentity,
    ArtifactState,
    Assertion,
    AssetId,
    ConflictError,
    InvalidArgumentError,
    JobId,
    JobRef,
    JobRequest,
    JobState,
    NotFoundError,
    Production,
    Property,
    RegenerationPlan,
    RepresentationId,
    RepresentationKind,
    StringValue,
    ToolIdentity,
)
from postproject.knowledge import ProducingActivityAmbiguous, ProducingActivityMissing
from postproject.knowledge.regeneration import (
    InputRepresentationMissing,
    ParametersMissing,
    ToolIdentityMissing,
)

Media = Callable[..., Path]
TOOL = ToolIdentity("Example Transcoder", "3.2", "https://example.com/transcoder")
AGENT = AgentIdentity("render-node-07")
PROFILE = Property("https://example.com/transcode", "profile")
JOB_KIND = "org.example:generate-proxy"


class Setup:
    """Assets and helpers on one production."""

    def __init__(self, production: Production, media: Media) -> None:
        self.production = production
        self.media = media
        self.counter = 0
        with production.edit() as tx:
            self.asset = tx.create_asset("A001")
            tx.add_media_root("proxies", media("proxies/.keep").parent)
            tx.commit()

    def rep(
        self, kind: RepresentationKind = RepresentationKind.ORIGINAL, content: bytes | None = None
    ) -> RepresentationId:
        self.counter += 1
        with self.production.edit() as tx:
            rep = tx.add_representation(
                self.asset, kind, self.media(f"f{self.counter}.mov", content or b"%d" % self.counter)
            )
            tx.commit()
        return rep

    def activity(
        self,
        inputs: tuple[RepresentationId | tuple[RepresentationId, str], ...],
        output: RepresentationId,
        kind: str = "org.example:transcode",
        profile: str | None = None,
        tool: ToolIdentity | None = TOOL,
    ) -> ActivityId:
        with self.production.edit() as tx:
            activity = tx.create_activity(ActivitySpec(kind, inputs=inputs, outputs=(output,), tool=tool))
            if profile is not None:
                tx.add_metadata(ActivityRef(activity), PROFILE, profile)
            tx.commit()
        return activity

    def run(
        self, job_id: JobId, content: bytes, *, profile: str | None, activity_kind: str | None = None
    ) -> RepresentationId:
        """Claim and complete a job in the worker's pattern: output + activity + completion in one edit."""
        production = self.production
        with production.edit() as tx:
            lease = tx.claim_job_lease(job_id, TOOL, timedelta(minutes=5), agent=AGENT)
            tx.commit()
        job = production.job(job_id)
        with production.edit() as tx:
            rep = tx.add_representation(
                job.output_asset_id, job.output_representation_kind, self.media(f"job-{job_id}.mov", content)
            )
            activity = tx.create_activity(
                ActivitySpec(
                    activity_kind or job.kind, inputs=job.inputs, outputs=(rep,), tool=TOOL, agent=AGENT
                )
            )
            if profile is not None:
                tx.add_metadata(ActivityRef(activity), PROFILE, profile)
            tx.complete_job_lease(lease, rep, activity)
            tx.commit()
        return rep


@pytest.fixture
def setup(production: Production, media: Media) -> Setup:
    return Setup(production, media)


def test_plans_are_deduplicated_ordered_and_read_only(setup: Setup) -> None:  # check 54
    production = setup.production
    original = setup.rep()
    x, y = setup.rep(RepresentationKind.PROXY), setup.rep(RepresentationKind.PROXY)
    setup.activity((original,), x)
    setup.activity((original,), y)
    before = production.latest_revision()
    plans = production.plan_regeneration([y, x, y, x])
    assert [p.artifact_id for p in plans] == sorted([x, y])
    assert production.latest_revision() == before
    assert production.jobs().items == ()


def test_unplannable_artifacts_fail_the_whole_call(setup: Setup) -> None:  # check 55
    production = setup.production
    original = setup.rep()
    good, twice = setup.rep(RepresentationKind.PROXY), setup.rep(RepresentationKind.PROXY)
    setup.activity((original,), good)
    setup.activity((original,), twice)
    setup.activity((original,), twice, kind="org.example:again")
    with pytest.raises(ConflictError, match="exactly one producing activity"):
        production.plan_regeneration([good, original])
    with pytest.raises(ConflictError, match="exactly one producing activity"):
        production.plan_regeneration([twice])
    with pytest.raises(NotFoundError):
        production.plan_regeneration([good, RepresentationId.new()])
    with pytest.raises(InvalidArgumentError):
        production.plan_regeneration([good] * 100_001)

    def endless() -> Iterator[RepresentationId]:
        while True:
            yield good

    with pytest.raises(InvalidArgumentError):
        production.plan_regeneration(endless())
    with pytest.raises(InvalidArgumentError):
        production.plan_regeneration([str(good)])  # type: ignore[list-item]
    assert production.plan_regeneration([]) == ()


def test_plan_repeats_the_completed_jobs_kind_and_root(setup: Setup) -> None:  # check 56
    production = setup.production
    original = setup.rep()
    with production.edit() as tx:
        job_id = tx.request_job(
            JobRequest(JOB_KIND, (original,), setup.asset, RepresentationKind.PROXY, "proxies")
        )
        tx.add_metadata(JobRef(job_id), PROFILE, "requested-profile")
        tx.commit()
    proxy = setup.run(job_id, b"proxy", profile="used-profile", activity_kind="org.example:ffmpeg-transcode")
    (plan,) = production.plan_regeneration([proxy])
    assert plan.job.kind == JOB_KIND  # not the activity's kind
    assert plan.job.target_root == "proxies"
    assert plan.parameters == (
        Assertion(PROFILE, StringValue("used-profile")),
    )  # the activity's, not the job's

    standalone = setup.rep(RepresentationKind.DERIVED)
    activity = setup.activity((original,), standalone, kind="org.example:conform")
    (plan,) = production.plan_regeneration([standalone])
    assert (plan.job.kind, plan.job.target_root, plan.activity_id) == ("org.example:conform", None, activity)


def test_plan_inputs_outputs_and_parameters(setup: Setup) -> None:  # check 57
    production = setup.production
    a, b = setup.rep(), setup.rep()
    out = setup.rep(RepresentationKind.OPTIMIZED)
    setup.activity(
        ((b, "org.example:audio"), (a, "org.example:video"), (a, "org.example:reference")), out, profile="hq"
    )
    (plan,) = production.plan_regeneration([out])
    assert plan.job.inputs == (a, b)
    assert (plan.job.output_asset_id, plan.job.output_representation_kind) == (
        setup.asset,
        RepresentationKind.OPTIMIZED,
    )
    with production.edit() as tx:
        first, second = tx.enqueue_plan(plan), tx.enqueue_plan(plan)
        tx.commit()
    assert first != second
    for job_id in (first, second):
        job = production.job(job_id)
        assert job.state is JobState.REQUESTED
        assert job.inputs == (a, b)
        assert [(p.property, p.value) for p in production.metadata[JobRef(job_id)]] == [
            (PROFILE, StringValue("hq"))
        ]


def test_enqueue_is_atomic(setup: Setup) -> None:
    production = setup.production
    original = setup.rep()
    proxy = setup.rep(RepresentationKind.PROXY)
    activity = setup.activity((original,), proxy)
    request = JobRequest(JOB_KIND, (original,), setup.asset, RepresentationKind.PROXY)
    bad = RegenerationPlan(proxy, request, (Assertion(PROFILE, 0.5),), activity)  # type: ignore[arg-type]
    before = production.latest_revision()
    with production.edit() as tx:
        with pytest.raises(InvalidArgumentError):
            tx.enqueue_plan(bad)
        with pytest.raises(TypeError):
            tx.enqueue_plan(request)  # type: ignore[arg-type]
        assert tx.commit().revision is None
    assert production.latest_revision() == before
    assert production.jobs().items == ()


def build_chain(setup: Setup) -> tuple[RepresentationId, RepresentationId, RepresentationId]:
    """original -> proxy -> render, with the render's id *smaller* than the proxy's."""
    original = setup.rep()
    render = setup.rep(RepresentationKind.DERIVED)
    proxy = setup.rep(RepresentationKind.PROXY)
    assert render < proxy
    setup.activity((original,), proxy, kind="org.example:make-proxy", profile="proxy-720p")
    setup.activity((proxy,), render, kind="org.example:render")
    return original, proxy, render


def test_downstream_plans_come_in_dependency_order(setup: Setup) -> None:
    production = setup.production
    original, proxy, render = build_chain(setup)
    assert production.plan_downstream_regeneration(original).plans == ()  # nothing stale yet
    setup.media("f1.mov", b"regraded")
    with production.edit() as tx:
        tx.observe_representation(original)
        tx.commit()
    assert production.evaluate_artifact(render).state is ArtifactState.STALE
    before = production.latest_revision()
    result = production.plan_downstream_regeneration(original)
    assert [p.artifact_id for p in result.plans] == [proxy, render]
    assert result.unplannable == ()
    assert not result.truncated
    assert result.plans[0].parameters == (Assertion(PROFILE, StringValue("proxy-720p")),)
    assert production.latest_revision() == before
    with pytest.raises(NotFoundError):
        production.plan_downstream_regeneration(RepresentationId.new())


def test_downstream_reports_unplannable_descendants(setup: Setup) -> None:
    production = setup.production
    original, proxy, render = build_chain(setup)
    setup.activity((original,), proxy, kind="org.example:again")  # the proxy now has two producers
    result = production.plan_downstream_regeneration(original)
    assert result.plans == ()
    assert [(u.artifact_id, u.code) for u in result.unplannable] == [(proxy, "producing_activity_ambiguous")]
    assert "2 producing activities" in result.unplannable[0].message
    assert (
        production.evaluate_artifact(render).state is ArtifactState.INDETERMINATE
    )  # neither planned nor listed


def test_enqueued_plan_run_with_a_lease_is_current(setup: Setup) -> None:
    production = setup.production
    original = setup.rep()
    with production.edit() as tx:
        job_id = tx.request_job(
            JobRequest(JOB_KIND, (original,), setup.asset, RepresentationKind.PROXY, "proxies")
        )
        tx.commit()
    proxy = setup.run(job_id, b"proxy v1", profile="proxy-720p")
    setup.media("f1.mov", b"new take")
    with production.edit() as tx:
        tx.observe_representation(original)
        tx.commit()
    assert production.evaluate_artifact(proxy).state is ArtifactState.STALE
    (plan,) = production.plan_downstream_regeneration(original).plans
    with production.edit() as tx:
        again = tx.enqueue_plan(plan)
        tx.commit()
    assert production.job(again).request() == plan.job
    regenerated = setup.run(again, b"proxy v2", profile="proxy-720p")
    knowledge = production.evaluate_artifact(regenerated)
    assert knowledge.state is ArtifactState.CURRENT
    assert knowledge.reasons == ()
    old = production.evaluate_artifact(proxy)  # the regenerated output replaced the old proxy
    assert old.state is ArtifactState.SUPERSEDED
    assert production.representation(proxy).superseded_by == regenerated
    assert production.stale_artifacts().items == ()


def test_reproducibility_lists_every_missing_condition(setup: Setup) -> None:
    production = setup.production
    original = setup.rep()
    bare, good, twice = (setup.rep(RepresentationKind.PROXY) for _ in range(3))
    bare_activity = setup.activity((original,), bare, tool=None)
    good_activity = setup.activity((original,), good, profile="hq", kind="org.example:make-proxy")
    setup.activity((original,), twice)
    setup.activity((original,), twice)

    report = production.reproducibility(original)
    assert report.issues == (ProducingActivityMissing(original),)
    assert not report.reproducible
    assert production.reproducibility(twice).issues == (ProducingActivityAmbiguous(twice, 2),)
    report = production.reproducibility(bare)
    assert report.activity_id == bare_activity
    assert report.issues == (ToolIdentityMissing(bare_activity), ParametersMissing(bare_activity))
    assert [i.code for i in report.issues] == ["tool_identity_missing", "parameters_missing"]
    report = production.reproducibility(good)
    assert report.reproducible
    assert (report.activity_id, report.activity_kind) == (good_activity, "org.example:make-proxy")
    assert InputRepresentationMissing.code == "input_representation_missing"
    with pytest.raises(NotFoundError):
        production.reproducibility(RepresentationId.new())


def test_plans_do_not_need_an_asset_of_their_own(setup: Setup) -> None:
    """A plan targets the artifact's asset even when the inputs belong to another asset."""
    production = setup.production
    original = setup.rep()
    with production.edit() as tx:
        other = tx.create_asset("B001")
        out = tx.add_representation(other, RepresentationKind.DERIVED, setup.media("b.mov", b"b"))
        tx.create_activity(ActivitySpec("org.example:composite", inputs=(original,), outputs=(out,)))
        tx.commit()
    (plan,) = production.plan_regeneration([out])
    assert plan.job.output_asset_id == other != setup.asset
    assert isinstance(plan.job.output_asset_id, AssetId)
