"""The first rows first: what the window does while a production opens.

From the moment a production is asked for until its first page of jobs is in, the window's
widgets do not paint: the first paint after an open has the rows (no empty table painted
meanwhile, no half-filled window), and the GUI thread stays free to take the page the moment
a reader has read it. (The widgets in the window, not the top-level window itself: a window
held before its first expose would never paint, at least offscreen.)

Work the first rows do not need (the lifecycle diagram of the overview, the other tabs'
connection to the production, the rest of the session's opening: the feed, the counts,
knowledge, workers, the event log) waits until those rows are painted, and runs once then,
however often it was asked for meanwhile. What shows that work (the detail panel, and the
summary's counts, read after the first page) holds its paints until then, so that the first
rows' paint does not draw it as it was, only for it to be drawn again right after; so does the
window's chrome (menus, toolbars, the event log, the status bar), which the first rows' paint
then need not draw too.

What the first rows' paint needs whatever the production is, the fonts of the table's cells
and header with their glyphs and the state icons, is made while the window is built
(:func:`prepare_first_paint`): made by that paint, it came after the page was in, in the time
to the first rows. For the same reason the window is polished and laid out before its first show
(:func:`polish_shown`).

The hold ends when the first page is in, or when the opening failed, and at the latest after
:data:`HOLD_MS` (a slow server: the window then paints its "Loading…"). While it lasts, the
interpreter hands over between threads every :data:`SWITCH_S` when the production is in a
database (the reader gets it sooner at each round trip). What waits for the
painted rows runs at the latest :data:`PAINT_MS` after that (a table not on screen, as with
another tab shown, never paints).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer
from PySide6.QtGui import QFont, QFontDatabase, QIcon, QImage, QPainter
from PySide6.QtWidgets import QTableView, QWidget

from postproject import JobState
from postproject_gui.look.states import ClaimHealth

HOLD_MS = 300  # the window paints at the latest this long after an open, page or not
PAINT_MS = 100  # deferred work runs at the latest this long after the hold ends
SWITCH_S = 0.0005  # the interpreter's switch interval while a first page is read (Python's: 5 ms)


# What a table cell shows: ASCII, and the few other characters of ids, ages, sizes and paths.
SAMPLE = "".join(chr(c) for c in range(32, 127)) + "…—–·×→←↑↓≥≤°µ"


def prepare_first_paint(
    table: QTableView, state_icon: Callable[[JobState, ClaimHealth | None], QIcon]
) -> None:
    """Load the fonts a table's first rows are drawn with, their glyphs, and the state icons (see
    the module docstring): each font draws :data:`SAMPLE` once into a small image, and every
    state's icon (and a claim's health's) is made."""
    table.ensurePolished()
    header = QFont(table.horizontalHeader().font())
    header.setWeight(QFont.Weight.DemiBold)  # the style sheet's header weight (600)
    fonts = (table.font(), header, QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    image = QImage(8, 8, QImage.Format.Format_ARGB32_Premultiplied)
    painter = QPainter(image)
    try:
        for font in fonts:
            painter.setFont(font)
            painter.drawText(0, 6, SAMPLE)
    finally:
        painter.end()
    for state in JobState:
        for health in (None, *ClaimHealth):
            state_icon(state, health)


def polish_shown(window: QWidget) -> None:
    """Finish ``window`` before its first show (see the module docstring): polish the widgets that
    show will show, and run the layout requests that building it posted. The application shows
    the window and opens a production in the same turn, so what the show did came after the open,
    in the time to the first rows: under the style sheet it polished every widget it showed, and
    it ran those requests, the hidden tabs' and closed panels' too. (Widgets shown later polish
    when they show, as before.) PostgreSQL 200k, 8 alternated runs: the GUI thread's CPU from the
    open to the painted rows 50 -> 46 ms (medians)."""
    window.ensurePolished()
    for widget in window.findChildren(QWidget):
        if widget.isVisibleTo(window):
            widget.ensurePolished()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)


class _Switching:
    """The interpreter's switch interval, lowered while any window's first page is read, and
    restored when the last one is in (windows may open productions at once).

    The reader opening the production and reading the page wakes many times (each round trip, a
    connection's handshake): every wake needs the interpreter, which the GUI thread holds while
    it wires and first shows the window, handing it over only after the switch interval. At
    0.5 ms instead of 5 the first rows came after 180 ms instead of 219 (PostgreSQL, 200,000
    jobs, medians of 8 alternated pairs at load 8-9; 6 of 8 pairs faster). Only for a production
    in a database: a SQLite reader waits on no network, and the GUI thread handing the
    interpreter over ten times as often only cost it (200,000 jobs: median ratios 1.16-1.18 to
    Python's interval in two runs of 8-10 alternated pairs on a loaded machine)."""

    def __init__(self) -> None:
        self.holders = 0
        self.saved = 0.0

    def lower(self) -> None:
        if self.holders == 0:
            self.saved = sys.getswitchinterval()
            sys.setswitchinterval(SWITCH_S)
        self.holders += 1

    def restore(self) -> None:
        if self.holders == 0:
            return
        self.holders -= 1
        if self.holders == 0:
            sys.setswitchinterval(self.saved)


_SWITCHING = _Switching()


class FirstRows(QObject):
    """Holds the paints of ``held()`` from :meth:`begin` until :meth:`release`, then runs what was
    :meth:`defer`-red once ``viewport`` (the job table's) has painted (see the module docstring);
    the paints of ``held_longer()`` are held until that work ran.

    ``holding``: paints are held; ``active``: between :meth:`begin` and the deferred work's run.
    """

    def __init__(
        self,
        held: Callable[[], Sequence[QWidget]],
        viewport: QWidget,
        held_longer: Callable[[], Sequence[QWidget]] = list,
    ) -> None:
        super().__init__(viewport)
        self._held, self._held_longer, self._viewport = held, held_longer, viewport
        self._holding_now: list[QWidget] = []
        self._holding_longer: list[QWidget] = []
        self._holding = False
        self._switching = False  # the switch interval lowered by this opening (see begin)
        self._awaiting_paint = False
        self._deferred: dict[str, Callable[[], object]] = {}
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._timed_out)
        viewport.installEventFilter(self)

    @property
    def holding(self) -> bool:
        return self._holding

    @property
    def active(self) -> bool:
        return self._holding or self._awaiting_paint

    def begin(self, *, networked: bool = False) -> None:
        """A production is being opened: hold paints until :meth:`release`; ``networked`` (a
        production in a database): lower the switch interval meanwhile (see :class:`_Switching`)."""
        self.end()
        self._holding = True
        self._switching = networked
        if networked:
            _SWITCHING.lower()
        self._holding_now = [w for w in self._held() if w.updatesEnabled()]
        self._holding_longer = [w for w in self._held_longer() if w.updatesEnabled()]
        for widget in (*self._holding_now, *self._holding_longer):
            widget.setUpdatesEnabled(False)  # (held by name, a child stays held when its parent is not)
        self._timer.start(HOLD_MS)

    def defer(self, key: str, work: Callable[[], object]) -> bool:
        """Run ``work`` once the first rows are painted (the last one given per ``key``), if an
        opening is under way: True; else False (the caller runs it now)."""
        if not self.active:
            return False
        self._deferred.pop(key, None)
        self._deferred[key] = work  # in the order last asked for
        return True

    def release(self) -> None:
        """The first page is in (or will not come): paint, then run the deferred work."""
        if not self._holding:
            return
        self._holding = False
        self._restore_switching()
        self._paint_again()
        if self._viewport.isVisible():
            self._awaiting_paint = True
            self._timer.start(PAINT_MS)
        else:
            self._timer.stop()
            self._awaiting_paint = True
            QTimer.singleShot(0, self, self._flush)

    def end(self) -> None:
        """Stop holding and drop the deferred work (the production is closing)."""
        self._timer.stop()
        self._paint_again()
        self._paint_later_ones()
        self._restore_switching()
        self._holding = self._awaiting_paint = False
        self._deferred.clear()

    def _restore_switching(self) -> None:
        if self._switching:
            self._switching = False
            _SWITCHING.restore()

    def _paint_again(self) -> None:
        for widget in self._holding_now:
            widget.setUpdatesEnabled(True)
        self._holding_now = []

    def _paint_later_ones(self) -> None:
        for widget in self._holding_longer:
            widget.setUpdatesEnabled(True)
        self._holding_longer = []

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if self._awaiting_paint and event.type() == QEvent.Type.Paint and watched is self._viewport:
            self._timer.stop()
            QTimer.singleShot(0, self, self._flush)  # after this paint, not inside it
        return False

    def _timed_out(self) -> None:
        if self._holding:
            self.release()
        else:
            self._flush()

    def _flush(self) -> None:
        if not self._awaiting_paint:
            return
        self._awaiting_paint = False
        self._timer.stop()
        work, self._deferred = list(self._deferred.values()), {}
        try:
            for run in work:
                run()
        finally:
            self._paint_later_ones()
