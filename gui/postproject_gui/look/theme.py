"""Light and dark themes: Fusion palette, QSS from ``resources/themes``, tinted SVG icons
from ``resources/icons`` and painted glyphs (no font needed for ○ ◐ ● ✕ ⊘ or ✓ ↻ ◆): job
states, and the knowledge and availability of artifacts.

``ThemeManager`` follows the system colour scheme unless the user picks light or dark, and
tells its listeners through ``changed(str)`` (the resolved theme name).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from PySide6.QtCore import QByteArray, QObject, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QGuiApplication,
    QIcon,
    QPainter,
    QPainterPath,
    QPalette,
    QPen,
    QPixmap,
    QPolygonF,
)
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication, QWidget

from postproject import JobState
from postproject_gui.look import resources
from postproject_gui.look.artifact_states import KnowledgeGlyph
from postproject_gui.look.states import DARK, HEALTH_LOOKS, LIGHT, STATE_LOOKS, ClaimHealth, Glyph, Palette

ICON_SIZES = (16, 20, 24, 32, 48)


class ThemeMode(enum.Enum):
    SYSTEM = "system"
    LIGHT = "light"
    DARK = "dark"


@dataclass(frozen=True, slots=True)
class UiColours:
    """Surface colours (the QSS files use the same values)."""

    window: str
    base: str
    alternate: str
    text: str
    muted: str
    border: str
    highlight: str
    highlight_text: str
    icon: str
    diagram_node: str
    diagram_edge: str


LIGHT_UI = UiColours(
    "#f4f5f7", "#ffffff", "#f7f8fa", "#1f2933", "#6b7280", "#d7dbe0", "#d6e6f7", "#0b2540", "#3d4754",
    "#ffffff", "#9aa3ae",
)  # fmt: skip
DARK_UI = UiColours(
    "#1b1f24", "#171a1e", "#1b1f24", "#dfe4ea", "#98a1ad", "#2f363e", "#24466b", "#ffffff", "#dbe2ea",
    "#22272d", "#5d6773",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Theme:
    """A resolved theme."""

    name: str  # "light" or "dark"
    states: Palette
    ui: UiColours

    @property
    def dark(self) -> bool:
        return self.name == "dark"


THEMES = {"light": Theme("light", LIGHT, LIGHT_UI), "dark": Theme("dark", DARK, DARK_UI)}


def system_prefers_dark() -> bool:
    hints = QGuiApplication.styleHints()
    scheme = hints.colorScheme() if hints is not None else Qt.ColorScheme.Unknown
    if scheme is Qt.ColorScheme.Dark:
        return True
    if scheme is Qt.ColorScheme.Light:
        return False
    return QGuiApplication.palette().color(QPalette.ColorRole.Window).lightness() < 128


def resolve(mode: ThemeMode) -> Theme:
    if mode is ThemeMode.SYSTEM:
        return THEMES["dark" if system_prefers_dark() else "light"]
    return THEMES[mode.value]


def qt_palette(ui: UiColours) -> QPalette:
    palette = QPalette()
    role = QPalette.ColorRole
    for r, value in (
        (role.Window, ui.window),
        (role.Base, ui.base),
        (role.AlternateBase, ui.alternate),
        (role.Text, ui.text),
        (role.WindowText, ui.text),
        (role.ButtonText, ui.text),
        (role.Button, ui.base),
        (role.ToolTipBase, ui.base),
        (role.ToolTipText, ui.text),
        (role.Highlight, ui.highlight),
        (role.HighlightedText, ui.highlight_text),
        (role.PlaceholderText, ui.muted),
        (role.Mid, ui.border),
    ):
        palette.setColor(r, QColor(value))
    palette.setColor(QPalette.ColorGroup.Disabled, role.Text, QColor(ui.muted))
    palette.setColor(QPalette.ColorGroup.Disabled, role.WindowText, QColor(ui.muted))
    return palette


def style_sheet(name: str) -> str:
    """The theme's QSS, with ``@ICONS@`` pointing at the icons folder (for indicator images)."""
    icons = resources.path("icons", "check-mark.svg").parent.as_posix()
    return resources.text("themes", f"{name}.qss").replace("@ICONS@", icons)


_FUSION_SET = "postprojectFusionSet"  # an application property: Fusion is set


class ThemeManager(QObject):
    """Applies a theme to the application and remembers the user's choice."""

    changed = Signal(str)

    def __init__(self, mode: ThemeMode = ThemeMode.SYSTEM, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._mode = mode
        self._theme = resolve(mode)
        hints = QGuiApplication.styleHints()
        if hints is not None:
            hints.colorSchemeChanged.connect(self._system_changed)

    @property
    def mode(self) -> ThemeMode:
        return self._mode

    @property
    def theme(self) -> Theme:
        return self._theme

    def set_mode(self, mode: ThemeMode) -> None:
        self._mode = mode
        self.apply()

    def apply(self) -> None:
        self._theme = resolve(self._mode)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            # Each of these re-polishes every widget (tens of ms with a style sheet): only what
            # changes is set (a second window, or the same theme chosen again, changes nothing).
            if app.property(_FUSION_SET) is not True:  # (with a style sheet, style() names no base style)
                app.setStyle("Fusion")
                app.setProperty(_FUSION_SET, True)
            palette = qt_palette(self._theme.ui)
            palette.setColor(QPalette.ColorRole.Link, QColor(self._theme.states.accent))
            palette.setColor(QPalette.ColorRole.LinkVisited, QColor(self._theme.states.accent))
            if app.palette() != palette:
                app.setPalette(palette)
            sheet = style_sheet(self._theme.name)
            if app.styleSheet() != sheet:
                app.setStyleSheet(sheet)
        self.changed.emit(self._theme.name)

    def _system_changed(self) -> None:
        if self._mode is ThemeMode.SYSTEM:
            self.apply()

    def icon(self, name: str) -> QIcon:
        return icon(name, self._theme.ui.icon)

    def state_icon(self, state: JobState, health: ClaimHealth | None = None) -> QIcon:
        return state_icon(state, health, self._theme.states)


def set_style_property(widget: QWidget, name: str, value: object) -> None:
    """Set a property the style sheet selects on (``[danger="true"]``) and re-apply the style,
    which Qt does not do by itself once the widget has been polished."""
    widget.setProperty(name, value)
    widget.style().unpolish(widget)
    widget.style().polish(widget)


_ICONS: dict[tuple[str, str], QIcon] = {}
_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16" fill="none" '
    'stroke="currentColor" stroke-width="1.4" stroke-linecap="round" stroke-linejoin="round">{}</svg>'
)
INLINE_ICONS = {  # the provenance actions' icons, in the style of resources/icons
    "downstream": _SVG.format(
        '<circle cx="3.5" cy="8" r="2"/><path d="M5.5 8h2.5M8 8l3-3.6M8 8l3 3.6"/>'
        '<circle cx="12.8" cy="3.6" r="1.6"/><circle cx="12.8" cy="12.4" r="1.6"/>'
    ),
    "image": _SVG.format(
        '<rect x="1.5" y="2.5" width="13" height="11" rx="1.2"/><circle cx="5.5" cy="6.2" r="1.3"/>'
        '<path d="M14.5 11l-4-4-7 6.5"/>'
    ),
    "export": _SVG.format(
        '<path d="M8 10V2M5 5l3-3 3 3"/><path d="M2.5 9v4a1 1 0 0 0 1 1h9a1 1 0 0 0 1-1V9"/>'
    ),
}


def icon(name: str, colour: str) -> QIcon:
    """An icon from ``resources/icons/<name>.svg`` (or :data:`INLINE_ICONS`), its
    ``currentColor`` set to ``colour``."""
    key = (name, colour)
    if key not in _ICONS:
        text = INLINE_ICONS.get(name) or resources.text("icons", f"{name}.svg")
        svg = text.replace("currentColor", colour)
        result = QIcon()
        # The disabled look is drawn here, in the same colour at 40 % opacity: Fusion's own
        # greys out a light icon on a dark toolbar until enabled and disabled look alike.
        for mode, opacity in ((QIcon.Mode.Normal, 1.0), (QIcon.Mode.Disabled, 0.4)):
            renderer = QSvgRenderer(QByteArray(svg.encode()))
            for size in ICON_SIZES:
                pixmap = QPixmap(size, size)
                pixmap.fill(Qt.GlobalColor.transparent)
                painter = QPainter(pixmap)
                painter.setOpacity(opacity)
                renderer.render(painter)
                painter.end()
                result.addPixmap(pixmap, mode)
        _ICONS[key] = result
    return _ICONS[key]


_GLYPHS: dict[tuple[Glyph, str], QIcon] = {}


def state_icon(state: JobState, health: ClaimHealth | None, palette: Palette) -> QIcon:
    """The painted glyph of a state (or of a stuck/expiring claim) in its colour."""
    look = HEALTH_LOOKS.get(health) if health is not None else None
    glyph = (look or STATE_LOOKS[state]).glyph
    colour = palette.colour(state, health)
    key = (glyph, colour)
    if key not in _GLYPHS:
        result = QIcon()
        for size in ICON_SIZES:
            result.addPixmap(glyph_pixmap(glyph, QColor(colour), size))
        _GLYPHS[key] = result
    return _GLYPHS[key]


def glyph_icon(glyph: Glyph, colour: str) -> QIcon:
    """A painted glyph in ``colour`` (worker liveness, attempt outcomes)."""
    key = (glyph, colour)
    if key not in _GLYPHS:
        result = QIcon()
        for size in ICON_SIZES:
            result.addPixmap(glyph_pixmap(glyph, QColor(colour), size))
        _GLYPHS[key] = result
    return _GLYPHS[key]


def glyph_pixmap(glyph: Glyph, colour: QColor, size: int) -> QPixmap:
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    paint_glyph(painter, glyph, colour, QRectF(0, 0, size, size))
    painter.end()
    return pixmap


def paint_glyph(painter: QPainter, glyph: Glyph, colour: QColor, box: QRectF) -> None:
    """Draw a state glyph inside ``box`` (also used by the lifecycle diagram)."""
    s = min(box.width(), box.height())
    pen = QPen(colour, max(1.2, s * 0.12))
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    painter.setPen(pen)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    c = box.center()
    r = s * 0.36
    circle = QRectF(c.x() - r, c.y() - r, 2 * r, 2 * r)
    if glyph is Glyph.WARNING:
        _warning(painter, colour, c, s)
        return
    if glyph is Glyph.CROSS:
        d = r * 0.8
        painter.drawLine(QPointF(c.x() - d, c.y() - d), QPointF(c.x() + d, c.y() + d))
        painter.drawLine(QPointF(c.x() - d, c.y() + d), QPointF(c.x() + d, c.y() - d))
        return
    if glyph is Glyph.DISC:
        painter.setBrush(colour)
    painter.drawEllipse(circle)
    painter.setBrush(colour)
    if glyph is Glyph.HALF:
        painter.drawPie(circle, 90 * 16, 180 * 16)
    elif glyph is Glyph.CLOCK:
        painter.drawPie(circle, 0, 90 * 16)
    elif glyph is Glyph.SLASH:
        d = r * 0.7
        painter.drawLine(QPointF(c.x() - d, c.y() + d), QPointF(c.x() + d, c.y() - d))


def _warning(painter: QPainter, colour: QColor, c: QPointF, s: float) -> None:
    path = QPainterPath()
    path.moveTo(c.x(), c.y() - s * 0.38)
    path.lineTo(c.x() + s * 0.42, c.y() + s * 0.34)
    path.lineTo(c.x() - s * 0.42, c.y() + s * 0.34)
    path.closeSubpath()
    painter.setBrush(colour)
    painter.drawPath(path)
    painter.setPen(QPen(QColor("#ffffff"), max(1.2, s * 0.1)))
    painter.drawLine(QPointF(c.x(), c.y() - s * 0.12), QPointF(c.x(), c.y() + s * 0.12))
    painter.drawPoint(QPointF(c.x(), c.y() + s * 0.23))


def polygon(*points: tuple[float, float]) -> QPolygonF:
    return QPolygonF([QPointF(x, y) for x, y in points])


def paint_artifact_glyph(painter: QPainter, glyph: KnowledgeGlyph, colour: QColor, box: QRectF) -> None:
    """Draw a knowledge or availability glyph inside ``box`` (see artifact_states)."""
    s = min(box.width(), box.height())
    c = box.center()
    pen = QPen(colour, max(1.2, s * 0.13))
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
    painter.setPen(pen)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    r = s * 0.38
    circle = QRectF(c.x() - r, c.y() - r, 2 * r, 2 * r)
    x, y = c.x(), c.y()
    if glyph is KnowledgeGlyph.CHECK:
        painter.drawPolyline(
            polygon((x - r * 0.85, y + r * 0.05), (x - r * 0.25, y + r * 0.65), (x + r * 0.9, y - r * 0.6))
        )
    elif glyph is KnowledgeGlyph.REFRESH:
        painter.drawArc(circle, 60 * 16, 280 * 16)
        tx, ty = x + r * 0.5, y - r * math.sin(math.radians(60))
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(colour)
        painter.drawPolygon(
            polygon(
                (tx - s * 0.05, ty - s * 0.22), (tx + s * 0.2, ty + s * 0.04), (tx - s * 0.2, ty + s * 0.1)
            )
        )
    elif glyph is KnowledgeGlyph.DIAMOND:
        painter.setBrush(colour)
        d = r * 1.1
        painter.drawPolygon(polygon((x, y - d), (x + d, y), (x, y + d), (x - d, y)))
    elif glyph is KnowledgeGlyph.DOTTED:
        pen.setStyle(Qt.PenStyle.DotLine)
        painter.setPen(pen)
        painter.drawEllipse(circle)
        _dot(painter, colour, c, s * 0.08)
    elif glyph is KnowledgeGlyph.SUPERSEDED:
        faded = QColor(colour)
        faded.setAlphaF(0.55)
        pen.setColor(faded)
        painter.setPen(pen)
        painter.drawArc(circle.translated(-r * 0.35, 0), 40 * 16, 280 * 16)
        pen.setColor(colour)
        painter.setPen(pen)
        painter.drawLine(QPointF(x - r * 0.2, y), QPointF(x + r * 1.05, y))
        painter.drawPolyline(
            polygon((x + r * 0.55, y - r * 0.5), (x + r * 1.05, y), (x + r * 0.55, y + r * 0.5))
        )
    elif glyph is KnowledgeGlyph.SOURCE:
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(colour)
        painter.drawRoundedRect(QRectF(x - r * 0.7, y - r * 0.7, r * 1.4, r * 1.4), s * 0.08, s * 0.08)
    elif glyph is KnowledgeGlyph.ONLINE:
        _dot(painter, colour, c, r * 0.62)
    elif glyph is KnowledgeGlyph.OFFLINE:
        painter.drawEllipse(circle)
        painter.drawLine(QPointF(x - r * 0.7, y + r * 0.7), QPointF(x + r * 0.7, y - r * 0.7))
    else:
        painter.drawLine(QPointF(x - r * 0.6, y), QPointF(x + r * 0.6, y))


def _dot(painter: QPainter, colour: QColor, centre: QPointF, radius: float) -> None:
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(colour)
    painter.drawEllipse(centre, radius, radius)


def panel_style(object_name: str, theme: Theme) -> str:
    """The detail-panel look of the theme's ``#jobDetail`` rules, for another panel (applied as
    that widget's own style sheet)."""
    ui = theme.ui
    line = "#262c33" if theme.dark else "#eef0f3"
    frame = "#2c333b" if theme.dark else "#dfe2e7"
    name = f"#{object_name}"
    return "\n".join(
        (
            f"{name} {{ background: {ui.base}; border: 1px solid {frame}; border-radius: 6px; }}",
            f"{name} QLabel {{ color: {ui.text}; }}",
            f'{name} QLabel[role="title"] {{ font-size: 12pt; font-weight: 600; }}',
            f'{name} QLabel[role="section"] {{ color: {ui.muted}; font-weight: 600; padding-top: 8px;'
            f" border-bottom: 1px solid {line}; }}",
            f'{name} QLabel[role="key"], {name} QLabel[role="muted"] {{ color: {ui.muted}; }}',
            f'{name} QLabel[role="mono"] {{ font-family: "DejaVu Sans Mono", monospace; }}',
        )
    )
