"""A worker's calls (issue 27, third pass; migration 0013) write exactly what the edits write.

``Production.claim_next_job_lease`` (on PostgreSQL one ``pp_claim_next`` call; on SQLite an
edit) and a completion in an edit opened with ``defer_lease_checks`` (on PostgreSQL its lease
check sent with the commit) against the spec's protocol (an edit around
``Transaction.claim_next_job_lease``, then a completion edit), on both engines: the same
revisions, events and rows, every table compared (ids mapped by first appearance, lease
secrets left out: they are random), and the same answers from the reads the monitor and the
CLI make.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from postproject import (
    ActivityRef,
    ActivitySpec,
    AgentIdentity,
    InputChangedError,
    InvalidArgumentError,
    JobLease,
    JobOutput,
    JobRef,
    JobRequest,
    JobState,
    Production,
    Property,
    RepresentationId,
    RepresentationKind,
    ToolIdentity,
)
from postproject.base.handle import ProductionHandle

TOOL = ToolIdentity("worker-calls", "1")
AGENT = AgentIdentity("host-1")
LEASE = timedelta(minutes=5)
PROFILE = Property("https://example.com/transcode", "profile")
KIND = "org.example:proxy"
# random on every run, or the files' own (each production's media are files of their own)
UNCOMPARED = {"claim_secret_hash", "secret_hash", "cursor_key", "mtime"}
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@contextmanager
def _original(production: Production, media: Path, name: str) -> Iterator[tuple[Any, Any, Any]]:
    """An edit with an asset ``name`` and its original (a source file in ``media``) made first,
    committed when the block ends: (the edit, the asset, the original)."""
    source = media / "source.mov"
    source.write_bytes(b"source")
    with production.edit() as tx:
        asset = tx.create_asset(name)
        original = tx.add_representation(asset, RepresentationKind.ORIGINAL, source)
        yield tx, asset, original
        tx.commit()


def _work(production: Production, media: Path, *, one_call: bool, complete_job: bool = False) -> list[Any]:
    """Two jobs requested, claimed (one by a registered worker whose name JSON escapes) and
    completed with their parameters copied and a log tail, by the old path or the new one
    (``complete_job``: the completion by ``Production.complete_job``, migration 0014)."""
    with _original(production, media, "A001") as (tx, asset, original):
        for profile in ("proxy-720p", "proxy-1080p"):
            job = tx.request_job(JobRequest(KIND, (original,), asset, RepresentationKind.PROXY))
            tx.add_metadata(JobRef(job), PROFILE, profile)
    with production.edit() as tx:
        session = tx.register_worker('wörker "☃"', capacity=2, kinds=[KIND])
        tx.commit()
    leases: list[JobLease] = []
    for worker in (None, session):
        if one_call:
            lease = production.claim_next_job_lease(TOOL, LEASE, agent=AGENT, worker=worker)
        else:
            with production.edit() as tx:
                lease = tx.claim_next_job_lease(TOOL, LEASE, agent=AGENT, worker=worker)
                tx.commit()
        assert lease is not None
        leases.append(lease)
    for lease in leases:
        job = production.job(lease.job_id)
        output = media / f"{job.id}.mov"
        output.write_bytes(b"proxy essence")
        if complete_job:
            done = production.complete_job(lease, output, tool=TOOL, agent=AGENT, tail="encoded\n")
            assert production.job(job.id).completion == done
            continue
        with production.edit(defer_lease_checks=one_call) as tx:
            rep = tx.add_representation(job.output_asset_id, job.output_representation_kind, output)
            activity = tx.create_activity(
                ActivitySpec(job.kind, inputs=job.inputs, outputs=(rep,), tool=TOOL, agent=AGENT)
            )
            for parameter in production.metadata[JobRef(job.id)]:
                tx.add_metadata(ActivityRef(activity), parameter.property, parameter.value)
            tx.record_attempt_log(lease, tail="encoded\n")
            tx.complete_job_lease(lease, rep, activity)
            tx.commit()
    latest = production.latest_sequence()
    if one_call:  # nothing left: None, and nothing committed (the clock sample is kept)
        assert production.claim_next_job_lease(TOOL, LEASE, agent=AGENT, worker=session) is None
    else:
        with production.edit() as tx:
            assert tx.claim_next_job_lease(TOOL, LEASE, agent=AGENT, worker=session) is None
            tx.commit()
    assert production.latest_sequence() == latest
    return [lease.job_id for lease in leases]


class _Names:
    """Ids (bytes, UUIDs in text) replaced by their order of first appearance."""

    def __init__(self, media: Path) -> None:
        self.seen: dict[bytes, str] = {}
        self.media = str(media)

    def of(self, value: bytes) -> str:
        return self.seen.setdefault(value, f"#{len(self.seen)}")

    def __call__(self, value: Any) -> Any:
        if isinstance(value, bytes | bytearray | memoryview) and len(bytes(value)) == 16:
            return self.of(bytes(value))
        if isinstance(value, bytes | bytearray | memoryview):
            return "".join(self.of(bytes(value)[i : i + 16]) for i in range(0, len(bytes(value)), 16))
        if isinstance(value, str):
            value = value.replace(self.media, "MEDIA")
            return _UUID.sub(lambda m: self.of(uuid.UUID(m.group(0)).bytes), value)
        return value


def _tables(production: Production, media: Path) -> dict[str, list[tuple[Any, ...]]]:
    names = _Names(media)
    found: dict[str, list[tuple[Any, ...]]] = {}
    for table in ProductionHandle.of(production).engine.export_tables():
        keep = [i for i, column in enumerate(table.columns) if column not in UNCOMPARED]
        found[table.name] = [tuple(names(row[i]) for i in keep) for row in table.rows]
    return found


def _reads(production: Production, jobs: list[Any], media: Path) -> list[Any]:
    """What the monitor and the CLI read of the work, ids mapped by first appearance."""
    names = _Names(media)
    seen: list[Any] = []
    for revision in production.changes_since(0, limit=1000).revisions:
        seen.append((revision.sequence, revision.origin, revision.message, revision.committed_at))
        seen += [(e.kind, names(str(e.subject)), names(repr(e.payload))) for e in revision.events]
    for job_id in jobs:
        job = production.job(job_id)
        seen.append(names(repr(job)))
        seen.append(names(repr(production.job_history(job_id))))
        seen.append(names(repr(production.attempt_log(job_id))))
        activity = production.activity(job.completion.activity_id) if job.completion else None
        seen.append(names(repr(activity)))
    seen.append(production.job_counts())
    seen.append(names(repr([(w.name, w.kinds, w.capacity) for w in production.workers()])))
    return seen


def _same_rows_and_reads(
    before: Production, after: Production, old: list[Any], new: list[Any], tmp_path: Path
) -> None:
    """Every table and every read of ``after`` (media in tmp_path/a) as ``before``'s (tmp_path/b)."""
    old_tables, new_tables = _tables(before, tmp_path / "b"), _tables(after, tmp_path / "a")
    assert old_tables.keys() == new_tables.keys()
    for name in old_tables:
        assert new_tables[name] == old_tables[name], name
    assert _reads(after, new, tmp_path / "a") == _reads(before, old, tmp_path / "b")


def test_a_workers_calls_write_what_the_edits_write(
    production_factory: Callable[..., Production], tmp_path: Path
) -> None:
    before, after = production_factory("before.pproj"), production_factory("after.pproj")
    (tmp_path / "b").mkdir()
    (tmp_path / "a").mkdir()
    old = _work(before, tmp_path / "b", one_call=False)
    new = _work(after, tmp_path / "a", one_call=True)
    assert [after.job(j).state for j in new] == [JobState.SUCCEEDED] * 2
    _same_rows_and_reads(before, after, old, new, tmp_path)


def test_complete_job_writes_what_the_completion_edit_writes(
    production_factory: Callable[..., Production], tmp_path: Path
) -> None:
    """``Production.complete_job`` (on PostgreSQL one ``pp_complete`` call for a claim made in
    this process) against the spec's completion edit: every table, event and read alike."""
    before, after = production_factory("before.pproj"), production_factory("after.pproj")
    (tmp_path / "b").mkdir()
    (tmp_path / "a").mkdir()
    old = _work(before, tmp_path / "b", one_call=False)
    new = _work(after, tmp_path / "a", one_call=True, complete_job=True)
    assert [after.job(j).state for j in new] == [JobState.SUCCEEDED] * 2
    _same_rows_and_reads(before, after, old, new, tmp_path)


def test_claim_next_job_answers_the_job_and_its_parameters_as_the_reads_do(
    production_factory: Callable[..., Production], tmp_path: Path
) -> None:
    """``Production.claim_next_job``: the lease, and the job and its parameters exactly as
    ``job()`` and ``metadata[JobRef]`` read them after the claim (on PostgreSQL read in the
    claim's own round trip); None when nothing is claimable."""
    production = production_factory()
    with _original(production, tmp_path, "A001") as (tx, asset, original):
        job_id = tx.request_job(JobRequest(KIND, (original,), asset, RepresentationKind.PROXY))
        tx.add_metadata(JobRef(job_id), PROFILE, "proxy-720p")
        tx.add_metadata(JobRef(job_id), Property("https://example.com/ticket", "id"), 4711)
    work = production.claim_next_job(TOOL, LEASE, agent=AGENT, origin="tests", message="Claim")
    assert work is not None
    assert work.lease.job_id == job_id
    assert work.job == production.job(job_id)
    assert work.job.state is JobState.CLAIMED
    assert work.parameters == production.metadata[JobRef(job_id)]
    assert [p.value.value for p in work.parameters] == ["proxy-720p", 4711]  # type: ignore[attr-defined]
    with production.edit() as tx:  # failed, to be retried: claimed again, its attempts read
        tx.fail_job_lease(work.lease, "transient", retry=True)
        tx.commit()
    work = production.claim_next_job(TOOL, LEASE, agent=AGENT, origin="tests", message="Claim")
    assert work is not None
    assert work.job == production.job(job_id)
    assert [a.number for a in work.job.attempts] == [1, 2]
    revision = production.latest_revision()
    assert revision is not None
    assert (revision.origin, revision.message, [e.kind for e in revision.events]) == (
        "tests",
        "Claim",
        ["job_claimed"],
    )
    assert production.claim_next_job(TOOL, LEASE) is None


def test_a_registered_workers_first_claim_answers_its_attempt_as_the_reads_do(
    production_factory: Callable[..., Production], tmp_path: Path
) -> None:
    """A job's first attempt, claimed in one call by a registered worker (named with characters
    JSON escapes) with a tool URI and no agent: the answer's attempt is the one ``job()`` reads
    (on PostgreSQL since migration 0020 made from the claim's own columns, not read back)."""
    production = production_factory()
    tool = ToolIdentity("worker-calls", "2", "https://example.com/tools/\u00e9t\u00e9")
    with _original(production, tmp_path, "A001") as (tx, asset, original):
        job_id = tx.request_job(JobRequest(KIND, (original,), asset, RepresentationKind.PROXY))
        worker = tx.register_worker('render "07" \u00fc\u00df\u2603', capacity=2)
    work = production.claim_next_job(tool, LEASE, worker=worker)
    assert work is not None
    assert work.job == production.job(job_id)
    [attempt] = work.job.attempts
    assert (attempt.number, attempt.outcome, attempt.agent, attempt.worker, attempt.tool) == (
        1,
        None,
        None,
        'render "07" \u00fc\u00df\u2603',
        tool,
    )
    assert work.job.claim is not None and attempt.claimed_at == work.job.claim.claimed_at
    assert (attempt.ended_at, attempt.diagnostic, attempt.progress, attempt.stop_by, attempt.stopped_at) == (
        (None,) * 5
    )


def _chain(production: Production, media: Path, *, complete_job: bool) -> list[Any]:
    """A proxy, a thumbnail bound to the proxy's output (released by the proxy's success, its
    input resolved at its claim) and a regeneration of the proxy (superseding it), each
    claimed in one call and completed by the edit or by ``complete_job``."""
    with _original(production, media, "A002") as (tx, asset, original):
        proxy = tx.request_job(JobRequest(KIND, (original,), asset, RepresentationKind.PROXY))
        tx.add_metadata(JobRef(proxy), PROFILE, "proxy-720p")
        tx.request_job(JobRequest(KIND, (JobOutput(proxy),), asset, RepresentationKind.DERIVED))
    done: list[Any] = []
    for n in range(3):
        if n == 2:  # the proxy again, regenerating the first one's output
            first = production.job(done[0])
            assert first.completion is not None
            with production.edit() as tx:
                tx.request_job(
                    JobRequest(KIND, (original,), asset, RepresentationKind.PROXY,
                               regenerates=first.completion.representation_id)
                )  # fmt: skip
                tx.commit()
        work = production.claim_next_job(TOOL, LEASE, agent=AGENT)
        assert work is not None
        assert work.job == production.job(work.job.id)  # its dependencies and inputs as read
        job, output = work.job, media / f"out{n}.mov"
        output.write_bytes(b"essence %d" % n)
        if complete_job:
            production.complete_job(work.lease, output, tool=TOOL, agent=AGENT)
        else:
            with production.edit(defer_lease_checks=True) as tx:
                rep = tx.add_representation(job.output_asset_id, job.output_representation_kind, output)
                activity = tx.create_activity(
                    ActivitySpec(job.kind, inputs=job.inputs, outputs=(rep,), tool=TOOL, agent=AGENT)
                )
                for parameter in work.parameters:
                    tx.add_metadata(ActivityRef(activity), parameter.property, parameter.value)
                tx.complete_job_lease(work.lease, rep, activity)
                tx.commit()
        done.append(job.id)
    return done


def test_complete_job_releases_dependents_and_supersedes_as_the_edit_does(
    production_factory: Callable[..., Production], tmp_path: Path
) -> None:
    before, after = production_factory("before.pproj"), production_factory("after.pproj")
    (tmp_path / "b").mkdir()
    (tmp_path / "a").mkdir()
    old = _chain(before, tmp_path / "b", complete_job=False)
    new = _chain(after, tmp_path / "a", complete_job=True)
    kinds = [e.kind for r in after.changes_since(0, limit=100).revisions for e in r.events]
    assert "representation_superseded" in kinds
    assert [after.job(j).state for j in new] == [JobState.SUCCEEDED] * 3
    _same_rows_and_reads(before, after, old, new, tmp_path)


def _finish(production: Production, work: Any, output: Path, *, complete_job: bool) -> None:
    """Complete ``work`` (a ``ClaimedJob``) by ``complete_job`` or by the completion edit."""
    if complete_job:
        production.complete_job(work.lease, output, tool=TOOL, agent=AGENT)
        return
    job = work.job
    with production.edit() as tx:
        rep = tx.add_representation(job.output_asset_id, job.output_representation_kind, output)
        activity = tx.create_activity(
            ActivitySpec(job.kind, inputs=job.inputs, outputs=(rep,), tool=TOOL, agent=AGENT)
        )
        tx.complete_job_lease(work.lease, rep, activity)
        tx.commit()


def test_a_bound_input_changed_after_the_claim_fails_complete_job_as_it_fails_the_edit(
    production_factory: Callable[..., Production], tmp_path: Path
) -> None:
    """Two thumbnails bound to a proxy's output, claimed; the proxy's file then changes (its new
    fingerprint recorded): ``complete_job`` (on PostgreSQL one ``pp_complete`` call, which reads
    a bound input from the claim's resolution) refuses the first as the completion edit refuses
    the second: the same input and revision, nothing published, both still claimed."""
    production = production_factory()
    with _original(production, tmp_path, "A003") as (tx, asset, original):
        proxy = tx.request_job(JobRequest(KIND, (original,), asset, RepresentationKind.PROXY))
        for _ in range(2):
            tx.request_job(JobRequest(KIND, (JobOutput(proxy),), asset, RepresentationKind.DERIVED))
    work = production.claim_next_job(TOOL, LEASE, agent=AGENT)
    assert work is not None and work.job.id == proxy
    (tmp_path / "proxy.mov").write_bytes(b"proxy")
    made = production.complete_job(work.lease, tmp_path / "proxy.mov", tool=TOOL, agent=AGENT)
    claims = [production.claim_next_job(TOOL, LEASE, agent=AGENT) for _ in range(2)]
    thumbnails = [t for t in claims if t is not None]
    assert [t.job.inputs for t in thumbnails] == [(made.representation_id,)] * 2  # resolved at the claim
    (tmp_path / "proxy.mov").write_bytes(b"proxy, made again")
    with production.edit() as tx:
        assert tx.observe_representation(made.representation_id)
        tx.commit()
    changed_in = production.latest_sequence()
    errors = []
    for n, thumbnail in enumerate(thumbnails):
        output = tmp_path / f"thumb{n}.jpg"
        output.write_bytes(b"thumbnail")
        with pytest.raises(InputChangedError) as caught:
            _finish(production, thumbnail, output, complete_job=n == 0)
        errors.append(caught.value)
    assert [(e.input_id, e.superseding_revision) for e in errors] == [
        (made.representation_id, changed_in)
    ] * 2
    assert errors[0].message.replace(str(thumbnails[0].job.id), "J") == errors[1].message.replace(
        str(thumbnails[1].job.id), "J"
    )
    assert production.latest_sequence() == changed_in  # nothing published
    assert [production.job(t.job.id).state for t in thumbnails] == [JobState.CLAIMED] * 2


@pytest.mark.parametrize(
    "context",
    [
        {"tool": "worker-calls 1"},
        {"agent": "host-1"},
        {"started_at": datetime(2026, 1, 1, 12, 0)},  # noqa: DTZ001 (naive, refused)
        {"finished_at": "2026-01-01T12:00:00Z"},
        {
            "started_at": datetime(2026, 1, 1, 12, 0, 1, tzinfo=UTC),
            "finished_at": datetime(2026, 1, 1, 12, 0, tzinfo=UTC),
        },
    ],
    ids=["tool", "agent", "naive-start", "text-finish", "finish-before-start"],
)
def test_complete_job_refuses_the_activitys_tool_agent_and_times_as_the_edit_does(
    production_factory: Callable[..., Production], tmp_path: Path, context: dict[str, Any]
) -> None:
    """A completion's tool, agent and times are the activity's: ``complete_job`` refuses what
    ``ActivitySpec`` refuses, with the same error, before anything is sent; nothing is
    published and the job stays claimed."""
    production = production_factory()
    with _original(production, tmp_path, "A004") as (tx, asset, original):
        tx.request_job(JobRequest(KIND, (original,), asset, RepresentationKind.PROXY))
    work = production.claim_next_job(TOOL, LEASE, agent=AGENT)
    assert work is not None
    output = tmp_path / "proxy.mov"
    output.write_bytes(b"proxy")
    given = {"tool": TOOL, "agent": AGENT} | context
    with pytest.raises(InvalidArgumentError) as spec_error:
        ActivitySpec(KIND, inputs=work.job.inputs, outputs=(RepresentationId.new(),), **given)
    before = production.latest_sequence()
    with pytest.raises(InvalidArgumentError) as caught:
        production.complete_job(work.lease, output, **given)
    assert caught.value.message == spec_error.value.message
    assert production.latest_sequence() == before
    assert production.job(work.job.id).state == JobState.CLAIMED
    production.complete_job(work.lease, output, tool=TOOL, agent=AGENT)
    assert production.job(work.job.id).state == JobState.SUCCEEDED
