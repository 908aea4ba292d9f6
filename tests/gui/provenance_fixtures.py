"""Provenance fixtures for GUI tests, screenshots and the benchmark.

:class:`Chain` builds a real production through the public core API: an original, a proxy
made from it by a job (claimed, completed with an activity that records tool and
parameters), a render made from the proxy (role ``picture``) and a thumbnail made from the
original. :func:`synthetic_graph` makes a :class:`ProvenanceGraph` value of any size
without a database (for scale tests and benchmarks), deterministically from a seed.
"""

from __future__ import annotations

import random
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from postproject import (
    EXECUTOR_VOCABULARY,
    ActivityId,
    ActivityRef,
    ActivitySpec,
    AgentIdentity,
    ArtifactKnowledge,
    ArtifactState,
    AssetId,
    Availability,
    JobId,
    JobRef,
    JobRequest,
    JobState,
    Production,
    Property,
    ProvenanceGraph,
    RepresentationId,
    RepresentationKind,
    ToolIdentity,
)
from postproject.knowledge.provenance import (
    ActivityNode,
    JobNode,
    ProvenanceEdge,
    ProvenanceNode,
    RepresentationNode,
)

PROXY_KIND = "org.postproject:generate-proxy"
RENDER_KIND = "com.northlight:render-review"
THUMB_KIND = "org.postproject:generate-thumbnail"
FFMPEG = ToolIdentity("ffmpeg", "6.1.1", "https://ffmpeg.org/")
RESOLVE = ToolIdentity("Resolve render", "19.0")
PICTURE = "com.northlight:picture"
PROFILE = Property(EXECUTOR_VOCABULARY, "profile")
ROOTS = ("camera", "proxies", "renders")


class Chain:
    """original -> (job, activity) -> proxy -> (activity) -> render; original -> thumbnail.

    Files live under three media roots in ``media``: ``camera``, ``proxies`` and ``renders``.
    """

    def __init__(self, production: Production, media: Path) -> None:
        self.production, self.media = production, media
        for root in ROOTS:
            (media / root).mkdir(parents=True, exist_ok=True)
        self.original_file = media / "camera" / "A001_C002.mov"
        self.original_file.write_bytes(b"camera original v1" * 32)
        with production.edit() as tx:
            for root in ROOTS:
                tx.add_media_root(root, media / root)
            self.asset = tx.create_asset("A001_C002")
            self.original = tx.add_representation(
                self.asset, RepresentationKind.ORIGINAL, self.original_file, root="camera"
            )
            self.job = tx.request_job(
                JobRequest(PROXY_KIND, (self.original,), self.asset, RepresentationKind.PROXY, "proxies")
            )
            tx.add_metadata(JobRef(self.job), PROFILE, "proxy-720p")
            tx.commit()
        with production.edit() as tx:
            lease = tx.claim_job_lease(self.job, FFMPEG, timedelta(minutes=5), AgentIdentity("render-07"))
            tx.commit()
        proxy_file = media / "proxies" / "A001_C002_proxy.mov"
        proxy_file.write_bytes(b"proxy made from v1" * 16)
        with lease, production.edit() as tx:
            self.proxy = tx.add_representation(
                self.asset, RepresentationKind.PROXY, proxy_file, root="proxies"
            )
            self.proxy_activity = tx.create_activity(
                ActivitySpec(PROXY_KIND, inputs=(self.original,), outputs=(self.proxy,), tool=FFMPEG,
                             agent=AgentIdentity("render-07"))
            )  # fmt: skip
            tx.add_metadata(ActivityRef(self.proxy_activity), PROFILE, "proxy-720p")
            tx.complete_job_lease(lease, self.proxy, self.proxy_activity)
            tx.commit()
        self.render_file = media / "renders" / "A001_C002_review.mov"
        self.render_file.write_bytes(b"review render" * 16)
        thumb_file = media / "renders" / "A001_C002.jpg"
        thumb_file.write_bytes(b"thumbnail" * 8)
        with production.edit() as tx:
            self.render = tx.add_representation(
                self.asset, RepresentationKind.DERIVED, self.render_file, root="renders"
            )
            self.render_activity = tx.create_activity(
                ActivitySpec(
                    RENDER_KIND, inputs=((self.proxy, PICTURE),), outputs=(self.render,), tool=RESOLVE
                )
            )
            tx.add_metadata(
                ActivityRef(self.render_activity), Property(EXECUTOR_VOCABULARY, "lut"), "show-lut-v3"
            )
            tx.add_metadata(ActivityRef(self.render_activity), Property(EXECUTOR_VOCABULARY, "burn_in"), True)
            self.thumbnail = tx.add_representation(
                self.asset, RepresentationKind.DERIVED, thumb_file, root="renders"
            )
            self.thumb_activity = tx.create_activity(
                ActivitySpec(THUMB_KIND, inputs=(self.original,), outputs=(self.thumbnail,), tool=FFMPEG)
            )
            tx.add_metadata(ActivityRef(self.thumb_activity), PROFILE, "thumbnail-640")
            tx.commit()

    def change_original(self) -> None:
        """Rewrite the original's file and record the new fingerprint (its descendants go stale)."""
        self.original_file.write_bytes(b"camera original v2, regraded" * 32)
        with self.production.edit() as tx:
            assert tx.observe_representation(self.original)
            tx.commit()

    def graph(self, focus: RepresentationId | None = None) -> ProvenanceGraph:
        return self.production.provenance(focus or self.proxy)

    def knowledge(self, graph: ProvenanceGraph) -> dict[RepresentationId, ArtifactKnowledge]:
        return {
            n.id: self.production.evaluate_artifact(n.id)
            for n in graph.nodes
            if isinstance(n, RepresentationNode)
        }


def synthetic_graph(size: int, *, seed: int = 7, truncated: bool = False, depth: int = 5) -> ProvenanceGraph:
    """A graph value of ``size`` nodes shaped like a real neighbourhood (~1.3 edges per node):
    originals, activities reading 1-3 representations (sometimes with a role) at most ``depth``
    derivations from an original, half of them completed by a job, each writing 1-2
    representations; states and availability vary. Deterministic for a seed."""
    rng = random.Random(seed)
    nodes: list[ProvenanceNode] = []
    edges: list[ProvenanceEdge] = []
    reps: list[tuple[RepresentationId, int]] = []  # id, derivations from an original
    assets = [AssetId(rng.randbytes(16)) for _ in range(max(1, size // 12))]
    names = {a: f"{'AB'[i % 2]}{i // 9 + 1:03d}_C{i % 9 + 1:03d}" for i, a in enumerate(assets)}
    started = datetime(2026, 1, 1, 9, tzinfo=UTC)

    def rep(kind: RepresentationKind, state: ArtifactState, generation: int) -> RepresentationId:
        rep_id = RepresentationId(rng.randbytes(16))
        asset = rng.choice(assets)
        online = Availability.OFFLINE if rng.random() < 0.08 else Availability.ONLINE
        path = Path(f"{names[asset]}_{kind.value}_{len(nodes):04d}.mov")
        root = "proxies" if kind is RepresentationKind.PROXY else None
        nodes.append(RepresentationNode(rep_id, asset, names[asset], kind, path, root, online, state))
        reps.append((rep_id, generation))
        return rep_id

    while len(nodes) < size:
        usable = [r for r in reps[-40:] if r[1] < depth]
        if len(usable) < 3 or rng.random() < 0.15:
            rep(RepresentationKind.ORIGINAL, ArtifactState.INDETERMINATE, 0)
            continue
        activity = ActivityId(rng.randbytes(16))
        kind = rng.choice((PROXY_KIND, THUMB_KIND, RENDER_KIND))
        nodes.append(
            ActivityNode(activity, kind, rng.choice((FFMPEG, RESOLVE, None)), None, started, started)
        )
        inputs = rng.sample(usable, rng.randint(1, 3))
        for source, _ in inputs:
            edges.append(ProvenanceEdge(source, activity, "used", PICTURE if rng.random() < 0.3 else None))
        if rng.random() < 0.5 and len(nodes) < size:
            job = JobId(rng.randbytes(16))
            nodes.append(JobNode(job, kind, JobState.SUCCEEDED, activity))
            edges.append(ProvenanceEdge(job, activity, "completed"))
        for _ in range(rng.randint(1, 2)):
            if len(nodes) >= size:
                break
            drawn = (
                ArtifactState.CURRENT,
                ArtifactState.INDETERMINATE,
                ArtifactState.STALE,
                ArtifactState.DIVERGED,
            )
            state = rng.choices(drawn, weights=(6, 1, 3, 1))[0]
            kind_out = rng.choice((RepresentationKind.PROXY, RepresentationKind.DERIVED))
            out = rep(kind_out, state, 1 + max(g for _, g in inputs))
            edges.append(ProvenanceEdge(activity, out, "generated"))
    focus = next(n.id for n in nodes if isinstance(n, RepresentationNode))
    return ProvenanceGraph(focus, tuple(nodes), tuple(edges), truncated)


def add_ambiguous(chain: Chain) -> RepresentationId:
    """A conform made from the original by two activities (so regenerating it is ambiguous)."""
    conform_file = chain.media / "renders" / "A001_C002_conform.mov"
    conform_file.write_bytes(b"conform" * 16)
    with chain.production.edit() as tx:
        conform = tx.add_representation(chain.asset, RepresentationKind.DERIVED, conform_file, root="renders")
        for _ in range(2):
            tx.create_activity(
                ActivitySpec(
                    "com.northlight:conform-edl", inputs=(chain.original,), outputs=(conform,), tool=FFMPEG
                )
            )
        tx.commit()
    return conform


def complete_thumbnail_of_proxy(chain: Chain) -> tuple[JobId, RepresentationId]:
    """A job that makes a new proxy-derived representation, claimed and completed (a live change)."""
    production = chain.production
    with production.edit() as tx:
        job = tx.request_job(
            JobRequest(PROXY_KIND, (chain.proxy,), chain.asset, RepresentationKind.OPTIMIZED)
        )
        tx.commit()
    with production.edit() as tx:
        lease = tx.claim_job_lease(job, FFMPEG, timedelta(minutes=5), AgentIdentity("render-02"))
        tx.commit()
    out = chain.media / "A001_C002_optimized.mov"
    out.write_bytes(b"optimized")
    with lease, production.edit() as tx:
        rep = tx.add_representation(chain.asset, RepresentationKind.OPTIMIZED, out)
        activity = tx.create_activity(
            ActivitySpec(PROXY_KIND, inputs=(chain.proxy,), outputs=(rep,), tool=FFMPEG)
        )
        tx.complete_job_lease(lease, rep, activity)
        tx.commit()
    return job, rep


CHANGE_SCRIPT = """
import sys
from pathlib import Path
from postproject import Production, RepresentationId
path, original, file = sys.argv[1], RepresentationId.parse(sys.argv[2]), Path(sys.argv[3])
file.write_bytes(b"camera original v3, from another process" * 32)
with Production.open(path) as production, production.edit(origin="conform 1.2", message="Re-delivered") as tx:
    assert tx.observe_representation(original)
    tx.commit()
"""


def change_original_elsewhere(chain: Chain) -> None:
    """Rewrite the original and record its new fingerprint in a separate Python process."""
    subprocess.run(
        [
            sys.executable,
            "-c",
            CHANGE_SCRIPT,
            chain.production.location,
            str(chain.original),
            str(chain.original_file),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )


def supersede_proxy(chain: Chain) -> RepresentationId:
    """Change the original, regenerate the proxy through its plan (``enqueue_plans``), claim
    and complete that job: the new proxy supersedes the old one. Returns the new proxy."""
    chain.change_original()
    production = chain.production
    plans = production.plan_regeneration([chain.proxy])
    with production.edit() as tx:
        (job,) = tx.enqueue_plans(plans)
        tx.commit()
    with production.edit() as tx:
        lease = tx.claim_job_lease(job, FFMPEG, timedelta(minutes=5), AgentIdentity("render-07"))
        tx.commit()
    out = chain.media / "proxies" / "A001_C002_proxy_v2.mov"
    out.write_bytes(b"proxy made from v2" * 16)
    with lease, production.edit() as tx:
        rep = tx.add_representation(chain.asset, RepresentationKind.PROXY, out.name, root="proxies")
        activity = tx.create_activity(
            ActivitySpec(PROXY_KIND, inputs=(chain.original,), outputs=(rep,), tool=FFMPEG)
        )
        tx.add_metadata(ActivityRef(activity), PROFILE, "proxy-720p")
        tx.complete_job_lease(lease, rep, activity)
        tx.commit()
    assert production.representation(chain.proxy).superseded_by == rep
    return rep
