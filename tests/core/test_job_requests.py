"""Requesting jobs: kinds, inputs, target roots, one revision per edit (acceptance checks
1-7 of the notes §8, on real files)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from postproject import (
    FakeClock,
    InvalidArgumentError,
    JobRef,
    JobRequest,
    JobState,
    NotFoundError,
    Production,
    Property,
    RepresentationKind,
)
from tests.core.jobs_helpers import KIND, Setup, make_setup

PARAM = Property("https://example.com/transcode", "profile")


@pytest.fixture
def s(production: Production, clock: FakeClock, tmp_path: Path) -> Setup:
    return make_setup(production, clock, tmp_path)


def events_of(setup: Setup, sequence: int) -> list[str]:
    (revision,) = setup.production.changes_since(sequence - 1, 1)
    return [event.kind for event in revision.events]


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
