"""One open production: the service, the feed watcher and the models they feed.

The session turns feed signals into narrow reloads: the rows of the jobs named by new
revisions, the counts, the claim outlook and the job shown in the detail panel. One update
runs at a time; ids that arrive meanwhile are merged into the next round, so a burst of
commits costs a few reads, not one per commit. ``applied(N)`` says the view now reflects
revision N (rows, counts and detail were read after revision N was seen).

What is known about artifacts (the Artifacts and Provenance tabs, the stale count) is kept
by :attr:`MonitorSession.knowledge`, a :class:`KnowledgeSession` fed the same revisions; the
registered workers by :attr:`MonitorSession.workers` (see :mod:`postproject_gui.session.worker_watch`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import Future
from datetime import datetime
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from postproject import FailureGroup, JobId, JobState, NotFoundError, PostProjectError, Revision
from postproject.model.errors import SERVER_AWAY
from postproject_gui.dialogs.error_presenter import ErrorPresenter
from postproject_gui.models.event_log_model import OLDER_PAGE, EventLogModel
from postproject_gui.models.job_table_model import JobTableModel
from postproject_gui.services.feed_watcher import FeedWatcher
from postproject_gui.services.filters import JobFilter
from postproject_gui.services.production_service import ProductionService, page_size
from postproject_gui.services.tasks import TaskRunner
from postproject_gui.services.types import (
    ClaimOutlook,
    JobCounts,
    JobDetail,
    JobPage,
    ProductionInfo,
    StoreQuery,
)
from postproject_gui.services.waiting import BusyWaiter, Operation, is_busy
from postproject_gui.session.knowledge_session import KnowledgeSession
from postproject_gui.session.worker_watch import WorkerWatch
from postproject_gui.text import location as production_location

SEED_REVISIONS = 10  # the event log starts with the last few revisions
RELOAD_ALL_ABOVE = 2000  # more changed jobs than this in one round: reload the table instead


class MonitorSession(QObject):
    """Everything the window shows about one production (see the module docstring).

    Signals:
        opened(ProductionInfo), open_failed(str: the location as shown), counts_changed(JobCounts),
        kinds_changed(tuple[str, ...]), outlook_changed(ClaimOutlook), filter_changed(JobFilter),
        detail_loaded(JobDetail), detail_missing(str job id), applied(int revision),
        live_changed(bool), revisions_arrived(list[Revision]),
        feed_stalled(float seconds without an answer from the feed; 0 when it answers).

    ``waiter`` keeps what the busy database refused and retries it (see services/waiting.py).
    """

    opened = Signal(ProductionInfo)
    open_failed = Signal(str)
    counts_changed = Signal(JobCounts)
    kinds_changed = Signal(tuple)
    outlook_changed = Signal(ClaimOutlook)
    filter_changed = Signal(JobFilter)
    detail_loaded = Signal(JobDetail)
    detail_missing = Signal(str)
    applied = Signal(int)
    live_changed = Signal(bool)
    revisions_arrived = Signal(list)
    feed_stalled = Signal(float)
    failure_groups_changed = Signal(tuple)

    def __init__(
        self, service: ProductionService, presenter: ErrorPresenter, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.service = service
        self._presenter = presenter
        self._runner = TaskRunner(service.loop, self._failed)
        self.waiter = BusyWaiter(self.spawn, self)
        self.table = JobTableModel(service.now, self)  # its loader is set once the service is open
        self.events = EventLogModel(self)
        self.knowledge = KnowledgeSession(service, self.spawn, self)
        self.knowledge.settled.connect(self._notify_idle)
        self.workers = WorkerWatch(service, self.spawn, self)
        self.info: ProductionInfo | None = None  # set once opened (the first page is in by then)
        self._open_read = False  # the production opened (a page failing before says nothing)
        self._opening_rest = False  # the opening after the first page (counts, kinds, outlook) runs
        self._watcher: FeedWatcher | None = None
        self._filter = JobFilter()
        self._counts: JobCounts | None = None
        self._failed_seen: tuple[str | None, int] | None = None
        self.failure_groups: tuple[FailureGroup, ...] = ()
        self._outlook: ClaimOutlook | None = None
        self._kinds: tuple[str, ...] = ()
        self._detail_id: JobId | None = None
        self._detail: JobDetail | None = None
        self._dirty: set[JobId] = set()
        self._progress_reading = False
        self._progress_again = False
        self._feed_head = 0
        self._applied = -1
        self._updating = False
        self._held = False
        self._live = False
        self._reread_when_live = False
        self._reads = 0
        self._idle: list[asyncio.Future[None]] = []
        self._shown: asyncio.Future[None] | None = None  # see start(paced=True)
        self._opening: asyncio.Future[ProductionInfo] | None = None  # see begin_open()
        self._table_idle: list[asyncio.Future[None]] = []
        self._boundary = QTimer(self)
        self._boundary.setSingleShot(True)
        self._boundary.timeout.connect(self.recheck_time)
        self._stalled = 0.0
        self._liveness = QTimer(self)  # a clock for the feed's liveness: it never reads the store
        self._liveness.setInterval(1000)
        self._liveness.timeout.connect(self.check_liveness)

    # --- facts -------------------------------------------------------------------------

    @property
    def filter(self) -> JobFilter:
        return self._filter

    @property
    def counts(self) -> JobCounts | None:
        return self._counts

    @property
    def outlook(self) -> ClaimOutlook | None:
        return self._outlook

    @property
    def kinds(self) -> tuple[str, ...]:
        return self._kinds

    @property
    def detail(self) -> JobDetail | None:
        return self._detail

    @property
    def detail_id(self) -> JobId | None:
        return self._detail_id

    @property
    def applied_revision(self) -> int:
        return self._applied

    @property
    def live(self) -> bool:
        return self._live

    @property
    def held(self) -> bool:
        return self._held

    def hold(self) -> None:
        """Stop following the feed: the view stays at the revision it reached (a snapshot
        freezes it there while writers keep committing); the round in flight finishes."""
        self._held = True

    @property
    def busy(self) -> bool:
        return (
            self._opening_rest
            or self._updating
            or self.table.loading
            or self._reads > 0
            or self.knowledge.busy
        )

    def now(self) -> datetime:
        return self.service.now()

    def spawn(self, coro: Coroutine[Any, Any, Any], what: str) -> asyncio.Task[Any] | None:
        return self._runner.spawn(coro, what)

    def spawn_retryable(self, make: Operation, what: str) -> None:
        """Run ``make()`` (a write); if the database is busy, wait and retry (non-modal)."""
        self.waiter.run(make, what)

    def _failed(self, exc: BaseException, what: str) -> None:
        """A background task failed: a busy database waits (the view is read again when it
        answers); a lost connection, or a server that cannot be reached (stopped, restarting,
        refusing connections), is the feed's to show ("Not live") and the views are read again
        once it is live; anything else goes to the error presenter."""
        if is_busy(exc) and self.waiter.accept(exc, self._reread, "Reading the production"):
            return
        if isinstance(exc, PostProjectError) and exc.reason in SERVER_AWAY:
            self._reread_when_live = True
            if self._live:  # the feed has not noticed (yet), or is back already: try in a second
                QTimer.singleShot(1000, self, self._retry_if_live)
            return
        self._presenter.present(exc, what)

    async def _reread(self) -> None:
        await self._reload_all(self._feed_head)

    @property
    def stalled(self) -> float:
        """Seconds the feed has not answered, when that is long enough to say so (else 0)."""
        return self._stalled

    def check_liveness(self) -> None:
        """Is the feed still answering? (A 1 Hz clock; it never touches the store.)"""
        watcher = self._watcher
        stalled = watcher.silence() if watcher is not None and watcher.stalled else 0.0
        if stalled or self._stalled:
            self._stalled = stalled
            self.feed_stalled.emit(stalled)

    # --- opening and closing -----------------------------------------------------------

    def start(self, *, paced: bool = False) -> None:
        """Open the production in the background (``opened`` then ``applied`` follow).

        The first page is what people wait for: the opening and then the first page are handed
        to the first reader thread here, before this returns (no turn of the GUI thread in
        between), and nothing else is read, nor the feed watched, until that page is in.
        ``paced``: the rest of the opening also waits for :meth:`first_rows_shown` (the window
        says when it has painted those rows)."""
        opening = self.begin_open()
        self.table.set_loader(self._load_page)
        self.table.reset(self._filter)  # asks for the first page: read right after the opening
        if paced:
            self._shown = self.service.loop.create_future()
        self._opening_rest = True  # busy until the counts, kinds and outlook are read too
        self.spawn(self._open(opening), f"Opening {production_location.name(self.service.location)}")

    def begin_open(self) -> asyncio.Future[ProductionInfo]:
        """Hand the opening to the first reader now, if not yet (:meth:`start` follows): the
        window asks for it before anything else it does to open, so that the connection (on
        PostgreSQL: a server process, a handshake) is made while the window gets ready."""
        if self._opening is None:
            self._opening = self.service.begin_open()
        return self._opening

    def first_rows_shown(self) -> None:
        """The window painted the first rows: the rest of the opening may go on."""
        if self._shown is not None and not self._shown.done():
            self._shown.set_result(None)

    async def _open(self, opening: asyncio.Future[ProductionInfo]) -> None:
        try:
            await self._opened(opening)
        finally:
            self._opening_rest = False
            self._notify_idle()

    async def _opened(self, opening: asyncio.Future[ProductionInfo]) -> None:
        try:
            info = await opening
        except PostProjectError as exc:
            self.table.set_loader(None)
            self._presenter.present(exc, f"Opening {production_location.name(self.service.location)}")
            self.open_failed.emit(self.service.shown)
            return
        self._open_read = True
        await self._until_table_idle()  # the first page first: nothing competes with it
        if self._shown is not None:
            await self._shown
        self.info = info
        self._feed_head = info.head
        watcher = self.service.watcher(after=info.head)
        watcher.setParent(self)
        watcher.revisions_arrived.connect(self._on_revisions)
        watcher.jobs_changed.connect(self._on_jobs_changed)
        watcher.head_changed.connect(self._on_head)
        watcher.live_changed.connect(self._on_live)
        watcher.progress_moved.connect(self._on_progress)
        self._watcher = watcher
        watcher.start()
        self._liveness.start()
        self.opened.emit(info)
        await self._reload_all(info.head, table=False)  # the counts, the kinds, the outlook
        self.knowledge.start()
        self.workers.start()
        self.events.add(await self.service.revisions(SEED_REVISIONS))
        self.events.set_loader(self._load_older)

    def close(self) -> None:
        """Stop the watcher, the timers, background work and the service's threads."""
        self._boundary.stop()
        self._liveness.stop()
        self.workers.stop()
        self.waiter.stop()
        if self._watcher is not None:
            self._watcher.stop()
        self._runner.cancel_all()
        self.table.shutdown()
        self.knowledge.close()
        self.events.set_loader(None)
        for waiter in (*self._idle, *self._table_idle):
            waiter.cancel()
        self._idle.clear()
        self._table_idle.clear()
        self.service.close()

    # --- what to show ------------------------------------------------------------------

    def set_initial_filter(self, flt: JobFilter) -> None:
        """The filter to open with (before :meth:`start`: nothing is read yet)."""
        self._filter = flt
        self.table.reset(flt)

    def set_filter(self, flt: JobFilter) -> None:
        if flt == self._filter:
            return
        kind_changed = flt.kind != self._filter.kind
        self._filter = flt
        self.filter_changed.emit(flt)
        self.table.reset(flt)
        if kind_changed:
            self.spawn(self._counted(self._reload_counts()), "Counting jobs")

    def show_job(self, job_id: JobId | None) -> None:
        self._detail_id = job_id
        self._detail = None
        if job_id is not None:
            self.spawn(self._load_detail(job_id), "Loading the job")

    def refresh(self) -> None:
        """Reload everything (the user asked; live updates never do this)."""
        self.spawn(self._reload_all(self._feed_head), "Refreshing")
        self.knowledge.refresh()

    async def until_idle(self) -> None:
        """Wait until no page is loading and no update is running."""
        while self.busy:
            waiter: asyncio.Future[None] = self.service.loop.create_future()
            self._idle.append(waiter)
            await waiter

    async def _until_table_idle(self) -> None:
        while self.table.loading:
            waiter: asyncio.Future[None] = self.service.loop.create_future()
            self._table_idle.append(waiter)
            await waiter

    def _notify_idle(self) -> None:
        ready: list[asyncio.Future[None]] = []
        if not self.table.loading:
            ready, self._table_idle = self._table_idle, []
        if not self.busy:
            ready += self._idle
            self._idle = []
        for waiter in ready:
            if not waiter.done():
                waiter.set_result(None)

    # --- loading -----------------------------------------------------------------------

    def _load_page(self, generation: int, query: StoreQuery, cursor: str | None) -> None:
        # Handed to a reader now (a task would ask for it at its first turn, after whatever the
        # GUI thread does first: the first page would wait for the window's first paint), and
        # its page handed back at the GUI thread's next turn (not three turns later, through
        # the asyncio loop: see ProductionService.deliver_jobs_page).
        self.service.deliver_jobs_page(
            query, cursor, page_size(self.table.rowCount()), lambda done: self._page_read(generation, done)
        )

    def _page_read(self, generation: int, reading: Future[JobPage]) -> None:
        if reading.cancelled():
            return
        exc = reading.exception()  # (done: no wait)
        if exc is not None:
            self.table.page_failed(generation)
            self._notify_idle()
            if not self._open_read and isinstance(exc, PostProjectError):
                return  # the first page, asked for while opening: the opening says what failed
            self._failed(exc, "Loading jobs")
            return
        self.table.page_loaded(generation, reading.result())
        self._notify_idle()

    async def _reload_all(self, head: int, *, table: bool = True) -> None:
        self._updating = True
        try:
            await self._reload_everything(head, table=table)
        finally:
            self._updating = False
            self._notify_idle()
        self._kick()  # changes that arrived meanwhile

    async def _reload_everything(self, head: int, *, table: bool = True) -> None:
        if table:  # (asked for already when the production opened)
            self.table.reset(self._filter)  # the first page first: it is what people wait for
        await asyncio.gather(self._reload_kinds(), self._reload_counts())
        await self._until_table_idle()
        if self._detail_id is not None:
            await self._load_detail(self._detail_id)
        self._set_applied(head)

    async def _reload_kinds(self) -> None:
        self._kinds = await self.service.kinds()
        self.kinds_changed.emit(self._kinds)

    async def _reload_counts(self) -> None:
        self._counts = await self.service.counts(self._filter.kind)
        self.counts_changed.emit(self._counts)
        failed = (self._filter.kind, self._counts.by_state.get(JobState.FAILED, 0))
        if failed != self._failed_seen:  # a failure came or went: regroup (rides the feed)
            self._failed_seen = failed
            self.spawn(self._regroup_failures(), "Grouping failures")  # beside the table's updates
        self._outlook = await self.service.claim_outlook()
        self.outlook_changed.emit(self._outlook)
        self._bring_in_due()
        self._arm_boundary()

    async def _regroup_failures(self) -> None:
        self.failure_groups = await self.service.failure_groups(self._filter.kind)
        self.failure_groups_changed.emit(self.failure_groups)

    async def _counted(self, work: Coroutine[Any, Any, None]) -> None:
        """Run a read that the view waits for (``busy`` is true meanwhile)."""
        self._reads += 1
        try:
            await work
        finally:
            self._reads -= 1
            self._notify_idle()

    async def _load_detail(self, job_id: JobId) -> None:
        await self._counted(self._read_detail(job_id))

    async def _read_detail(self, job_id: JobId) -> None:
        try:
            detail = await self.service.job_detail(job_id)
        except NotFoundError:
            if self._detail_id == job_id:
                self.detail_missing.emit(str(job_id))
            return
        if self._detail_id == job_id:
            self._detail = detail
            self.detail_loaded.emit(detail)

    # --- live updates ------------------------------------------------------------------

    def _on_revisions(self, revisions: list[Revision]) -> None:
        if self._held:
            return
        self.events.add(revisions)
        self.knowledge.on_revisions(revisions)
        self.workers.on_revisions(revisions)
        self.revisions_arrived.emit(revisions)

    def _load_older(self, before: int) -> None:
        self.spawn(self._fetch_older(before), "Reading older revisions")

    async def _fetch_older(self, before: int) -> None:
        try:
            older = await self.service.revisions(OLDER_PAGE, before)
        except BaseException:
            self.events.older_failed()
            raise
        self.events.older_loaded(older, before)

    def _on_jobs_changed(self, ids: frozenset[JobId]) -> None:
        self._dirty |= ids
        self._kick()

    def _on_progress(self, _token: int) -> None:
        """A running attempt reported progress (not a revision): re-read the claimed (or
        stopping) rows shown, the job shown in the detail, and the workers."""
        if self._held or self.info is None:
            return
        if self._progress_reading:
            self._progress_again = True
            return
        self._progress_reading = True
        self.spawn(self._refresh_progress(), "Updating progress")
        self.workers.on_progress()

    def running_ids(self) -> set[JobId]:
        """The jobs shown whose progress can move: claimed ones and unconfirmed stops."""
        ids = {
            r.id for r in self.table.rows() if r.job.state is JobState.CLAIMED or r.job.stopping is not None
        }
        detail = self._detail
        if detail is not None and (detail.job.state is JobState.CLAIMED or detail.job.stopping is not None):
            ids.add(detail.job.id)
        return ids

    async def _refresh_progress(self) -> None:
        try:
            while True:
                self._progress_again = False
                ids = self.running_ids()
                if ids:
                    rows = await self.service.jobs(ids, parameters=self._searching)
                    if self._held:
                        return
                    self.table.apply_changes(
                        {k: v for k, v in rows.items() if self.table.row_of(k) is not None}
                    )
                    if self._detail_id is not None and self._detail_id in ids:
                        await self._read_detail(self._detail_id)
                if not self._progress_again:
                    break
        finally:
            self._progress_reading = False

    def _on_head(self, head: int) -> None:
        self._feed_head = max(self._feed_head, head)
        self._kick()

    def _retry_if_live(self) -> None:
        if self._live and self._reread_when_live:
            self._reread_when_live = False
            self.spawn(self._reread(), "Reading the production")

    def _on_live(self, live: bool) -> None:
        self._live = live
        self.live_changed.emit(live)
        self._retry_if_live()  # a read that failed while the connection was lost

    def _kick(self) -> None:
        if not self._updating and not self._held and self.info is not None:
            self._updating = True
            self.spawn(self._update(), "Updating")

    async def _update(self) -> None:
        try:
            while (self._dirty or self._feed_head > self._applied) and not self._held:
                ids, self._dirty = self._dirty, set()
                target = self._feed_head
                if len(ids) > RELOAD_ALL_ABOVE:
                    await self._reload_everything(target)
                    continue
                if ids:
                    await self._apply(ids)
                self._set_applied(target)
        finally:
            self._updating = False
            self._notify_idle()

    @property
    def _searching(self) -> bool:
        """Whether the table lists a text search: changed rows are then read with their
        parameters' texts, which the search matches (the store's search finds them there)."""
        return bool(self._filter.needle)

    async def _apply(self, ids: set[JobId]) -> None:
        rows = await self.service.jobs(ids, parameters=self._searching)
        self.table.apply_changes(rows)
        if any(row is not None and row.job.kind not in self._kinds for row in rows.values()):
            await self._reload_kinds()
        await self._reload_counts()
        if self._detail_id is not None and self._detail_id in ids:
            await self._load_detail(self._detail_id)

    def _set_applied(self, revision: int) -> None:
        if revision > self._applied:
            self._applied = revision
            self.applied.emit(revision)

    # --- time-driven changes -----------------------------------------------------------

    def _arm_boundary(self) -> None:
        if self._outlook is None:
            return
        wait = (self._outlook.next_boundary(self.now()) - self.now()).total_seconds()
        self._boundary.start(int(min(max(wait, 0.05), 300.0) * 1000))

    def recheck_time(self) -> None:
        """Claims turn expiring or stuck with time alone: recount them and, when the table
        lists stuck claims, bring in the ones that just qualified."""
        outlook = self._outlook
        if outlook is None:
            return
        now = self.now()
        if now >= outlook.horizon:
            self.spawn(self._counted(self._reload_counts()), "Checking claims")
            return
        self.outlook_changed.emit(outlook)
        self._bring_in_due()
        self._arm_boundary()

    def _bring_in_due(self) -> None:
        """When the table lists stuck claims, add the claims that qualified since it was read."""
        outlook = self._outlook
        if outlook is None or not self._filter.stuck or self.table.loading:
            return
        due = {c.job_id for c in outlook.due(self.now()) if self.table.row_of(c.job_id) is None}
        if due:
            self.spawn(self._bring_in(due), "Updating stuck claims")

    async def _bring_in(self, ids: set[JobId]) -> None:
        self.table.apply_changes(await self.service.jobs(ids, parameters=self._searching))
