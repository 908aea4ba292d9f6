"""W3C PROV export of a production's provenance (with the ``prov`` package).

Mapping: representations are ``prov:Entity`` records named ``uuid:<id>`` (``urn:uuid:``),
activities are ``prov:Activity`` records, tools (``prov:SoftwareAgent``) and agents are
``prov:Agent`` records; inputs become ``used``, outputs ``wasGeneratedBy``, tools and agents
``wasAssociatedWith``, and every (output, input) pair of an activity ``wasDerivedFrom``.
PostProject facts without a PROV term (representation kind, asset, path, fingerprints,
activity kind, edge snapshot revision) are attributes in the ``pp:`` namespace. Jobs are
not exported: they are workflow state, not provenance facts (ADR 0023).

Serialise the document with ``document.serialize(format="json")`` (PROV-JSON) or
``document.get_provn()`` (PROV-N); :func:`serialize` does either.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any, Literal

import prov.model as pm

from postproject.base.handle import ProductionHandle
from postproject.engine import GraphFacts
from postproject.model.activities import Activity
from postproject.model.assets import Representation
from postproject.model.errors import InvalidArgumentError, NotFoundError, UnsupportedError
from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.model.ids import RepresentationId

PP_NAMESPACE = "https://postproject.org/ns/prov/1#"
UUID_NAMESPACE = "urn:uuid:"
MAX_EXPORT = 1_000_000  # representations in one lineage export
_PAGE = 1000


def export(production: object, rep_ids: Iterable[RepresentationId] | None = None) -> pm.ProvDocument:
    """Export provenance as a ``prov.model.ProvDocument``.

    Args:
        production: the ``Production`` to read (one consistent snapshot).
        rep_ids: export these representations and their whole upstream lineage (the
            activities that produced them, those activities' inputs, and so on, plus the
            other outputs of those activities); None exports every representation and activity.

    Raises:
        InvalidArgumentError: (invalid_argument) an id is not a RepresentationId.
        NotFoundError: (not_found) a listed representation does not exist.
        UnsupportedError: (unsupported) the lineage holds more than 1 000 000 representations.
    """
    handle = ProductionHandle.of(production)
    handle.check_open()
    seeds = None
    if rep_ids is not None:
        seeds = list(dict.fromkeys(rep_ids))
        for rep in seeds:
            if type(rep) is not RepresentationId:
                raise InvalidArgumentError(
                    f"rep_ids must hold RepresentationId values; got {type(rep).__name__}"
                )
    with handle.engine.graph.snapshot() as graph:
        if seeds is None:
            activity_ids = _every(graph, "activities")
            rep_bytes = _every(graph, "representations")
        else:
            rep_bytes, activity_ids = _lineage(graph, [s.bytes for s in seeds])
        representations = [rep for rep, _ in graph.representations(rep_bytes)]
        activities = graph.activities(activity_ids)
    return _document(representations, activities)


def serialize(document: pm.ProvDocument, format: Literal["json", "provn"] = "json") -> str:
    """PROV-JSON or PROV-N text of a document made by :func:`export`."""
    if format == "provn":
        return str(document.get_provn())
    if format == "json":
        return str(document.serialize(format="json"))
    raise InvalidArgumentError(f"format must be 'json' or 'provn'; got {format!r}")


def _every(graph: GraphFacts, table: str) -> list[bytes]:
    found: list[bytes] = []
    while page := graph.all_ids(table, found[-1] if found else None, _PAGE):
        found.extend(page)
    return found


def _lineage(graph: GraphFacts, seeds: list[bytes]) -> tuple[list[bytes], list[bytes]]:
    for seed in seeds:
        if not graph.exists(seed):
            raise NotFoundError(f"representation {RepresentationId(seed)} does not exist")
    ancestors, truncated = graph.walk(seeds, downstream=False, cap=MAX_EXPORT)
    if truncated:
        raise UnsupportedError(f"the lineage holds more than {MAX_EXPORT} representations; export fewer")
    reps = list(dict.fromkeys([*seeds, *ancestors]))
    activities = graph.activities_of(reps, 1)
    siblings = {rep for edges in graph.activity_edges(activities).values() for _, rep, _ in edges}
    return list(dict.fromkeys([*reps, *sorted(siblings)])), activities


def _document(representations: list[Representation], activities: list[Activity]) -> pm.ProvDocument:
    document = pm.ProvDocument()
    pp = document.add_namespace("pp", PP_NAMESPACE)
    document.add_namespace("uuid", UUID_NAMESPACE)
    for rep in representations:
        attributes: list[tuple[str, Any]] = [
            ("prov:type", pm.QualifiedName(pp, "Representation")),
            ("pp:kind", rep.kind.value),
            ("pp:asset", str(rep.asset_id)),
            ("pp:path", rep.path.as_posix()),
        ]
        if rep.root is not None:
            attributes.append(("pp:root", rep.root))
        attributes.extend(("pp:fingerprint", str(f)) for f in rep.fingerprints)
        document.entity(f"uuid:{rep.id}", attributes)
    agents: set[str] = set()
    for activity in activities:
        name = f"uuid:{activity.id}"
        document.activity(name, activity.started_at, activity.finished_at, {"pp:kind": activity.kind})
        for edge in activity.inputs:
            used: dict[str, Any] = {}
            if edge.role:
                used["prov:role"] = edge.role
            if edge.snapshot is not None:
                used["pp:snapshotRevision"] = edge.snapshot.revision_sequence
            document.used(name, f"uuid:{edge.representation_id}", None, None, used or None)
        for edge in activity.outputs:
            generated: dict[str, Any] = {"prov:role": edge.role} if edge.role else {}
            document.wasGeneratedBy(
                f"uuid:{edge.representation_id}", name, activity.finished_at, None, generated or None
            )
            for source in dict.fromkeys(e.representation_id for e in activity.inputs):
                document.wasDerivedFrom(f"uuid:{edge.representation_id}", f"uuid:{source}", name)
        for identity in (activity.tool, activity.agent):
            if identity is not None:
                agent = _agent(document, identity, agents)
                document.wasAssociatedWith(name, agent)
    return document


def _agent(document: pm.ProvDocument, identity: ToolIdentity | AgentIdentity, seen: set[str]) -> str:
    """The agent record of a tool or agent identity (ids hash the identity: stable, PROV-N safe)."""
    parts: tuple[str, ...] = ("agent", identity.name)
    if isinstance(identity, ToolIdentity):
        parts = ("tool", identity.name, identity.version or "", identity.uri or "")
    digest = hashlib.blake2b("\x00".join(parts).encode(), digest_size=10).hexdigest()
    name = f"pp:{parts[0]}-{digest}"
    if name not in seen:
        seen.add(name)
        attributes: dict[str, Any] = {"prov:label": str(identity), "pp:name": identity.name}
        if isinstance(identity, ToolIdentity):
            attributes["prov:type"] = pm.PROV["SoftwareAgent"]
            if identity.version is not None:
                attributes["pp:version"] = identity.version
            if identity.uri is not None:
                attributes["pp:uri"] = identity.uri
        document.agent(name, attributes)
    return name
