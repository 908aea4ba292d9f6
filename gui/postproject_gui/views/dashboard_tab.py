"""The Dashboard tab (Ctrl+4): throughput per kind, failure rate, backlog size and age, over
the last hour or day, drawn with pyqtgraph from the revision feed (see
:mod:`postproject_gui.models.dashboard_data`), and worker utilisation: the share of the online
workers' capacity in use, sampled each time the window reads the registered workers (every
few seconds while this tab or the Workers tab is shown, and when jobs are claimed or finish).

Data: nothing is read, and no chart built (nor pyqtgraph loaded), until the tab is first
shown: then the last day is read once, on a thread of its own, summed per minute; each batch
of revisions the feed delivers afterwards adds its job events, and one coalesced read brings
the counts, the oldest waiting job and the kinds of the jobs that just succeeded. A 30 s
clock moves the buckets along (ages grow with time alone); nothing polls the store. What a
commit costs is what it holds, and what a drawing costs is a day's minutes, however many
jobs the production has.

The same series are a table too (*Show as table*), for screen readers and copying.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QButtonGroup,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QStackedWidget,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from postproject import JobId, JobState, Revision
from postproject.model.workers import WorkerState
from postproject_gui.look.theme import Theme
from postproject_gui.models.dashboard_data import DashboardData, Series
from postproject_gui.models.flat_table import AnyIndex
from postproject_gui.services.dashboard_reads import DAY, job_events
from postproject_gui.services.types import JobCounts, WorkerList, liveness, used
from postproject_gui.session.monitor_session import MonitorSession
from postproject_gui.text import timefmt

if TYPE_CHECKING:
    import pyqtgraph as pg

CLOCK_MS = 30_000
UTILISATION_TITLE = "Worker utilisation (% of online capacity in use)"
KIND_COLOURS = ("#3b82c4", "#2a9d8f", "#8e6bbf", "#d9822b", "#c2477a", "#6b8e23", "#7a8793")


class SeriesModel(QAbstractTableModel):
    """The dashboard's series as a table: one row per bucket."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._series: Series | None = None
        self._kinds: list[str] = []

    def set_series(self, series: Series) -> None:
        self.beginResetModel()
        self._series, self._kinds = series, list(series.throughput)
        self.endResetModel()

    def _headers(self) -> list[str]:
        return [
            "Bucket",
            *(f"Succeeded: {k.partition(':')[2] or k}" for k in self._kinds),
            "Failure rate",
            "Backlog",
            "Oldest waiting",
            "Worker utilisation",
        ]

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() or self._series is None else len(self._series.starts)

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._headers())

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation is Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            headers = self._headers()
            return headers[section] if 0 <= section < len(headers) else None
        return None

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        series = self._series
        if series is None or not index.isValid() or role != Qt.ItemDataRole.DisplayRole:
            return None
        row, col = index.row(), index.column()
        if not (0 <= row < len(series.starts)):
            return None
        kinds = len(self._kinds)
        if col == 0:
            return timefmt.clock_time(series.starts[row])[:5]
        if col <= kinds:
            return str(series.throughput[self._kinds[col - 1]][row])
        rest = col - kinds
        if rest == 1:
            rate = series.failure_rate[row]
            return "—" if rate is None else f"{rate:.0%}"
        if rest == 2:
            return f"{series.backlog[row]:,}"
        if rest == 3:
            age = series.backlog_age[row]
            return "—" if age is None else timefmt.coarse(timedelta(seconds=age))
        if rest == 4:
            share = series.utilisation[row]
            return "—" if share is None else f"{share:.0f}%"
        return None


class DashboardTab(QWidget):
    """Signal: status(str)."""

    status = Signal(str)

    def __init__(self, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("dashboardTab")
        self.setAccessibleName("Dashboard")
        self._theme = theme
        self._session: MonitorSession | None = None
        self.data = DashboardData()
        self.span = "hour"
        self.series: Series | None = None
        self._reading = False  # a store read is in flight
        self._again = False  # feed events arrived during it: read again after
        self._started = False  # the day was asked for (the tab was shown with a production open)
        self._seen = 0  # the newest revision the feed delivered (the day is read up to it)
        self.plots: dict[str, pg.PlotWidget] = {}  # built when the tab is first shown
        self._clock = QTimer(self)
        self._clock.setInterval(CLOCK_MS)
        self._clock.timeout.connect(self.redraw)
        self.model = SeriesModel(self)
        self._build()
        self.set_theme(theme)

    # --- construction ------------------------------------------------------------------

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 6, 0, 0)
        layout.setSpacing(6)
        head = QHBoxLayout()
        head.setSpacing(14)
        self.figures: dict[str, QLabel] = {}
        for key, caption in (
            ("succeeded", "Succeeded"),
            ("failed", "Failed"),
            ("failure_rate", "Failure rate"),
            ("backlog", "Waiting"),
            ("oldest", "Oldest waiting"),
        ):
            box = QVBoxLayout()
            box.setSpacing(0)
            number = QLabel("–", self)
            number.setObjectName(f"dash_{key}")
            number.setProperty("role", "figure")
            label = QLabel(caption, self)
            label.setProperty("role", "muted")
            box.addWidget(number)
            box.addWidget(label)
            head.addLayout(box)
            self.figures[key] = number
        head.addStretch(1)
        self.note = QLabel("", self)
        self.note.setProperty("role", "muted")
        head.addWidget(self.note)
        self.spans = QButtonGroup(self)
        for span, text in (("hour", "Last hour"), ("day", "Last day")):
            button = QToolButton(self)
            button.setText(text)
            button.setCheckable(True)
            button.setChecked(span == self.span)
            button.setObjectName(f"span_{span}")
            button.setToolTip(f"Series over the {text.lower()}")
            button.clicked.connect(lambda _c=False, s=span: self.set_span(s))
            self.spans.addButton(button)
            head.addWidget(button)
        self.as_table = QToolButton(self)
        self.as_table.setText("Show as table")
        self.as_table.setCheckable(True)
        self.as_table.setToolTip("The same series as a table (for reading aloud and copying)")
        head.addWidget(self.as_table)
        layout.addLayout(head)
        self.stack: QStackedWidget = QStackedWidget(self)
        self.as_table.toggled.connect(lambda on: self.stack.setCurrentIndex(1 if on else 0))
        self.charts = QFrame(self)
        self.charts.setObjectName("dashboardCharts")
        self.stack.addWidget(self.charts)
        self.table = QTableView(self)
        self.table.setObjectName("dashboardTable")
        self.table.setAccessibleName("Dashboard series")
        self.table.setModel(self.model)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.stack.addWidget(self.table)
        layout.addWidget(self.stack, 1)

    def _build_charts(self) -> None:
        """The four charts (pyqtgraph, and numpy with it, are loaded here: ~50 MiB the window
        does not need until the Dashboard is shown)."""
        import pyqtgraph as pg

        charts = self.charts
        grid = QGridLayout(charts)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setSpacing(6)
        for (key, title), (row, col) in zip(
            (
                ("throughput", "Throughput: succeeded per kind"),
                ("failure_rate", "Failure rate (% of finished)"),
                ("backlog", "Backlog: waiting jobs"),
                ("utilisation", UTILISATION_TITLE),
            ),
            ((0, 0), (0, 1), (1, 0), (1, 1)),
            strict=True,
        ):
            plot = pg.PlotWidget(parent=charts, axisItems={"bottom": pg.DateAxisItem()})
            plot.setObjectName(f"plot_{key}")
            plot.setAccessibleName(title)
            plot.setMenuEnabled(False)
            plot.setMouseEnabled(x=False, y=False)
            plot.hideButtons()
            plot.getPlotItem().setTitle(title)
            plot.setMinimumHeight(140)
            grid.addWidget(plot, row, col)
            self.plots[key] = plot
        self.legend = self.plots["throughput"].addLegend(offset=(8, 4), labelTextSize="8pt")
        self.placeholder = pg.TextItem("No registered workers online yet", anchor=(0.5, 0.5))
        self.plots["utilisation"].addItem(self.placeholder)
        self._theme_charts()

    # --- session -------------------------------------------------------------------------

    def connect_session(self, session: MonitorSession) -> None:
        self._session = session
        self.data = DashboardData()
        self._started, self._seen = False, 0
        session.opened.connect(self._opened)
        session.revisions_arrived.connect(self._revisions)
        session.workers.changed.connect(self._workers)
        self._clock.start()
        self.redraw()

    def disconnect_session(self) -> None:
        self._clock.stop()
        self._session = None
        self.data = DashboardData()
        self._started = False
        self.redraw()

    @property
    def ready(self) -> bool:
        """The day is read and no read is in flight (what a snapshot waits for)."""
        return self.data.loaded and not self._reading

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self.plots:
            self._build_charts()
        self.start()
        self.redraw()

    def _opened(self, info: Any) -> None:
        self._seen = max(self._seen, info.head)
        if self.isVisible():
            self.start()

    def start(self) -> None:
        """Read the day (once per production, when the tab is first shown with it open)."""
        session = self._session
        if session is None or session.info is None or self._started:
            return
        self._started = True
        head = max(self._seen, session.info.head)
        session.spawn(self._read_day(session, head), "Reading the dashboard's day")

    async def _read_day(self, session: MonitorSession, head: int) -> None:
        self._reading = True
        try:
            history = await session.service.dashboard_history(session.now(), head)
            if session is not self._session:
                return
            self.data.load(history)
            await self._read_store(session)
        finally:
            self._reading = False
        self.redraw()
        if self._again:
            self._refresh()

    def _workers(self, workers: WorkerList) -> None:
        online = [w for w in workers.workers if liveness(w, workers.read_at) is WorkerState.ONLINE]
        self.data.sample(workers.read_at, sum(used(w) for w in online), sum(w.capacity for w in online))
        if self.data.loaded and self.isVisible():
            self.redraw()

    def _revisions(self, revisions: list[Revision]) -> None:
        if revisions:
            self._seen = max(self._seen, revisions[-1].sequence)
        if not self._started:
            return  # the day, read when the tab is first shown, will hold them
        events = job_events(revisions)
        if not events:
            return
        self.data.add(events)
        self._refresh()

    def _refresh(self) -> None:
        session = self._session
        if session is None or not self.data.loaded:
            return
        if self._reading:
            self._again = True
            return
        session.spawn(self._coalesced(session), "Updating the dashboard")

    async def _coalesced(self, session: MonitorSession) -> None:
        self._reading = True
        try:
            while True:
                self._again = False
                await self._read_store(session)
                if not self._again or session is not self._session:
                    break
        finally:
            self._reading = False
        self.redraw()

    async def _read_store(self, session: MonitorSession) -> None:
        missing: set[JobId] = self.data.missing_facts()
        counts, oldest, facts = await session.service.dashboard_facts(missing)
        if session is not self._session:
            return
        self._set_counts(counts)
        self.data.oldest_waiting = oldest
        self.data.add_kinds(facts)

    def _set_counts(self, counts: JobCounts) -> None:
        self.data.backlog_now = counts.by_state.get(JobState.REQUESTED, 0)

    # --- drawing -------------------------------------------------------------------------

    def set_span(self, span: str) -> None:
        self.span = span
        for button in self.spans.buttons():
            button.setChecked(button.objectName() == f"span_{span}")
        self.redraw()

    def now(self) -> datetime | None:
        return self._session.now() if self._session is not None else None

    def redraw(self) -> None:
        now = self.now()
        if now is None or not self.data.loaded:
            self.series = None
            for plot in ("throughput", "failure_rate", "backlog"):
                if plot in self.plots:
                    self.plots[plot].getPlotItem().clear()
            for label in self.figures.values():
                label.setText("–")
            self.note.setText("Reading the day's revisions…" if self._session is not None else "")
            return
        self.data.forget_before(now - DAY)
        series = self.data.series(now, self.span)
        self.series = series
        self.model.set_series(series)
        if self.plots and self.isVisible():  # hidden charts are drawn when shown again
            self._draw(series)
        self._figures(series)

    def _draw(self, series: Series) -> None:
        import pyqtgraph as pg

        ui, states = self._theme.ui, self._theme.states
        xs = [s.timestamp() for s in series.starts]
        width = series.bucket.total_seconds() * 0.8
        centres = [x + series.bucket.total_seconds() / 2 for x in xs]
        plot = self.plots["throughput"]
        plot.getPlotItem().clear()
        self.legend.clear()
        base = [0.0] * len(xs)
        for index, (kind, counts) in enumerate(series.throughput.items()):
            colour = KIND_COLOURS[index % len(KIND_COLOURS)]
            bars = pg.BarGraphItem(
                x=centres, height=counts, y0=base, width=width, brush=colour, pen=pg.mkPen(None)
            )
            plot.addItem(bars)
            self.legend.addItem(bars, kind.partition(":")[2] or kind)
            base = [b + c for b, c in zip(base, counts, strict=True)]
        plot.setYRange(0, max([*base, 1]) * 1.15, padding=0)
        plot = self.plots["failure_rate"]
        plot.getPlotItem().clear()
        points = [(c, r * 100) for c, r in zip(centres, series.failure_rate, strict=True) if r is not None]
        if points:
            failed = states.states[JobState.FAILED]
            plot.addItem(
                pg.BarGraphItem(
                    x=[p[0] for p in points],
                    height=[max(p[1], 1.0) for p in points],  # a 0 % bucket still shows it finished work
                    width=width,
                    brush=failed,
                    pen=pg.mkPen(None),
                )
            )
        plot.setYRange(0, 100, padding=0.02)
        plot = self.plots["backlog"]
        plot.getPlotItem().clear()
        ends = [x + series.bucket.total_seconds() for x in xs]
        colour = states.states[JobState.REQUESTED]
        fill = pg.mkColor(colour)
        fill.setAlpha(60)
        plot.plot(ends, series.backlog, pen=pg.mkPen(colour, width=2), fillLevel=0, brush=fill)
        plot.setYRange(0, max([*series.backlog, 1]) * 1.15, padding=0)
        for key in ("throughput", "failure_rate", "backlog", "utilisation"):
            self.plots[key].setXRange(xs[0], ends[-1], padding=0)
        plot = self.plots["utilisation"]
        plot.getPlotItem().clear()
        title = UTILISATION_TITLE
        if self.data.samples:
            _at, busy, capacity = self.data.samples[-1]
            title += f" — now {busy:,} of {capacity:,} in use" if capacity else " — none online now"
        plot.getPlotItem().titleLabel.setText(title, color=ui.text, size="10pt")
        shares = [(c, u) for c, u in zip(centres, series.utilisation, strict=True) if u is not None]
        if shares:
            colour = states.states[JobState.CLAIMED]
            fill = pg.mkColor(colour)
            fill.setAlpha(60)
            plot.plot(
                [x for x, _u in shares],
                [u for _x, u in shares],
                pen=pg.mkPen(colour, width=2),
                fillLevel=0,
                brush=fill,
                symbol="o" if len(shares) < 3 else None,
                symbolSize=7,
                symbolBrush=colour,
                symbolPen=None,
            )
        else:
            plot.addItem(self.placeholder)
            self.placeholder.setPos((xs[0] + ends[-1]) / 2, 50)
            self.placeholder.setColor(ui.muted)
        plot.setYRange(0, 100, padding=0.02)

    def _figures(self, series: Series) -> None:
        succeeded = sum(sum(v) for v in series.throughput.values())
        failed = self.data.failed_since(series.starts[0])
        total = succeeded + failed
        self.figures["succeeded"].setText(f"{succeeded:,}")
        self.figures["failed"].setText(f"{failed:,}")
        self.figures["failure_rate"].setText(f"{failed / total:.0%}" if total else "—")
        self.figures["backlog"].setText(f"{self.data.backlog_now:,}")
        age = series.backlog_age[-1]
        self.figures["oldest"].setText(timefmt.coarse(timedelta(seconds=age)) if age is not None else "—")
        span = "hour" if series.span == "hour" else "day"
        partial = "" if self.data.complete else " (the oldest part of the day was not read: too many events)"
        self.note.setText(
            f"Over the last {span}, {int(series.bucket.total_seconds() // 60)} min buckets{partial}"
        )

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        if self.plots:
            self._theme_charts()
        self.redraw()

    def _theme_charts(self) -> None:
        import pyqtgraph as pg

        ui = self._theme.ui
        for plot in self.plots.values():
            plot.setBackground(ui.base)
            item = plot.getPlotItem()
            item.titleLabel.setAttr("color", ui.text)
            item.titleLabel.setText(item.titleLabel.text, color=ui.text, size="10pt")
            for side in ("left", "bottom"):
                axis = item.getAxis(side)
                axis.setPen(pg.mkPen(ui.border))
                axis.setTextPen(pg.mkPen(ui.muted))
            item.showGrid(x=False, y=True, alpha=0.15)
        self.legend.setLabelTextColor(ui.text)
