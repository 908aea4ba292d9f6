"""The job lifecycle as a Hypothesis state machine against a real production, on each engine.

Every rule runs against a tiny reference model and the real store; illegal actions must
fail with the expected error class, and the stored state must always equal the model's.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from postproject import (
    ActivitySpec,
    ConflictError,
    FakeClock,
    JobId,
    JobLease,
    JobRequest,
    JobState,
    LeaseState,
    Production,
    RepresentationKind,
    ToolIdentity,
)
from postproject.model.lifecycle import Action, sources
from tests.conftest import START

TOOL = ToolIdentity("stateful", "1")
_examples = itertools.count()
# Coarse steps make the exact-expiry boundary (now == expires_at) come up often.
durations = st.sampled_from([50, 100, 150, 200, 1]).map(lambda n: timedelta(microseconds=n))


@dataclass
class ModelJob:
    state: JobState = JobState.REQUESTED
    expiry: int = 0
    holder: int | None = None  # index of the current lease


@dataclass
class Model:
    now: int = 0
    high_water: int = 0
    jobs: list[ModelJob] = field(default_factory=list)
    revisions: int = 0

    def sample(self) -> bool:
        """A guarded clock sample; False when the clock is behind the high-water mark."""
        if self.now < self.high_water:
            return False
        self.high_water = self.now
        return True


class Lifecycle(RuleBasedStateMachine):
    # Makes each example's production from a name and a clock (the suite's production_factory);
    # by default, Production.create on a file.
    create: Callable[..., Production] | None = None
    # Closes an example's production (production_factory's ``recycle``: on PostgreSQL the next
    # example gets its schema reset instead of a new one); by default, close().
    recycle: Callable[[Production], None] | None = None

    @initialize()
    def setup(self) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="pp-stateful-"))
        self.clock = FakeClock(START)
        create = type(self).create
        name = f"p{next(_examples)}.pproj"
        if create is not None:
            self.production = create(name, clock=self.clock)
        else:
            self.production = Production.create(
                self.directory / name, clock=self.clock, allow_injected_clock=True
            )
        source = self.directory / "source.mov"
        source.write_bytes(b"source")
        with self.production.edit() as tx:
            self.asset = tx.create_asset()
            self.original = tx.add_representation(self.asset, RepresentationKind.ORIGINAL, source)
            tx.commit()
        self.model = Model(revisions=1)
        self.job_ids: list[JobId] = []
        self.leases: list[tuple[JobLease, int, str]] = []  # lease, job index, secret text
        self.outputs = 0

    def teardown(self) -> None:
        recycle = type(self).recycle
        if recycle is not None:
            recycle(self.production)
        else:
            self.production.close()
        shutil.rmtree(self.directory, ignore_errors=True)

    def _set_clock(self) -> None:
        self.clock.set(START + timedelta(microseconds=self.model.now))

    def _attempt(self, expected: bool, operation: object) -> bool:
        """Run an edit; it must succeed exactly when the model says so (else ConflictError)."""
        assert callable(operation)
        try:
            with self.production.edit() as tx:
                operation(tx)
                receipt = tx.commit()
        except ConflictError:
            assert not expected, "the store refused an operation the model allows"
            return False
        assert expected, "the store accepted an operation the model forbids"
        assert receipt.revision is not None
        self.model.revisions += 1
        return True

    # --- rules ----------------------------------------------------------------------------

    @rule()
    def request(self) -> None:
        with self.production.edit() as tx:
            job = tx.request_job(
                JobRequest("org.x:work", (self.original,), self.asset, RepresentationKind.PROXY)
            )
            tx.commit()
        self.job_ids.append(job)
        self.model.jobs.append(ModelJob())
        self.model.revisions += 1

    @rule(forward=st.sampled_from([1, 50, 100]))
    def advance_clock(self, forward: int) -> None:
        self.model.now += forward

    @precondition(lambda self: any(job.state is JobState.CLAIMED for job in self.model.jobs))
    @rule(data=st.data())
    def jump_to_an_expiry(self, data: st.DataObject) -> None:
        """Land exactly on a lease's expiry: the boundary where it stops being live."""
        claimed = [job for job in self.model.jobs if job.state is JobState.CLAIMED]
        self.model.now = max(self.model.now, data.draw(st.sampled_from(claimed)).expiry)

    @rule(back=st.sampled_from([50, 100]))
    def clock_jumps_back(self, back: int) -> None:
        self.model.now = max(0, self.model.now - back)

    @precondition(lambda self: self.job_ids)
    @rule(data=st.data(), duration=durations)
    def claim(self, data: st.DataObject, duration: timedelta) -> None:
        index = data.draw(st.integers(0, len(self.job_ids) - 1))
        job = self.model.jobs[index]
        micros = duration // timedelta(microseconds=1)
        clock_ok = self.model.sample()
        claimable = job.state is JobState.REQUESTED or (
            job.state is JobState.CLAIMED and job.expiry <= self.model.now
        )
        assert (job.state in sources(Action.CLAIM)) or not claimable
        self._set_clock()
        holder: list[JobLease] = []
        if self._attempt(
            clock_ok and claimable,
            lambda tx: holder.append(tx.claim_job_lease(self.job_ids[index], TOOL, duration)),
        ):
            lease = holder[0]
            assert lease.state is LeaseState.ACTIVE
            secret = lease.export_token().rsplit(":", 1)[1]
            self.leases.append((lease, index, secret))
            job.state, job.expiry, job.holder = (
                JobState.CLAIMED,
                self.model.now + micros,
                len(self.leases) - 1,
            )

    def _live(self, lease_index: int) -> tuple[bool, ModelJob]:
        lease, job_index, _ = self.leases[lease_index]
        job = self.model.jobs[job_index]
        if lease.state is LeaseState.CLOSED:
            return False, job  # refused before the clock is read
        clock_ok = self.model.sample()
        live = job.state is JobState.CLAIMED and job.holder == lease_index and job.expiry > self.model.now
        return clock_ok and live, job

    @precondition(lambda self: self.leases)
    @rule(data=st.data(), duration=durations)
    def renew(self, data: st.DataObject, duration: timedelta) -> None:
        index = data.draw(st.integers(0, len(self.leases) - 1))
        live, job = self._live(index)
        new_expiry = self.model.now + duration // timedelta(microseconds=1)
        self._set_clock()
        if self._attempt(
            live and new_expiry > job.expiry, lambda tx: tx.renew_job_lease(self.leases[index][0], duration)
        ):
            job.expiry = new_expiry

    @precondition(lambda self: self.leases)
    @rule(data=st.data(), action=st.sampled_from(["release", "fail", "complete"]))
    def finish(self, data: st.DataObject, action: str) -> None:
        index = data.draw(st.integers(0, len(self.leases) - 1))
        lease = self.leases[index][0]
        live, job = self._live(index)
        self._set_clock()

        def operation(tx: object) -> None:
            if action == "release":
                tx.release_job_lease(lease)  # type: ignore[attr-defined]
            elif action == "fail":
                tx.fail_job_lease(lease, "it broke")  # type: ignore[attr-defined]
            else:
                self.outputs += 1
                output = self.directory / f"out{self.outputs}.mov"
                output.write_bytes(b"%d" % self.outputs)
                rep = tx.add_representation(self.asset, RepresentationKind.PROXY, output)  # type: ignore[attr-defined]
                activity = tx.create_activity(
                    ActivitySpec("org.x:work", inputs=(self.original,), outputs=(rep,))
                )  # type: ignore[attr-defined]
                tx.complete_job_lease(lease, rep, activity)  # type: ignore[attr-defined]

        if self._attempt(live, operation):
            job.holder = None
            job.state = {
                "release": JobState.REQUESTED,
                "fail": JobState.FAILED,
                "complete": JobState.SUCCEEDED,
            }[action]
            assert lease.state is LeaseState.CLOSED

    @precondition(lambda self: self.job_ids)
    @rule(data=st.data())
    def cancel(self, data: st.DataObject) -> None:
        index = data.draw(st.integers(0, len(self.job_ids) - 1))
        job = self.model.jobs[index]
        if self._attempt(job.state in sources(Action.CANCEL), lambda tx: tx.cancel_job(self.job_ids[index])):
            job.state, job.holder = JobState.CANCELLED, None

    # --- invariants -------------------------------------------------------------------------

    @invariant()
    def stored_states_match_the_model(self) -> None:
        for job_id, job in zip(self.job_ids, self.model.jobs, strict=True):
            stored = self.production.job(job_id)
            assert stored.state is job.state
            assert (stored.claim is not None) == (job.state is JobState.CLAIMED)
            if stored.claim is not None:
                assert stored.claim.expires_at == START + timedelta(microseconds=job.expiry)
        counts = self.production.job_counts()
        for state in JobState:
            assert counts[state] == sum(1 for job in self.model.jobs if job.state is state)

    @invariant()
    def one_revision_per_successful_edit_and_no_secret_in_events(self) -> None:
        latest = self.production.latest_revision()
        assert (latest.sequence if latest else 0) == self.model.revisions
        recent = self.production.changes_since(max(0, self.model.revisions - 5), 10)
        text = repr([dict(e.payload) for r in recent for e in r.events])
        for _, _, secret in self.leases[-5:]:
            assert secret not in text


SETTINGS = settings(max_examples=40, stateful_step_count=40, deadline=None)


@pytest.mark.slow
def test_lifecycle(production_factory: Callable[..., Production]) -> None:
    machine = type(
        "Machine",
        (Lifecycle,),
        {"create": staticmethod(production_factory), "recycle": staticmethod(production_factory.recycle)},  # type: ignore[attr-defined]
    )
    run_state_machine_as_test(machine, settings=SETTINGS)
