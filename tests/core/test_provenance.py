"""The provenance graph read model: bounded neighbourhoods with knowledge, availability and jobs."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from postproject import (
    ActivitySpec,
    AgentIdentity,
    ArtifactState,
    Availability,
    InvalidArgumentError,
    JobRequest,
    JobState,
    NotFoundError,
    Production,
    ProvenanceGraph,
    RepresentationId,
    RepresentationKind,
    ToolIdentity,
)
from postproject.knowledge.provenance import ActivityNode, JobNode, ProvenanceEdge, RepresentationNode

Media = Callable[..., Path]
TOOL = ToolIdentity("Example Transcoder", "3.2")
AGENT = AgentIdentity("render-node-07")


class Graph:
    """original -(job)-> proxy -> render, plus an unrelated clip."""

    def __init__(self, production: Production, media: Media) -> None:
        self.media = media
        with production.edit() as tx:
            self.asset = tx.create_asset("A001")
            self.original = tx.add_representation(
                self.asset, RepresentationKind.ORIGINAL, media("o.mov", b"o")
            )
            self.other = tx.add_representation(self.asset, RepresentationKind.ORIGINAL, media("x.mov", b"x"))
            self.folder = media("x.mov", b"x").parent
            self.job = tx.request_job(
                JobRequest(
                    "org.example:generate-proxy", (self.original,), self.asset, RepresentationKind.PROXY
                )
            )
            tx.commit()
        with production.edit() as tx:
            lease = tx.claim_job_lease(self.job, TOOL, timedelta(minutes=1), agent=AGENT)
            self.proxy = tx.add_representation(self.asset, RepresentationKind.PROXY, media("p.mov", b"p"))
            self.proxy_activity = tx.create_activity(
                ActivitySpec(
                    "org.example:generate-proxy",
                    inputs=(self.original,),
                    outputs=(self.proxy,),
                    tool=TOOL,
                    agent=AGENT,
                )
            )
            tx.complete_job_lease(lease, self.proxy, self.proxy_activity)
            tx.commit()
        with production.edit() as tx:
            self.render = tx.add_representation(self.asset, RepresentationKind.DERIVED, media("r.mov", b"r"))
            self.render_activity = tx.create_activity(
                ActivitySpec(
                    "org.example:render",
                    inputs=((self.proxy, "org.example:picture"),),
                    outputs=(self.render,),
                )
            )
            tx.commit()


@pytest.fixture
def graph(production: Production, media: Media) -> Graph:
    return Graph(production, media)


def kinds(view: ProvenanceGraph) -> dict[str, int]:
    counts: dict[str, int] = {}
    for node in view.nodes:
        counts[type(node).__name__] = counts.get(type(node).__name__, 0) + 1
    return counts


def test_neighbourhood_of_the_proxy(production: Production, graph: Graph) -> None:
    view = production.provenance(graph.proxy)
    assert view.focus == graph.proxy
    assert not view.truncated
    assert kinds(view) == {"RepresentationNode": 3, "ActivityNode": 2, "JobNode": 1}
    proxy = view.node(graph.proxy)
    assert isinstance(proxy, RepresentationNode)
    assert (proxy.kind, proxy.asset_id, proxy.asset_name) == (RepresentationKind.PROXY, graph.asset, "A001")
    assert proxy.availability is Availability.ONLINE
    assert proxy.state is ArtifactState.CURRENT
    activity = view.node(graph.proxy_activity)
    assert isinstance(activity, ActivityNode)
    assert (activity.kind, activity.tool, activity.agent) == ("org.example:generate-proxy", TOOL, AGENT)
    job = view.node(graph.job)
    assert isinstance(job, JobNode)
    assert (job.state, job.activity_id) == (JobState.SUCCEEDED, graph.proxy_activity)
    assert set(view.edges) == {
        ProvenanceEdge(graph.original, graph.proxy_activity, "used"),
        ProvenanceEdge(graph.proxy_activity, graph.proxy, "generated"),
        ProvenanceEdge(graph.proxy, graph.render_activity, "used", "org.example:picture"),
        ProvenanceEdge(graph.render_activity, graph.render, "generated"),
        ProvenanceEdge(graph.job, graph.proxy_activity, "completed"),
    }
    assert graph.other not in {n.id for n in view.nodes}
    with pytest.raises(KeyError):
        view.node(graph.other)


def test_knowledge_and_availability_are_shown(production: Production, graph: Graph) -> None:
    graph.media("o.mov", b"new take")
    with production.edit() as tx:
        tx.observe_representation(graph.original)
        tx.commit()
    (graph.folder / "r.mov").unlink()
    view = production.provenance(graph.render, upstream=2, downstream=0)
    states = {n.id: n.state for n in view.nodes if isinstance(n, RepresentationNode)}
    assert states == {
        graph.original: ArtifactState.INDETERMINATE,
        graph.proxy: ArtifactState.STALE,
        graph.render: ArtifactState.STALE,
    }
    render = view.node(graph.render)
    assert isinstance(render, RepresentationNode)
    assert render.availability is Availability.OFFLINE
    unchecked = production.provenance(graph.render, check_files=False)
    assert all(n.availability is None for n in unchecked.nodes if isinstance(n, RepresentationNode))


def test_hops_and_limits(production: Production, graph: Graph) -> None:
    alone = production.provenance(graph.proxy, upstream=0, downstream=0)
    assert [n.id for n in alone.nodes] == [graph.proxy]
    assert alone.edges == ()
    up = production.provenance(graph.proxy, upstream=1, downstream=0)
    assert kinds(up) == {"RepresentationNode": 2, "ActivityNode": 1, "JobNode": 1}
    small = production.provenance(graph.proxy, limit=3)
    assert small.truncated
    assert len(small.nodes) <= 3
    ids = {n.id for n in small.nodes}
    assert all(e.source in ids and e.target in ids for e in small.edges)
    assert not production.provenance(graph.original, downstream=1, upstream=5).truncated


def test_provenance_arguments(production: Production, graph: Graph) -> None:
    with pytest.raises(NotFoundError):
        production.provenance(RepresentationId.new())
    with pytest.raises(InvalidArgumentError):
        production.provenance(graph.proxy, upstream=65)
    with pytest.raises(InvalidArgumentError):
        production.provenance(graph.proxy, downstream=-1)
    with pytest.raises(InvalidArgumentError):
        production.provenance(graph.proxy, limit=0)
    with pytest.raises(TypeError):
        production.provenance(graph.proxy, upstream=True)
