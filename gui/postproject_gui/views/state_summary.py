"""The state summary bar: how many jobs are in each state, stuck claims and stale artifacts.

A card click means "show me these": a job count lists its jobs in the Jobs tab (the finished
states by when they finished, the newest first: see :func:`card_order`), the stale
card opens the Artifacts tab with only the stale or diverged artifacts listed. A card looks
selected only while what it lists is on screen (so never two at once, and never a card whose
click would turn its own filter off from another tab); clicking the selected card in the
Jobs tab shows all jobs again."""

from __future__ import annotations

from datetime import datetime

from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPaintEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSizePolicy, QToolButton, QWidget

from postproject import ArtifactState, JobState
from postproject_gui.look import artifact_states as looks
from postproject_gui.look.artifact_states import KnowledgeGlyph
from postproject_gui.look.states import HEALTH_LOOKS, STATE_LOOKS, ClaimHealth, Glyph
from postproject_gui.look.theme import Theme, paint_artifact_glyph, paint_glyph
from postproject_gui.services.filters import JobFilter
from postproject_gui.services.types import ClaimOutlook, JobCounts, StaleCount

FINISHED = frozenset({JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED})


def card_order(flt: JobFilter, state: JobState | None) -> JobFilter:
    """The order a card lists its jobs in: succeeded, failed or cancelled jobs by when they
    finished, the newest first (the most recent failure on top, whenever it was requested);
    the others, and all jobs again, in request order. A sort by another column (kind,
    priority, ...) that the user chose is kept."""
    if state in FINISHED and flt.sort == "requested":
        return flt.with_(sort="finished", newest_first=True)
    if state not in FINISHED and flt.sort == "finished":
        return flt.with_(sort="requested", newest_first=True)
    return flt


class CountCard(QToolButton):
    """A checkable card: glyph, big count, label. Painted, so it needs no font glyphs."""

    def __init__(
        self, label: str, glyph: Glyph | KnowledgeGlyph, parent: QWidget | None = None, *, wide: bool = False
    ) -> None:
        super().__init__(parent)
        self.setCheckable(True)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self._label, self._glyph, self._wide = label, glyph, wide
        self._count = "–"
        self._detail = ""
        self._detail_colour: str | None = None
        self._colour = QColor("#888888")
        self._ui = ("#1f2933", "#6b7280", "#e2ecf7", "#9cc0e4", "#f0f3f6")

    def set_look(
        self, colour: str, text: str, muted: str, checked_bg: str, checked_border: str, hover: str
    ) -> None:
        self._colour = QColor(colour)
        self._ui = (text, muted, checked_bg, checked_border, hover)
        self.update()

    def set_count(self, count: str, detail: str = "", detail_colour: str | None = None) -> None:
        self._count, self._detail, self._detail_colour = count, detail, detail_colour
        self.update()

    @property
    def count_text(self) -> str:
        return self._count

    def sizeHint(self) -> QSize:
        return QSize(182 if self._wide else 124, 44)

    def minimumSizeHint(self) -> QSize:
        """Narrower windows (down to 1024 px) squeeze the cards before anything is cut."""
        return QSize(150 if self._wide else 100, 44)

    def paintEvent(self, event: QPaintEvent) -> None:
        text, muted, checked_bg, checked_border, hover = self._ui
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        rect = QRectF(self.rect()).adjusted(1, 1, -1, -1)
        if self.isChecked() or self.underMouse():
            painter.setBrush(QColor(checked_bg if self.isChecked() else hover))
            painter.setPen(QColor(checked_border) if self.isChecked() else Qt.GlobalColor.transparent)
            painter.drawRoundedRect(rect, 5, 5)
        if self.hasFocus() and self.window().isActiveWindow():
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.setPen(QColor(checked_border))
            painter.drawRoundedRect(rect, 5, 5)
        box = QRectF(10, (rect.height() - 18) / 2 + 1, 18, 18)
        if isinstance(self._glyph, KnowledgeGlyph):
            paint_artifact_glyph(painter, self._glyph, self._colour, box)
        else:
            paint_glyph(painter, self._glyph, self._colour, box)
        self._paint_texts(painter, rect, text, muted)
        painter.end()

    def _paint_texts(self, painter: QPainter, rect: QRectF, text: str, muted: str) -> None:
        bottom_left = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignBottom
        font = QFont(self.font())
        font.setPointSizeF(12.5)
        font.setBold(True)
        count_box = QRectF(36, 3, rect.width() - 38, 22)
        width = QFontMetricsF(font).horizontalAdvance(self._count)
        if width > count_box.width():  # a big count on a narrow card: smaller, never wider
            font.setPointSizeF(max(7.0, 12.5 * count_box.width() / width))
        painter.setFont(font)
        painter.setPen(QColor(text))
        painter.drawText(count_box, bottom_left, self._count)
        advance = QFontMetricsF(font).horizontalAdvance(self._count) + 7
        font.setPointSizeF(8.5)
        if self._detail:
            painter.setFont(font)
            painter.setPen(QColor(self._detail_colour or muted))
            painter.drawText(count_box.adjusted(advance, 0, 0, -2), bottom_left, self._detail)
        font.setBold(False)
        painter.setFont(font)
        painter.setPen(QColor(muted))
        painter.drawText(
            QRectF(36, 24, rect.width() - 38, 16),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop,
            self._label,
        )


class StateSummary(QFrame):
    """Counts per state, stuck claims and stale artifacts.

    Signals: filter_requested(JobFilter), stale_requested() (the stale card was clicked).
    """

    filter_requested = Signal(JobFilter)
    stale_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("stateSummary")
        self.setAccessibleName("Job counts by state")
        self._filter = JobFilter()
        self._expiring_colour: str | None = None
        self._stale_active = False
        self._jobs_shown = True  # the Jobs tab is the current one
        self.cards: dict[JobState, CountCard] = {}
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.setSpacing(4)
        for state, look in STATE_LOOKS.items():
            card = CountCard(look.label, look.glyph, self)
            card.setToolTip(
                f"{look.description}.\nClick to list only {look.label.lower()} jobs (again, in the Jobs tab: all)."
            )
            card.clicked.connect(lambda _checked=False, s=state: self._toggle_state(s))
            layout.addWidget(card)
            self.cards[state] = card
        stuck_look = HEALTH_LOOKS[ClaimHealth.STUCK]
        self.stuck_card = CountCard("Stuck claims", stuck_look.glyph, self, wide=True)
        self.stuck_card.setToolTip(
            "Claimed jobs whose lease expired (nobody holds them) or ends within a minute.\n"
            "Click to list them, soonest expiry first."
        )
        self.stuck_card.clicked.connect(self._toggle_stuck)
        separator = QFrame(self)
        separator.setFrameShape(QFrame.Shape.VLine)
        separator.setFrameShadow(QFrame.Shadow.Plain)
        layout.addWidget(separator)
        layout.addWidget(self.stuck_card)
        self.stale_card = CountCard("Stale artifacts", KnowledgeGlyph.REFRESH, self, wide=True)
        self.stale_card.setObjectName("staleCard")
        self.stale_card.setToolTip(
            "Artifacts that are stale (an input changed since they were made) or diverged (the file\n"
            "itself changed). Click to list them in the Artifacts tab."
        )
        self.stale_card.clicked.connect(self._stale_clicked)
        separator = QFrame(self)
        separator.setFrameShape(QFrame.Shape.VLine)
        separator.setFrameShadow(QFrame.Shadow.Plain)
        layout.addWidget(separator)
        layout.addWidget(self.stale_card)
        layout.addStretch(1)
        self.total = QLabel("", self)
        self.total.setProperty("role", "caption")
        self.total.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.total.setSizePolicy(
            QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred
        )  # a caption: may go
        layout.addWidget(self.total)
        self._sync()

    def set_theme(self, theme: Theme) -> None:
        ui = theme.ui
        checked = ("#223a55", "#3f6a96") if theme.dark else ("#e2ecf7", "#9cc0e4")
        hover = "#272d34" if theme.dark else "#f0f3f6"
        for state, card in self.cards.items():
            card.set_look(theme.states.states[state], ui.text, ui.muted, *checked, hover)
        self.stuck_card.set_look(theme.states.stuck, ui.text, ui.muted, *checked, hover)
        stale = looks.palette_for(theme.name).knowledge(ArtifactState.STALE)
        self.stale_card.set_look(stale, ui.text, ui.muted, *checked, hover)
        self._expiring_colour = theme.states.expiring

    def set_filter(self, flt: JobFilter) -> None:
        self._filter = flt
        self._sync()

    def set_counts(self, counts: JobCounts | None) -> None:
        for state, card in self.cards.items():
            value = counts.by_state.get(state, 0) if counts else None
            card.set_count("–" if value is None else f"{value:,}")
            look = STATE_LOOKS[state]
            card.setAccessibleName(f"{look.label}: {'unknown' if value is None else value} jobs")
        if counts is None:
            self.total.setText("")
        else:
            scope = f"of kind {counts.kind}" if counts.kind else "in this production"
            self.total.setText(f"{counts.total:,} jobs {scope}")

    def set_outlook(self, outlook: ClaimOutlook | None, now: datetime, kind: str | None) -> None:
        if outlook is None:
            self.stuck_card.set_count("–")
            return
        stuck = len(outlook.stuck(now, kind))
        expiring = len(outlook.expiring(now, kind))
        plus = "+" if outlook.capped else ""
        self.stuck_card.set_count(
            f"{stuck:,}{plus}", f"+{expiring} expiring" if expiring else "", self._expiring_colour
        )
        self.stuck_card.setAccessibleName(f"Stuck claims: {stuck}{plus}; expiring soon: {expiring}")

    def set_stale(self, stale: StaleCount | None) -> None:
        if stale is None:
            self.stale_card.set_count("–")
            self.stale_card.setAccessibleName("Stale artifacts: unknown")
            return
        self.stale_card.set_count(stale.text, "" if stale.complete else f"of the first {stale.examined:,}")
        bound = "" if stale.complete else f" among the first {stale.examined} derived artifacts"
        self.stale_card.setAccessibleName(f"Stale or diverged artifacts: {stale.count}{bound}")

    def set_stale_active(self, active: bool) -> None:
        """Check the stale card while the Artifacts tab lists only stale or diverged artifacts."""
        self._stale_active = active
        self._sync()

    def set_jobs_shown(self, shown: bool) -> None:
        """Whether the Jobs tab is the current one: only then does a job card look selected."""
        self._jobs_shown = shown
        self._sync()

    def _stale_clicked(self) -> None:
        self._sync()
        self.stale_requested.emit()

    def _toggle_state(self, state: JobState) -> None:
        same = self._jobs_shown and self._filter.state is state and not self._filter.stuck
        shown = None if same else state
        self.filter_requested.emit(card_order(self._filter.with_(state=shown, stuck=False), shown))
        self._sync()

    def _toggle_stuck(self) -> None:
        off = self._jobs_shown and self._filter.stuck
        self.filter_requested.emit(self._filter.with_(stuck=not off))
        self._sync()

    def _sync(self) -> None:
        jobs = self._jobs_shown and not self._stale_active
        for state, card in self.cards.items():
            card.setChecked(jobs and self._filter.state is state and not self._filter.stuck)
        self.stuck_card.setChecked(jobs and self._filter.stuck)
        self.stale_card.setChecked(self._stale_active)
