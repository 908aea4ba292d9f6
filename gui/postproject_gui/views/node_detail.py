"""The Provenance tab's detail panel: what is known about the selected node, and why.

Fed by :meth:`ProvenanceScene.node_document` (plain values). For a representation it shows
its knowledge state as glyph, word and colour, every reason for that state (the most direct
cause first), its asset, kind, path and availability; for an activity its tool, agent and
times; for a job its state. With nothing selected it sums up the graph.
"""

from __future__ import annotations

import html
from collections import Counter
from typing import Any

from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QAction, QColor, QPainter, QPixmap
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from postproject import ArtifactState, Availability, JobState
from postproject_gui.look import artifact_states as looks
from postproject_gui.look.artifact_states import (
    AVAILABILITY_LOOKS,
    KNOWLEDGE_LOOKS,
    SOURCE_LOOK,
    ArtifactLook,
)
from postproject_gui.look.states import STATE_LOOKS
from postproject_gui.look.theme import Theme, paint_artifact_glyph, panel_style, state_icon
from postproject_gui.services.types import GraphRead
from postproject_gui.views.widgets import detail_scroll, section_label, title_row, tool_button

LOOKS_BY_NAME: dict[str, ArtifactLook] = {
    look.label.lower(): look for look in (*KNOWLEDGE_LOOKS.values(), SOURCE_LOOK)
}
FACTS = ("Asset", "Kind", "Path", "Availability", "Tool", "Agent", "Ran", "State", "Activity", "ID")


def breakable(text: str) -> str:
    """Let a long path wrap after its separators (a zero-width space after / : _ -)."""
    for separator in "/:_-":
        text = text.replace(separator, separator + "\u200b")
    return text


def glyph_pixmap(look: ArtifactLook, colour: str, size: int = 18) -> QPixmap:
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    paint_artifact_glyph(painter, look.glyph, QColor(colour), QRectF(0, 0, size, size))
    painter.end()
    return pixmap


class NodeDetailPanel(QFrame):
    """Signals: open_requested(str node id), copy_requested(str text)."""

    open_requested = Signal(str)
    copy_requested = Signal(str)

    def __init__(self, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("nodeDetail")
        self.setAccessibleName("Provenance node detail")
        self.setMinimumWidth(320)
        self._theme = theme
        self._document: dict[str, Any] | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 10, 8, 8)
        layout.setSpacing(6)
        header, self.glyph, self.title = title_row(self, "nodeTitle")
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        layout.addLayout(header)
        self.subtitle = QLabel(self)
        self.subtitle.setProperty("role", "muted")
        self.subtitle.setWordWrap(True)
        layout.addWidget(self.subtitle)
        self.state = QLabel(self)
        self.state.setObjectName("nodeState")
        self.state.setWordWrap(True)
        self.state.setTextFormat(Qt.TextFormat.RichText)
        layout.addWidget(self.state)
        buttons = QHBoxLayout()
        buttons.setSpacing(4)
        self.open = tool_button(self, "Open", "Open this node", lambda: self._emit_open())
        self.copy = tool_button(self, "Copy ID", "Copy the node's id", lambda: self._emit_copy())
        buttons.addWidget(self.open)
        buttons.addWidget(self.copy)
        buttons.addStretch(1)
        self.actions_row = QHBoxLayout()
        self.actions_row.setSpacing(4)
        buttons.addLayout(self.actions_row)
        layout.addLayout(buttons)
        scroll = detail_scroll(self, self._build_body)
        layout.addWidget(scroll, 1)
        self.set_theme(theme)
        self.show_summary(None)

    def _build_body(self, parent: QWidget) -> QWidget:
        body = QWidget(parent)
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 0, 4, 0)
        layout.setSpacing(4)
        self.why_title = section_label("Why", body)
        self.why = QLabel(body)
        self.why.setObjectName("nodeReasons")
        self.why.setWordWrap(True)
        self.why.setTextFormat(Qt.TextFormat.RichText)
        self.why.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.facts_title = section_label("Facts", body)
        grid = QGridLayout()
        grid.setHorizontalSpacing(12)
        grid.setVerticalSpacing(3)
        grid.setColumnStretch(1, 1)
        self.keys: dict[str, QLabel] = {}
        self.values: dict[str, QLabel] = {}
        for row, key in enumerate(FACTS):
            name = QLabel(key, body)
            name.setProperty("role", "key")
            name.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
            value = QLabel(body)
            value.setObjectName(f"node_{key.lower()}")
            value.setWordWrap(True)
            value.setTextFormat(Qt.TextFormat.RichText)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            grid.addWidget(name, row, 0)
            grid.addWidget(value, row, 1)
            self.keys[key], self.values[key] = name, value
        self.values["ID"].setProperty("role", "mono")
        self.values["Path"].setProperty("role", "mono")
        self.hint = QLabel(body)
        self.hint.setProperty("role", "muted")
        self.hint.setWordWrap(True)
        for widget in (self.why_title, self.why, self.facts_title):
            layout.addWidget(widget)
        layout.addLayout(grid)
        layout.addWidget(self.hint)
        layout.addStretch(1)
        return body

    def add_action_buttons(self, actions: list[QAction]) -> None:
        for action in actions:
            button = QToolButton(self)
            button.setDefaultAction(action)
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            self.actions_row.addWidget(button)

    # --- showing -------------------------------------------------------------------------

    @property
    def document(self) -> dict[str, Any] | None:
        return self._document

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        self.setStyleSheet(panel_style("nodeDetail", theme))
        if self._document is not None:
            self.show_node(self._document)

    def show_summary(self, read: GraphRead | None) -> None:
        """Nothing selected: what the graph holds (or how to get one)."""
        self._document = None
        for widget in (self.open, self.copy, self.why_title, self.why, self.state):
            widget.hide()
        self.glyph.hide()
        self._facts({})
        if read is None:
            self.title.setText("No graph yet")
            self.subtitle.setText("")
            self.hint.setText(
                "Double-click an artifact in the Artifacts tab, or choose “Show provenance” on a job, "
                "to draw where it came from and what was made from it."
            )
            return
        graph = read.graph
        kinds = Counter(type(n).__name__ for n in graph.nodes)
        states = Counter(k.state.value for k in read.knowledge.values())
        focus = next((n for n in graph.nodes if n.id == graph.focus), None)
        self.title.setText(looks.node_label(focus) if focus is not None else "Provenance")
        self.subtitle.setText(
            f"{kinds['RepresentationNode']} representations · {kinds['ActivityNode']} activities · "
            f"{kinds['JobNode']} jobs" + (" · truncated at the nearest 500 nodes" if graph.truncated else "")
        )
        attention = states.get("stale", 0) + states.get("diverged", 0)
        self.hint.setText(
            f"<p>{attention} of them stale or diverged.</p>"
            "<p>Select a node to see what is known about it and why. Double-click a representation "
            "to open its own neighbourhood, a job to show it in the job table.</p>"
        )

    def show_node(self, document: dict[str, Any]) -> None:
        self._document = document
        kind = document["type"]
        self.open.show()
        self.copy.show()
        self.title.setText(document["label"])
        self.subtitle.setText(f"{kind} {looks.short_id(document['id'])}")
        self.open.setText({"representation": "Open its graph", "job": "Show in job table"}.get(kind, "Open"))
        self.open.setVisible(kind != "activity" and not document.get("focus", False))
        self.hint.setText("")
        if kind == "representation":
            self._show_representation(document)
        elif kind == "activity":
            self._show_activity(document)
        else:
            self._show_job(document)

    def _show_representation(self, d: dict[str, Any]) -> None:
        palette = looks.palette_for(self._theme.name)
        look = LOOKS_BY_NAME[d["shown_as"]]
        colour = palette.source if look is SOURCE_LOOK else palette.knowledge(ArtifactState(d["state"]))
        self.glyph.setPixmap(glyph_pixmap(look, colour))
        self.glyph.show()
        self.state.setText(
            f"<b style='color:{colour}'>{look.text_glyph} {look.label}</b> — {html.escape(look.description)}"
        )
        self.state.show()
        reasons = [r["text"] for r in d["reasons"]] if look is not SOURCE_LOOK else []
        self.why_title.setVisible(bool(reasons))
        self.why.setVisible(bool(reasons))
        self.why.setText(
            "".join(
                f"<p style='margin:0 0 4px 0'>{'<b>' if i == 0 else ''}• {html.escape(text)}"
                f"{'</b>' if i == 0 else ''}</p>"
                for i, text in enumerate(reasons)
            )
        )
        availability = AVAILABILITY_LOOKS[
            None if d["availability"] is None else Availability(d["availability"])
        ]
        where = f"{d['root']}:{d['path']}" if d["root"] else d["path"]
        self._facts(
            {
                "Asset": html.escape(d["asset_name"] or looks.short_id(d["asset_id"])),
                "Kind": html.escape(d["kind"]),
                "Path": breakable(html.escape(where)),
                "Availability": f"{availability.text_glyph} {availability.label} — {availability.description}",
                "ID": d["id"],
            }
        )

    def _show_activity(self, d: dict[str, Any]) -> None:
        self.glyph.hide()
        self.state.hide()
        self.why_title.hide()
        self.why.hide()
        ran = " – ".join(t[:19].replace("T", " ") for t in (d["started_at"], d["finished_at"]) if t)
        self._facts(
            {
                "Kind": html.escape(d["kind"]),
                "Tool": html.escape(d["tool"] or "not recorded"),
                "Agent": html.escape(d["agent"] or "not recorded"),
                "Ran": ran or None,
                "ID": d["id"],
            }
        )
        self.hint.setText("What made the representations on its right from those on its left.")

    def _show_job(self, d: dict[str, Any]) -> None:
        state = JobState(d["state"])
        self.glyph.setPixmap(state_icon(state, None, self._theme.states).pixmap(18, 18))
        self.glyph.show()
        self.state.setText(
            f"<b style='color:{self._theme.states.colour(state)}'>{STATE_LOOKS[state].label}</b>"
            " — the job that completed this activity"
        )
        self.state.show()
        self.why_title.hide()
        self.why.hide()
        self._facts(
            {"Kind": html.escape(d["kind"]), "Activity": looks.short_id(d["activity_id"]), "ID": d["id"]}
        )

    def _facts(self, values: dict[str, str | None]) -> None:
        self.facts_title.setVisible(bool(values))
        for key in FACTS:
            text = values.get(key)
            self.keys[key].setVisible(text is not None)
            self.values[key].setVisible(text is not None)
            self.values[key].setText(text or "")

    def _emit_open(self) -> None:
        if self._document is not None:
            self.open_requested.emit(self._document["id"])

    def _emit_copy(self) -> None:
        if self._document is not None:
            self.copy_requested.emit(self._document["id"])
