"""The Artifacts table: representations with availability and knowledge, keyed by id.

:class:`ArtifactTableModel` adapts :class:`~postproject_gui.services.artifact_rows.ArtifactRow`
values; it never fetches. Rows are kept in representation id order (creation order, the
order the store pages them). When the view asks for more rows (``fetchMore``) the model
calls the page loader it was given (the session, which asks the service) and receives the
page in :meth:`~ArtifactTableModel.page_loaded`. :meth:`~ArtifactTableModel.set_rows`
reconciles a whole list in place (update, insert, remove; no reset),
:meth:`~ArtifactTableModel.apply_changes` reconciles the rows the feed named.

"Show only stale or diverged" and column sorting live in
:class:`~postproject_gui.models.artifact_proxy.ArtifactFilterProxy`, over the loaded rows.
While that filter is on the model keeps reading pages (:meth:`set_fill_attention`, with the
budget of :class:`~postproject_gui.models.paging.PagedScan`) until enough stale or diverged
rows showed up, so a filtered list never stalls on a page that had none; the Artifacts tab
says how many were searched.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping
from functools import cache
from typing import Any

from PySide6.QtCore import (
    QModelIndex,
    QObject,
    QRectF,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor, QFontDatabase, QIcon, QPainter, QPixmap

from postproject import ArtifactState, RepresentationId
from postproject_gui.look import artifact_states as looks
from postproject_gui.look.artifact_states import KnowledgeGlyph
from postproject_gui.look.theme import paint_artifact_glyph
from postproject_gui.models.flat_table import AnyIndex, FlatTableModel
from postproject_gui.models.paging import PagedScan
from postproject_gui.services.artifact_rows import ArtifactRow, labeller

PageLoader = Callable[[int, "str | None"], None]  # (generation, cursor): ask for a page
REPRESENTATION_ID_ROLE = Qt.ItemDataRole.UserRole + 20  # str: the representation id
KNOWLEDGE_ROLE = Qt.ItemDataRole.UserRole + 21  # str: ArtifactState value, "" when not evaluated
ATTENTION_ROLE = Qt.ItemDataRole.UserRole + 22  # bool: stale or diverged
SORT_ROLE = Qt.ItemDataRole.UserRole + 23  # a sortable key per column
COLUMNS = (
    ("asset", "Asset", "The asset this representation realises"),
    ("kind", "Kind", "Representation kind"),
    ("path", "Path", "media root:relative path, or the absolute path"),
    ("availability", "Availability", "Whether the file is readable on this machine"),
    ("knowledge", "Knowledge", "Whether it still matches its recorded inputs"),
    ("reasons", "Why", "The first reason for the knowledge state (hover for all)"),
)
CHANGED_ON_DISK = (
    "The file here no longer matches what was recorded (its size or modification time changed).\n"
    "Re-read file (Artifacts menu, or right-click) records its new content; what was made from it\n"
    "then turns stale."
)
KNOWLEDGE_COLUMN = 4
AVAILABILITY_COLUMN = 3


@cache
def artifact_icon(glyph: KnowledgeGlyph, colour: str) -> QIcon:
    """A painted knowledge or availability glyph as an icon, cached per glyph and colour."""
    icon = QIcon()
    for size in (16, 20, 24, 32):
        pixmap = QPixmap(size, size)
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        paint_artifact_glyph(painter, glyph, QColor(colour), QRectF(0, 0, size, size))
        painter.end()
        icon.addPixmap(pixmap)
    return icon


class ArtifactTableModel(FlatTableModel):
    """Rows of artifacts.

    Signals:
        stale_count_changed(int): loaded rows that are stale or diverged.
        status_changed(): loading, exhausted or the number read changed.
    """

    stale_count_changed = Signal(int)
    status_changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__([c[1] for c in COLUMNS], [c[2] for c in COLUMNS], parent)
        self._rows: list[ArtifactRow] = []
        self._keys: list[int] = []
        self._by_id: dict[RepresentationId, ArtifactRow] = {}
        self._palette = looks.LIGHT
        self._mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self._stale = 0
        self._loader: PageLoader | None = None
        self._scan: PagedScan[RepresentationId, ArtifactRow] = PagedScan()
        self._started = False
        self._fill_attention = False

    # --- paging ----------------------------------------------------------------------------

    def set_loader(self, loader: PageLoader | None) -> None:
        self._loader = loader

    @property
    def started(self) -> bool:
        return self._started

    @property
    def loading(self) -> bool:
        return self._scan.loading

    @property
    def exhausted(self) -> bool:
        return self._scan.exhausted

    @property
    def scanned(self) -> int:
        """Representations read from the store so far."""
        return self._scan.scanned

    def covers(self, rep_id: RepresentationId) -> bool:
        """Whether the pages read so far reach this id (a new row there belongs in the table)."""
        return self._scan.exhausted or (bool(self._keys) and rep_id.int <= self._keys[-1])

    def canFetchMore(self, parent: AnyIndex = QModelIndex()) -> bool:  # noqa: B008
        return not parent.isValid() and self._scan.can_fetch(self._loader is not None)

    def fetchMore(self, parent: AnyIndex = QModelIndex()) -> None:  # noqa: B008
        if self.canFetchMore(parent):
            self._scan.asked()
            self._request()

    def set_fill_attention(self, on: bool) -> None:
        """Keep reading pages while few loaded rows need attention (the stale filter is on)."""
        self._fill_attention = on
        if on and self._started and not self._scan.loading and self._wants_more():
            self._scan.asked()
            self._request()

    def _request(self) -> None:
        assert self._loader is not None
        self._started = self._scan.loading = True
        self.status_changed.emit()
        self._loader(self._scan.generation, self._scan.cursor)

    def page_loaded(self, generation: int, rows: Iterable[ArtifactRow], next_cursor: str | None) -> None:
        """Add a page the loader fetched (ignored after :meth:`shutdown`)."""
        if not self._scan.is_current(generation):
            return
        page: dict[RepresentationId, ArtifactRow | None] = {row.id: row for row in rows}
        page.update(self._scan.landed(len(page), next_cursor))  # feed changes held meanwhile win
        self.apply_changes(page)
        if self._wants_more():
            self._request()
        else:
            self.status_changed.emit()

    def page_failed(self, generation: int) -> None:
        if self._scan.is_current(generation):
            self._scan.loading = False
            self.status_changed.emit()

    def shutdown(self) -> None:
        """Drop the loader and ignore pages still in flight (the session is closing)."""
        self._loader = None
        self._scan.abandon()

    def _wants_more(self) -> bool:
        return self._loader is not None and self._scan.wants_more(self._fill_attention, self._stale)

    # --- values in -----------------------------------------------------------------------

    def set_look(self, palette: looks.ArtifactPalette) -> None:
        self._palette = palette
        if self._rows:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._rows) - 1, len(COLUMNS) - 1))

    def set_rows(self, rows: Iterable[ArtifactRow]) -> None:
        """Make the model hold exactly ``rows`` (reconciled by id: no reset, selection survives)."""
        fresh = {row.id: row for row in rows}
        changes: dict[RepresentationId, ArtifactRow | None] = dict.fromkeys(
            (i for i in self._by_id if i not in fresh), None
        )
        changes.update(fresh)
        self.apply_changes(changes)

    def apply_changes(self, changed: Mapping[RepresentationId, ArtifactRow | None]) -> None:
        """Reconcile these representations (None: it no longer exists, or left the list).
        While a page is being read the changes wait for it (it may predate them)."""
        if self._scan.held(changed):
            return
        for rep_id, row in changed.items():
            if row is not None and row.id != rep_id:
                raise ValueError(f"row for {row.id} given under {rep_id}")
            self._apply_one(rep_id, row)
        self._count()

    def _apply_one(self, rep_id: RepresentationId, row: ArtifactRow | None) -> None:
        index = self.row_of(rep_id)
        if index is not None and row is not None:
            if self._rows[index] != row:
                self._rows[index] = row
                self._by_id[rep_id] = row
                self.dataChanged.emit(self.index(index, 0), self.index(index, len(COLUMNS) - 1))
        elif index is not None:
            self.beginRemoveRows(QModelIndex(), index, index)
            del self._rows[index], self._keys[index], self._by_id[rep_id]
            self.endRemoveRows()
        elif row is not None:
            at = bisect_left(self._keys, rep_id.int)
            self.beginInsertRows(QModelIndex(), at, at)
            self._rows.insert(at, row)
            self._keys.insert(at, rep_id.int)
            self._by_id[rep_id] = row
            self.endInsertRows()

    def _count(self) -> None:
        stale = sum(1 for row in self._rows if row.needs_attention)
        if stale != self._stale:
            self._stale = stale
            self.stale_count_changed.emit(stale)

    # --- values out ----------------------------------------------------------------------

    @property
    def stale_count(self) -> int:
        return self._stale

    def row(self, index: int) -> ArtifactRow:
        return self._rows[index]

    def rows(self) -> list[ArtifactRow]:
        return list(self._rows)

    def row_of(self, rep_id: RepresentationId) -> int | None:
        if rep_id not in self._by_id:
            return None
        return bisect_left(self._keys, rep_id.int)

    def get(self, rep_id: RepresentationId) -> ArtifactRow | None:
        return self._by_id.get(rep_id)

    # --- Qt model API ----------------------------------------------------------------------

    def row_total(self) -> int:
        return len(self._rows)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self._rows) or index.column() >= len(COLUMNS):
            return None
        row, key = self._rows[index.row()], COLUMNS[index.column()][0]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(row, key)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tip(row, key)
        if role == SORT_ROLE:
            return self._sort_key(row, key)
        if role == REPRESENTATION_ID_ROLE:
            return str(row.id)
        if role == KNOWLEDGE_ROLE:
            return row.state.value if row.state is not None else ""
        if role == ATTENTION_ROLE:
            return row.needs_attention
        if role == Qt.ItemDataRole.FontRole and key == "path":
            return self._mono
        if key == "knowledge" and row.state is not None:
            return self._knowledge_data(row, role)
        if key == "availability":
            return self._availability_data(row, role)
        return None

    def _text(self, row: ArtifactRow, key: str) -> str:
        if key == "asset":
            return row.asset_name or looks.short_id(row.asset_id)
        if key == "kind":
            return row.representation.kind.value
        if key == "path":
            return row.display_path
        if key == "availability":
            label = looks.AVAILABILITY_LOOKS[row.availability].label
            return f"{label} · changed on disk" if row.changed_on_disk else label
        if key == "knowledge":
            return looks.look_of(row.state, row.knowledge).label if row.state is not None else "not evaluated"
        reasons = self._reasons(row)
        return reasons[0] if reasons and not looks.is_source(row.knowledge) else ""

    def _reasons(self, row: ArtifactRow) -> tuple[str, ...]:
        return looks.reason_lines(row.knowledge, labeller(self._by_id))

    def _tip(self, row: ArtifactRow, key: str) -> str | None:
        if key == "asset":
            return f"Asset {row.asset_id}\nRepresentation {row.id}"
        if key == "path":
            return row.display_path
        if key == "availability":
            tip = looks.AVAILABILITY_LOOKS[row.availability].description
            return f"{tip}\n{CHANGED_ON_DISK}" if row.changed_on_disk else tip
        if key in ("knowledge", "reasons") and row.state is not None:
            look = looks.look_of(row.state, row.knowledge)
            reasons = self._reasons(row)
            why = "\n".join(f"• {line}" for line in reasons) if look is not looks.SOURCE_LOOK else ""
            return f"{look.label}: {look.description}" + (f"\n{why}" if why else "")
        return None

    def _sort_key(self, row: ArtifactRow, key: str) -> Any:
        if key == "knowledge":
            return -1 if row.state is None else row.state.severity
        if key == "availability":
            return looks.AVAILABILITY_LOOKS[row.availability].label
        return self._text(row, key).lower()

    def _knowledge_data(self, row: ArtifactRow, role: int) -> Any:
        assert row.state is not None
        look = looks.look_of(row.state, row.knowledge)
        colour = looks.colour_of(self._palette, row.state, row.knowledge)
        if role == Qt.ItemDataRole.ForegroundRole:
            return QColor(colour)
        if role == Qt.ItemDataRole.DecorationRole:
            return artifact_icon(look.glyph, colour)
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return f"Knowledge {look.label}"
        return None

    def _availability_data(self, row: ArtifactRow, role: int) -> Any:
        look = looks.AVAILABILITY_LOOKS[row.availability]
        colour = self._palette.availability(row.availability)
        if row.changed_on_disk:  # drawn as a divergence waiting to be recorded
            colour = self._palette.knowledge(ArtifactState.DIVERGED)
        if role == Qt.ItemDataRole.ForegroundRole and row.availability is not None:
            return QColor(colour)
        if role == Qt.ItemDataRole.DecorationRole:
            return artifact_icon(look.glyph, colour)
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return f"Availability {look.label}" + (", changed on disk" if row.changed_on_disk else "")
        return None
