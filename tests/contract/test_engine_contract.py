"""The engine interface exercised directly (no Production, no Transaction)."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from postproject import (
    AgentIdentity,
    AssetId,
    JobId,
    JobRequest,
    JobState,
    RepresentationId,
    RepresentationKind,
    ToolIdentity,
)
from postproject.engine import ChangedInput, Engine, LeaseRow, OutputFacts, WriteSession
from postproject.model.assets import Fingerprint

TOOL = ToolIdentity("contract", "1")
AGENT = AgentIdentity("contract-agent")
T0 = 1_700_000_000_000_000
CLAIMED = JobState.CLAIMED.code
REQUESTED = JobState.REQUESTED.code


def commit(session: WriteSession, at: int = T0) -> bool:
    return session.commit(at, os.urandom(16), "contract", None, None)


def seed(engine: Engine) -> tuple[bytes, bytes]:
    """One asset with one original representation (fingerprinted); (asset, representation)."""
    asset, rep = AssetId.new().bytes, RepresentationId.new().bytes
    s = engine.begin_write(5.0)
    s.insert_asset(asset, "A001", T0)
    s.event("asset_imported", asset, {})
    assert s.insert_representation(
        rep,
        asset,
        RepresentationKind.ORIGINAL.code,
        "/media/a.mov",
        None,
        1,
        T0,
        T0,
        Fingerprint("sha256", 1, b"\x01" * 32),
    )
    assert not s.insert_representation(
        RepresentationId.new().bytes,
        AssetId.new().bytes,
        0,
        "/x",
        None,
        1,
        T0,
        T0,
        Fingerprint("sha256", 1, b""),
    )  # no such asset
    s.event("representation_added", rep, {})
    assert commit(s)
    return asset, rep


def request(engine: Engine, asset: bytes, rep: bytes, kind: str = "org.example:a") -> bytes:
    job = JobId.new()
    s = engine.begin_write(5.0)
    assert s.insert_job(
        job.bytes,
        JobRequest(kind, (RepresentationId(rep),), AssetId(asset), RepresentationKind.PROXY),
        T0,
        None,
        None,
    )
    s.event("job_requested", job.bytes, {})
    assert commit(s)
    return job.bytes


def test_a_write_session_publishes_one_gap_free_revision(engine_factory: Callable[[], Engine]) -> None:
    engine = engine_factory()
    assert engine.reads.latest_sequence() == 0
    seed(engine)
    s = engine.begin_write(5.0)
    asset = AssetId.new().bytes
    s.insert_asset(asset, None, T0)
    s.event("asset_imported", None, {})
    s.rollback(None)
    s = engine.begin_write(5.0)
    assert not commit(s)  # nothing staged: no revision
    revision = engine.reads.latest_revision()
    assert revision is not None and revision.sequence == 1
    assert [e.kind for e in revision.events] == ["asset_imported", "representation_added"]
    s = engine.begin_write(5.0)
    s.insert_asset(asset, None, T0)
    s.event("asset_imported", asset, {})
    assert commit(s)
    assert s.sequence == 2  # the published number: a rollback leaves no gap


def test_a_savepoint_rollback_takes_its_rows_and_events(engine_factory: Callable[[], Engine]) -> None:
    engine = engine_factory()
    s = engine.begin_write(5.0)
    kept, dropped = AssetId.new().bytes, AssetId.new().bytes
    s.insert_asset(kept, None, T0)
    s.event("asset_imported", kept, {})
    token = s.savepoint()
    s.insert_asset(dropped, None, T0)
    s.event("asset_imported", dropped, {})
    s.rollback_savepoint(token)
    assert [e.kind for e in s.staged] == ["asset_imported"]
    assert s.missing("assets", [kept, dropped]) == [dropped]
    assert commit(s)
    changes, _ = engine.reads.changes_since(0, 10, None)
    assert len(changes) == 1 and len(changes[0].events) == 1


def test_nested_savepoints_undo_exactly_their_rows_around_reads(engine_factory: Callable[[], Engine]) -> None:
    """Savepoints whose rows were read back inside them (on PostgreSQL: sent to the server in
    that round trip) and savepoints whose rows never left the edit undo the same way."""
    engine = engine_factory()
    a, b, c, d, e, absent = (AssetId.new().bytes for _ in range(6))
    s = engine.begin_write(5.0)
    s.insert_asset(a, None, T0)
    outer = s.savepoint()
    s.insert_asset(b, None, T0)
    inner = s.savepoint()
    s.insert_asset(c, None, T0)
    assert s.missing("assets", [a, b, c, absent]) == [absent]  # a read inside both savepoints
    s.insert_asset(d, None, T0)
    s.rollback_savepoint(inner)  # takes c (read back) and d (written after the read)
    assert s.missing("assets", [a, b, c, d]) == [c, d]
    s.release_savepoint(outer)
    quiet = s.savepoint()  # no read inside: rolled back before anything of it was sent
    s.insert_asset(e, None, T0)
    s.rollback_savepoint(quiet)
    again = s.savepoint()
    s.insert_asset(c, None, T0)
    s.release_savepoint(again)
    s.event("asset_imported", a, {})
    assert commit(s)
    s = engine.begin_write(5.0)
    assert s.missing("assets", [a, b, c, d, e]) == [d, e]
    s.rollback(None)


def test_claim_next_honours_its_kinds_and_takes_the_oldest(engine_factory: Callable[[], Engine]) -> None:
    engine = engine_factory()
    asset, rep = seed(engine)
    older_a = request(engine, asset, rep, "org.example:a")
    b = request(engine, asset, rep, "org.example:b")
    s = engine.begin_write(5.0)
    claimed = s.claim_next(["org.example:b"], os.urandom(32), TOOL, AGENT, None, T0, T0 + 10)
    assert claimed == (b, 1)  # not the older job of another kind
    assert s.claim_next(["org.example:c"], os.urandom(32), TOOL, AGENT, None, T0, T0 + 10) is None
    assert s.claim_next(None, os.urandom(32), TOOL, AGENT, None, T0, T0 + 10) == (older_a, 1)
    assert s.claim_next(None, os.urandom(32), TOOL, AGENT, None, T0, T0 + 10) is None
    s.event("job_claimed", b, {})
    assert commit(s)
    s = engine.begin_write(5.0)  # an expired claim is claimable again, at or after its expiry
    assert s.claim_next(None, os.urandom(32), TOOL, AGENT, None, T0 + 9, T0 + 20) is None
    assert s.claim_next(None, os.urandom(32), TOOL, AGENT, None, T0 + 10, T0 + 20) == (older_a, 2)
    s.rollback(None)


def test_lease_rows_counts_and_guarded_transitions(engine_factory: Callable[[], Engine]) -> None:
    engine = engine_factory()
    asset, rep = seed(engine)
    job = request(engine, asset, rep)
    secret = os.urandom(32)  # the core passes SHA-256 hashes of lease secrets
    s = engine.begin_write(5.0)
    assert s.claim(job, secret, TOOL, AGENT, None, T0, T0 + 100) == 1
    assert s.claim(job, os.urandom(32), TOOL, AGENT, None, T0, T0 + 100) is None  # live lease
    row = s.lease_row(job)
    assert isinstance(row, LeaseRow) and (row.state, row.expires, row.claim_sequence) == (
        CLAIMED,
        T0 + 100,
        s.sequence,  # claimed in this edit
    )
    s.event("job_claimed", job, {})
    assert commit(s)
    assert s.sequence == 3
    s = engine.begin_write(5.0)
    row = s.lease_row(job)
    assert row is not None and row.claim_sequence == 3 < s.sequence
    s.rollback(None)
    counts = engine.reads.job_counts(None)
    assert counts.get(CLAIMED) == 1 and counts.get(REQUESTED, 0) == 0
    s = engine.begin_write(5.0)
    assert not s.renew(job, os.urandom(32), T0 + 1, T0 + 200)  # another secret
    assert not s.renew(job, secret, T0 + 1, T0 + 50)  # must extend
    assert s.renew(job, secret, T0 + 1, T0 + 200)
    assert not s.release(job, secret, T0 + 200)  # expired at its expiry
    assert s.release(job, secret, T0 + 2)
    s.event("job_claim_released", job, {})
    assert commit(s)
    counts = engine.reads.job_counts(None)
    assert counts.get(REQUESTED) == 1 and counts.get(CLAIMED, 0) == 0
    assert engine.reads.job(JobId(job)).state is JobState.REQUESTED


def test_completion_facts(engine_factory: Callable[[], Engine]) -> None:
    engine = engine_factory()
    asset, rep = seed(engine)
    s = engine.begin_write(5.0)
    facts = s.output_facts(rep)
    assert facts == OutputFacts(asset, RepresentationKind.ORIGINAL.code, 1)
    assert s.output_facts(RepresentationId.new().bytes) is None
    assert s.fingerprints_changed_after([rep], 1) is None
    assert s.set_fingerprint(rep, Fingerprint("sha256", 1, b"\x02" * 32))
    assert not s.set_fingerprint(rep, Fingerprint("sha256", 1, b"\x02" * 32))
    s.event("representation_fingerprint_observed", rep, {})
    assert commit(s)
    s = engine.begin_write(5.0)
    changed = s.fingerprints_changed_after([rep], 1)
    assert changed is not None and isinstance(changed, ChangedInput)
    assert (changed.representation_id, changed.sequence) == (rep, 2)
    s.rollback(None)


def test_graph_facts_see_commit_snapshots(engine_factory: Callable[[], Engine]) -> None:
    from postproject import ActivityId, ActivitySpec

    engine = engine_factory()
    asset, original = seed(engine)
    proxy, activity = RepresentationId.new().bytes, ActivityId.new()
    s = engine.begin_write(5.0)
    s.insert_representation(
        proxy,
        asset,
        RepresentationKind.PROXY.code,
        "/media/p.mp4",
        None,
        1,
        T0,
        T0,
        Fingerprint("sha256", 1, b"\x03" * 32),
    )
    spec = ActivitySpec(
        "org.example:t", inputs=(RepresentationId(original),), outputs=(RepresentationId(proxy),)
    )
    s.insert_activity(activity.bytes, spec, None, None)
    s.event("activity_created", activity.bytes, {})
    facts = s.activity_facts(activity.bytes)
    assert facts is not None and (facts.created_sequence, facts.inputs, facts.outputs) == (
        s.sequence,
        [original],
        [proxy],
    )
    output = s.output_facts(proxy)
    assert output is not None and output.created_sequence == s.sequence
    assert s.activity_facts(ActivityId.new().bytes) is None
    assert commit(s)
    s = engine.begin_write(5.0)
    facts = s.activity_facts(activity.bytes)
    assert facts is not None and facts.created_sequence == 2 < s.sequence
    output = s.output_facts(proxy)
    assert output is not None and output.created_sequence == 2
    s.rollback(None)
    graph = engine.graph
    with graph.snapshot():
        assert graph.output_edges([proxy]) == [(proxy, activity.bytes, {("sha256", 1): b"\x03" * 32})]
        assert graph.input_edges([activity.bytes]) == [
            (activity.bytes, original, {("sha256", 1): b"\x01" * 32})
        ]
        assert sorted(graph.fingerprints([original, proxy])) == sorted(
            [(original, "sha256", 1, b"\x01" * 32), (proxy, "sha256", 1, b"\x03" * 32)]
        )
        assert graph.walk([original], downstream=True, cap=10) == ([proxy], False)


def test_another_engines_commit_changes_the_token(engine_factory: Callable[[], Engine]) -> None:
    follower = engine_factory()
    writer = engine_factory()
    token = follower.change_token()
    seed(writer)
    follower.wait_for_change(token, 5.0)
    assert follower.change_token() != token
    assert follower.reads.latest_sequence() == 1


def test_the_write_lock_is_exclusive_across_engines(
    engine_factory: Callable[[], Engine], request: pytest.FixtureRequest
) -> None:
    from postproject import StorageError

    if "postgresql" in request.node.callspec.id:
        pytest.skip(
            "PostgreSQL edits run concurrently: see test_concurrent_edits_are_numbered_in_commit_order"
        )
    first, second = engine_factory(), engine_factory()
    s = first.begin_write(5.0)
    with pytest.raises(StorageError) as busy:
        second.begin_write(0.05)
    assert busy.value.reason == "busy"
    s.rollback(None)
    second.begin_write(1.0).rollback(None)


def test_concurrent_edits_are_numbered_in_commit_order(
    engine_factory: Callable[[], Engine], request: pytest.FixtureRequest
) -> None:
    """PostgreSQL: edits of several engines run at once; each takes its number when it commits."""
    if "sqlite" in request.node.callspec.id:
        pytest.skip("SQLite edits hold the write lock: see test_the_write_lock_is_exclusive_across_engines")
    first, second = engine_factory(), engine_factory()
    asset, _ = seed(first)
    a, b = first.begin_write(1.0), second.begin_write(1.0)
    reps = [RepresentationId.new().bytes for _ in range(2)]
    for session, rep in zip((a, b), reps, strict=True):
        assert session.insert_representation(
            rep, asset, RepresentationKind.PROXY.code, f"/p/{rep.hex()}", None, 1, T0, T0,
            Fingerprint("sha256", 1, rep * 2),
        )  # fmt: skip
        session.event("representation_added", rep, {})
        facts = session.output_facts(rep)
        assert facts is not None and facts.created_sequence == session.sequence > 1
    assert commit(b) and b.sequence == 2  # opened second, committed first: numbered first
    assert commit(a) and a.sequence == 3
    s = first.begin_write(1.0)
    assert [f.created_sequence for f in map(s.output_facts, reps) if f] == [3, 2]
    s.rollback(None)
    changes, through = first.reads.changes_since(1, 10, None)
    assert [r.sequence for r in changes] == [2, 3] and through == 3
