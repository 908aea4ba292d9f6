"""The job table: a QAbstractTableModel keyed by job id, filled page by page.

The model adapts values; it never fetches. When the view asks for more rows
(``fetchMore``) the model calls the page loader it was given (the session, which asks the
service) and later receives the page in :meth:`page_loaded`. Live updates arrive as
:meth:`apply_changes` with the current rows of the jobs the feed named; each is updated in
place, inserted at its sorted position, or removed, so nothing is ever reloaded wholesale.

The end of a long list is one keystroke away: :meth:`jump_to_end` drops the rows and reads
the list from the other end (the store's reverse order), so the last page arrives first; the
model is then in *tail* mode, where the view asks for earlier pages (:meth:`fetch_earlier`)
as the reader scrolls up, and rows are put in front. Jobs that would belong above a tail
are not inserted (they are counted in ``unseen_new``: the view's "N new jobs" bar).

One shared 1 Hz timer refreshes the time-dependent cells (lease countdowns, claim health,
ages) of the visible rows. That is display refresh; it never touches the store.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QColor, QFontDatabase, QIcon

from postproject import JobId, JobState
from postproject_gui.look.states import LIGHT, ClaimHealth, Palette
from postproject_gui.models import roles
from postproject_gui.models.columns import COLUMNS, column
from postproject_gui.models.flat_table import AnyIndex
from postproject_gui.models.paging import PagedScan
from postproject_gui.models.row_store import END, Key, RowStore, sort_key
from postproject_gui.services.filters import JobFilter
from postproject_gui.services.types import JobPage, JobRow, StoreQuery
from postproject_gui.text import progress_text

PageLoader = Callable[[int, StoreQuery, "str | None"], None]
StateIcons = Callable[[JobState, "ClaimHealth | None"], QIcon]

AGE_EVERY = 15  # ticks between refreshes of the Age column
_STATE, _LEASE, _AGE = column("state"), column("lease"), column("age")
DISPLAY, TOOLTIP, ALIGNMENT, FONT = (
    int(r.value)
    for r in (
        Qt.ItemDataRole.DisplayRole,
        Qt.ItemDataRole.ToolTipRole,
        Qt.ItemDataRole.TextAlignmentRole,
        Qt.ItemDataRole.FontRole,
    )
)
FOREGROUND, DECORATION, ACCESSIBLE = (
    int(r.value)
    for r in (
        Qt.ItemDataRole.ForegroundRole,
        Qt.ItemDataRole.DecorationRole,
        Qt.ItemDataRole.AccessibleTextRole,
    )
)
INITIAL_ORDER = int(Qt.ItemDataRole.InitialSortOrderRole.value)  # a header's first click
USER = int(Qt.ItemDataRole.UserRole.value)  # the roles of models/roles.py from here on
ALIGN_LEFT = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
ALIGN_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
ROW_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren


class JobTableModel(QAbstractTableModel):
    """Jobs matching a :class:`JobFilter`, in the store's order.

    Signals:
        status_changed(): loading, exhausted or scanned counts changed.
        reset_done(): the rows were cleared for a new filter.
        ticked(): the shared 1 Hz display refresh fired (other time-dependent widgets follow it).
        tail_loaded(): the last page arrived after :meth:`jump_to_end` (the view scrolls there).
        live_inserted(int row): a live update inserted a job new to this list at ``row``.
        unseen_changed(int): how many new jobs sort above a tail (not inserted).
    """

    status_changed = Signal()
    reset_done = Signal()
    ticked = Signal()
    tail_loaded = Signal()
    live_inserted = Signal(int)  # the row where a job new to this list was inserted by a live update
    unseen_changed = Signal(int)  # jobs new to this list that the tail cannot show (above it)

    def __init__(self, now: Callable[[], datetime], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._now = now
        self._painting_at: datetime | None = None  # "now" for every cell of a paint (see painting)
        self._loader: PageLoader | None = None
        self._icons: StateIcons = lambda state, health: QIcon()
        self._palette: Palette = LIGHT
        self._mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self._filter = JobFilter()
        self._rows = RowStore(sort_key(self._filter))
        self._query: StoreQuery | None = None
        self._scan: PagedScan[JobId, JobRow] = PagedScan()
        self._scan_key: Key | None = None  # key of the last job the store returned
        self._visible = (0, -1)
        self._tail = False  # reading from the end (see jump_to_end)
        self._tail_pending = False  # the first tail page is on its way
        self.unseen_new = 0
        self._ticks = 0
        self._timer = QTimer(self)
        self._timer.setInterval(1000)
        self._timer.timeout.connect(self._tick)

    # --- configuration -----------------------------------------------------------------

    def set_loader(self, loader: PageLoader | None) -> None:
        self._loader = loader

    def set_look(self, palette: Palette, icons: StateIcons) -> None:
        self._palette, self._icons = palette, icons
        if len(self._rows):
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._rows) - 1, len(COLUMNS) - 1))

    def set_visible_rows(self, first: int, last: int) -> None:
        """The rows the view shows (the 1 Hz refresh touches only these)."""
        self._visible = (first, last)

    @property
    def filter(self) -> JobFilter:
        return self._filter

    @property
    def loading(self) -> bool:
        return self._scan.loading

    @property
    def exhausted(self) -> bool:
        return self._scan.exhausted

    @property
    def scanned(self) -> int:
        return self._scan.scanned

    @property
    def tail(self) -> bool:
        """Whether the rows are the end of the list (earlier pages are read as the view scrolls up)."""
        return self._tail

    @property
    def generation(self) -> int:
        return self._scan.generation

    def row(self, index: int) -> JobRow:
        return self._rows[index]

    def rows(self) -> list[JobRow]:
        return list(self._rows)

    def row_of(self, job_id: JobId) -> int | None:
        return self._rows.index_of(job_id)

    def shutdown(self) -> None:
        """Stop the display timer and drop the loader (the session is closing)."""
        self._timer.stop()
        self._loader = None

    # --- loading -----------------------------------------------------------------------

    def reset(self, flt: JobFilter | None = None) -> None:
        """Drop every row and start over (new filter, or an explicit refresh)."""
        self.beginResetModel()
        if flt is not None:
            self._filter = flt
        self._rows = RowStore(sort_key(self._filter))
        self._scan.restart()
        self._query = None
        self._scan_key = None
        self._tail = self._tail_pending = False
        self._set_unseen(0)
        self.endResetModel()
        self.reset_done.emit()
        self.status_changed.emit()
        if self._loader is not None:
            self._request()

    def jump_to_end(self) -> None:
        """Show the end of the list at once: read it from the other end (the stuck-claims list,
        which the store reads in one order only, is read to its end instead)."""
        if self._loader is None or (self._scan.exhausted and not self._tail):
            self.tail_loaded.emit()
            return
        if self._filter.stuck:
            self._tail_pending = True
            self.fetchMore()
            return
        self.beginResetModel()
        self._rows = RowStore(sort_key(self._filter))
        self._scan.restart()
        self._scan_key = None
        self._tail = self._tail_pending = True
        self._query = replace(
            self._filter.store_query(self._now()), newest_first=not self._filter.newest_first
        )
        self.endResetModel()
        self.status_changed.emit()
        self._request()

    def fetch_earlier(self) -> None:
        """In tail mode, read the page before the first row held (the view scrolled up)."""
        if self._tail and self._scan.can_fetch(self._loader is not None):
            self._scan.asked()
            self._request()

    def canFetchMore(self, parent: AnyIndex = QModelIndex()) -> bool:  # noqa: B008
        return not parent.isValid() and not self._tail and self._scan.can_fetch(self._loader is not None)

    def fetchMore(self, parent: AnyIndex = QModelIndex()) -> None:  # noqa: B008
        if self.canFetchMore(parent):
            self._scan.asked()
            self._request()

    def _request(self) -> None:
        assert self._loader is not None
        if self._query is None:
            self._query = self._filter.store_query(self._now())
        self._scan.loading = True
        self.status_changed.emit()
        self._loader(self._scan.generation, self._query, self._scan.cursor)

    def page_loaded(self, generation: int, page: JobPage) -> None:
        """Append a page the loader fetched (ignored if the filter changed since)."""
        if not self._scan.is_current(generation):
            return
        now = self._now()
        fresh = [
            r
            for r in page.rows
            if r.id not in self._rows and self._filter.matches(r, now, text=self._filter.client_side)
        ]
        if fresh and self._tail:
            fresh.reverse()  # read from the end: the page is in reverse order
            self.beginInsertRows(QModelIndex(), 0, len(fresh) - 1)
            self._rows.prepend(fresh)
            self.endInsertRows()
        elif fresh:
            first = len(self._rows)
            self.beginInsertRows(QModelIndex(), first, first + len(fresh) - 1)
            self._rows.extend(fresh)
            self.endInsertRows()
        if page.rows:
            self._scan_key = self._rows.key(page.rows[-1])
        held = self._scan.landed(len(page.rows), page.next_cursor)
        self._start_timer()
        if held:
            self.apply_changes(held)
        if self._wants_more():
            self._request()
            return
        if self._tail_pending and self._filter.stuck and not self._scan.exhausted:
            self._request()  # the stuck-claims list is read to its end
            return
        if self._tail and self._scan.exhausted:
            self._tail = False  # everything is loaded: the list is whole again
        self.status_changed.emit()
        if self._tail_pending:
            self._tail_pending = False
            self.tail_loaded.emit()

    def page_failed(self, generation: int) -> None:
        """The loader could not read a page; the view may ask again (refresh)."""
        if self._scan.is_current(generation):
            self._scan.loading = False
            self.status_changed.emit()

    def _wants_more(self) -> bool:
        return self._loader is not None and self._scan.wants_more(self._filter.client_side, len(self._rows))

    # --- live updates ------------------------------------------------------------------

    def apply_changes(self, changed: Mapping[JobId, JobRow | None]) -> None:
        """Reconcile the rows of these jobs (None: the job is gone)."""
        if self._scan.held(changed):  # the page in flight may predate these changes: apply after it
            return
        now = self._now()
        for job_id, fresh in changed.items():
            self._apply_one(job_id, fresh, now)
        self._start_timer()

    def _apply_one(self, job_id: JobId, fresh: JobRow | None, now: datetime) -> None:
        keep = fresh is not None and self._filter.matches(fresh, now)
        index = self._rows.index_of(job_id)
        if index is not None:
            if fresh is not None and keep and self._rows.key(fresh) == self._rows.key(self._rows[index]):
                self._rows.replace(index, fresh)
                self.dataChanged.emit(self.index(index, 0), self.index(index, len(COLUMNS) - 1))
                return
            self.beginRemoveRows(QModelIndex(), index, index)
            self._rows.pop(index)
            self.endRemoveRows()
        if fresh is not None and keep and self._in_window(fresh):
            at = self._rows.position_for(fresh)
            self.beginInsertRows(QModelIndex(), at, at)
            self._rows.insert(at, fresh)
            self.endInsertRows()
            if index is None:
                self.live_inserted.emit(at)
        elif fresh is not None and keep and index is None and self._tail:
            self._set_unseen(self.unseen_new + 1)  # new, but above the tail shown

    def _in_window(self, row: JobRow) -> bool:
        """Whether a row falls in the part of the order already read (else another page has it)."""
        if self._scan.exhausted:
            return True
        if self._tail:
            return self._scan_key is not None and self._rows.key(row) > self._scan_key
        return self._rows.key(row) < (self._scan_key or (END,))

    def _set_unseen(self, count: int) -> None:
        if count != self.unseen_new:
            self.unseen_new = count
            self.unseen_changed.emit(count)

    # --- display refresh ---------------------------------------------------------------

    def _start_timer(self) -> None:
        if not self._timer.isActive() and self._loader is not None:
            self._timer.start()

    def _tick(self) -> None:
        self.ticked.emit()
        count = len(self._rows)
        if not count:
            return
        first, last = max(0, self._visible[0]), min(count - 1, self._visible[1])
        if last < first:
            first, last = 0, min(count - 1, 60)
        self._ticks += 1
        for row in range(first, last + 1):
            if self._rows[row].job.state is JobState.CLAIMED:
                self.dataChanged.emit(self.index(row, _STATE), self.index(row, _STATE))
                self.dataChanged.emit(self.index(row, _LEASE), self.index(row, _LEASE))
        if self._ticks % AGE_EVERY == 0:
            self.dataChanged.emit(self.index(first, _AGE), self.index(last, _AGE))

    # --- Qt model API ------------------------------------------------------------------

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation is not Qt.Orientation.Horizontal or not 0 <= section < len(COLUMNS):
            return None
        col = COLUMNS[section]
        if role == DISPLAY:
            return col.title
        if role == TOOLTIP:
            sorting = (
                " (click to sort newest or oldest first)"
                if col.sorts_by_id
                else " (click to sort by it, across every job)"
                if col.sort
                else ""
            )
            return (col.description or col.title) + sorting
        if role == ALIGNMENT:
            return ALIGN_RIGHT if col.align_right else ALIGN_LEFT
        if role == INITIAL_ORDER and col.sort == "finished":
            return Qt.SortOrder.DescendingOrder  # a first click: what finished last on top
        return None

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        return ROW_FLAGS if index.isValid() else Qt.ItemFlag.NoItemFlags

    @contextlib.contextmanager
    def painting(self) -> Iterator[None]:
        """While a view paints: every cell it asks for is shown as of one "now" (read once, not
        for each cell and role of the paint: three Python calls each time)."""
        self._painting_at = self._now()
        try:
            yield
        finally:
            self._painting_at = None

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        # Called for every role of every visible cell on each paint: roles are compared as
        # plain ints (enum lookups cost more than the work), rarely used roles come last, and
        # the rows are read from the store's list itself (its __len__ and __getitem__ are
        # Python calls).
        rows, number = self._rows.rows, index.row()
        if number < 0 or number >= len(rows):
            return None
        row, col = rows[number], COLUMNS[index.column()]
        if role == DISPLAY:
            return col.text(row, self._painting_at or self._now())
        if role == ALIGNMENT:
            return ALIGN_RIGHT if col.align_right else ALIGN_LEFT
        if role == FONT:
            return self._mono if col.mono else None
        if role == TOOLTIP:
            return col.tip(row, self._painting_at or self._now()) if col.tip else None
        if col.key in ("state", "lease"):
            return self._state_data(row, role, lease=col.key == "lease")
        return self._id_data(row, role) if role >= USER else None  # (Qt asks for background,
        # check state and decoration too, with every cell)

    def _state_data(self, row: JobRow, role: int, *, lease: bool) -> Any:
        if role not in (FOREGROUND, DECORATION, ACCESSIBLE):
            return self._id_data(row, role) if role >= USER else None
        health = row.health(self._painting_at or self._now())
        if role == FOREGROUND:
            if lease and health is ClaimHealth.LIVE:
                return None
            return QColor(self._palette.colour(row.job.state, health))
        if lease:
            return None
        if role == DECORATION:
            return self._icons(row.job.state, health)
        return f"State {COLUMNS[_STATE].text(row, self._now())}"

    def _id_data(self, row: JobRow, role: int) -> Any:
        if role == roles.JOB_ID_ROLE:
            return str(row.id)
        if role == roles.STATE_ROLE:
            return row.job.state.value
        if role == roles.PROGRESS_ROLE:
            return progress_text.fraction(row.job)
        if role == roles.HEALTH_ROLE:
            health = row.health(self._now())
            return health.value if health else ""
        return None
