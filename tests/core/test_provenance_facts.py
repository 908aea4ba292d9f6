"""Assets, representations, media roots, activities and their snapshots."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from postproject import (
    ActivityId,
    ActivitySpec,
    AgentIdentity,
    AlreadyExistsError,
    AssetId,
    Availability,
    InvalidArgumentError,
    IoError,
    JobId,
    NotFoundError,
    Production,
    RepresentationId,
    RepresentationKind,
    ToolIdentity,
)
from postproject.base.files import read_facts
from tests.conftest import START

Media = Callable[..., Path]


def add(
    production: Production, path: Path, kind: RepresentationKind = RepresentationKind.ORIGINAL
) -> RepresentationId:
    with production.edit() as tx:
        asset = tx.create_asset(path.stem)
        rep = tx.add_representation(asset, kind, path)
        tx.commit()
    return rep


# --- identities -------------------------------------------------------------------------


@given(st.uuids())
def test_ids_round_trip_canonically(value: object) -> None:
    text = str(value)
    assert str(JobId.parse(text)) == text
    with pytest.raises(InvalidArgumentError):
        JobId.parse(text.upper())
    with pytest.raises(InvalidArgumentError):
        JobId.parse("{" + text + "}")


def test_id_types_are_distinct() -> None:
    text = str(JobId.new())
    assert JobId(text) != AssetId(text)
    assert len({JobId(text), AssetId(text)}) == 2
    with pytest.raises(TypeError):
        assert JobId(text) < AssetId(text)  # type: ignore[operator]


@pytest.mark.parametrize(
    "build",
    [
        lambda: ToolIdentity(""),
        lambda: ToolIdentity("x" * 257),
        lambda: ToolIdentity("t", version=""),
        lambda: ToolIdentity("t", uri="not a uri"),
        lambda: ToolIdentity("nul\x00"),
        lambda: AgentIdentity(""),
        lambda: AgentIdentity("é" * 129),
    ],
)
def test_identity_bounds(build: Callable[[], object]) -> None:
    with pytest.raises(InvalidArgumentError):
        build()


# --- representations ---------------------------------------------------------------------


def test_representation_records_size_mtime_and_fingerprint(production: Production, media: Media) -> None:
    path = media("A.mov", b"essence")
    rep_id = add(production, path)
    rep = production.representation(rep_id)
    facts = read_facts(path)
    assert rep.size == 7 and rep.kind is RepresentationKind.ORIGINAL
    assert Path(rep.path) == path.resolve()
    assert rep.fingerprints == (facts.fingerprint,)
    assert rep.fingerprints[0].algorithm == "sha256" and rep.fingerprints[0].version == 1
    assert rep.modified_at.timestamp() == pytest.approx(path.stat().st_mtime, abs=1e-3)


@given(st.binary(max_size=3 << 20))
def test_fingerprint_is_a_streaming_sha256(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    import hashlib

    path = tmp_path_factory.mktemp("fp") / "f.bin"
    path.write_bytes(data)
    assert read_facts(path).fingerprint.value == hashlib.sha256(data).digest()


@pytest.mark.skipif(not Path("/proc/version").is_file(), reason="needs Linux's /proc")
def test_a_file_longer_than_its_stat_says_is_hashed_to_its_end() -> None:
    """A small file is read with one ``read`` of one byte more than its stat's size, and only a
    short read ends it: a file that grew after the stat (here /proc/version, a regular file
    whose stat says 0 bytes) is read on to its end."""
    import hashlib

    path = Path("/proc/version")
    assert path.stat().st_size == 0
    data = path.read_bytes()
    assert data
    assert read_facts(path).fingerprint.value == hashlib.sha256(data).digest()


def test_missing_file_is_io_and_a_directory_is_invalid(
    production: Production, tmp_path: Path, media: Media
) -> None:
    with production.edit() as tx:
        asset = tx.create_asset()
        with pytest.raises(IoError, match="does not exist"):
            tx.add_representation(asset, RepresentationKind.ORIGINAL, tmp_path / "absent.mov")
        with pytest.raises(InvalidArgumentError, match="directory"):
            tx.add_representation(asset, RepresentationKind.ORIGINAL, tmp_path)
        with pytest.raises(NotFoundError):
            tx.add_representation(AssetId.new(), RepresentationKind.ORIGINAL, media("x"))
        tx.commit()


def test_media_roots_store_relative_paths(production: Production, tmp_path: Path, media: Media) -> None:
    path = media("shots/A.mov")
    with production.edit() as tx:
        tx.add_media_root("media", tmp_path / "media")
        with pytest.raises(AlreadyExistsError):
            tx.add_media_root("media")
        with pytest.raises(InvalidArgumentError):
            tx.add_media_root("a/b")
        asset = tx.create_asset()
        rep_abs = tx.add_representation(asset, RepresentationKind.ORIGINAL, path, root="media")
        rep_rel = tx.add_representation(asset, RepresentationKind.PROXY, "shots/A.mov", root="media")
        with pytest.raises(InvalidArgumentError, match="outside"):
            tx.add_representation(asset, RepresentationKind.PROXY, "../escape.mov", root="media")
        with pytest.raises(NotFoundError):
            tx.add_representation(asset, RepresentationKind.PROXY, "x", root="nowhere")
        tx.commit()
    for rep_id in (rep_abs, rep_rel):
        rep = production.representation(rep_id)
        assert (rep.root, rep.path.as_posix()) == ("media", "shots/A.mov")
        assert production.resolve(rep) == tmp_path / "media" / "shots" / "A.mov"
    assert [r.name for r in production.media_roots()] == ["media"]

    moved = tmp_path / "elsewhere"
    (tmp_path / "media").rename(moved)
    assert production.availability(rep_abs) is Availability.OFFLINE
    remapped = Production.open(production.location, root_map={"media": moved})
    with remapped:
        assert remapped.availability(rep_abs) is Availability.ONLINE


def test_observe_records_only_content_changes(production: Production, media: Media) -> None:
    path = media("A.mov", b"one")
    rep = add(production, path)
    head = production.latest_revision()
    os.utime(path, (1, 1))
    with production.edit() as tx:
        assert tx.observe_representation(rep) is False
        assert tx.commit().revision is None
    assert production.latest_revision() == head
    path.write_bytes(b"two")
    with production.edit() as tx:
        assert tx.observe_representation(rep) is True
        receipt = tx.commit()
    assert receipt.revision is not None
    (revision,) = production.changes_since(receipt.revision.sequence - 1)
    assert [e.kind for e in revision.events] == ["representation_fingerprint_observed"]
    assert production.representation(rep).fingerprints == (read_facts(path).fingerprint,)
    assert production.representation(rep).size == 3


def test_representation_pages(production: Production, media: Media) -> None:
    reps = sorted(add(production, media(f"{i}.mov", bytes([i]))) for i in range(5))
    seen, cursor = [], None
    while True:
        page = production.representations(limit=2, cursor=cursor, kind=RepresentationKind.ORIGINAL)
        seen += [r.id for r in page.items]
        if (cursor := page.next_cursor) is None:
            break
    assert seen == reps
    assert production.representations(kind=RepresentationKind.PROXY).items == ()
    asset = production.representation(reps[0]).asset_id
    assert [r.id for r in production.representations(asset_id=asset).items] == [reps[0]]


# --- activities -----------------------------------------------------------------------------


def test_activity_validation(production: Production, media: Media) -> None:
    a, b = add(production, media("a", b"a")), add(production, media("b", b"b"))
    with pytest.raises(InvalidArgumentError, match="at least one output"):
        ActivitySpec("org.x:t", inputs=(a,))
    with pytest.raises(InvalidArgumentError, match="both an input and an output"):
        ActivitySpec("org.x:t", inputs=(a,), outputs=(a,))
    with pytest.raises(InvalidArgumentError, match="twice"):
        ActivitySpec("org.x:t", inputs=((a, "org.x:r"), (a, "org.x:r")), outputs=(b,))
    ActivitySpec("org.x:t", inputs=((a, "org.x:r"), (a, "org.x:s")), outputs=(b,))
    with pytest.raises(InvalidArgumentError, match="before"):
        ActivitySpec("org.x:t", outputs=(b,), started_at=START, finished_at=START - timedelta(seconds=1))
    with pytest.raises(InvalidArgumentError, match="namespaced"):
        ActivitySpec("transcode", outputs=(b,))
    with production.edit() as tx, pytest.raises(NotFoundError):
        tx.create_activity(ActivitySpec("org.x:t", inputs=(RepresentationId.new(),), outputs=(b,)))


def test_activity_round_trip_with_snapshots(production: Production, media: Media) -> None:
    a, b = add(production, media("a", b"a")), add(production, media("b", b"b"))
    spec = ActivitySpec(
        "org.x:transcode",
        inputs=((a, "org.x:picture"),),
        outputs=(b,),
        tool=ToolIdentity("ffmpeg", "7.1", "https://ffmpeg.org/"),
        agent=AgentIdentity("node-3"),
        started_at=START,
        finished_at=START + timedelta(seconds=3),
    )
    with production.edit() as tx:
        activity_id = tx.create_activity(spec)
        receipt = tx.commit()
    assert receipt.revision is not None
    activity = production.activity(activity_id)
    assert (activity.kind, activity.tool, activity.agent) == (spec.kind, spec.tool, spec.agent)
    assert (activity.started_at, activity.finished_at) == (START, START + timedelta(seconds=3))
    (edge,) = activity.inputs
    assert (edge.representation_id, edge.role) == (a, "org.x:picture")
    assert edge.snapshot is not None and edge.snapshot.revision_sequence == receipt.revision.sequence
    assert edge.snapshot.fingerprints == production.representation(a).fingerprints
    assert production.producing_activities(b) == (activity_id,)
    assert production.consuming_activities(a) == (activity_id,)
    assert production.producing_activities(a) == ()
    with pytest.raises(NotFoundError):
        production.activity(ActivityId.new())


def test_snapshots_are_taken_at_commit(production: Production, media: Media) -> None:
    path = media("a", b"first")
    a, b = add(production, path), add(production, media("b", b"b"))
    with production.edit() as tx:
        activity_id = tx.create_activity(ActivitySpec("org.x:t", inputs=(a,), outputs=(b,)))
        path.write_bytes(b"second")
        tx.observe_representation(a)
        tx.commit()
    snapshot = production.activity(activity_id).inputs[0].snapshot
    assert snapshot is not None and snapshot.fingerprints == (read_facts(path).fingerprint,)


def test_provenance_cycles_are_refused(production: Production, media: Media) -> None:
    a, b, c = (add(production, media(n, n.encode())) for n in "abc")
    with production.edit() as tx:
        tx.create_activity(ActivitySpec("org.x:t", inputs=(a,), outputs=(b,)))
        tx.create_activity(ActivitySpec("org.x:t", inputs=(b,), outputs=(c,)))
        with pytest.raises(InvalidArgumentError, match="cycle"):
            tx.create_activity(ActivitySpec("org.x:t", inputs=(c,), outputs=(a,)))
        tx.commit()
    assert len(production.activities().items) == 2


def test_a_representation_can_be_observed_in_the_edit_that_added_it(
    production: Production, media: Media
) -> None:
    path = media("fresh.mov", b"one")
    with production.edit() as tx:
        asset = tx.create_asset()
        rep = tx.add_representation(asset, RepresentationKind.ORIGINAL, path)
        assert tx.observe_representation(rep) is False
        path.write_bytes(b"two")
        assert tx.observe_representation(rep) is True
        tx.commit()
    assert production.representation(rep).fingerprints == (read_facts(path).fingerprint,)
