"""A worker's calls on PostgreSQL (migration 0013): what a deferred lease check raises at commit,
and a one-call claim that finds every claimable job held by other edits.

In an edit opened with ``defer_lease_checks``, a completion whose claim this process knows
sends its lease check (``pp_lease_check``) with the commit: a lease lost meanwhile, or an
input whose fingerprint was recorded after the claim, must raise from ``commit()`` exactly
what ``complete_job_lease`` raises without the option (same class, reason, message and
details), and publish nothing; so must ``Production.complete_job``'s one ``pp_complete`` call
(migration 0014).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import psycopg.sql
import pytest

from postproject import (
    ActivitySpec,
    ConflictError,
    InputChangedError,
    JobRequest,
    JobState,
    PostProjectError,
    Production,
    Reason,
    RepresentationKind,
    ToolIdentity,
)
from postproject.storage.postgresql import uri

TOOL = ToolIdentity("worker-calls", "1")
LEASE = timedelta(minutes=5)


def _production(uri: str, tmp_path: Path, jobs: int = 1) -> tuple[Production, Any]:
    source = tmp_path / "source.mov"
    source.write_bytes(b"source")
    production = Production.create(uri)
    with production.edit() as tx:
        asset = tx.create_asset("A")
        original = tx.add_representation(asset, RepresentationKind.ORIGINAL, source)
        for _ in range(jobs):
            tx.request_job(JobRequest("org.example:calls", (original,), asset, RepresentationKind.PROXY))
        tx.commit()
    return production, original


def _complete(production: Production, lease: Any, tmp_path: Path, *, defer: bool) -> PostProjectError:
    """A completion that must fail; the error, and whether it came from the call or the commit."""
    job = production.job(lease.job_id)
    output = tmp_path / f"{job.id}.mov"
    output.write_bytes(b"out")
    latest = production.latest_sequence()
    failed: PostProjectError | None = None
    with production.edit(defer_lease_checks=defer) as tx:
        rep = tx.add_representation(job.output_asset_id, job.output_representation_kind, output)
        activity = tx.create_activity(ActivitySpec(job.kind, inputs=job.inputs, outputs=(rep,), tool=TOOL))
        tx.record_attempt_log(lease, tail="log\n")
        stage = "complete_job_lease"
        try:
            tx.complete_job_lease(lease, rep, activity)
            stage = "commit"
            tx.commit()
        except PostProjectError as exc:
            failed = exc
        assert stage == ("commit" if defer else "complete_job_lease")  # where the check raised
    assert failed is not None
    assert production.latest_sequence() == latest  # nothing published
    assert len(production.representations(job.output_asset_id).items) == 1  # the original only
    return failed


def _same(deferred: PostProjectError, now: PostProjectError, jobs: list[Any]) -> None:
    """The same error about two jobs (their ids left out)."""
    assert type(deferred) is type(now)
    assert (deferred.code, deferred.reason) == (now.code, now.reason)
    assert deferred.message.replace(str(jobs[0]), "J") == now.message.replace(str(jobs[1]), "J")


def _failed(production: Production, lease: Any, tmp_path: Path, path: str) -> PostProjectError:
    """The error of a completion that must fail, by ``path``: a deferred edit (raising at commit),
    ``complete_job`` (one ``pp_complete`` call, migration 0014), or the plain edit ("now")."""
    if path == "complete_job":
        return _complete_job(production, lease, tmp_path)
    return _complete(production, lease, tmp_path, defer=path == "deferred")


@pytest.mark.parametrize("ended", ["cancelled", "requeued"])
@pytest.mark.parametrize("path", ["deferred", "complete_job"])
def test_a_lease_lost_before_a_deferred_check_raises_at_commit_what_the_call_raises(
    postgres_uri: str, tmp_path: Path, ended: str, path: str
) -> None:
    production, _ = _production(postgres_uri, tmp_path, jobs=2)
    with production, Production.open(postgres_uri) as other:
        errors, jobs = [], []
        for how in (path, "now"):
            lease = production.claim_next_job_lease(TOOL, LEASE)
            assert lease is not None
            jobs.append(lease.job_id)
            with other.edit() as tx:  # another process ends the claim: this one does not know
                if ended == "cancelled":
                    tx.cancel_job(lease.job_id)
                else:
                    tx.requeue_job(lease.job_id)
                tx.commit()
            errors.append(_failed(production, lease, tmp_path, how))
        assert isinstance(errors[0], ConflictError)
        assert errors[0].reason is Reason.LEASE_LOST
        _same(errors[0], errors[1], jobs)


@pytest.mark.parametrize("path", ["deferred", "complete_job"])
def test_an_input_changed_after_the_claim_raises_at_commit_what_the_call_raises(
    postgres_uri: str, tmp_path: Path, path: str
) -> None:
    production, original = _production(postgres_uri, tmp_path, jobs=2)
    with production, Production.open(postgres_uri) as other:
        leases = [production.claim_next_job_lease(TOOL, LEASE) for _ in range(2)]
        (tmp_path / "source.mov").write_bytes(b"changed")
        with other.edit() as tx:
            assert tx.observe_representation(original)
            tx.commit()
        deferred = _failed(production, leases[0], tmp_path, path)
        now = _failed(production, leases[1], tmp_path, "now")
        assert isinstance(deferred, InputChangedError) and isinstance(now, InputChangedError)
        assert deferred.reason is Reason.INPUT_CHANGED
        assert (deferred.input_id, deferred.superseding_revision) == (now.input_id, now.superseding_revision)
        _same(deferred, now, [lease.job_id for lease in leases])
        assert [production.job(lease.job_id).state for lease in leases] == [JobState.CLAIMED] * 2


def test_a_one_call_claim_waits_for_claimable_jobs_other_edits_hold(
    postgres_uri: str, tmp_path: Path
) -> None:
    """Every claimable job held by another edit: the call claims nothing and the claim goes on
    as the edit's (which waits for the holder, then claims what it left claimable)."""
    production, _ = _production(postgres_uri, tmp_path)
    with production, Production.open(postgres_uri) as other:
        holder = other.edit()
        held = holder.claim_next_job_lease(TOOL, LEASE)  # locked, not committed
        assert held is not None
        got: list[Any] = []
        claiming = threading.Thread(target=lambda: got.append(production.claim_next_job_lease(TOOL, LEASE)))
        claiming.start()
        claiming.join(0.5)
        assert claiming.is_alive()  # waiting for the holder
        holder.rollback()
        claiming.join(30)
        assert got and got[0] is not None and got[0].job_id == held.job_id
        assert production.job(held.job_id).state is JobState.CLAIMED


def test_a_one_call_claim_with_a_principal_that_fails_leaves_nothing_open(
    postgres_uri: str, tmp_path: Path
) -> None:
    """A claim for a principal (its call in a transaction of its own) refused by the server (the
    numbering lock held past the busy timeout) commits nothing and leaves its connection out of
    that transaction: the next call claims and records its principal."""
    production, _ = _production(postgres_uri, tmp_path)
    production.close()
    parsed = uri.parse(postgres_uri)
    lock = "SELECT pg_advisory_lock(1347441202, hashtext(%s))"  # what pp_publish's numbering takes
    with (
        Production.open(postgres_uri, busy_timeout=0.2) as claiming,
        psycopg.connect(parsed.conninfo, autocommit=True) as holder,
    ):
        holder.execute(lock, (parsed.production,))
        with pytest.raises(PostProjectError):
            claiming.claim_next_job(TOOL, LEASE, principal="farm-a")
        holder.execute("SELECT pg_advisory_unlock_all()")
        work = claiming.claim_next_job(TOOL, LEASE, principal="farm-b")
        assert work is not None
        assert [(r.sequence > 0, r.principal) for r in claiming.changes_since(0)][-1] == (True, "farm-b")
        assert [h.principal for h in claiming.job_history(work.lease.job_id)] == [None, "farm-b"]


@pytest.mark.parametrize("contested", [False, True], ids=["lock-free", "lock-held"])
def test_a_one_call_claim_writes_its_row_with_the_number_it_publishes(
    postgres_uri: str, tmp_path: Path, contested: bool
) -> None:
    """Migration 0018: with the numbering lock free the claim takes it first and writes the
    claimed row once, with its number; held by another transaction, the claim is written with
    a provisional number, waits for the lock (only then) and is renumbered. Either way the row,
    the revision of its ``job_claimed`` event and the job the claim answers agree."""
    production, _ = _production(postgres_uri, tmp_path)
    production.close()
    parsed = uri.parse(postgres_uri)
    lock = "SELECT pg_advisory_lock(1347441202, hashtext(%s))"  # what the numbering takes
    with (
        Production.open(postgres_uri) as claiming,
        psycopg.connect(parsed.conninfo, autocommit=True) as db,
    ):
        if contested:
            db.execute(lock, (parsed.production,))
        got: list[Any] = []
        thread = threading.Thread(target=lambda: got.append(claiming.claim_next_job(TOOL, LEASE)))
        thread.start()
        thread.join(0.5 if contested else 30)
        assert thread.is_alive() is contested  # it waits for the lock only when another holds it
        if contested:
            db.execute("SELECT pg_advisory_unlock_all()")
            thread.join(30)
        work = got[0]
        assert work is not None
        db.execute(psycopg.sql.SQL("SET search_path TO {}").format(psycopg.sql.Identifier(parsed.production)))
        job_id = uuid.UUID(str(work.job.id))
        row = db.execute(
            "SELECT claim_sequence, updated_sequence FROM jobs WHERE id = %s", (job_id,)
        ).fetchone()
        claimed_in = db.execute(
            "SELECT sequence FROM revision_events WHERE kind = 'job_claimed' AND subject = %s", (job_id,)
        ).fetchall()
        assert row is not None and claimed_in == [(claiming.latest_sequence(),)]
        assert row == (claimed_in[0][0], claimed_in[0][0])
        assert work.job == claiming.job(work.job.id)


def test_the_one_call_claims_answers_match_the_edits_refusals(postgres_uri: str, tmp_path: Path) -> None:
    """A registered worker's refusals (fenced, offline is the same rule) raise from the call, and
    nothing is committed."""
    production, _ = _production(postgres_uri, tmp_path)
    with production:
        with production.edit() as tx:
            session = tx.register_worker("w", capacity=1)
            tx.commit()
        with production.edit() as tx:
            tx.register_worker("w", capacity=1)  # registered again: the first session is fenced
            tx.commit()
        latest = production.latest_sequence()
        calls: list[Callable[[], Any]] = [
            lambda: production.claim_next_job_lease(TOOL, LEASE, worker=session),
        ]
        for call in calls:
            with pytest.raises(ConflictError) as fenced:
                call()
            assert fenced.value.reason is Reason.WORKER_SESSION_REPLACED
        with pytest.raises(ConflictError) as by_edit, production.edit() as tx:
            tx.claim_next_job_lease(TOOL, LEASE, worker=session)
        assert by_edit.value.message == fenced.value.message
        assert production.latest_sequence() == latest


def _complete_job(production: Production, lease: Any, tmp_path: Path) -> PostProjectError:
    """``Production.complete_job`` that must fail: its error (nothing published, no output kept)."""
    job = production.job(lease.job_id)
    output = tmp_path / f"{job.id}.call.mov"
    output.write_bytes(b"out")
    latest = production.latest_sequence()
    with pytest.raises(PostProjectError) as failed:
        production.complete_job(lease, output, tool=TOOL, tail="log\n")
    assert production.latest_sequence() == latest  # nothing published
    assert len(production.representations(job.output_asset_id).items) == 1  # the original only
    assert production.attempt_log(job.id).tail is None  # (the log tail went with it)
    return failed.value


def test_the_receipt_of_an_edit_a_call_committed_is_the_revision_the_call_published(
    postgres_uri: str, tmp_path: Path
) -> None:
    """A one-call claim and a one-call completion publish their revision from the call; the edit's
    ``commit()`` then returns that revision (its id, number and time as stored), not another."""
    from postproject.transaction import claim_next_committed, complete_committed

    production, _ = _production(postgres_uri, tmp_path)
    with production:
        with production.edit(origin="calls") as tx:
            lease = claim_next_committed(tx, TOOL, LEASE, None, None, None)
            claimed = tx.commit().revision
        assert lease is not None and claimed is not None
        output = tmp_path / "out.mov"
        output.write_bytes(b"out")
        with production.edit(origin="calls", defer_lease_checks=True) as tx:
            rows = _completion_rows(production, output)
            assert complete_committed(tx, lease, rows)
            completed = tx.commit().revision
        assert completed is not None
        stored = {r.sequence: r for r in production.revisions(limit=2)}
    for receipt in (claimed, completed):
        revision = stored[receipt.sequence]
        assert (receipt.id, receipt.committed_at, receipt.origin) == (
            revision.id,
            revision.committed_at,
            revision.origin,
        )
    assert sorted(stored) == [claimed.sequence, completed.sequence]


def _completion_rows(production: Production, output: Path) -> Any:
    """What ``Production.complete_job`` hands the one-call completion (its rows, given the lease's
    job, secret hash and guarded time): the output recorded as is, the job's parameters copied."""
    from postproject.base import files
    from postproject.base.handle import ProductionHandle
    from postproject.engine.claims import CompletionRows
    from postproject.model.ids import ActivityId, RepresentationId

    handle = ProductionHandle.of(production)
    stored, absolute = handle.locate(output, None)
    facts = files.read_facts(absolute)
    rep, activity = RepresentationId.new().bytes, ActivityId.new().bytes
    return lambda job, secret, now: CompletionRows(
        job, secret, now, rep, None, stored, None, facts.size, facts.mtime, handle.now_micros(),
        facts.fingerprint, activity, TOOL, None, None, None, None, None,
    )  # fmt: skip
