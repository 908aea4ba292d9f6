"""Job dependencies (issue 14, items 1, 2 and 5): ``after``, output bindings, blocked jobs,
``request_again`` moving dependents, and ``explain_pending``."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from postproject import (
    ActivitySpec,
    AssetId,
    BoundInput,
    ConflictError,
    FakeClock,
    InvalidArgumentError,
    JobId,
    JobLease,
    JobOutput,
    JobRequest,
    JobState,
    NotFoundError,
    Production,
    RepresentationId,
    RepresentationKind,
    ToolIdentity,
)
from postproject.model.pending import (
    BlockedByJob,
    JobsAhead,
    NoOnlineWorker,
    NotBefore,
    NotPending,
    WaitingOnJob,
)
from tests.conftest import START

PROXY = "org.example:generate-proxy"
THUMB = "org.example:generate-thumbnail"
TOOL = ToolIdentity("Worker", "1")
LEASE = timedelta(minutes=5)


class Farm:
    """One asset with an original, and helpers to request, claim and complete jobs."""

    def __init__(self, production: Production, media: Callable[..., Path]) -> None:
        self.production = production
        self.media = media
        self.files = 0
        with production.edit() as tx:
            self.asset = tx.create_asset("A001")
            self.original = tx.add_representation(self.asset, RepresentationKind.ORIGINAL, media("a.mov"))
            tx.commit()

    def request(
        self,
        kind: str = PROXY,
        inputs: tuple[RepresentationId | JobOutput, ...] | None = None,
        *,
        after: tuple[JobId, ...] = (),
        priority: int = 0,
        output: RepresentationKind = RepresentationKind.PROXY,
    ) -> JobId:
        with self.production.edit() as tx:
            job = tx.request_job(
                JobRequest(
                    kind,
                    (self.original,) if inputs is None else inputs,
                    self.asset,
                    output,
                    after=after,
                    priority=priority,
                )
            )
            tx.commit()
        return job

    def claim(self, job_id: JobId) -> JobLease:
        with self.production.edit() as tx:
            lease = tx.claim_job_lease(job_id, TOOL, LEASE)
            tx.commit()
        return lease

    def claim_next(self) -> JobId | None:
        with self.production.edit() as tx:
            lease = tx.claim_next_job_lease(TOOL, LEASE)
            tx.commit()
        return lease.job_id if lease is not None else None

    def complete(
        self, lease: JobLease, inputs: tuple[RepresentationId, ...] | None = None
    ) -> RepresentationId:
        """Complete as a worker does: the activity records the job's inputs as read after the claim."""
        job = self.production.job(lease.job_id)
        self.files += 1
        with self.production.edit() as tx:
            rep = tx.add_representation(
                job.output_asset_id,
                job.output_representation_kind,
                self.media(f"out{self.files}.mov", b"%d" % self.files),
            )
            activity = tx.create_activity(
                ActivitySpec(
                    job.kind, inputs=job.inputs if inputs is None else inputs, outputs=(rep,), tool=TOOL
                )
            )
            tx.complete_job_lease(lease, rep, activity)
            tx.commit()
        return rep

    def run(self, job_id: JobId) -> RepresentationId:
        return self.complete(self.claim(job_id))

    def fail(self, job_id: JobId) -> None:
        lease = self.claim(job_id)
        with self.production.edit() as tx:
            tx.fail_job_lease(lease, "broke")
            tx.commit()

    def cancel(self, job_id: JobId) -> None:
        with self.production.edit() as tx:
            tx.cancel_job(job_id)
            tx.commit()


@pytest.fixture
def farm(production: Production, media: Callable[..., Path]) -> Farm:
    return Farm(production, media)


def test_a_job_is_claimable_only_once_its_dependencies_succeeded(farm: Farm) -> None:
    production = farm.production
    first = farm.request()
    second = farm.request(after=(first,), priority=1000)  # a higher priority does not jump the wait
    job = production.job(second)
    assert (job.depends_on, job.waiting_on, job.blocked_by) == ((first,), (first,), ())
    with production.edit() as tx, pytest.raises(ConflictError) as caught:
        tx.claim_job_lease(second, TOOL, LEASE)
    assert caught.value.reason == "waiting_on_dependencies" and str(first) in caught.value.message
    assert farm.claim_next() == first
    assert farm.claim_next() is None  # the dependent still waits while the first is claimed
    assert production.job(second).waiting_on == (first,)
    lease = production.job(first)
    assert lease.state is JobState.CLAIMED


def test_success_frees_the_dependents_in_the_same_revision(farm: Farm) -> None:
    production = farm.production
    first, other = farm.request(), farm.request()
    second = farm.request(after=(first, other))
    lease = farm.claim(first)
    job = production.job(first)
    with production.edit() as tx:
        rep = tx.add_representation(
            job.output_asset_id, job.output_representation_kind, farm.media("o.mov", b"o")
        )
        activity = tx.create_activity(ActivitySpec(PROXY, inputs=job.inputs, outputs=(rep,), tool=TOOL))
        tx.complete_job_lease(lease, rep, activity)
        assert production.job(second).waiting_on == (first, other)  # not before the commit
        tx.commit()
    assert production.job(second).waiting_on == (other,)
    farm.run(other)
    assert production.job(second).waiting_on == ()
    assert farm.claim_next() == second


def test_a_chain_runs_in_dependency_order(farm: Farm) -> None:
    production = farm.production
    third_first = farm.request()  # requested first, but it will wait on nothing
    first = farm.request()
    second = farm.request(after=(first,))
    third = farm.request(after=(second,))
    assert [production.job(j).waiting_on for j in (second, third)] == [(first,), (second,)]
    order = []
    while (job_id := farm.claim_next()) is not None:
        order.append(job_id)
        farm.production.clock.advance(timedelta(seconds=1))  # type: ignore[attr-defined]
        farm.complete(_claimed_lease(farm, job_id))
    assert order == [third_first, first, second, third]


def _claimed_lease(farm: Farm, job_id: JobId) -> JobLease:
    """A fresh lease on a job claim_next took (the first claim is let expire)."""
    farm.production.clock.advance(LEASE)  # type: ignore[attr-defined]
    return farm.claim(job_id)


def test_an_output_binding_resolves_when_the_job_is_claimed(farm: Farm) -> None:
    production = farm.production
    proxy_job = farm.request()
    thumb_job = farm.request(THUMB, (JobOutput(proxy_job),), output=RepresentationKind.DERIVED)
    job = production.job(thumb_job)
    assert job.inputs == ()
    assert job.bound_inputs == (BoundInput(JobOutput(proxy_job), None),)
    assert job.depends_on == job.waiting_on == (proxy_job,)
    assert production.job(thumb_job).request().inputs == (JobOutput(proxy_job),)
    proxy = farm.run(proxy_job)
    assert production.job(thumb_job).bound_inputs == (
        BoundInput(JobOutput(proxy_job), None),
    )  # not claimed yet
    lease = farm.claim(thumb_job)
    job = production.job(thumb_job)
    assert job.inputs == (proxy,)
    assert job.bound_inputs == (BoundInput(JobOutput(proxy_job), proxy),)
    # the completion's activity must record the resolved input, like any other input
    with pytest.raises(InvalidArgumentError, match="inputs do not match"):
        farm.complete(lease, inputs=())
    thumb = farm.complete(lease)
    activity = production.activity(production.job(thumb_job).completion.activity_id)  # type: ignore[union-attr]
    assert [e.representation_id for e in activity.inputs] == [proxy]
    assert production.producing_activities(thumb) == (activity.id,)


def test_a_binding_mixes_with_request_time_inputs(farm: Farm, media: Callable[..., Path]) -> None:
    production = farm.production
    with production.edit() as tx:
        logo = tx.add_representation(farm.asset, RepresentationKind.DERIVED, media("logo.png", b"logo"))
        tx.commit()
    proxy_job = farm.request()
    thumb_job = farm.request(THUMB, (JobOutput(proxy_job), logo), output=RepresentationKind.DERIVED)
    assert production.job(thumb_job).inputs == (logo,)
    proxy = farm.run(proxy_job)
    lease = farm.claim(thumb_job)
    assert production.job(thumb_job).inputs == tuple(sorted((logo, proxy)))
    farm.complete(lease)
    assert production.job(thumb_job).state is JobState.SUCCEEDED


def test_a_failed_dependency_blocks_until_it_is_requested_again(farm: Farm) -> None:
    production = farm.production
    proxy_job = farm.request()
    thumb_job = farm.request(THUMB, (JobOutput(proxy_job),), output=RepresentationKind.DERIVED)
    later = farm.request(after=(proxy_job,))
    farm.fail(proxy_job)
    for dependent in (thumb_job, later):
        job = production.job(dependent)
        assert (job.state, job.waiting_on, job.blocked_by) == (JobState.REQUESTED, (), (proxy_job,))
    assert farm.claim_next() is None
    with production.edit() as tx:
        again = tx.request_again(proxy_job)
        receipt = tx.commit()
    assert receipt.revision is not None
    for dependent in (thumb_job, later):
        job = production.job(dependent)
        assert (job.depends_on, job.waiting_on, job.blocked_by) == ((again,), (again,), ())
    assert production.job(thumb_job).bound_inputs == (BoundInput(JobOutput(again), None),)
    assert production.explain_pending(again).claimable
    proxy = farm.run(again)
    lease = farm.claim(thumb_job)
    assert production.job(thumb_job).inputs == (proxy,)
    farm.complete(lease)
    assert production.job(later).waiting_on == ()
    assert farm.claim_next() == later


def test_a_cancelled_dependency_blocks_and_cancelling_the_dependent_ends_it(farm: Farm) -> None:
    production = farm.production
    first = farm.request()
    second = farm.request(after=(first,))
    farm.cancel(first)
    assert production.job(second).blocked_by == (first,)
    farm.cancel(second)
    job = production.job(second)
    assert (job.state, job.waiting_on, job.blocked_by, job.depends_on) == (
        JobState.CANCELLED,
        (),
        (),
        (first,),
    )


def test_request_again_copies_bindings_and_dependencies(farm: Farm) -> None:
    production = farm.production
    proxy_job = farm.request()
    other = farm.request()
    thumb_job = farm.request(
        THUMB, (JobOutput(proxy_job),), after=(other,), output=RepresentationKind.DERIVED
    )
    farm.cancel(thumb_job)  # cancelled while it waited
    with production.edit() as tx:
        again = tx.request_again(thumb_job)
        tx.commit()
    job = production.job(again)
    assert job.retry_of == thumb_job
    assert job.depends_on == tuple(sorted((proxy_job, other)))
    assert job.bound_inputs == (BoundInput(JobOutput(proxy_job), None),)
    assert job.request().after == (other,)


def test_bad_dependencies_change_nothing(farm: Farm, production_factory: Callable[..., Production]) -> None:
    production = farm.production
    failed, cancelled = farm.request(), farm.request()
    farm.fail(failed)
    farm.cancel(cancelled)
    elsewhere = production_factory("other.pproj")
    with elsewhere.edit() as tx:
        asset = tx.create_asset()
        foreign = tx.request_job(JobRequest(PROXY, (), asset, RepresentationKind.PROXY))
        tx.commit()
    foreign_job = elsewhere.job(foreign)
    before = (production.latest_revision(), production.job_counts())
    cases: list[tuple[dict[str, object], type[Exception], str | None]] = [
        ({"after": (JobId.new(),)}, NotFoundError, None),
        ({"inputs": (JobOutput(JobId.new()),)}, NotFoundError, None),
        ({"after": (foreign_job,)}, InvalidArgumentError, None),
        ({"inputs": (JobOutput(foreign_job),)}, InvalidArgumentError, None),
        ({"inputs": (JobOutput(failed),)}, ConflictError, "dependency_failed"),
        ({"inputs": (JobOutput(cancelled),)}, ConflictError, "dependency_failed"),
        ({"after": (failed,)}, ConflictError, "dependency_failed"),
    ]
    for fields, error, reason in cases:
        request = JobRequest(
            THUMB,
            fields.get("inputs", ()),  # type: ignore[arg-type]
            farm.asset,
            RepresentationKind.DERIVED,
            after=fields.get("after", ()),  # type: ignore[arg-type]
        )
        with production.edit() as tx:
            with pytest.raises(error) as caught:
                tx.request_job(request)
            assert caught.value.reason == reason  # type: ignore[attr-defined]
            assert tx.commit().revision is None
    assert (production.latest_revision(), production.job_counts()) == before
    with pytest.raises(InvalidArgumentError):
        JobOutput("not-a-job")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        JobRequest(THUMB, (), farm.asset, RepresentationKind.DERIVED, after=("x",))  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        JobRequest(THUMB, (JobOutput(failed), JobOutput(failed)), farm.asset, RepresentationKind.DERIVED)


def test_a_job_read_from_this_production_is_a_valid_dependency(farm: Farm) -> None:
    first = farm.request()
    second = farm.request(after=(farm.production.job(first),))  # type: ignore[arg-type]
    assert farm.production.job(second).depends_on == (first,)


def test_idempotent_requests_compare_their_dependencies(farm: Farm) -> None:
    production = farm.production
    first, other = farm.request(), farm.request()

    def keyed(after: tuple[JobId, ...]) -> JobId:
        with production.edit() as tx:
            job = tx.request_job(
                JobRequest(
                    PROXY,
                    (farm.original,),
                    farm.asset,
                    RepresentationKind.PROXY,
                    after=after,
                    idempotency_key="k",
                )
            )
            tx.commit()
        return job

    job = keyed((first,))
    assert keyed((first,)) == job
    with pytest.raises(ConflictError) as caught:
        keyed((other,))
    assert caught.value.reason == "idempotency_key_conflict"


def test_explain_pending_names_what_holds_a_job_back(farm: Farm, clock: FakeClock) -> None:
    production = farm.production
    first = farm.request()
    failed = farm.request()
    farm.fail(failed)
    waiting = farm.request(after=(first,))
    explanation = production.explain_pending(waiting)
    assert (explanation.state, explanation.claimable) == (JobState.REQUESTED, False)
    assert explanation.reasons == (WaitingOnJob(first, JobState.REQUESTED), NoOnlineWorker(PROXY))
    assert explanation.messages[0] == f"waiting on job {first} (requested)"
    assert explanation.messages[1] == f"no online worker registered for its kind {PROXY}"
    # a blocked job (its dependency failed after the request)
    blocked_dep = farm.request()
    blocked = farm.request(after=(blocked_dep,))
    farm.fail(blocked_dep)
    assert production.explain_pending(blocked).reasons[0] == BlockedByJob(blocked_dep, JobState.FAILED)
    assert "request it again" in production.explain_pending(blocked).messages[0]
    # not before a time
    later = START + timedelta(hours=1)
    with production.edit() as tx:
        held = tx.request_job(
            JobRequest(PROXY, (farm.original,), farm.asset, RepresentationKind.PROXY, not_before=later)
        )
        tx.commit()
    assert production.explain_pending(held).reasons[0] == NotBefore(later)
    # queue position: first is claimable and first in line; a worker for the kind is online
    with production.edit() as tx:
        tx.register_worker("render-01", kinds=[PROXY])
        tx.commit()
    assert production.explain_pending(first).reasons == (JobsAhead(0),)
    assert production.explain_pending(first).claimable
    behind = farm.request()
    rush = farm.request(priority=10)
    assert production.explain_pending(behind).reasons == (JobsAhead(2),)  # first and the rush job
    assert production.explain_pending(rush).reasons == (JobsAhead(0),)
    assert production.explain_pending(behind).messages == ("2 jobs ahead of it",)
    clock.advance(timedelta(minutes=1))  # the worker's heartbeat is now too old
    assert production.explain_pending(behind).reasons == (NoOnlineWorker(PROXY), JobsAhead(2))
    # a finished job is not pending
    assert production.explain_pending(failed).reasons == (NotPending(JobState.FAILED),)
    with pytest.raises(NotFoundError):
        production.explain_pending(JobId.new())
    with pytest.raises(InvalidArgumentError):
        production.explain_pending(str(first))  # type: ignore[arg-type]


def test_jobs_ahead_is_capped(farm: Farm) -> None:
    production = farm.production
    with production.edit() as tx:
        jobs = [
            tx.request_job(JobRequest(PROXY, (farm.original,), farm.asset, RepresentationKind.PROXY))
            for _ in range(5)
        ]
        tx.commit()
    assert production.explain_pending(jobs[-1]).reasons[-1] == JobsAhead(4)
    from postproject.base.handle import ProductionHandle

    assert ProductionHandle.of(production).reads.jobs_ahead(jobs[-1], 0, 3) == 3
    assert ProductionHandle.of(production).reads.jobs_ahead(jobs[0], 0, 3) == 0


def test_output_binding_of_a_succeeded_job_needs_no_wait(farm: Farm) -> None:
    production = farm.production
    proxy_job = farm.request()
    proxy = farm.run(proxy_job)
    thumb_job = farm.request(THUMB, (JobOutput(proxy_job),), output=RepresentationKind.DERIVED)
    assert production.job(thumb_job).waiting_on == ()
    assert farm.claim_next() == thumb_job
    assert production.job(thumb_job).inputs == (proxy,)


def test_job_output_compares_by_job(farm: Farm) -> None:
    job_id = farm.request()
    assert JobOutput(job_id) == JobOutput(farm.production.job(job_id))  # type: ignore[arg-type]
    assert str(JobOutput(job_id)) == f"output of job {job_id}"
    assert isinstance(AssetId.new(), AssetId)
