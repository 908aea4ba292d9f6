"""Superseded artifacts, current inputs and downstream regeneration as one DAG (issue 14, items 3-4)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from postproject import (
    ArtifactState,
    ConflictError,
    InvalidArgumentError,
    JobOutput,
    JobRequest,
    JobState,
    NotFoundError,
    Production,
    RepresentationId,
    RepresentationKind,
    SupersededInput,
)
from postproject.knowledge import Superseded, UpstreamNotCurrent, describe
from tests.core.test_regeneration import JOB_KIND, TOOL, Setup

THUMB_KIND = "org.example:generate-thumbnail"
Media = Callable[..., Path]


class Chain:
    """original -> proxy (a job) -> thumbnail (a job made from the proxy), all current."""

    def __init__(self, setup: Setup) -> None:
        self.setup = setup
        self.production = setup.production
        self.original = setup.rep(content=b"take 1")
        self.proxy = self.make(JOB_KIND, self.original, RepresentationKind.PROXY, b"proxy v1")
        self.thumb = self.make(THUMB_KIND, self.proxy, RepresentationKind.DERIVED, b"thumb v1")

    def make(
        self, kind: str, source: RepresentationId, out: RepresentationKind, content: bytes
    ) -> RepresentationId:
        with self.production.edit() as tx:
            job = tx.request_job(JobRequest(kind, (source,), self.setup.asset, out, "proxies"))
            tx.commit()
        return self.setup.run(job, content, profile="p")

    def change_original(self) -> None:
        self.setup.media(f"f{self.setup.counter}.mov", b"take 2")  # the original's file
        with self.production.edit() as tx:
            assert tx.observe_representation(self.original)
            tx.commit()

    def output_of(self, job_id: object) -> RepresentationId:
        job = self.production.job(job_id)  # type: ignore[arg-type]
        assert job.completion is not None
        return job.completion.representation_id


@pytest.fixture
def chain(production: Production, media: Media) -> Chain:
    return Chain(Setup(production, media))


def stale_ids(production: Production, **kwargs: object) -> list[RepresentationId]:
    return [k.representation_id for k in production.stale_artifacts(**kwargs).items]  # type: ignore[arg-type]


def test_downstream_regeneration_converges_in_one_dag(chain: Chain) -> None:
    production = chain.production
    chain.change_original()
    assert stale_ids(production) == sorted([chain.proxy, chain.thumb])
    downstream = production.plan_downstream_regeneration(chain.original)
    assert [p.artifact_id for p in downstream.plans] == [chain.proxy, chain.thumb]
    assert downstream.bindings == ((), (chain.proxy,))
    with production.edit() as tx:
        proxy_job, thumb_job = tx.enqueue_plans(downstream.plans)
        tx.commit()
    thumb = production.job(thumb_job)
    assert (thumb.inputs, thumb.waiting_on, thumb.regenerates) == ((), (proxy_job,), chain.thumb)
    assert thumb.request().inputs == (JobOutput(proxy_job),)
    assert production.job(proxy_job).regenerates == chain.proxy
    new_proxy = chain.setup.run(proxy_job, b"proxy v2", profile="p")
    assert production.representation(chain.proxy).superseded_by == new_proxy
    assert stale_ids(production) == [chain.thumb]  # the thumbnail still waits for its job
    new_thumb = chain.setup.run(thumb_job, b"thumb v2", profile="p")
    assert stale_ids(production) == []
    activity = production.activity(production.job(thumb_job).completion.activity_id)  # type: ignore[union-attr]
    assert [e.representation_id for e in activity.inputs] == [new_proxy]
    assert production.evaluate_artifact(new_thumb).state is ArtifactState.CURRENT
    assert stale_ids(production, include_superseded=True) == sorted([chain.proxy, chain.thumb])
    assert production.plan_downstream_regeneration(chain.original).plans == ()  # nothing left to do


def test_success_supersedes_in_the_same_revision(chain: Chain) -> None:
    production = chain.production
    chain.change_original()
    (plan,) = production.plan_regeneration([chain.proxy])
    with production.edit() as tx:
        job_id = tx.enqueue_plan(plan)
        tx.commit()
    new_proxy = chain.setup.run(job_id, b"proxy v2", profile="p")
    revision = production.latest_revision()
    assert revision is not None
    kinds = [e.kind for e in revision.events]
    assert kinds[-2:] == ["job_succeeded", "representation_superseded"]
    assert dict(revision.events[-1].payload) == {
        "representation_id": str(chain.proxy),
        "superseded_by": str(new_proxy),
        "job_id": str(job_id),
    }
    knowledge = production.evaluate_artifact(chain.proxy)
    assert knowledge.state is ArtifactState.SUPERSEDED
    assert knowledge.reasons == (Superseded(chain.proxy, new_proxy),)
    assert describe(knowledge.reasons[0]) == f"{chain.proxy} was superseded by {new_proxy}"
    # the thumbnail was made from the replaced proxy: it is stale, and says why
    thumb = production.evaluate_artifact(chain.thumb)
    assert thumb.state is ArtifactState.STALE
    assert UpstreamNotCurrent(chain.proxy, ArtifactState.SUPERSEDED) in thumb.reasons
    graph = production.provenance(chain.original, downstream=5, check_files=False)
    node = graph.node(chain.proxy)
    assert (node.state, node.superseded_by) == (ArtifactState.SUPERSEDED, new_proxy)  # type: ignore[union-attr]


def test_plans_list_superseded_inputs_and_can_use_current_ones(chain: Chain) -> None:
    production = chain.production
    chain.change_original()
    (plan,) = production.plan_regeneration([chain.proxy])
    with production.edit() as tx:
        job_id = tx.enqueue_plan(plan)
        tx.commit()
    new_proxy = chain.setup.run(job_id, b"proxy v2", profile="p")
    (repeat,) = production.plan_regeneration([chain.thumb])
    assert repeat.job.inputs == (chain.proxy,)  # as recorded, as the spec says
    assert repeat.superseded_inputs == (SupersededInput(chain.proxy, new_proxy),)
    (current,) = production.plan_regeneration([chain.thumb], current_inputs=True)
    assert current.job.inputs == (new_proxy,)
    assert current.superseded_inputs == repeat.superseded_inputs
    assert current.job.regenerates == chain.thumb
    # downstream plans use current inputs (the proxy is superseded: only the thumbnail is planned)
    (downstream,) = production.plan_downstream_regeneration(chain.original).plans
    assert (downstream.artifact_id, downstream.job.inputs) == (chain.thumb, (new_proxy,))
    (recorded,) = production.plan_downstream_regeneration(chain.original, current_inputs=False).plans
    assert recorded.job.inputs == (chain.proxy,)
    with production.edit() as tx:
        thumb_job = tx.enqueue_plan(current)
        tx.commit()
    chain.setup.run(thumb_job, b"thumb v2", profile="p")
    assert stale_ids(production) == []


def test_regenerating_a_superseded_artifact_extends_its_chain(chain: Chain) -> None:
    production = chain.production
    chain.change_original()
    first_ids = []
    for content in (b"proxy v2", b"proxy v3"):
        (plan,) = production.plan_regeneration([chain.proxy])  # the same, already superseded artifact
        with production.edit() as tx:
            job_id = tx.enqueue_plan(plan)
            tx.commit()
        first_ids.append(chain.setup.run(job_id, content, profile="p"))
    v2, v3 = first_ids
    assert production.representation(chain.proxy).superseded_by == v2
    assert production.representation(v2).superseded_by == v3
    assert production.representation(v3).superseded_by is None
    (plan,) = production.plan_regeneration([chain.thumb], current_inputs=True)
    assert plan.superseded_inputs == (SupersededInput(chain.proxy, v3),)
    assert plan.job.inputs == (v3,)


def test_current_inputs_for_an_artifact_without_producer_is_a_clear_error(chain: Chain) -> None:
    production = chain.production
    before = production.latest_revision()
    with pytest.raises(ConflictError) as caught:
        production.plan_regeneration([chain.original], current_inputs=True)
    assert caught.value.reason == "producing_activity_missing"
    with pytest.raises(InvalidArgumentError):
        production.plan_regeneration([chain.proxy], current_inputs="yes")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        production.stale_artifacts(include_superseded=1)  # type: ignore[arg-type]
    assert production.latest_revision() == before


def test_enqueue_plans_is_all_or_nothing(chain: Chain) -> None:
    production = chain.production
    chain.change_original()
    plans = production.plan_downstream_regeneration(chain.original).plans
    before = (production.latest_revision(), production.job_counts())
    with production.edit() as tx:
        with pytest.raises(InvalidArgumentError, match="two plans regenerate"):
            tx.enqueue_plans([*plans, plans[0]])
        with pytest.raises(TypeError):
            tx.enqueue_plans([plans[0], "plan"])  # type: ignore[list-item]
        broken = dataclasses.replace(plans[1], job=dataclasses.replace(plans[1].job, target_root="nowhere"))
        with pytest.raises(NotFoundError):
            tx.enqueue_plans([plans[0], broken])
        assert tx.commit().revision is None
    assert (production.latest_revision(), production.job_counts()) == before
    # given in any order, jobs are requested upstream first and returned in the given order
    with production.edit() as tx:
        thumb_job, proxy_job = tx.enqueue_plans(list(reversed(plans)))
        tx.commit()
    assert production.job(thumb_job).depends_on == (proxy_job,)
    assert production.job(proxy_job).state is JobState.REQUESTED


def test_regenerates_is_checked_when_requested(chain: Chain) -> None:
    production = chain.production
    asset = chain.setup.asset
    with production.edit() as tx:
        with pytest.raises(NotFoundError):
            tx.request_job(
                JobRequest(
                    JOB_KIND,
                    (chain.original,),
                    asset,
                    RepresentationKind.PROXY,
                    regenerates=RepresentationId.new(),
                )
            )
        with pytest.raises(InvalidArgumentError, match="regenerated representation"):
            tx.request_job(
                JobRequest(
                    JOB_KIND, (chain.original,), asset, RepresentationKind.PROXY, regenerates=chain.thumb
                )
            )
        assert tx.commit().revision is None


def test_a_failed_regeneration_supersedes_nothing(chain: Chain) -> None:
    production = chain.production
    chain.change_original()
    (plan,) = production.plan_regeneration([chain.proxy])
    with production.edit() as tx:
        job_id = tx.enqueue_plan(plan)
        tx.commit()
    with production.edit() as tx:
        lease = tx.claim_job_lease(job_id, TOOL, timedelta(minutes=1))
        tx.commit()
    with production.edit() as tx:
        tx.fail_job_lease(lease, "broke")
        tx.commit()
    assert production.representation(chain.proxy).superseded_by is None
    assert production.evaluate_artifact(chain.proxy).state is ArtifactState.STALE
