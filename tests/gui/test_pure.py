"""The GUI's Qt-free parts: columns, filters, times, parameters, CLI lines, the lifecycle
layout drawn from the core's transition table, claim outlooks and cancel plans."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest

from postproject import (
    EXECUTOR_VOCABULARY,
    TRANSITIONS,
    Action,
    AgentIdentity,
    Assertion,
    AssetId,
    Job,
    JobClaim,
    JobFailure,
    JobId,
    JobState,
    Property,
    RepresentationId,
    RepresentationKind,
    StringValue,
    ToolIdentity,
)
from postproject.cli import human
from postproject.model.clock import to_micros
from postproject_gui.diagram import lifecycle_layout as lay
from postproject_gui.dialogs.cancel_dialog import CancelPlan, summary
from postproject_gui.dialogs.error_presenter import Severity, describe
from postproject_gui.look.states import LONGEST_LEAD, ClaimHealth, claim_health, expiring_at, state_text
from postproject_gui.models import columns
from postproject_gui.models.row_store import RowStore, sort_key
from postproject_gui.services.feed_watcher import job_ids
from postproject_gui.services.filters import JobFilter
from postproject_gui.services.types import ClaimMark, ClaimOutlook, JobRow
from postproject_gui.text import cli_command, params, timefmt

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def make_job(
    state: JobState = JobState.REQUESTED, *, expires_in: float | None = None, diagnostic: str | None = None
) -> JobRow:
    claim = None
    if expires_in is not None:
        claim = JobClaim(
            ToolIdentity("ffmpeg", "6.1"),
            AgentIdentity("render-07"),
            NOW - timedelta(minutes=5),
            NOW + timedelta(seconds=expires_in),
        )
    job = Job(
        JobId.new(),
        "org.postproject:generate-proxy",
        (RepresentationId.new(),),
        AssetId.new(),
        RepresentationKind.PROXY,
        "proxies",
        state,
        claim,
        None,
        JobFailure(diagnostic) if diagnostic else None,
        NOW - timedelta(hours=2),
        7,
    )
    return JobRow(job, "A001_C002", "A001_C002.mov")


def test_claim_health_marks_stuck_and_expiring_claims() -> None:
    assert claim_health(make_job(JobState.CLAIMED, expires_in=600).job, NOW) is ClaimHealth.LIVE
    assert claim_health(make_job(JobState.CLAIMED, expires_in=30).job, NOW) is ClaimHealth.EXPIRING
    assert claim_health(make_job(JobState.CLAIMED, expires_in=0).job, NOW) is ClaimHealth.STUCK
    assert claim_health(make_job().job, NOW) is None
    assert state_text(make_job(JobState.CLAIMED, expires_in=-5).job, NOW) == "Claimed · stuck"


def test_columns_render_text_for_every_row() -> None:
    rows = [
        make_job(),
        make_job(JobState.CLAIMED, expires_in=42),
        make_job(JobState.FAILED, diagnostic="ffmpeg exited 1\nsecond line"),
    ]
    for row in rows:
        for col in columns.COLUMNS:
            assert isinstance(col.text(row, NOW), str)
            if col.tip:
                assert isinstance(col.tip(row, NOW), str)
    lease = columns.COLUMNS[columns.column("lease")]
    assert lease.text(rows[1], NOW) == "in 42s"
    diagnostic = columns.COLUMNS[columns.column("diagnostic")]
    assert diagnostic.text(rows[2], NOW) == "ffmpeg exited 1"
    claimed_by = columns.COLUMNS[columns.column("claimed_by")]
    assert claimed_by.text(rows[1], NOW) == "render-07 · ffmpeg 6.1"


def test_only_id_order_columns_sort_and_empty_columns_hide_per_listing() -> None:
    age, kind = columns.column("age"), columns.column("kind")
    assert columns.newest_first_for(age, ascending=True) is True
    assert columns.newest_first_for(columns.column("requested"), ascending=True) is False
    assert columns.newest_first_for(kind, ascending=True) is None
    lease = columns.COLUMNS[columns.column("lease")]
    assert columns.relevant(lease, JobState.CLAIMED, False)
    assert not columns.relevant(lease, JobState.FAILED, False)
    assert columns.relevant(lease, None, True)


def test_filter_goes_to_the_store_and_matches_live_rows() -> None:
    flt = JobFilter(state=JobState.FAILED, kind="org.postproject:generate-proxy")
    query = flt.store_query(NOW)
    assert (query.state, query.kind, query.newest_first, query.claims_before) == (
        JobState.FAILED,
        "org.postproject:generate-proxy",
        True,
        None,
    )
    assert flt.matches(make_job(JobState.FAILED, diagnostic="x"), NOW)
    assert not flt.matches(make_job(), NOW)
    stuck = JobFilter(stuck=True)
    assert stuck.store_query(NOW).claims_before == NOW + LONGEST_LEAD and stuck.client_side
    assert stuck.matches(make_job(JobState.CLAIMED, expires_in=30), NOW)
    assert not stuck.matches(make_job(JobState.CLAIMED, expires_in=600), NOW)
    assert JobFilter().with_(state=JobState.FAILED).with_(stuck=True).state is None
    assert JobFilter(text="RENDER-07").matches(make_job(JobState.CLAIMED, expires_in=5), NOW)
    assert not JobFilter(text="nomatch").client_side  # the store searches
    assert JobFilter(stuck=True, text="nomatch").client_side  # stuck claims are searched as read
    assert JobFilter(text="render-07").store_query(NOW).search == "render-07"
    assert JobFilter(state=JobState.FAILED, text="x").describe() == 'failed · "x"'


def test_row_store_keeps_store_order_and_finds_rows_by_id() -> None:
    rows = [make_job() for _ in range(5)]
    store = RowStore(sort_key(JobFilter(newest_first=True)))
    newest_first = sorted(rows, key=lambda r: r.id, reverse=True)
    store.extend(newest_first[1:])
    assert store.position_for(newest_first[0]) == 0
    store.insert(0, newest_first[0])
    assert [store.index_of(r.id) for r in newest_first] == [0, 1, 2, 3, 4]
    store.pop(2)
    assert newest_first[2].id not in store and store.index_of(newest_first[3].id) == 2


def test_times_are_compact_and_those_of_the_cli() -> None:
    assert timefmt.span(timedelta(seconds=42)) == "42s"
    assert timefmt.span(timedelta(seconds=185)) == "3m 05s"
    assert timefmt.span(timedelta(seconds=2 * 3600 + 600)) == "2h 10m"
    assert timefmt.countdown(NOW - timedelta(seconds=90), NOW) == "expired 1m 30s ago"
    assert timefmt.countdown(NOW - timedelta(seconds=42), NOW) == "expired 42s ago"
    assert timefmt.age(NOW - timedelta(days=3), NOW) == "3d"
    lease_end = NOW + timedelta(minutes=4, seconds=12)
    assert human.lease_phrase(
        {"claim_expires_at_unix_micros": to_micros(lease_end)}, to_micros(NOW), prefix=""
    ) == "expires " + timefmt.countdown(lease_end, NOW)


@pytest.mark.parametrize(
    ("kind", "text", "expected"),
    [
        ("string", "proxy-720p", "proxy-720p"),
        ("i64", "1080", 1080),
        ("decimal", "23.976", Decimal("23.976")),
        ("bool", "yes", True),
        ("rational", "24000/1001", Fraction(24000, 1001)),
        ("bytes", "00ff", b"\x00\xff"),
        ("json", '{"type": "list", "values": [{"type": "i64", "value": 1}]}', [1]),
    ],
)
def test_typed_parameters_parse_with_core_values(kind: str, text: str, expected: object) -> None:
    from postproject.model import values

    assert values.to_python(params.parse(kind, text)) == expected
    assert params.display(params.parse(kind, text))[0] == params.parse(kind, text).kind


@pytest.mark.parametrize(
    ("kind", "text"), [("i64", "1.5"), ("bool", "maybe"), ("uri", "no scheme"), ("json", "{")]
)
def test_bad_parameters_say_why(kind: str, text: str) -> None:
    with pytest.raises(ValueError, match=kind):
        params.parse(kind, text)


def test_cli_lines_quote_and_map_parameters() -> None:
    job = make_job().job
    prod = Path("/prod/day 3.pproj")
    line = cli_command.request(
        prod,
        job,
        [
            Assertion(Property(EXECUTOR_VOCABULARY, "profile"), StringValue("proxy-720p")),
            Assertion(Property("https://x.example/ns", "fps"), params.parse("rational", "24000/1001")),
        ],
    )
    assert line.startswith(
        f"postproject job request '/prod/day 3.pproj' org.postproject:generate-proxy {job.output_asset_id} proxy"
    )
    assert f"--input {job.inputs[0]}" in line and "--target-root proxies" in line
    assert "--profile proxy-720p" in line
    assert line.endswith(
        """--param https://x.example/ns fps '{"type":"rational","numerator":24000,"denominator":1001}'"""
        " --profile proxy-720p"
    )
    assert cli_command.show(prod, job.id) == f"postproject job show '/prod/day 3.pproj' {job.id}"


def test_lifecycle_layout_is_drawn_from_the_transition_table() -> None:
    layout = lay.layout()
    assert set(layout.nodes) == set(JobState)
    pairs = {(t.source, t.target) for t in TRANSITIONS}
    assert {(a.source, a.target) for a in layout.arrows} == pairs
    shapes = {(a.source, a.target): a.shape for a in layout.arrows}
    assert shapes[(JobState.CLAIMED, JobState.CLAIMED)] is lay.ArrowShape.LOOP
    assert shapes[(JobState.CLAIMED, JobState.REQUESTED)] is lay.ArrowShape.BACK
    assert shapes[(JobState.REQUESTED, JobState.CANCELLED)] is lay.ArrowShape.SKIP
    ranks = lay.ranks()
    assert ranks[JobState.REQUESTED] < ranks[JobState.CLAIMED] < ranks[JobState.SUCCEEDED]
    boxes = list(layout.nodes.values())
    for a in boxes:  # no two boxes overlap
        for b in boxes:
            if a is not b:
                assert abs(a.x - b.x) >= lay.NODE_W or abs(a.y - b.y) >= lay.NODE_H


def test_path_taken_replays_history_through_the_table() -> None:
    taken = lay.path_taken(
        [
            "job_requested",
            "job_claimed",
            "metadata_added_or_replaced",
            "job_claim_released",
            "job_claimed",
            "job_failed",
        ]
    )
    assert [t.action for t in taken] == [
        Action.REQUEST,
        Action.CLAIM,
        Action.RELEASE,
        Action.CLAIM,
        Action.FAIL,
    ]
    assert lay.arrow_counts(taken)[(JobState.REQUESTED, JobState.CLAIMED)] == 2
    assert [t.action for t in lay.offered(JobState.CLAIMED, [Action.CANCEL])] == [Action.CANCEL]
    assert lay.offered(JobState.FAILED, [Action.CANCEL]) == ()


def test_claim_outlook_counts_and_next_boundary() -> None:
    marks = (
        ClaimMark(JobId.new(), "k", NOW - timedelta(seconds=5), NOW - timedelta(seconds=25)),
        ClaimMark(JobId.new(), "k", NOW + timedelta(seconds=30), NOW - timedelta(seconds=10)),
        ClaimMark(JobId.new(), "other", NOW + timedelta(seconds=200), NOW + timedelta(seconds=140)),
    )
    outlook = ClaimOutlook(marks, NOW + timedelta(minutes=5))
    assert len(outlook.stuck(NOW)) == 1 and len(outlook.expiring(NOW)) == 1 and len(outlook.due(NOW)) == 2
    assert outlook.next_boundary(NOW) == NOW + timedelta(seconds=30)
    assert len(outlook.expiring(NOW + timedelta(seconds=150), kind="other")) == 1
    assert outlook.next_boundary(NOW + timedelta(seconds=31)) == NOW + timedelta(seconds=140)


def test_expiring_means_a_third_of_that_lease_left_never_a_fixed_minute() -> None:
    def claim(claimed_ago: float, left: float) -> JobClaim:
        return JobClaim(
            ToolIdentity("ffmpeg", "6.1"),
            AgentIdentity("render-07"),
            NOW - timedelta(seconds=claimed_ago),
            NOW + timedelta(seconds=left),
        )

    def health(c: JobClaim, lease_start: datetime | None = None) -> ClaimHealth | None:
        job = make_job(JobState.CLAIMED, expires_in=1).job
        return JobRow(replace(job, claim=c), lease_start=lease_start).health(NOW)

    assert health(claim(10, 50)) is ClaimHealth.LIVE  # a fresh 60 s lease: 50 s left is fine
    assert health(claim(45, 15)) is ClaimHealth.EXPIRING  # 15 of 60 s left: renewals were missed
    assert health(claim(2400, 600)) is ClaimHealth.EXPIRING  # 10 of 50 min left
    assert health(claim(600, 2400)) is ClaimHealth.LIVE
    assert health(claim(10, 0)) is ClaimHealth.STUCK
    # Renewed: a 60 s lease renewed 10 s ago by a worker that has held the job for an hour.
    renewed = claim(3600, 50)
    assert health(renewed) is ClaimHealth.EXPIRING  # as if one 61-minute term: why rows carry lease_start
    assert health(renewed, NOW - timedelta(seconds=10)) is ClaimHealth.LIVE
    assert health(claim(3600, 15), NOW - timedelta(seconds=45)) is ClaimHealth.EXPIRING
    assert expiring_at(renewed, NOW - timedelta(seconds=10)) == NOW + timedelta(seconds=30)
    assert expiring_at(renewed, NOW - timedelta(hours=3)) == expiring_at(renewed)  # never before the claim


def test_cancel_plan_lists_fenced_claims_and_skips_finished_jobs() -> None:
    rows = [make_job(), make_job(JobState.CLAIMED, expires_in=120), make_job(JobState.SUCCEEDED)]
    plan = CancelPlan.of(rows, NOW)
    assert len(plan.cancellable) == 2 and len(plan.fenced) == 1 and len(plan.skipped) == 1
    text = summary(plan)
    assert "2 jobs will be cancelled" in text and "render-07" in text and "1 already finished" in text


def test_error_presentation_by_code_and_reason() -> None:
    from postproject import ConflictError, NotFoundError, StorageError

    assert describe(NotFoundError("job x does not exist"), "Cancel").title == "Cancel failed: not found"
    busy = describe(StorageError("locked", reason="busy"), "Request")
    assert busy.retry and "busy" in busy.title
    assert describe(ConflictError("job x cannot be cancelled"), "Cancel").severity is Severity.WARNING
    bug = describe(RuntimeError("boom"), "Refresh")
    assert bug.severity is Severity.ERROR and "RuntimeError" in bug.detail


def test_job_ids_come_from_job_events_and_job_metadata() -> None:
    from postproject import Revision, RevisionEvent, RevisionId

    a, b = JobId.new(), JobId.new()
    revision = Revision(
        RevisionId.new(),
        3,
        NOW,
        None,
        None,
        (
            RevisionEvent(0, "job_claimed", {"job_id": str(a)}),
            RevisionEvent(1, "metadata_added_or_replaced", {"target": {"kind": "job", "id": str(b)}}),
            RevisionEvent(2, "asset_imported", {"asset_id": str(AssetId.new())}),
        ),
    )
    assert job_ids([revision]) == {a, b}
