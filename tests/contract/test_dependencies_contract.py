"""The engine contract of issue 14: dependencies, output bindings resolved at claim, the
waiting count, moving dependents, superseding and the queue position. Every adapter must pass."""

from __future__ import annotations

import os
from collections.abc import Callable

from postproject import AssetId, JobId, JobOutput, JobRequest, JobState, RepresentationId, RepresentationKind
from postproject.engine import Engine, WriteSession
from postproject.model.activities import ActivitySpec
from postproject.model.assets import Fingerprint
from tests.contract.test_engine_contract import T0, TOOL, commit, request, seed

KIND = "org.example:a"


def depend(
    engine: Engine, asset: bytes, inputs: tuple[object, ...], after: tuple[bytes, ...], waiting: int
) -> bytes:
    job = JobId.new()
    s = engine.begin_write(5.0)
    assert s.insert_job(
        job.bytes,
        JobRequest(
            KIND,
            inputs,  # type: ignore[arg-type]
            AssetId(asset),
            RepresentationKind.PROXY,
            after=tuple(JobId(a) for a in after),
        ),
        T0,
        None,
        None,
        waiting,
    )
    s.event("job_requested", job.bytes, {})
    assert commit(s)
    return job.bytes


def succeed(engine: Engine, job: bytes, asset: bytes, inputs: list[bytes], at: int) -> bytes:
    """Claim ``job`` by id and complete it with a new output; the output id."""
    s = engine.begin_write(5.0)
    assert s.claim(job, b"\x07" * 32, TOOL, None, None, at, at + 10**9) == 1
    s.event("job_claimed", job, {})
    assert commit(s, at)
    out, activity = RepresentationId.new(), os.urandom(16)
    s = engine.begin_write(5.0)
    assert s.insert_representation(
        out.bytes,
        asset,
        RepresentationKind.PROXY.code,
        f"/o/{out}",
        None,
        1,
        at,
        at,
        Fingerprint("sha256", 1, os.urandom(32)),
    )
    spec = ActivitySpec(KIND, inputs=tuple(RepresentationId(i) for i in inputs), outputs=(out,))
    assert s.insert_activity(activity, spec, None, None)
    assert s.succeed(job, b"\x07" * 32, at, activity, out.bytes)
    s.event("job_succeeded", job, {})
    assert commit(s, at)
    return out.bytes


def test_a_waiting_job_is_never_claimed_and_success_frees_it(engine_factory: Callable[[], Engine]) -> None:
    engine = engine_factory()
    asset, rep = seed(engine)
    upstream = request(engine, asset, rep)
    dependent = depend(engine, asset, (JobOutput(JobId(upstream)),), (), waiting=1)
    s = engine.begin_write(5.0)
    assert s.job_states([upstream, dependent, JobId.new().bytes]) == {
        upstream: JobState.REQUESTED.code,
        dependent: JobState.REQUESTED.code,
    }
    assert s.claim(dependent, b"\x01" * 32, TOOL, None, None, T0, T0 + 10**9) is None  # waiting
    claimed = s.claim_next(None, b"\x01" * 32, TOOL, None, None, T0, T0 + 10**9)
    assert claimed is not None and claimed[0] == upstream
    assert s.claim_next([KIND], b"\x02" * 32, TOOL, None, None, T0, T0 + 10**9) is None
    s.rollback(None)
    job = engine.reads.job(JobId(dependent))
    assert (job.waiting_on, job.depends_on) == ((JobId(upstream),), (JobId(upstream),))
    assert engine.reads.jobs_ahead(JobId(dependent), T0, 100) is None  # waiting: no queue position
    output = succeed(engine, upstream, asset, [rep], T0 + 1)
    job = engine.reads.job(JobId(dependent))
    assert job.waiting_on == () and job.inputs == ()
    assert engine.reads.jobs_ahead(JobId(dependent), T0 + 2, 100) == 0
    s = engine.begin_write(5.0)
    claimed = s.claim_next([KIND], b"\x03" * 32, TOOL, None, None, T0 + 2, T0 + 10**9)
    assert claimed is not None and claimed[0] == dependent
    row = s.lease_row(dependent)
    assert row is not None and row.inputs == [output]  # resolved in the claim's own step
    s.event("job_claimed", dependent, {})
    assert commit(s, T0 + 2)
    job = engine.reads.job(JobId(dependent))
    assert job.inputs == (RepresentationId(output),)
    assert [b.resolved for b in job.bound_inputs] == [RepresentationId(output)]
    assert job.production_id is not None


def test_move_dependents_and_blocked_reads(engine_factory: Callable[[], Engine]) -> None:
    engine = engine_factory()
    asset, rep = seed(engine)
    old = request(engine, asset, rep)
    dependent = depend(engine, asset, (RepresentationId(rep),), (old,), waiting=1)
    s = engine.begin_write(5.0)
    assert s.cancel(old, T0)
    s.event("job_cancelled", old, {})
    assert commit(s)
    assert engine.reads.job(JobId(dependent)).blocked_by == (JobId(old),)
    new = request(engine, asset, rep)
    s = engine.begin_write(5.0)
    assert s.move_dependents(old, new) == 1
    s.event("job_requested", new, {})
    assert commit(s)
    job = engine.reads.job(JobId(dependent))
    assert (job.depends_on, job.waiting_on, job.blocked_by) == ((JobId(new),), (JobId(new),), ())


def test_supersede_follows_the_chain(engine_factory: Callable[[], Engine]) -> None:
    engine = engine_factory()
    asset, rep = seed(engine)
    reps = []
    s: WriteSession = engine.begin_write(5.0)
    for n in range(3):
        rep_id = RepresentationId.new().bytes
        assert s.insert_representation(
            rep_id,
            asset,
            RepresentationKind.PROXY.code,
            f"/p{n}",
            None,
            1,
            T0,
            T0,
            Fingerprint("sha256", 1, b"%d" % n),
        )
        reps.append(rep_id)
    assert s.supersede(reps[0], reps[1]) == reps[0]
    assert s.supersede(reps[0], reps[2]) == reps[1]  # already superseded: its replacement is
    assert s.supersede(RepresentationId.new().bytes, reps[2]) is None
    s.event("representation_superseded", reps[0], {})
    assert commit(s)
    with engine.graph.snapshot() as graph:
        assert sorted(graph.supersessions([*reps, rep])) == sorted([(reps[0], reps[1]), (reps[1], reps[2])])
    assert engine.reads.representation(RepresentationId(reps[1])).superseded_by == RepresentationId(reps[2])
