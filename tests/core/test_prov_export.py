"""W3C PROV export: the document validates by round-tripping through the prov package's reader."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import prov.model as pm
import pytest

from postproject import (
    ActivitySpec,
    AgentIdentity,
    InvalidArgumentError,
    JobRequest,
    NotFoundError,
    Production,
    RepresentationId,
    RepresentationKind,
    ToolIdentity,
)
from postproject.knowledge.prov import export, serialize

Media = Callable[..., Path]
TOOL = ToolIdentity("Example Transcoder", "3.2", "https://example.com/transcoder")
AGENT = AgentIdentity("render-node-07")


class Lineage:
    """original -(job)-> proxy; (proxy, audio) -> render; an unrelated original."""

    def __init__(self, production: Production, media: Media) -> None:
        with production.edit() as tx:
            asset = tx.create_asset("A001")
            self.original = tx.add_representation(asset, RepresentationKind.ORIGINAL, media("o.mov", b"o"))
            self.audio = tx.add_representation(asset, RepresentationKind.ORIGINAL, media("a.wav", b"a"))
            self.unrelated = tx.add_representation(asset, RepresentationKind.ORIGINAL, media("u.mov", b"u"))
            self.job = tx.request_job(
                JobRequest("org.example:generate-proxy", (self.original,), asset, RepresentationKind.PROXY)
            )
            tx.commit()
        with production.edit() as tx:
            lease = tx.claim_job_lease(self.job, TOOL, timedelta(minutes=1), agent=AGENT)
            self.proxy = tx.add_representation(asset, RepresentationKind.PROXY, media("p.mov", b"p"))
            self.proxy_activity = tx.create_activity(
                ActivitySpec(
                    "org.example:generate-proxy",
                    inputs=(self.original,),
                    outputs=(self.proxy,),
                    tool=TOOL,
                    agent=AGENT,
                    started_at=production.clock.now(),
                    finished_at=production.clock.now() + timedelta(seconds=3),
                )
            )
            tx.complete_job_lease(lease, self.proxy, self.proxy_activity)
            tx.commit()
        with production.edit() as tx:
            self.render = tx.add_representation(asset, RepresentationKind.DERIVED, media("r.mov", b"r"))
            self.render_activity = tx.create_activity(
                ActivitySpec(
                    "org.example:render",
                    inputs=((self.proxy, "org.example:picture"), (self.audio, "org.example:sound")),
                    outputs=(self.render,),
                    tool=TOOL,
                )
            )
            tx.commit()


@pytest.fixture
def lineage(production: Production, media: Media) -> Lineage:
    return Lineage(production, media)


def records(document: pm.ProvDocument, kind: type) -> list[pm.ProvRecord]:
    return list(document.get_records(kind))


def ident(document: pm.ProvDocument, name: str) -> pm.QualifiedName | None:
    return document.valid_qualified_name(name)


def test_whole_production_round_trips_through_prov_json(production: Production, lineage: Lineage) -> None:
    document = export(production)
    text = serialize(document, "json")
    assert pm.ProvDocument.deserialize(content=text, format="json") == document
    assert len(records(document, pm.ProvEntity)) == 5
    assert len(records(document, pm.ProvActivity)) == 2
    assert len(records(document, pm.ProvAgent)) == 2  # one tool (used twice) and one agent
    assert len(records(document, pm.ProvUsage)) == 3
    assert len(records(document, pm.ProvGeneration)) == 2
    assert len(records(document, pm.ProvAssociation)) == 3
    assert len(records(document, pm.ProvDerivation)) == 3
    assert str(lineage.job) not in text  # jobs are workflow state, not provenance
    data = json.loads(text)
    assert f"uuid:{lineage.render}" in data["entity"]
    (activity,) = (
        a
        for a in records(document, pm.ProvActivity)
        if a.identifier == ident(document, f"uuid:{lineage.proxy_activity}")
    )
    assert isinstance(activity, pm.ProvActivity)
    start, end = activity.get_startTime(), activity.get_endTime()
    assert start is not None and end is not None
    assert end - start == timedelta(seconds=3)
    (tool,) = (
        a for a in records(document, pm.ProvAgent) if pm.PROV["SoftwareAgent"] in a.get_asserted_types()
    )
    assert set(tool.get_attribute("pp:version")) == {"3.2"}


def test_lineage_export_holds_ancestors_only(production: Production, lineage: Lineage) -> None:
    document = export(production, [lineage.render])
    entities = {str(r.identifier) for r in records(document, pm.ProvEntity)}
    assert entities == {f"uuid:{r}" for r in (lineage.render, lineage.proxy, lineage.original, lineage.audio)}
    assert pm.ProvDocument.deserialize(content=serialize(document), format="json") == document
    proxy_only = export(production, [lineage.proxy])
    assert {str(r.identifier) for r in records(proxy_only, pm.ProvEntity)} == {
        f"uuid:{lineage.proxy}",
        f"uuid:{lineage.original}",
    }
    roles = {str(v) for u in records(document, pm.ProvUsage) for v in u.get_attribute("prov:role")}
    assert roles == {"org.example:picture", "org.example:sound"}


def test_prov_n(production: Production, lineage: Lineage) -> None:
    text = serialize(export(production, [lineage.proxy]), "provn")
    assert text.startswith("document")
    for statement in (
        "entity(",
        "activity(",
        "agent(",
        "used(",
        "wasGeneratedBy(",
        "wasAssociatedWith(",
        "wasDerivedFrom(",
    ):
        assert statement in text


def test_export_arguments(production: Production, lineage: Lineage) -> None:
    with pytest.raises(NotFoundError):
        export(production, [RepresentationId.new()])
    with pytest.raises(InvalidArgumentError):
        export(production, [str(lineage.proxy)])  # type: ignore[list-item]
    with pytest.raises(InvalidArgumentError):
        serialize(export(production, []), "xml")  # type: ignore[arg-type]
    empty = export(production, [])
    assert records(empty, pm.ProvEntity) == []
