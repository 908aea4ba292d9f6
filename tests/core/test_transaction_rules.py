"""Transaction rules of notes §2.6: a failed completion poisons its edit, a dropped edit ends,
and the input-changed conflict says which input changed and where."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from postproject import (
    ActivitySpec,
    ConflictError,
    FakeClock,
    InputChangedError,
    InvalidArgumentError,
    JobId,
    LeaseState,
    NotFoundError,
    Production,
    Reason,
    RepresentationKind,
)
from tests.core.jobs_helpers import AGENT, TOOL, Setup, at, make_setup, us


@pytest.fixture
def s(production: Production, clock: FakeClock, tmp_path: Path) -> Setup:
    at(clock, 0)
    return make_setup(production, clock, tmp_path)


def _stage_output(s: Setup, tx: object, name: str = "proxy.mov") -> tuple[object, object]:
    from postproject import Transaction

    assert isinstance(tx, Transaction)
    rep = tx.add_representation(s.asset, RepresentationKind.PROXY, s.output_file(name))
    activity = tx.create_activity(
        ActivitySpec("org.example:generate-proxy", inputs=(s.original,), outputs=(rep,))
    )
    return rep, activity


def test_a_failed_completion_poisons_the_edit_and_publishes_nothing(s: Setup) -> None:
    """Before the rule, catching the error and committing published an orphan representation
    and activity (the completion's output without its job's success)."""
    job = s.request()
    lease = s.claim(job, 1000)
    with s.production.edit() as tx:
        tx.cancel_job(job)
        tx.commit()  # the lease is fenced
    head = s.head()
    with s.production.edit() as tx:
        rep, activity = _stage_output(s, tx)
        with pytest.raises(ConflictError) as failed:
            tx.complete_job_lease(lease, rep, activity)  # type: ignore[arg-type]
        assert failed.value.reason == Reason.LEASE_LOST
        with pytest.raises(ConflictError) as again:
            tx.commit()
        assert again.value is failed.value
        with pytest.raises(ConflictError) as later:
            tx.create_asset("after the failure")
        assert later.value is failed.value
        assert tx.open  # only rollback (or leaving the block) ends it
    assert not tx.open
    assert s.head() == head
    with pytest.raises(NotFoundError):
        s.production.representation(rep)  # type: ignore[arg-type]
    with pytest.raises(NotFoundError):
        s.production.activity(activity)  # type: ignore[arg-type]


@pytest.mark.parametrize("mismatch", ["wrong_kind", "wrong_asset"])
def test_a_completion_with_the_wrong_output_poisons_too(s: Setup, mismatch: str) -> None:
    job = s.request()
    lease = s.claim(job, 1000)
    with s.production.edit() as tx:
        asset = s.asset if mismatch == "wrong_kind" else tx.create_asset("other")
        kind = RepresentationKind.DERIVED if mismatch == "wrong_kind" else RepresentationKind.PROXY
        rep = tx.add_representation(asset, kind, s.output_file())
        activity = tx.create_activity(ActivitySpec("org.example:x", inputs=(s.original,), outputs=(rep,)))
        with pytest.raises(InvalidArgumentError):
            tx.complete_job_lease(lease, rep, activity)
        with pytest.raises(InvalidArgumentError):
            tx.commit()
        tx.rollback()
    assert s.production.job(job).claim is not None  # still claimed, nothing published
    s.complete(lease)  # and the lease still works in a new edit


def test_other_failed_operations_keep_the_edit_usable(s: Setup) -> None:
    with s.production.edit() as tx:
        with pytest.raises(NotFoundError):
            tx.cancel_job(JobId.new())
        tx.create_asset("after a failed cancel")
        assert tx.commit().revision is not None
    job = s.request()
    with s.production.edit() as tx:
        tx.cancel_job(job)
        with pytest.raises(ConflictError) as finished:
            tx.cancel_job(job)
        assert finished.value.reason == Reason.JOB_FINISHED
        tx.create_asset("still usable")
        assert tx.commit().revision is not None


def test_the_input_changed_conflict_names_the_input_and_the_revision(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 10_000)
    source = s.production.resolve(s.production.representation(s.original))
    assert source is not None
    source.write_bytes(b"a new take")
    with s.production.edit() as tx:
        assert tx.observe_representation(s.original)
        changed = tx.commit()
    assert changed.revision is not None
    with s.production.edit() as tx:
        rep, activity = _stage_output(s, tx)
        with pytest.raises(InputChangedError) as error:
            tx.complete_job_lease(lease, rep, activity)  # type: ignore[arg-type]
    assert error.value.reason == "input_changed"
    assert error.value.input_id == s.original
    assert error.value.superseding_revision == changed.revision.sequence
    assert isinstance(error.value, ConflictError)


def test_a_dropped_edit_releases_the_lock_and_ends_its_pending_leases(s: Setup) -> None:
    job = s.request()
    tx = s.production.edit()
    lease = tx.claim_job_lease(job, TOOL, us(10_000), agent=AGENT)
    assert lease.state is LeaseState.PENDING
    del tx
    gc.collect()
    assert lease.state is LeaseState.CLOSED
    with s.production.edit() as again:  # this handle's lock is free too
        again.create_asset("after the drop")
        assert again.commit().revision is not None


def test_another_process_can_write_at_once_after_an_edit_is_dropped(
    production_factory: Callable[..., Production], tmp_path: Path
) -> None:
    production = production_factory()
    tx = production.edit()
    tx.create_asset("never committed")  # takes the write lock
    del tx
    gc.collect()
    script = textwrap.dedent(
        f"""
        from postproject import Production
        with Production.open({production.location!r}, busy_timeout=10) as p:
            with p.edit() as tx:
                tx.create_asset("from another process")
                print(tx.commit().revision.sequence)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"


def test_closing_a_production_ends_its_open_edit(
    production_factory: Callable[..., Production], clock: FakeClock
) -> None:
    production = production_factory()
    tx = production.edit()
    tx.create_asset("never committed")
    production.close()
    assert not tx.open
    with Production.open(
        production.location, clock=clock, busy_timeout=0.5, allow_injected_clock=True
    ) as reopened:
        assert reopened.latest_sequence() == 0
        with reopened.edit() as other:
            other.create_asset()
            assert other.commit().revision is not None
