"""Transactions (atomic operations, receipts, locks) and the revision feed."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from postproject import (
    ActivitySpec,
    AssetId,
    AssetRef,
    ConflictError,
    FakeClock,
    InvalidArgumentError,
    JobId,
    JobRequest,
    NotFoundError,
    Production,
    Property,
    Reason,
    RepresentationId,
    RepresentationKind,
    StorageError,
    ToolIdentity,
)
from tests.core.jobs_helpers import KIND, Setup, make_setup

Media = Callable[..., Path]
PROP = Property("urn:x:test", "note")


@pytest.fixture
def s(production: Production, clock: FakeClock, tmp_path: Path) -> Setup:
    return make_setup(production, clock, tmp_path)


def head(production: Production) -> int:
    latest = production.latest_revision()
    return latest.sequence if latest else 0


def test_leaving_without_commit_rolls_back(production: Production) -> None:
    with production.edit() as tx:
        tx.create_asset("gone")
    assert production.assets().items == ()

    def fail_midway() -> None:
        with production.edit() as tx:
            tx.create_asset("gone too")
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        fail_midway()
    assert production.assets().items == () and head(production) == 0


def test_a_failed_operation_leaves_the_transaction_usable(production: Production, media: Media) -> None:
    with production.edit() as tx:
        asset = tx.create_asset("kept")
        with pytest.raises(NotFoundError):
            tx.request_job(JobRequest("org.x:t", (RepresentationId.new(),), asset, RepresentationKind.PROXY))
        with pytest.raises(InvalidArgumentError):
            tx.add_metadata(AssetRef(asset), PROP, 1.5)
        tx.add_metadata(AssetRef(asset), PROP, "ok")
        receipt = tx.commit()
    assert receipt.revision is not None and receipt.revision.sequence == 1
    (revision,) = production.changes_since(0)
    assert [e.kind for e in revision.events] == ["asset_imported", "metadata_added_or_replaced"]
    assert [e.position for e in revision.events] == [0, 1]
    assert receipt.revision.events == revision.events  # the receipt reports what was published
    assert production.jobs().items == ()


def test_empty_and_failed_only_transactions_commit_no_revision(production: Production) -> None:
    with production.edit() as tx:
        assert tx.commit().revision is None
    with production.edit() as tx:
        with pytest.raises(NotFoundError):
            tx.add_metadata(AssetRef(AssetId.new()), PROP, "x")
        receipt = tx.commit()
    assert receipt.revision is None and receipt.production_id == production.id
    assert head(production) == 0


def test_closed_transactions_reject_further_calls(production: Production) -> None:
    tx = production.edit()
    tx.create_asset()
    tx.commit()
    with pytest.raises(ConflictError, match="already committed"):
        tx.create_asset()
    with pytest.raises(ConflictError):
        tx.commit()


def test_sequences_are_gap_free_across_failures(production: Production, media: Media) -> None:
    sequences = []
    for index in range(6):
        with production.edit() as tx:
            tx.create_asset(f"a{index}")
            if index % 2:
                continue  # rolled back
            sequences.append(tx.commit().revision.sequence)  # type: ignore[union-attr]
    assert sequences == [1, 2, 3]
    assert [r.sequence for r in production.changes_since(0)] == [1, 2, 3]


def _two_jobs(production: Production, media: Media) -> list[JobId]:
    with production.edit() as tx:
        asset = tx.create_asset("A001")
        original = tx.add_representation(asset, RepresentationKind.ORIGINAL, media("A001.mov"))
        request = JobRequest("org.example:proxy", (original,), asset, RepresentationKind.PROXY)
        jobs = [tx.request_job(request), tx.request_job(request)]
        tx.commit()
    return jobs


def test_each_edit_numbers_its_revision_after_other_handles(
    production_factory: Callable[..., Production], clock: FakeClock
) -> None:
    """A handle that remembers the head after its own commit (SQLite skips re-reading it while
    nobody else commits) still numbers its revisions after another handle's."""
    first = production_factory()
    with Production.open(first.location, clock=clock, allow_injected_clock=True) as second:
        sequences = []
        for writer in (first, first, second, first, second, second, first, first):
            with writer.edit() as tx:
                tx.create_asset()
                sequences.append(tx.commit().revision.sequence)  # type: ignore[union-attr]
    assert sequences == list(range(1, 9))
    assert [r.sequence for r in first.changes_since(0)] == sequences


@pytest.mark.sqlite_only(
    "the local clock's high-water mark (a PostgreSQL production takes the server's clock)"
)
def test_each_guarded_edit_honours_the_clock_mark_another_handle_left(
    production_factory: Callable[..., Production], clock: FakeClock, media: Media
) -> None:
    first = production_factory()
    jobs = _two_jobs(first, media)
    tool = ToolIdentity("test", "1")
    with Production.open(
        first.location, clock=FakeClock(clock.now() + timedelta(hours=1)), allow_injected_clock=True
    ) as second:
        with first.edit() as tx:  # first commits: its next edit could reuse what it knows
            tx.claim_job_lease(jobs[0], tool, timedelta(minutes=5))
            tx.commit()
        with second.edit() as tx:  # a guarded edit an hour ahead moves the clock mark
            tx.claim_job_lease(jobs[1], tool, timedelta(hours=2))
            tx.commit()
        with first.edit() as tx, pytest.raises(ConflictError) as refused:
            tx.claim_next_job_lease(tool, timedelta(minutes=5))
        assert refused.value.reason == Reason.CLOCK_REGRESSED


def test_a_held_lock_is_a_clear_busy_error_not_a_hang(tmp_path: Path) -> None:
    path = tmp_path / "p.pproj"
    Production.create(path).close()
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        with Production.open(path, busy_timeout=0.2) as production, production.edit() as tx:
            with pytest.raises(StorageError, match="busy") as raised:
                tx.create_asset()
            assert raised.value.reason == "busy"
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()


def test_every_failing_operation_leaves_the_head_unchanged(production: Production, media: Media) -> None:
    with production.edit() as tx:
        asset = tx.create_asset()
        rep = tx.add_representation(asset, RepresentationKind.ORIGINAL, media("a"))
        tx.commit()
    before = head(production)
    failing: list[Callable[..., object]] = [
        lambda tx: tx.create_asset(""),
        lambda tx: tx.add_representation(asset, RepresentationKind.ORIGINAL, media("b").parent / "absent"),
        lambda tx: tx.create_activity(
            ActivitySpec("org.x:t", inputs=(rep,), outputs=(RepresentationId.new(),))
        ),
        lambda tx: tx.add_metadata(AssetRef(asset), PROP, 0.1),
        lambda tx: tx.request_job(
            JobRequest("org.x:t", (rep,), asset, RepresentationKind.PROXY, target_root="none")
        ),
        lambda tx: tx.add_media_root("bad/name"),
    ]
    for operation in failing:
        with production.edit() as tx:
            with pytest.raises((InvalidArgumentError, NotFoundError, OSError)):
                operation(tx)
            tx.commit()
        assert head(production) == before


# --- feed ------------------------------------------------------------------------------------


def test_changes_since_bounds_and_order(production: Production) -> None:
    for _ in range(5):
        with production.edit() as tx:
            tx.create_asset()
            tx.commit()
    for limit in (0, 1001):
        with pytest.raises(InvalidArgumentError):
            production.changes_since(0, limit)
    with pytest.raises(InvalidArgumentError):
        production.changes_since(-1)
    page = production.changes_since(2, 2)
    assert [r.sequence for r in page] == [3, 4] and page.through_sequence == 4
    assert production.changes_since(5).revisions == ()
    assert production.changes_since(10**12).revisions == ()


def test_filtered_changes_report_how_far_they_covered(production: Production, media: Media) -> None:
    with production.edit() as tx:
        tx.create_asset()
        tx.commit()
    with production.edit() as tx:
        tx.add_media_root("media")
        tx.commit()
    page = production.changes_since(0, kinds={"media_root_added", "job_failed"})
    assert [r.sequence for r in page] == [2] and page.through_sequence == 2
    page = production.changes_since(0, 1, kinds={"asset_imported", "media_root_added"})
    assert [r.sequence for r in page] == [1] and page.through_sequence == 1
    page = production.changes_since(0, kinds={"job_failed"})
    assert page.revisions == () and page.through_sequence == 2
    for bad in (set(), {"row_updated"}):
        with pytest.raises(InvalidArgumentError):
            production.changes_since(0, kinds=bad)


def test_events_carry_ids_only(production: Production, media: Media) -> None:
    with production.edit(origin="test-suite 1", message="Import A") as tx:
        asset = tx.create_asset("A")
        rep = tx.add_representation(asset, RepresentationKind.ORIGINAL, media("A"))
        tx.commit()
    revision = production.latest_revision()
    assert revision is not None and (revision.origin, revision.message) == ("test-suite 1", "Import A")
    (full,) = production.changes_since(0)
    assert [dict(e.payload) for e in full.events] == [
        {"asset_id": str(asset)},
        {"asset_id": str(asset), "representation_id": str(rep)},
    ]


def test_wait_for_changes_times_out_and_wakes(production: Production) -> None:
    assert production.wait_for_changes(0, 0).revisions == ()
    assert production.wait_for_changes(0, timedelta(milliseconds=20)).revisions == ()
    with pytest.raises(InvalidArgumentError):
        production.wait_for_changes(0, 60.001)
    got: list[int] = []

    def waiter() -> None:
        with Production.open(production.location, read_only=True) as reader:
            got.extend(r.sequence for r in reader.wait_for_changes(0, 30))

    thread = threading.Thread(target=waiter)
    thread.start()
    with production.edit() as tx:
        tx.create_asset()
        tx.commit()
    thread.join(30)
    assert got == [1]


def test_wait_for_head_times_out_and_wakes(production: Production) -> None:
    """What the service's one listener waits with: the head past a sequence, woken by another
    handle's commit."""
    assert production.wait_for_head(0, 0) == 0
    assert production.wait_for_head(0, timedelta(milliseconds=20)) == 0
    with pytest.raises(InvalidArgumentError):
        production.wait_for_head(0, 61)
    stop = threading.Event()
    stop.set()
    assert production.wait_for_head(0, 30, stop=stop) == 0  # stopped, not waited
    got: list[int] = []
    started = threading.Event()

    def waiter() -> None:
        with Production.open(production.location, read_only=True) as reader:
            started.set()
            got.append(reader.wait_for_head(0, 30))
            got.append(reader.wait_for_head(got[0], 0))

    thread = threading.Thread(target=waiter)
    thread.start()
    started.wait(30)
    with production.edit() as tx:
        tx.create_asset()
        tx.commit()
    thread.join(30)
    assert got == [1, 1]


def test_filtered_reads_examine_a_bounded_window(
    production: Production, monkeypatch: pytest.MonkeyPatch
) -> None:
    from postproject.storage.sql import reads

    monkeypatch.setattr(reads, "FILTER_WINDOW", 3)  # both engines' feed reads
    for index in range(7):
        with production.edit() as tx:
            if index == 5:
                tx.add_media_root("late")
            else:
                tx.create_asset()
            tx.commit()
    first = production.changes_since(0, kinds={"media_root_added"})
    assert first.revisions == () and first.through_sequence == 3
    second = production.changes_since(first.through_sequence, kinds={"media_root_added"})
    assert [r.sequence for r in second] == [6] and second.through_sequence == 6
    third = production.changes_since(6, kinds={"media_root_added"})
    assert third.revisions == () and third.through_sequence == 7


@pytest.mark.sqlite_only("SQLite's query plan on a production file")
def test_job_history_uses_the_job_index(production: Production, media: Media) -> None:
    import sqlite3

    from postproject.model.lifecycle import HISTORY_EVENT_KINDS

    kinds = ",".join(f"'{kind}'" for kind in sorted(HISTORY_EVENT_KINDS))  # as the reader sends it
    conn = sqlite3.connect(production.path)
    plan = " ".join(
        row[3]
        for row in conn.execute(
            f"EXPLAIN QUERY PLAN SELECT sequence FROM revision_events WHERE subject = ? AND kind IN ({kinds}) "
            "ORDER BY sequence",
            (b"x" * 16,),
        )
    )
    index_sql = conn.execute(
        "SELECT sql FROM sqlite_master WHERE name = 'revision_events_by_job'"
    ).fetchone()[0]
    conn.close()
    assert kinds in " ".join(index_sql.split()).replace(", ", ","), "the index lists exactly the job events"
    assert "revision_events_by_job" in plan and "TEMP B-TREE" not in plan


def test_a_sequence_beyond_i64_is_an_empty_page(production: Production) -> None:
    with production.edit() as tx:
        tx.create_asset()
        tx.commit()
    huge = 2**63 + 5
    changes = production.changes_since(huge)
    assert changes.revisions == () and changes.through_sequence == huge
    assert len(production.revisions(before=huge)) == 1


def test_revision_summaries_count_events_instead_of_loading_them(s: Setup) -> None:
    with s.production.edit(message="Bulk request") as tx:
        for _ in range(5):
            tx.request_job(JobRequest(KIND, (s.original,), s.asset, RepresentationKind.PROXY))
        tx.commit()
    newest, previous = s.production.revisions(limit=2)
    assert newest.sequence == s.head() and newest.message == "Bulk request"
    assert dict(newest.event_counts) == {"job_requested": 5}
    assert newest.subject is None  # five jobs, no single subject
    assert previous.sequence == s.head() - 1
    assert [r.sequence for r in s.production.revisions(before=newest.sequence)] == list(
        range(newest.sequence - 1, 0, -1)
    )
    job = s.request()
    (single,) = s.production.revisions(limit=1)
    assert single.subject == str(job)
