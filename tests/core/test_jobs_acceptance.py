"""Acceptance checks 1-47 of the notes §8 (jobs, leases, clock, queries), on real files."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from postproject import (
    ActivityRef,
    ActivitySpec,
    ConflictError,
    FakeClock,
    InvalidArgumentError,
    JobLease,
    JobRef,
    JobRequest,
    JobState,
    LeaseState,
    NotFoundError,
    Production,
    Property,
    RepresentationKind,
)
from tests.conftest import START
from tests.core.jobs_helpers import AGENT, KIND, TOOL, Setup, at, make_setup, us

PARAM = Property("https://example.com/transcode", "profile")


@pytest.fixture
def s(production: Production, clock: FakeClock, tmp_path: Path) -> Setup:
    return make_setup(production, clock, tmp_path)


def events_of(setup: Setup, sequence: int) -> list[str]:
    (revision,) = setup.production.changes_since(sequence - 1, 1)
    return [event.kind for event in revision.events]


# --- request ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kind", ["not-namespaced", ":x", "x:", "org.example:has space", "org/ex:x", "a:" + "b" * 127]
)
def test_01_malformed_kind_is_invalid_and_leaves_no_revision(s: Setup, kind: str) -> None:
    head = s.head()
    with pytest.raises(InvalidArgumentError):
        JobRequest(kind, (s.original,), s.asset, RepresentationKind.PROXY)
    assert s.head() == head


def test_01_kind_of_128_bytes_is_accepted(s: Setup) -> None:
    JobRequest("a:" + "b" * 126, (s.original,), s.asset, RepresentationKind.PROXY)


def test_02_duplicate_inputs_are_invalid(s: Setup) -> None:
    with pytest.raises(InvalidArgumentError, match="distinct"):
        JobRequest(KIND, (s.original, s.original), s.asset, RepresentationKind.PROXY)


def test_03_inputs_are_returned_sorted(s: Setup, media: Callable[..., Path]) -> None:
    with s.production.edit() as tx:
        other = tx.add_representation(s.asset, RepresentationKind.OPTIMIZED, media("B.mov", b"b"))
        tx.commit()
    first, second = sorted([s.original, other])
    job = s.request(inputs=(second, first))
    assert s.production.job(job).inputs == (first, second)
    assert s.production.jobs().items[0].inputs == (first, second)


def test_04_absent_input_or_output_asset_is_not_found(s: Setup) -> None:
    from postproject import AssetId, RepresentationId

    head = s.head()
    with s.production.edit() as tx:
        with pytest.raises(NotFoundError, match="input representation"):
            tx.request_job(JobRequest(KIND, (RepresentationId.new(),), s.asset, RepresentationKind.PROXY))
        with pytest.raises(NotFoundError, match="output asset"):
            tx.request_job(JobRequest(KIND, (s.original,), AssetId.new(), RepresentationKind.PROXY))
        assert tx.commit().revision is None
    assert s.head() == head


@pytest.mark.parametrize("root", ["../machine-path", " media", "a/b", "x" * 129])
def test_05_bad_target_root_is_invalid(s: Setup, root: str) -> None:
    with pytest.raises(InvalidArgumentError):
        JobRequest(KIND, (s.original,), s.asset, RepresentationKind.PROXY, target_root=root)


def test_05_unconfigured_target_root_is_not_found(s: Setup) -> None:
    with s.production.edit() as tx:
        with pytest.raises(NotFoundError, match="target root"):
            tx.request_job(
                JobRequest(KIND, (s.original,), s.asset, RepresentationKind.PROXY, target_root="proxies")
            )
        tx.add_media_root("proxies")
        job = tx.request_job(
            JobRequest(KIND, (s.original,), s.asset, RepresentationKind.PROXY, target_root="proxies")
        )
        tx.commit()
    assert s.production.job(job).target_root == "proxies"


def test_06_request_commits_one_revision_with_its_events(s: Setup) -> None:
    with s.production.edit() as tx:
        job = tx.request_job(JobRequest(KIND, (s.original,), s.asset, RepresentationKind.PROXY))
        tx.add_metadata(JobRef(job), PARAM, "proxy-720p")
        receipt = tx.commit()
    assert receipt.revision is not None and receipt.revision.sequence == s.head()
    assert events_of(s, s.head()) == ["job_requested", "metadata_added_or_replaced"]
    stored = s.production.job(job)
    assert stored.state is JobState.REQUESTED
    assert (stored.claim, stored.completion, stored.failure) == (None, None, None)


def test_07_two_requests_in_one_transaction_make_one_revision(s: Setup) -> None:
    with s.production.edit() as tx:
        first = tx.request_job(JobRequest(KIND, (s.original,), s.asset, RepresentationKind.PROXY))
        second = tx.request_job(JobRequest(KIND, (s.original,), s.asset, RepresentationKind.PROXY))
        tx.commit()
    (revision,) = s.production.changes_since(s.head() - 1)
    assert [(e.kind, e["job_id"]) for e in revision.events] == [
        ("job_requested", str(first)),
        ("job_requested", str(second)),
    ]
    assert [e.position for e in revision.events] == [0, 1]


# --- claim / lease -----------------------------------------------------------------------


def test_08_claim_sets_expiry_attribution_and_lease_states(s: Setup) -> None:
    job = s.request()
    at(s.clock, 100)
    with s.production.edit() as tx:
        lease = tx.claim_job_lease(job, TOOL, us(100), agent=AGENT)
        assert lease.state is LeaseState.PENDING
        tx.commit()
    assert lease.state is LeaseState.ACTIVE
    assert lease.expires_at == START + us(200)
    stored = s.production.job(job)
    assert stored.state is JobState.CLAIMED
    assert stored.claim is not None
    assert (stored.claim.tool, stored.claim.agent, stored.claim.expires_at) == (TOOL, AGENT, START + us(200))


@pytest.mark.parametrize(
    "duration", [timedelta(0), timedelta(microseconds=-1), timedelta.max, timedelta(hours=24, microseconds=1)]
)
def test_09_bad_durations_are_invalid(s: Setup, duration: timedelta) -> None:
    job = s.request()
    head = s.head()
    with s.production.edit() as tx:
        with pytest.raises(InvalidArgumentError):  # also a ValueError
            tx.claim_job_lease(job, TOOL, duration)
        tx.commit()
    assert s.production.job(job).state is JobState.REQUESTED
    assert s.head() == head


@pytest.mark.parametrize("duration", [True, 100, 1.5, "5m"])
def test_09_non_timedelta_durations_are_type_errors(s: Setup, duration: object) -> None:
    job = s.request()
    with s.production.edit() as tx, pytest.raises(TypeError):
        tx.claim_job_lease(job, TOOL, duration)


@pytest.mark.parametrize("duration", [us(1), timedelta(hours=24)])
def test_09_one_microsecond_and_a_day_are_accepted(s: Setup, duration: timedelta) -> None:
    job = s.request()
    with s.production.edit() as tx:
        tx.claim_job_lease(job, TOOL, duration)
        tx.commit()
    assert s.production.job(job).state is JobState.CLAIMED


def test_10_expiry_is_exclusive(s: Setup) -> None:
    job = s.request()
    at(s.clock, 100)
    first = s.claim(job, 100)
    at(s.clock, 199)
    with s.production.edit() as tx, pytest.raises(ConflictError):
        tx.claim_job_lease(job, TOOL, us(100))
    at(s.clock, 200)
    second = s.claim(job, 100)
    assert second.export_token() != first.export_token()


@pytest.mark.parametrize("end", ["complete", "fail", "cancel"])
def test_11_claiming_a_terminal_job_is_a_conflict(s: Setup, end: str) -> None:
    job = s.request()
    lease = s.claim(job, 1000)
    if end == "complete":
        s.complete(lease)
    else:
        with s.production.edit() as tx:
            tx.fail_job_lease(lease, "boom") if end == "fail" else tx.cancel_job(job)
            tx.commit()
    with s.production.edit() as tx, pytest.raises(ConflictError):
        tx.claim_job_lease(job, TOOL, us(100))


def test_11_claiming_an_absent_job_is_not_found(s: Setup) -> None:
    from postproject import JobId

    with s.production.edit() as tx, pytest.raises(NotFoundError):
        tx.claim_job_lease(JobId.new(), TOOL, us(100))


def test_12_rolled_back_claim_leaves_the_job_requested_and_the_lease_closed(s: Setup) -> None:
    job = s.request()
    head = s.head()
    with s.production.edit() as tx:
        lease = tx.claim_job_lease(job, TOOL, us(100))
    assert lease.state is LeaseState.CLOSED
    with pytest.raises(ConflictError):
        lease.export_token()
    assert s.production.job(job).state is JobState.REQUESTED
    assert s.head() == head


def test_13_export_token_needs_a_committed_claim(s: Setup) -> None:
    job = s.request()
    with s.production.edit() as tx:
        lease = tx.claim_job_lease(job, TOOL, us(100))
        with pytest.raises(InvalidArgumentError):
            lease.export_token()
        tx.commit()
    token = lease.export_token()
    assert token.startswith(f"ppl1:{s.production.id}:{job}:")
    assert len(token) == 115


def test_14_the_secret_never_appears_in_reads_events_or_reprs(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 1000)
    secret = lease.export_token().rsplit(":", 1)[1]
    visible = [
        repr(lease),
        repr(s.production.job(job)),
        repr(s.production.jobs()),
        repr(list(s.production.changes_since(0, 1000))),
    ]
    with s.production.edit() as tx:
        tx.release_job_lease(lease)
        tx.commit()
    with s.production.edit() as tx:
        try:
            tx.release_job_lease(lease)
        except ConflictError as exc:
            visible.append(str(exc))
    assert all(secret not in text and secret.replace("-", "") not in text for text in visible)


def test_15_token_import_validation(s: Setup, production_factory: Callable[..., Production]) -> None:
    job = s.request()
    token = s.claim(job, 1000).export_token()
    other = production_factory("other.pproj")
    with pytest.raises(InvalidArgumentError, match="another production"):
        JobLease.import_token(other, token)
    prefix, prod, _, secret = token.split(":")
    from postproject import JobId

    with pytest.raises((NotFoundError, ConflictError)):
        JobLease.import_token(s.production, ":".join([prefix, prod, str(JobId.new()), secret]))
    for junk in ["", "x" * 10_000, "y" * 115, token.upper(), token + "\n"]:
        with pytest.raises(InvalidArgumentError):
            JobLease.import_token(s.production, junk)
    imported = JobLease.import_token(s.production, token)
    assert imported.state is LeaseState.ACTIVE
    assert imported.expires_at == s.production.job(job).claim.expires_at  # type: ignore[union-attr]


def test_16_a_lease_of_another_production_is_invalid_there(
    s: Setup, production_factory: Callable[..., Production]
) -> None:
    job = s.request()
    lease = s.claim(job, 1000)
    other_setup = make_setup(production_factory("other.pproj"), s.clock, s.root / "other")
    head = other_setup.head()
    with other_setup.production.edit() as tx:
        with pytest.raises(InvalidArgumentError):
            tx.release_job_lease(lease)
        tx.commit()
    assert other_setup.head() == head


# --- renew --------------------------------------------------------------------------------


def test_17_renew_must_strictly_extend(s: Setup) -> None:
    job = s.request()
    at(s.clock, 100)
    lease = s.claim(job, 100)
    at(s.clock, 150)
    with s.production.edit() as tx:
        with pytest.raises(ConflictError):
            tx.renew_job_lease(lease, us(10))
        tx.renew_job_lease(lease, us(200))
        tx.commit()
    assert lease.expires_at == START + us(350)


def test_18_renewal_committed_after_the_old_expiry_fails(s: Setup) -> None:
    job = s.request()
    at(s.clock, 100)
    lease = s.claim(job, 100)
    head = s.head()
    at(s.clock, 150)
    with s.production.edit() as tx:
        tx.renew_job_lease(lease, us(200))
        at(s.clock, 200)
        with pytest.raises(ConflictError):
            tx.commit()
    assert s.head() == head
    assert lease.state is LeaseState.ACTIVE and lease.expires_at == START + us(200)
    with s.production.edit() as tx, pytest.raises(ConflictError):
        tx.release_job_lease(lease)


def test_19_renew_emits_its_event_and_keeps_the_lease_in_step(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 100)
    with s.production.edit() as tx:
        tx.renew_job_lease(lease, us(500))
        tx.commit()
    assert events_of(s, s.head()) == ["job_claim_renewed"]
    stored = s.production.job(job)
    assert stored.state is JobState.CLAIMED
    assert stored.claim is not None and lease.expires_at == stored.claim.expires_at


# --- release ------------------------------------------------------------------------------


def test_20_release_returns_the_job_and_fences_the_token(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 1000)
    token = lease.export_token()
    with s.production.edit() as tx:
        tx.release_job_lease(lease)
        tx.commit()
    assert events_of(s, s.head()) == ["job_claim_released"]
    stored = s.production.job(job)
    assert stored.state is JobState.REQUESTED and stored.claim is None
    assert lease.state is LeaseState.CLOSED
    with pytest.raises(ConflictError):
        JobLease.import_token(s.production, token)


def test_21_release_after_expiry_is_a_conflict(s: Setup) -> None:
    job = s.request()
    at(s.clock, 100)
    lease = s.claim(job, 100)
    at(s.clock, 200)
    with s.production.edit() as tx, pytest.raises(ConflictError):
        tx.release_job_lease(lease)


# --- complete -------------------------------------------------------------------------------


def test_23_completion_publishes_everything_in_one_revision(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 1000)
    head = s.head()
    rep = s.complete(lease)
    assert s.head() == head + 1
    kinds = events_of(s, s.head())
    assert kinds[-1] == "job_succeeded"
    assert kinds[:2] == ["representation_added", "activity_created"]
    stored = s.production.job(job)
    assert stored.state is JobState.SUCCEEDED and stored.completion is not None
    assert stored.completion.representation_id == rep
    activity = s.production.activity(stored.completion.activity_id)
    assert [e.representation_id for e in activity.outputs] == [rep]


@pytest.mark.parametrize("mismatch", ["asset", "kind"])
def test_24_output_for_another_asset_or_kind_is_invalid(s: Setup, mismatch: str) -> None:
    job = s.request()
    lease = s.claim(job, 1000)
    with s.production.edit() as tx:
        asset = tx.create_asset("other") if mismatch == "asset" else s.asset
        kind = RepresentationKind.DERIVED if mismatch == "kind" else RepresentationKind.PROXY
        rep = tx.add_representation(asset, kind, s.output_file())
        activity = tx.create_activity(ActivitySpec(KIND, inputs=(s.original,), outputs=(rep,)))
        with pytest.raises(InvalidArgumentError):
            tx.complete_job_lease(lease, rep, activity)
        # the edit is still usable and the lease still works
    assert s.production.job(job).state is JobState.CLAIMED
    s.complete(lease)


def test_25_activity_io_must_match_the_job(s: Setup, media: Callable[..., Path]) -> None:
    with s.production.edit() as tx:
        extra = tx.add_representation(s.asset, RepresentationKind.OPTIMIZED, media("extra.mov", b"x"))
        tx.commit()
    job = s.request()
    lease = s.claim(job, 1000)
    # A failed completion poisons its edit (notes §2.6), so each mismatch gets its own edit.
    for index in range(4):
        with s.production.edit() as tx:
            rep = tx.add_representation(s.asset, RepresentationKind.PROXY, s.output_file(f"a{index}.mov"))
            second = tx.add_representation(
                s.asset, RepresentationKind.PROXY, s.output_file(f"b{index}.mov", b"b")
            )
            spec = [
                ActivitySpec(KIND, inputs=(), outputs=(rep,)),
                ActivitySpec(KIND, inputs=(s.original, extra), outputs=(rep,)),
                ActivitySpec(KIND, inputs=(s.original,), outputs=(rep, second)),
                ActivitySpec(KIND, inputs=(s.original,), outputs=(second,)),
            ][index]
            activity = tx.create_activity(spec)
            with pytest.raises(InvalidArgumentError):
                tx.complete_job_lease(lease, rep, activity)


def test_26_old_tokens_are_fenced_by_a_reclaim(
    s: Setup, production_factory: Callable[..., Production]
) -> None:
    job = s.request()
    at(s.clock, 100)
    lease_a = s.claim(job, 100)
    token_a = lease_a.export_token()
    at(s.clock, 200)
    lease_b = s.claim(job, 1000)
    head = s.head()
    with s.production.edit() as tx:
        for action in (
            lambda: tx.renew_job_lease(lease_a, us(10_000)),
            lambda: tx.release_job_lease(lease_a),
            lambda: tx.fail_job_lease(lease_a, "late"),
        ):
            with pytest.raises(ConflictError):
                action()
        rep = tx.add_representation(s.asset, RepresentationKind.PROXY, s.output_file())
        activity = tx.create_activity(ActivitySpec(KIND, inputs=(s.original,), outputs=(rep,)))
        with pytest.raises(ConflictError):
            tx.complete_job_lease(lease_a, rep, activity)
    assert s.head() == head
    assert s.production.representations(kind=RepresentationKind.PROXY).items == ()
    with pytest.raises(ConflictError):
        JobLease.import_token(s.production, token_a)
    s.complete(lease_b)
    assert s.production.job(job).state is JobState.SUCCEEDED


def test_27_completion_that_outlives_its_lease_publishes_nothing(s: Setup) -> None:
    job = s.request()
    at(s.clock, 100)
    lease = s.claim(job, 100)
    head = s.head()
    at(s.clock, 150)
    with s.production.edit() as tx:
        rep = tx.add_representation(s.asset, RepresentationKind.PROXY, s.output_file())
        activity = tx.create_activity(ActivitySpec(KIND, inputs=(s.original,), outputs=(rep,)))
        tx.complete_job_lease(lease, rep, activity)
        at(s.clock, 200)
        with pytest.raises(ConflictError):
            tx.commit()
    assert s.head() == head
    with pytest.raises(NotFoundError):
        s.production.representation(rep)
    assert lease.state is LeaseState.ACTIVE


def test_28_the_high_water_mark_survives_failure_and_reopen(s: Setup) -> None:
    test_27_completion_that_outlives_its_lease_publishes_nothing(s)
    path = s.production.location
    s.production.close()
    job = Production.open(path, clock=FakeClock(START + us(199)))
    with job:
        pending = job.jobs(state=JobState.CLAIMED).items[0].id
        with job.edit() as tx, pytest.raises(ConflictError, match="backward"):
            tx.claim_job_lease(pending, TOOL, us(100))
    later = Production.open(path, clock=FakeClock(START + us(200)))
    with later, later.edit() as tx:
        tx.claim_job_lease(pending, TOOL, us(100))
        tx.commit()


def test_29_claim_and_complete_in_one_edit(s: Setup) -> None:
    job = s.request()
    head = s.head()
    with s.production.edit() as tx:
        lease = tx.claim_job_lease(job, TOOL, us(1000))
        rep = tx.add_representation(s.asset, RepresentationKind.PROXY, s.output_file())
        activity = tx.create_activity(ActivitySpec(KIND, inputs=(s.original,), outputs=(rep,)))
        tx.complete_job_lease(lease, rep, activity)
        tx.commit()
    assert s.head() == head + 1
    kinds = events_of(s, s.head())
    assert kinds[0] == "job_claimed" and kinds[-1] == "job_succeeded"
    assert lease.state is LeaseState.CLOSED
    with s.production.edit() as tx, pytest.raises(ConflictError):
        tx.release_job_lease(lease)


def test_30_an_input_changed_after_the_claim_makes_completion_a_conflict(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 10_000_000)
    (s.root / "media" / "A001.mov").write_bytes(b"re-graded essence")
    with s.production.edit() as tx:
        assert tx.observe_representation(s.original)
        receipt = tx.commit()
    assert receipt.revision is not None
    token = lease.export_token()
    for handle in (lease, JobLease.import_token(s.production, token)):
        head = s.head()
        with s.production.edit() as tx:
            rep = tx.add_representation(s.asset, RepresentationKind.PROXY, s.output_file())
            activity = tx.create_activity(ActivitySpec(KIND, inputs=(s.original,), outputs=(rep,)))
            with pytest.raises(ConflictError, match=f"revision {receipt.revision.sequence}") as raised:
                tx.complete_job_lease(handle, rep, activity)
            assert str(s.original) in str(raised.value)
        assert s.head() == head
    assert s.production.job(job).state is JobState.CLAIMED
    with s.production.edit() as tx:
        tx.release_job_lease(lease)
        tx.commit()


def test_33_snapshots_carry_the_commit_sequence_and_no_parameters_are_copied(s: Setup) -> None:
    with s.production.edit() as tx:
        job = tx.request_job(JobRequest(KIND, (s.original,), s.asset, RepresentationKind.PROXY))
        tx.add_metadata(JobRef(job), PARAM, "proxy-720p")
        tx.commit()
    lease = s.claim(job, 1000)
    rep = s.complete(lease)
    completion = s.production.job(job).completion
    assert completion is not None
    activity = s.production.activity(completion.activity_id)
    for edge in activity.inputs + activity.outputs:
        assert edge.snapshot is not None and edge.snapshot.revision_sequence == s.head()
    assert activity.outputs[0].snapshot.fingerprints == s.production.representation(rep).fingerprints  # type: ignore[union-attr]
    assert activity.inputs[0].snapshot.fingerprints == s.production.representation(s.original).fingerprints  # type: ignore[union-attr]
    assert s.production.metadata[ActivityRef(activity.id)] == ()


# --- fail / cancel --------------------------------------------------------------------------


@pytest.mark.parametrize("diagnostic", ["", "é" * 2049, "nul\x00byte"])
def test_34_bad_diagnostics_are_invalid(s: Setup, diagnostic: str) -> None:
    job = s.request()
    lease = s.claim(job, 1000)
    with s.production.edit() as tx, pytest.raises(InvalidArgumentError):
        tx.fail_job_lease(lease, diagnostic)


def test_34_35_a_4096_byte_diagnostic_is_stored_exactly(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 1000)
    with s.production.edit() as tx:
        tx.fail_job_lease(lease, "é" * 2048)
        tx.commit()
    stored = s.production.job(job)
    assert stored.state is JobState.FAILED and stored.failure is not None
    assert stored.failure.diagnostic == "é" * 2048 and stored.claim is None
    assert events_of(s, s.head()) == ["job_failed"]
    assert lease.state is LeaseState.CLOSED
    assert s.production.activities().items == ()


def test_36_failing_with_a_superseded_token(s: Setup) -> None:
    job = s.request()
    at(s.clock, 0)
    old = s.claim(job, 100)
    at(s.clock, 100)
    s.claim(job, 1000)
    head = s.head()
    with s.production.edit() as tx:
        with pytest.raises(ConflictError):
            tx.fail_job_lease(old, "late")
        tx.commit()
    assert s.head() == head and s.production.job(job).state is JobState.CLAIMED


@pytest.mark.parametrize("expired", [False, True])
def test_37_cancel_needs_no_token_and_fences_the_lease(s: Setup, expired: bool) -> None:
    job = s.request()
    at(s.clock, 0)
    lease = s.claim(job, 100)
    token = lease.export_token()
    at(s.clock, 150 if expired else 50)
    with s.production.edit() as tx:
        tx.cancel_job(job)
        tx.commit()
    assert events_of(s, s.head()) == ["job_cancelled"]
    assert s.production.job(job).state is JobState.CANCELLED
    with s.production.edit() as tx:
        rep = tx.add_representation(s.asset, RepresentationKind.PROXY, s.output_file())
        activity = tx.create_activity(ActivitySpec(KIND, inputs=(s.original,), outputs=(rep,)))
        with pytest.raises(ConflictError):
            tx.complete_job_lease(lease, rep, activity)
    with pytest.raises(ConflictError):
        JobLease.import_token(s.production, token)


def test_37_cancel_from_requested(s: Setup) -> None:
    job = s.request()
    with s.production.edit() as tx:
        tx.cancel_job(job)
        tx.commit()
    assert s.production.job(job).state is JobState.CANCELLED


def test_38_cancelling_terminal_or_absent_jobs(s: Setup) -> None:
    from postproject import JobId

    job = s.request()
    with s.production.edit() as tx:
        tx.cancel_job(job)
        tx.commit()
    with s.production.edit() as tx:
        with pytest.raises(ConflictError):
            tx.cancel_job(job)
        with pytest.raises(NotFoundError):
            tx.cancel_job(JobId.new())


# --- clock ----------------------------------------------------------------------------------


def test_39_a_backward_clock_blocks_guarded_operations_only(s: Setup) -> None:
    jobs = [s.request() for _ in range(3)]
    at(s.clock, 500)
    lease = s.claim(jobs[0], 10_000)
    token = lease.export_token()
    at(s.clock, 400)
    with s.production.edit() as tx:
        for action in (
            lambda: tx.claim_job_lease(jobs[1], TOOL, us(100)),
            lambda: tx.renew_job_lease(lease, us(100_000)),
            lambda: tx.release_job_lease(lease),
            lambda: tx.fail_job_lease(lease, "x"),
        ):
            with pytest.raises(ConflictError, match="backward"):
                action()
        with pytest.raises(ConflictError, match="backward"):
            JobLease.import_token(s.production, token)
        tx.request_job(JobRequest(KIND, (s.original,), s.asset, RepresentationKind.PROXY))
        tx.cancel_job(jobs[2])
        tx.commit()
    assert s.production.job(jobs[2]).state is JobState.CANCELLED
    at(s.clock, 500)
    with s.production.edit() as tx:
        tx.renew_job_lease(lease, us(100_000))
        tx.commit()


def test_40_a_forward_jump_expires_the_lease(s: Setup) -> None:
    job = s.request()
    at(s.clock, 0)
    lease = s.claim(job, 100)
    at(s.clock, 1_000_000)
    with s.production.edit() as tx, pytest.raises(ConflictError):
        tx.renew_job_lease(lease, us(100))
    s.claim(job, 100)


# --- queries --------------------------------------------------------------------------------


def test_41_limits(s: Setup) -> None:
    for limit in (0, 1001):
        with pytest.raises(InvalidArgumentError):
            s.production.jobs(limit=limit)
    with pytest.raises(TypeError):
        s.production.jobs(limit=True)
    s.production.jobs(limit=1000)


def test_42_pages_in_id_order(s: Setup) -> None:
    jobs = sorted(s.request() for _ in range(3))
    seen, cursors = [], []
    cursor = None
    while True:
        page = s.production.jobs(limit=1, cursor=cursor)
        seen.extend(job.id for job in page.items)
        cursors.append(page.next_cursor)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == jobs
    assert [c is not None for c in cursors] == [True, True, False]


def test_43_cursors_are_bound_to_their_filters_and_production(
    s: Setup, production_factory: Callable[..., Production]
) -> None:
    for _ in range(2):
        s.request()
    cursor = s.production.jobs(limit=1, state=JobState.REQUESTED).next_cursor
    assert cursor is not None
    other = production_factory("other.pproj")
    for call in (
        lambda: s.production.jobs(limit=1, cursor=cursor, state=JobState.CLAIMED),
        lambda: s.production.jobs(limit=1, cursor=cursor, state=JobState.REQUESTED, kind="org.example:other"),
        lambda: s.production.jobs(limit=1, cursor=cursor),
        lambda: other.jobs(limit=1, cursor=cursor, state=JobState.REQUESTED),
    ):
        with pytest.raises(InvalidArgumentError):
            call()
    assert len(s.production.jobs(limit=1, cursor=cursor, state=JobState.REQUESTED).items) == 1


def test_44_altered_cursors_are_rejected(s: Setup) -> None:
    for _ in range(2):
        s.request()
    cursor = s.production.jobs(limit=1).next_cursor
    assert cursor is not None
    fields = cursor.split("|")
    last = fields[-2]
    altered = [
        cursor.replace(last, last.upper()),
        cursor.replace("ppq2", "ppq1", 1),
        cursor[:-1] + ("0" if cursor[-1] != "0" else "1"),
        "|".join([*fields[:-2], "00" * 16, fields[-1]]),
        "garbage",
    ]
    for bad in altered:
        with pytest.raises(InvalidArgumentError):
            s.production.jobs(limit=1, cursor=bad)


def test_45_kind_filter(s: Setup) -> None:
    s.request()
    with pytest.raises(InvalidArgumentError):
        s.production.jobs(kind="bad")
    page = s.production.jobs(kind="org.example:nothing-here")
    assert page.items == () and page.next_cursor is None


def test_46_pages_are_weakly_consistent(s: Setup) -> None:
    first, second = s.request(), s.request()
    page = s.production.jobs(limit=1)
    assert page.items[0].id == first
    later = s.request()
    rest = []
    cursor = page.next_cursor
    while cursor:
        page = s.production.jobs(limit=1, cursor=cursor)
        rest.extend(job.id for job in page.items)
        cursor = page.next_cursor
    assert rest == [second, later]


def test_47_claimed_filter_includes_expired_claims(s: Setup) -> None:
    job = s.request()
    at(s.clock, 0)
    s.claim(job, 100)
    at(s.clock, 10_000)
    assert [j.id for j in s.production.jobs(state=JobState.CLAIMED).items] == [job]
    stuck = s.production.claims_expiring()
    assert [j.id for j in stuck.items] == [job]


# --- reads the monitor relies on ----------------------------------------------------------


def test_claims_expiring_pages_keep_their_bound_and_filter_by_kind(s: Setup) -> None:
    jobs = [s.request() for _ in range(3)] + [s.request(kind="org.example:other")]
    for index, job in enumerate(jobs):
        at(s.clock, index)
        s.claim(job, 100)
    at(s.clock, 102)  # the first three have expired, the fourth (expires at 103) has not
    first = s.production.claims_expiring(limit=2)
    assert [j.id for j in first.items] == jobs[:2] and first.next_cursor is not None
    at(s.clock, 10_000)  # time moves on; the cursor keeps the first page's bound
    rest = s.production.claims_expiring(limit=2, cursor=first.next_cursor)
    assert [j.id for j in rest.items] == [jobs[2]] and rest.next_cursor is None
    other = s.production.claims_expiring(kind="org.example:other")
    assert [j.id for j in other.items] == [jobs[3]]
    with pytest.raises(InvalidArgumentError):
        s.production.claims_expiring(limit=2, cursor=first.next_cursor, kind="org.example:other")


def test_job_history_names_who_and_why(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 1000)
    with s.production.edit(origin="supervisor-console 2", message="Stuck on render-07") as tx:
        tx.cancel_job(job)
        tx.commit()
    history = s.production.job_history(job)
    assert [entry.kind for entry in history] == ["job_requested", "job_claimed", "job_cancelled"]
    assert (history[-1].origin, history[-1].message) == ("supervisor-console 2", "Stuck on render-07")
    assert [entry.sequence for entry in history] == sorted(entry.sequence for entry in history)
    del lease


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


def test_a_waiter_can_be_stopped(s: Setup) -> None:
    import threading

    stop = threading.Event()
    stop.set()
    assert s.production.wait_for_changes(s.head(), 30, stop=stop).revisions == ()
