"""Artifact knowledge (notes §5.1, checks 58-60): staleness from recorded provenance."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from postproject import (
    ActivityId,
    ActivitySpec,
    ArtifactState,
    AssetId,
    InvalidArgumentError,
    NotFoundError,
    Production,
    RepresentationId,
    RepresentationKind,
    ToolIdentity,
)
from postproject.knowledge import (
    FingerprintChanged,
    FingerprintEvidenceMissing,
    ProducingActivityAmbiguous,
    ProducingActivityMissing,
    SnapshotAbsent,
    TraversalTruncated,
    UpstreamNotCurrent,
    describe,
    worst,
)

Media = Callable[..., Path]
TOOL = ToolIdentity("Example Transcoder", "3.2")


class Chain:
    """original -> proxy -> render, each step a committed activity; files under tmp media/."""

    def __init__(self, production: Production, media: Media, name: str = "A001") -> None:
        self.production = production
        self.media = media
        self.name = name
        with production.edit() as tx:
            self.asset = tx.create_asset(name)
            self.original = tx.add_representation(self.asset, RepresentationKind.ORIGINAL, self.file("o"))
            tx.commit()
        self.proxy, self.proxy_activity = self.derive(
            self.original, RepresentationKind.PROXY, "p", self.asset
        )
        self.render, self.render_activity = self.derive(
            self.proxy, RepresentationKind.DERIVED, "r", self.asset
        )

    def file(self, suffix: str, content: bytes | None = None) -> Path:
        return self.media(f"{self.name}_{suffix}.mov", content or f"{self.name} {suffix}".encode())

    def derive(
        self, source: RepresentationId, kind: RepresentationKind, suffix: str, asset: AssetId
    ) -> tuple[RepresentationId, ActivityId]:
        with self.production.edit() as tx:
            rep = tx.add_representation(asset, kind, self.file(suffix))
            activity = tx.create_activity(
                ActivitySpec(f"org.example:make-{suffix}", inputs=(source,), outputs=(rep,), tool=TOOL)
            )
            tx.commit()
        return rep, activity

    def change(self, rep: RepresentationId, suffix: str, content: bytes) -> None:
        """Rewrite a file and record the new fingerprint in its own revision."""
        self.file(suffix, content)
        with self.production.edit() as tx:
            assert tx.observe_representation(rep)
            tx.commit()


@pytest.fixture
def chain(production: Production, media: Media) -> Chain:
    return Chain(production, media)


def state(production: Production, rep: RepresentationId, **bounds: int) -> ArtifactState:
    return production.evaluate_artifact(rep, **bounds).state


def raw(production: Production, sql: str, params: tuple[object, ...]) -> None:
    """Write legacy-shaped rows directly (migrated data the public API cannot create)."""
    with sqlite3.connect(production.path) as conn:
        conn.execute(sql, params)


def test_severity_order() -> None:
    assert [s.severity for s in ArtifactState] == [0, 1, 2, 3, 4]
    assert worst(ArtifactState.STALE, ArtifactState.INDETERMINATE) is ArtifactState.STALE
    assert worst(ArtifactState.STALE, ArtifactState.DIVERGED) is ArtifactState.DIVERGED
    assert worst() is ArtifactState.CURRENT


def test_fresh_chain_is_current_and_source_media_is_indeterminate(chain: Chain) -> None:
    production = chain.production
    before = production.latest_revision()
    render = production.evaluate_artifact(chain.render)
    assert render.state is ArtifactState.CURRENT
    assert render.reasons == ()
    assert render.visited_representations == 2  # the render and the proxy; the original has no producer
    assert not render.truncated
    original = production.evaluate_artifact(chain.original)
    assert original.state is ArtifactState.INDETERMINATE
    assert original.reasons == (ProducingActivityMissing(chain.original),)
    assert production.latest_revision() == before  # read-only


def test_changed_input_makes_the_proxy_stale_and_the_render_stale_upstream(chain: Chain) -> None:
    production = chain.production
    old = production.representation(chain.original).fingerprints[0]
    chain.file("o", b"regraded original")
    assert state(production, chain.proxy) is ArtifactState.CURRENT  # unrecorded changes are not noticed
    chain.change(chain.original, "o", b"regraded original")
    new = production.representation(chain.original).fingerprints[0]

    proxy = production.evaluate_artifact(chain.proxy)
    changed = FingerprintChanged("input", chain.original, "sha256", 1, old.value, new.value)
    assert proxy.state is ArtifactState.STALE
    assert proxy.reasons == (changed,)
    assert changed.code == "fingerprint_changed"

    render = production.evaluate_artifact(chain.render)
    assert render.state is ArtifactState.STALE
    assert render.reasons == (UpstreamNotCurrent(chain.proxy, ArtifactState.STALE), changed)
    assert render.reasons[0].code == "upstream_not_current"
    assert "is stale" in describe(render.reasons[0])


def test_changed_output_is_diverged_and_makes_its_consumer_stale(chain: Chain) -> None:
    production = chain.production
    chain.change(chain.proxy, "p", b"hand-edited proxy")
    proxy = production.evaluate_artifact(chain.proxy)
    assert proxy.state is ArtifactState.DIVERGED
    (reason,) = proxy.reasons
    assert isinstance(reason, FingerprintChanged)
    assert reason.edge == "output"
    render = production.evaluate_artifact(chain.render)
    assert render.state is ArtifactState.STALE
    assert UpstreamNotCurrent(chain.proxy, ArtifactState.DIVERGED) in render.reasons
    assert any(isinstance(r, FingerprintChanged) and r.edge == "input" for r in render.reasons)


def test_activity_without_snapshots_is_indeterminate(chain: Chain) -> None:
    raw(
        chain.production,
        "UPDATE activity_edges SET snapshot_sequence = NULL, snapshot_fingerprints = NULL WHERE activity_id = ?",
        (chain.proxy_activity.bytes,),
    )
    proxy = chain.production.evaluate_artifact(chain.proxy)
    assert proxy.state is ArtifactState.INDETERMINATE
    assert proxy.reasons == (SnapshotAbsent("output", chain.proxy), SnapshotAbsent("input", chain.original))
    render = chain.production.evaluate_artifact(chain.render)
    assert render.state is ArtifactState.INDETERMINATE
    assert render.reasons[0] == UpstreamNotCurrent(chain.proxy, ArtifactState.INDETERMINATE)


def test_fingerprint_evidence_missing(chain: Chain) -> None:
    raw(
        chain.production,
        "DELETE FROM representation_fingerprints WHERE representation_id = ?",
        (chain.original.bytes,),
    )
    proxy = chain.production.evaluate_artifact(chain.proxy)
    assert proxy.state is ArtifactState.INDETERMINATE
    assert proxy.reasons == (FingerprintEvidenceMissing("input", chain.original, "sha256", 1, "snapshot"),)


def test_two_producers_are_ambiguous_and_make_consumers_indeterminate(chain: Chain) -> None:
    production = chain.production
    with production.edit() as tx:
        tx.create_activity(
            ActivitySpec("org.example:again", inputs=(chain.original,), outputs=(chain.proxy,))
        )
        tx.commit()
    proxy = production.evaluate_artifact(chain.proxy)
    assert proxy.state is ArtifactState.INDETERMINATE
    assert proxy.reasons == (ProducingActivityAmbiguous(chain.proxy, 2),)
    render = production.evaluate_artifact(chain.render)
    assert render.state is ArtifactState.INDETERMINATE
    assert render.reasons == (
        UpstreamNotCurrent(chain.proxy, ArtifactState.INDETERMINATE),
        ProducingActivityAmbiguous(chain.proxy, 2),
    )


def long_chain(production: Production, media: Media, length: int) -> list[RepresentationId]:
    chain = Chain(production, media, "deep")
    reps = [chain.original, chain.proxy, chain.render]
    for step in range(length - 3):
        reps.append(chain.derive(reps[-1], RepresentationKind.DERIVED, f"d{step}", chain.asset)[0])
    return reps


def test_truncation_is_never_current(production: Production, media: Media) -> None:
    reps = long_chain(production, media, 6)
    assert state(production, reps[-1]) is ArtifactState.CURRENT
    deep = production.evaluate_artifact(reps[-1], max_depth=2)
    assert deep.state is ArtifactState.INDETERMINATE
    assert deep.truncated
    assert TraversalTruncated("depth") in deep.reasons
    assert deep.reasons[0] == UpstreamNotCurrent(reps[-2], ArtifactState.INDETERMINATE)
    wide = production.evaluate_artifact(reps[-1], max_representations=3)
    assert wide.state is ArtifactState.INDETERMINATE
    assert wide.truncated
    assert wide.visited_representations == 3
    assert TraversalTruncated("representations") in wide.reasons
    exact = production.evaluate_artifact(reps[-1], max_depth=4, max_representations=5)
    assert exact.state is ArtifactState.CURRENT  # 5 producers, depths 0-4: just fits
    assert not exact.truncated


def test_evaluation_arguments(chain: Chain) -> None:
    production = chain.production
    with pytest.raises(NotFoundError):
        production.evaluate_artifact(RepresentationId.new())
    with pytest.raises(InvalidArgumentError):
        production.evaluate_artifact(chain.proxy, max_depth=0)
    with pytest.raises(InvalidArgumentError):
        production.evaluate_artifact(chain.proxy, max_depth=65)
    with pytest.raises(InvalidArgumentError):
        production.evaluate_artifact(chain.proxy, max_representations=1001)
    with pytest.raises(TypeError):
        production.evaluate_artifact(chain.proxy, max_depth=True)
    with pytest.raises(InvalidArgumentError):
        production.evaluate_artifact(str(chain.proxy))  # type: ignore[arg-type]


def test_stale_pages_bound_candidates_and_may_be_empty(production: Production, media: Media) -> None:
    chains = [Chain(production, media, f"A00{i}") for i in range(3)]
    chains[1].change(chains[1].original, "o", b"new take")
    stale = {chains[1].proxy, chains[1].render}
    candidates = sorted(rep for c in chains for rep in (c.proxy, c.render))
    found: list[RepresentationId] = []
    pages = []
    cursor = None
    while True:
        page = production.stale_artifacts(limit=1, cursor=cursor)
        pages.append(page)
        found.extend(k.representation_id for k in page.items)
        assert all(k.state is ArtifactState.STALE for k in page.items)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert len(pages) == len(candidates)
    assert any(not p.items and p.next_cursor for p in pages)  # check 60
    assert sorted(found) == sorted(stale)
    assert {k.representation_id for k in production.stale_artifacts(limit=10).items} == stale


def test_stale_from_a_source_and_diverged_items(production: Production, media: Media) -> None:
    first, second = Chain(production, media, "A001"), Chain(production, media, "A002")
    first.change(first.original, "o", b"new take")
    second.change(second.proxy, "p", b"edited")
    page = production.stale_artifacts(source=first.original)
    assert [k.representation_id for k in page.items] == sorted([first.proxy, first.render])
    assert not page.truncated
    everything = {k.representation_id: k.state for k in production.stale_artifacts().items}
    assert everything[second.proxy] is ArtifactState.DIVERGED
    assert everything[second.render] is ArtifactState.STALE
    assert production.stale_artifacts(source=second.render).items == ()


def test_stale_cursors_are_bound_to_their_query(production: Production, media: Media) -> None:
    chain = Chain(production, media)
    cursor = production.stale_artifacts(limit=1).next_cursor
    assert cursor is not None
    with pytest.raises(InvalidArgumentError):
        production.stale_artifacts(limit=1, cursor=cursor, source=chain.original)
    sourced = production.stale_artifacts(limit=1, source=chain.original).next_cursor
    assert sourced is not None
    with pytest.raises(InvalidArgumentError):
        production.stale_artifacts(limit=1, cursor=sourced)
    with pytest.raises(InvalidArgumentError):
        production.stale_artifacts(limit=1, cursor=cursor[:-2] + "00")
    with pytest.raises(InvalidArgumentError):
        production.stale_artifacts(limit=1001)
    with pytest.raises(NotFoundError):
        production.stale_artifacts(source=RepresentationId.new())
