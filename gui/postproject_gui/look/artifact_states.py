"""How artifacts look: knowledge state and availability as label, glyph and colour (no Qt).

The counterpart of :mod:`postproject_gui.look.states` for representations. Every state has a
label, a text glyph (for plain-text outputs and snapshots), a painted glyph shape and a
colour per theme, so state is never shown by colour alone. The shapes differ from the job
glyphs on purpose: a tick (current), a circular arrow (stale: regenerate it), a diamond
(diverged: the file itself changed), a dotted ring (indeterminate: not enough evidence) and
a faded ring with an arrow leaving it (superseded: a regeneration replaced it; the graph
draws an arrow to the replacement).

Reason texts come from :func:`postproject.knowledge.describe`, with the raw representation
ids it mentions replaced by readable labels when the caller knows them.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

from postproject import ArtifactKnowledge, ArtifactState, Availability, RepresentationId, RepresentationKind
from postproject.knowledge import ProducingActivityMissing, StalenessReason, describe
from postproject.knowledge.provenance import ActivityNode, ProvenanceGraph, ProvenanceNode, RepresentationNode


class KnowledgeGlyph(enum.Enum):
    """Painted shapes for knowledge states and availability."""

    CHECK = "check"  # current
    REFRESH = "refresh"  # stale
    DIAMOND = "diamond"  # diverged
    DOTTED = "dotted"  # indeterminate
    SUPERSEDED = "superseded"  # superseded: a faded ring with an arrow leaving it (to its replacement)
    SOURCE = "source"  # source media: a small square
    ONLINE = "online"  # a filled dot
    OFFLINE = "offline"  # a ring with a bar
    UNKNOWN = "unknown"  # availability not checked: a short dash


@dataclass(frozen=True, slots=True)
class ArtifactLook:
    """Label, text glyph, painted glyph and a one-line description."""

    label: str
    text_glyph: str
    glyph: KnowledgeGlyph
    description: str


KNOWLEDGE_LOOKS: dict[ArtifactState, ArtifactLook] = {
    ArtifactState.CURRENT: ArtifactLook(
        "Current", "✓", KnowledgeGlyph.CHECK, "Still what its recorded inputs made"
    ),
    ArtifactState.STALE: ArtifactLook(
        "Stale", "↻", KnowledgeGlyph.REFRESH, "An input changed since it was made: regenerate it"
    ),
    ArtifactState.DIVERGED: ArtifactLook(
        "Diverged", "◆", KnowledgeGlyph.DIAMOND, "The file changed after it was recorded"
    ),
    ArtifactState.INDETERMINATE: ArtifactLook(
        "Indeterminate", "?", KnowledgeGlyph.DOTTED, "Not enough evidence to tell (see the reasons)"
    ),
    ArtifactState.SUPERSEDED: ArtifactLook(
        "Superseded", "⤳", KnowledgeGlyph.SUPERSEDED, "A regeneration replaced it: use its replacement"
    ),
}
SOURCE_LOOK = ArtifactLook("Source", "▪", KnowledgeGlyph.SOURCE, "Source media: no activity produced it")
AVAILABILITY_LOOKS: dict[Availability | None, ArtifactLook] = {
    Availability.ONLINE: ArtifactLook("online", "●", KnowledgeGlyph.ONLINE, "The file is readable here"),
    Availability.OFFLINE: ArtifactLook(
        "offline", "⊘", KnowledgeGlyph.OFFLINE, "The file is missing here, or its media root is not mapped"
    ),
    None: ArtifactLook("not checked", "–", KnowledgeGlyph.UNKNOWN, "Files were not checked"),
}
ATTENTION = frozenset({ArtifactState.STALE, ArtifactState.DIVERGED})
"""States the "stale or diverged only" filter keeps and the stale count counts."""


@dataclass(frozen=True, slots=True)
class ArtifactPalette:
    """Colours as ``#rrggbb`` text per knowledge state and availability."""

    states: Mapping[ArtifactState, str]
    online: str
    offline: str
    unknown: str
    source: str

    def knowledge(self, state: ArtifactState) -> str:
        return self.states[state]

    def availability(self, availability: Availability | None) -> str:
        if availability is Availability.ONLINE:
            return self.online
        if availability is Availability.OFFLINE:
            return self.offline
        return self.unknown


LIGHT = ArtifactPalette(
    states={
        ArtifactState.CURRENT: "#2d7d3a",
        ArtifactState.STALE: "#b35c00",
        ArtifactState.DIVERGED: "#8a3fb0",
        ArtifactState.INDETERMINATE: "#5a6b80",
        ArtifactState.SUPERSEDED: "#8a9099",
    },
    online="#5b6675",
    offline="#c0392b",
    unknown="#80868e",
    source="#5a6b80",
)
DARK = ArtifactPalette(
    states={
        ArtifactState.CURRENT: "#6cc07a",
        ArtifactState.STALE: "#f2a246",
        ArtifactState.DIVERGED: "#c28ae8",
        ArtifactState.INDETERMINATE: "#9fb0c6",
        ArtifactState.SUPERSEDED: "#7d838c",
    },
    online="#a3adb9",
    offline="#f07167",
    unknown="#9aa0a8",
    source="#9fb0c6",
)
PALETTES = {"light": LIGHT, "dark": DARK}


def palette_for(theme_name: str) -> ArtifactPalette:
    """The palette of a resolved theme name (``"light"`` or ``"dark"``)."""
    return PALETTES.get(theme_name, LIGHT)


def is_source(knowledge: ArtifactKnowledge | None) -> bool:
    """Whether the evaluation says only "no activity produced it" (source media such as originals).

    The core calls such a representation indeterminate (there is nothing to compare); the
    monitor shows it as *Source* so that camera originals do not read as a problem.
    """
    if knowledge is None or knowledge.state is not ArtifactState.INDETERMINATE:
        return False
    return knowledge.reasons == (ProducingActivityMissing(knowledge.representation_id),)


def look_of(state: ArtifactState, knowledge: ArtifactKnowledge | None = None) -> ArtifactLook:
    """The look of a state; :data:`SOURCE_LOOK` for source media (see :func:`is_source`)."""
    return SOURCE_LOOK if is_source(knowledge) else KNOWLEDGE_LOOKS[state]


def representation_look(
    node: RepresentationNode, knowledge: ArtifactKnowledge | None, produced: bool
) -> tuple[ArtifactState, ArtifactLook]:
    """A graph node's state and look. With ``knowledge``, as :func:`look_of`; without it (no
    reasons to tell), an indeterminate original that nothing in view ``produced`` is source media."""
    if knowledge is not None:
        return knowledge.state, look_of(knowledge.state, knowledge)
    if (
        node.state is ArtifactState.INDETERMINATE
        and node.kind is RepresentationKind.ORIGINAL
        and not produced
    ):
        return node.state, SOURCE_LOOK
    return node.state, KNOWLEDGE_LOOKS[node.state]


def colour_of(
    palette: ArtifactPalette, state: ArtifactState, knowledge: ArtifactKnowledge | None = None
) -> str:
    return palette.source if is_source(knowledge) else palette.knowledge(state)


def knowledge_text(state: ArtifactState, knowledge: ArtifactKnowledge | None = None) -> str:
    """``↻ Stale``-style text of a state (``▪ Source`` for source media)."""
    look = look_of(state, knowledge)
    return f"{look.text_glyph} {look.label}"


def availability_text(availability: Availability | None) -> str:
    look = AVAILABILITY_LOOKS[availability]
    return f"{look.text_glyph} {look.label}"


def needs_attention(state: ArtifactState | None) -> bool:
    """Stale or diverged (what "show only stale or diverged" keeps)."""
    return state in ATTENTION


Labeller = Callable[[RepresentationId], "str | None"]


def reason_text(reason: StalenessReason, label: Labeller | None = None) -> str:
    """:func:`postproject.knowledge.describe` with the representation id named by ``label``."""
    text = describe(reason)
    rep = getattr(reason, "representation_id", None)
    if label is not None and isinstance(rep, RepresentationId):
        name = label(rep)
        if name:
            text = text.replace(str(rep), name)
    return text


def reason_lines(knowledge: ArtifactKnowledge | None, label: Labeller | None = None) -> tuple[str, ...]:
    """One line per distinct reason, known representation ids replaced by ``label(id)``.

    The first line is the most direct cause (the artifact's own edges), the upstream
    reasons follow, as :func:`postproject.knowledge.evaluate` orders them.
    """
    if knowledge is None:
        return ()
    lines = [reason_text(reason, label) for reason in knowledge.reasons]
    if knowledge.truncated and not any(r.code == "traversal_truncated" for r in knowledge.reasons):
        lines.append("evaluation stopped at a limit; the answer may be incomplete")
    return tuple(dict.fromkeys(lines))


def first_reason(knowledge: ArtifactKnowledge | None, label: Labeller | None = None) -> str:
    lines = reason_lines(knowledge, label)
    return lines[0] if lines else ""


# --- texts of provenance graph nodes ---------------------------------------------------


def short_id(node_id: object) -> str:
    return "…" + str(node_id)[-8:]


def kind_name(kind: str) -> str:
    """The name part of a namespaced kind (``org.postproject:generate-proxy`` -> ``generate-proxy``)."""
    return kind.rsplit(":", 1)[-1] if ":" in kind else kind


def node_label(node: ProvenanceNode) -> str:
    """A short label: ``A001_C002 · proxy``, ``generate-proxy``, ``job …1a2b3c4d``."""
    if isinstance(node, RepresentationNode):
        return f"{node.asset_name or 'unnamed asset'} · {node.kind.value}"
    if isinstance(node, ActivityNode):
        return kind_name(node.kind)
    return f"job {short_id(node.id)}"


def graph_labeller(graph: ProvenanceGraph) -> Labeller:
    """Names the graph's representations (``A001 · proxy (A001_proxy.mov)``) for reason texts."""
    names = {
        n.id: f"{node_label(n)} ({n.path.name})" for n in graph.nodes if isinstance(n, RepresentationNode)
    }
    return names.get


def node_tooltip(
    node: ProvenanceNode,
    knowledge: Mapping[RepresentationId, ArtifactKnowledge],
    label: Labeller | None = None,
    produced: bool = True,
) -> str:
    """The hover text of a node; for representations it lists the reasons for its state
    (representation ids named by ``label``, e.g. :func:`graph_labeller` of the graph;
    ``produced``: see :func:`representation_look`)."""
    if isinstance(node, RepresentationNode):
        known = knowledge.get(node.id)
        state, look = representation_look(node, known, produced)
        lines = [node_label(node), _path(node), f"{look.text_glyph} {look.label}: {look.description}"]
        if look is SOURCE_LOOK:
            lines[-1] += f" (knowledge: {state.value})"
        reasons = reason_lines(known, label)
        if reasons and look is not SOURCE_LOOK:
            lines.append("Why:")
            lines += [f"  • {line}" for line in reasons[:8]]
            if len(reasons) > 8:
                lines.append(f"  … and {len(reasons) - 8} more (see the detail panel)")
        availability = AVAILABILITY_LOOKS[node.availability]
        lines += [
            f"{availability.text_glyph} {availability.label}: {availability.description}",
            f"id {node.id}",
        ]
        lines.append("Double-click or Enter: open the artifact")
        return "\n".join(lines)
    if isinstance(node, ActivityNode):
        lines = [f"Activity {node.kind}", f"Tool: {node.tool or 'not recorded'}"]
        if node.tool is not None and node.tool.uri:
            lines.append(f"      {node.tool.uri}")
        lines.append(f"Agent: {node.agent or 'not recorded'}")
        if node.started_at or node.finished_at:
            lines.append(f"Ran {_stamp(node.started_at)} – {_stamp(node.finished_at)}")
        lines += [f"id {node.id}", "Double-click or Enter: open the activity"]
        return "\n".join(lines)
    return "\n".join(
        [f"Job {node.kind}", f"State: {node.state.value}", f"Completed activity {short_id(node.activity_id)}",
         f"id {node.id}", "Double-click or Enter: show the job in the job table"]
    )  # fmt: skip


def _path(node: RepresentationNode) -> str:
    return f"{node.root}:{node.path.as_posix()}" if node.root else node.path.as_posix()


def _stamp(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S") if moment is not None else "?"
