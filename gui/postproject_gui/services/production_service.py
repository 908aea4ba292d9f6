"""The GUI's only door into the core.

One writer thread owns a writable :class:`~postproject.Production` (opened on the first
edit, so a read-only copy of a production can still be watched); a small pool of reader
threads each owns its own read-only one. Public methods are coroutines: the GUI thread
submits work and awaits the result through the asyncio (qasync) loop, so it never runs a
query and never waits on a database lock. A call made after :meth:`close` raises.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from PySide6.QtCore import QObject, Qt, Signal, Slot

from postproject import (
    ActivityId,
    Clock,
    ConflictError,
    FailureGroup,
    JobId,
    Production,
    RegenerationPlan,
    RepresentationId,
    RevisionSummary,
    SystemClock,
)
from postproject.model.errors import Reason
from postproject_gui.look.states import LONGEST_LEAD
from postproject_gui.services import (
    dashboard_reads,
    job_export,
    knowledge_reads,
    provenance_export,
    reads,
    writes,
)
from postproject_gui.services.artifact_rows import ArtifactRow
from postproject_gui.services.feed_watcher import FeedWatcher
from postproject_gui.services.filters import JobFilter
from postproject_gui.services.provenance_export import ProvFormat
from postproject_gui.services.types import (
    ArtifactPage,
    CancelOutcome,
    ClaimOutlook,
    EnqueueOutcome,
    FarmOutcome,
    GraphRead,
    JobCounts,
    JobDetail,
    JobPage,
    JobRow,
    KnowledgeChange,
    ObserveOutcome,
    ProductionInfo,
    RegenerationPreview,
    RequestChoices,
    RequestSpec,
    StaleCount,
    StoreQuery,
    WorkerAttempt,
    WorkerList,
)
from postproject_gui.text import location as production_location

T = TypeVar("T")
PAGE_SIZE = 200  # the first page of a list (what people wait for)
OPEN_COST = 2  # reads waiting on the open readers before another reader opens
MAX_PAGE = 1000  # the pages after it grow with the list, up to this many rows


def page_size(loaded: int) -> int:
    """How many rows to read after ``loaded`` rows: the first page, then as many as are loaded
    (up to :data:`MAX_PAGE`). A long scroll then costs a few large pages, each inserted and
    painted once, instead of a hundred small ones (20,000 rows: 23 pages instead of 100)."""
    return min(MAX_PAGE, max(PAGE_SIZE, loaded))


ARTIFACT_PAGE = 200
OUTLOOK_SPAN = LONGEST_LEAD  # a lease can turn expiring this long before it ends
WRITE_BUSY_SECONDS = 2.0  # a write waits this long for another program's lock, then says "busy"


class _Worker:
    """A single thread and the production it owns (touched only on that thread)."""

    def __init__(self, name: str) -> None:
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        self.production: Production | None = None
        self.names = reads.NameCache()
        self.pending = 0
        self.used = False  # given a read (its production is open, or opens before that read)


class _Courier(QObject):
    """Hands a reader's result to the thread it was made in (the GUI thread) in one turn of that
    thread's event loop: a queued Qt call. Through the asyncio loop a result takes three turns
    (qasync: the thread-safe call's signal, then a zero timer to settle the future, then another
    to wake the task awaiting it), and each turn may paint the window first: a first page read
    while the window first showed waited for two paints of the window without its rows."""

    arrived = Signal(object, object)

    def __init__(self) -> None:
        super().__init__()
        # Queued even when emitted on this thread (a read done before its callback was added
        # calls it at once, on the thread that added it): never inside the caller's call.
        self.arrived.connect(self._hand, Qt.ConnectionType.QueuedConnection)

    def post(self, done: Future[Any], callback: Callable[[Future[Any]], None]) -> None:
        """Call ``callback(done)`` on this object's thread once ``done`` is done."""

        def finished(future: Future[Any]) -> None:
            with contextlib.suppress(RuntimeError):  # the window closed meanwhile: nobody to tell
                self.arrived.emit(callback, future)

        done.add_done_callback(finished)

    @Slot(object, object)
    def _hand(self, callback: Callable[[Future[Any]], None], done: Future[Any]) -> None:
        callback(done)


class ProductionService:
    """Async façade over one production (see the module docstring).

    Args:
        location: the production: a ``.pproj`` path or a ``postgresql://`` URI.
        clock: the core clock (a ``FakeClock`` in tests); also the GUI's notion of "now".
        readers: reader threads (each with its own read-only connection).
        loop: the asyncio loop results are delivered on (default: the current one).
        root_map: this machine's directory per media root (from the configuration), so
            media mounted elsewhere than where the production recorded it shows online.
    """

    def __init__(
        self,
        location: str | Path,
        *,
        clock: Clock | None = None,
        readers: int = 2,
        loop: asyncio.AbstractEventLoop | None = None,
        root_map: Mapping[str, str] | None = None,
    ) -> None:
        self._location = production_location.of(location)
        self._root_map = dict(root_map or {}) or None
        self._clock: Clock = clock or SystemClock()
        self._loop = loop or asyncio.get_event_loop()
        self._readers = [_Worker(f"pp-reader-{i}") for i in range(readers)]
        self._writer = _Worker("pp-writer")
        self._turn = itertools.count()
        self._long_reads: set[ThreadPoolExecutor] = set()
        self._closed = False
        self._courier = _Courier()

    @property
    def location(self) -> str:
        """Where the production lives (to open it; may hold a password: never show it)."""
        return self._location

    @property
    def shown(self) -> str:
        """The location as the window shows it (a URI without its password)."""
        return production_location.shown(self._location)

    @property
    def clock(self) -> Clock:
        return self._clock

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        return self._loop

    @property
    def closed(self) -> bool:
        return self._closed

    def now(self) -> datetime:
        """The clock's current instant (no database access)."""
        return self._clock.now()

    # --- lifecycle ---------------------------------------------------------------------

    def watcher(self, after: int) -> FeedWatcher:
        """A watcher of this production's feed from revision ``after`` on, on this service's
        loop and clock (not started: see :meth:`FeedWatcher.start`)."""
        return FeedWatcher(self._location, after=after, loop=self._loop, clock=self._clock)

    async def open(self) -> ProductionInfo:
        """Open the production read-only on the first reader thread; the production's facts."""
        return await self.begin_open()

    def begin_open(self) -> asyncio.Future[ProductionInfo]:
        """:meth:`open`, handed to the first reader thread now (not at a later turn of the
        loop): a page asked for right after (:meth:`deliver_jobs_page`) is read on the same
        thread as soon as the production is open, after its head. The other readers open on
        their thread when first given a read (:meth:`_pick`), so that the first page does not
        wait for (nor share the processor with) every reader's opening."""
        first = self._readers[0]
        first.used = True
        return self._submit(first, self._on_reader, first, self._info, ())

    def _info(self, production: Production) -> ProductionInfo:
        return ProductionInfo(
            production.id,
            self._location,
            reads.head(production),
            production.location,
            production.possibly_stale,
        )

    def _opened(self, worker: _Worker) -> Production:
        """The reader's production, opened on its own thread if it is not open yet."""
        if worker.production is None:
            worker.production = Production.open(
                self._location,
                read_only=True,
                clock=self._clock,
                root_map=self._root_map,
                allow_injected_clock=True,  # (only tests give the monitor a clock)
            )
        return worker.production

    def close(self) -> None:
        """Close every production on its own thread and stop the threads (idempotent).

        Waits for the query each thread is running, if any (milliseconds); called when a
        window closes or another production is opened.
        """
        if self._closed:
            return
        self._closed = True
        for worker in (*self._readers, self._writer):
            worker.executor.submit(_close, worker)
            worker.executor.shutdown(wait=True, cancel_futures=False)
        for executor in list(self._long_reads):
            executor.shutdown(wait=True, cancel_futures=True)

    # --- reads -------------------------------------------------------------------------

    async def head(self) -> int:
        return await self._read(reads.head)

    async def jobs_page(
        self, query: StoreQuery, cursor: str | None = None, limit: int = PAGE_SIZE
    ) -> JobPage:
        return await self._read_named(reads.jobs_page, query, cursor, limit)

    def deliver_jobs_page(
        self,
        query: StoreQuery,
        cursor: str | None,
        limit: int,
        deliver: Callable[[Future[JobPage]], None],
    ) -> None:
        """:meth:`jobs_page`, handed to a reader thread now, and the done read handed to
        ``deliver`` on the GUI thread at its next turn (see :class:`_Courier`; a page is what
        people wait for). ``deliver`` is not called once the service is closed."""
        worker = self._pick()
        self._check_open()
        worker.pending += 1

        def handed(done: Future[JobPage]) -> None:
            worker.pending -= 1
            if not self._closed:
                deliver(done)

        reading = worker.executor.submit(
            self._on_reader, worker, reads.jobs_page, (worker.names, query, cursor, limit)
        )
        self._courier.post(reading, handed)

    async def jobs(self, ids: Iterable[JobId], *, parameters: bool = False) -> dict[JobId, JobRow | None]:
        """The current rows of these jobs (None for a job that does not exist); ``parameters``:
        with their parameters' texts, for a text search to match them as the store does."""
        return await self._read_named(reads.jobs_by_id, tuple(ids), parameters)

    async def job_detail(self, job_id: JobId) -> JobDetail:
        return await self._read_named(reads.job_detail, job_id)

    async def counts(self, kind: str | None = None) -> JobCounts:
        return await self._read(reads.counts, kind)

    async def kinds(self) -> tuple[str, ...]:
        return await self._read(reads.kinds)

    async def failure_groups(self, kind: str | None = None) -> tuple[FailureGroup, ...]:
        """Failed jobs grouped by reason, largest first (read off the GUI thread)."""
        return await self._read(reads.failure_groups, kind)

    async def revisions(self, count: int = 20, before: int | None = None) -> tuple[RevisionSummary, ...]:
        """Revision headers with event counts, newest first (before sequence ``before``)."""
        return await self._read(reads.revision_summaries, count, before)

    async def claim_outlook(self) -> ClaimOutlook:
        """Claims whose lease ends before any lease now live can turn expiring, soonest
        first (at most ``reads.OUTLOOK_LIMIT``), each with when it turns expiring."""
        return await self._read_named(reads.claim_outlook, self.now() + OUTLOOK_SPAN)

    async def workers(self) -> WorkerList:
        """Every registered worker (liveness derived from its last heartbeat at read time)."""
        return await self._read(reads.workers, self.now())

    async def worker_attempts(
        self, name: str, limit: int = reads.WORKER_ATTEMPTS
    ) -> tuple[WorkerAttempt, ...]:
        """The newest attempts of worker ``name``, newest first."""
        return await self._read(reads.worker_attempts, name, limit)

    async def request_choices(self) -> RequestChoices:
        return await self._read_named(reads.request_choices)

    # --- artifacts and provenance (see services/knowledge_reads.py for the bounds) ------

    async def provenance(self, rep_id: RepresentationId) -> GraphRead:
        """The neighbourhood of a representation, with the knowledge of each representation."""
        return await self._read(knowledge_reads.provenance, rep_id)

    async def provenance_for_job(self, job_id: JobId) -> GraphRead:
        """The graph of what a job produced (its completion), else of its first input."""
        return await self._read(knowledge_reads.provenance_for_job, job_id)

    async def artifact_page(self, cursor: str | None = None, limit: int = ARTIFACT_PAGE) -> ArtifactPage:
        return await self._read(knowledge_reads.artifact_page, cursor, limit)

    async def artifact_rows(
        self, ids: Iterable[RepresentationId]
    ) -> dict[RepresentationId, ArtifactRow | None]:
        """The current rows of these representations (None for one that does not exist)."""
        return await self._read(knowledge_reads.artifact_rows, tuple(ids))

    async def stale_count(self) -> StaleCount:
        """Stale or diverged artifacts, counted over a bounded number of candidates."""
        return await self._read(knowledge_reads.stale_count)

    async def knowledge_change(
        self,
        representations: Iterable[RepresentationId],
        activities: Iterable[ActivityId] = (),
        jobs: Iterable[JobId] = (),
    ) -> KnowledgeChange:
        """Which representations' knowledge these changes may have touched."""
        return await self._read(
            knowledge_reads.knowledge_change, tuple(representations), tuple(activities), tuple(jobs)
        )

    async def plan_regeneration(self, ids: Sequence[RepresentationId]) -> RegenerationPreview:
        """A plan per artifact; those that cannot be planned are listed with the reason."""
        return await self._read(knowledge_reads.plan_regeneration, tuple(ids))

    async def plan_downstream(self, rep_id: RepresentationId) -> RegenerationPreview:
        """Plans for everything stale or diverged downstream of a changed representation."""
        return await self._read(knowledge_reads.plan_downstream, rep_id)

    async def export_prov(self, ids: Sequence[RepresentationId], fmt: ProvFormat, path: Path) -> Path:
        """Write the W3C PROV of these representations' lineage (on a reader thread)."""
        return await self._run(
            self._pick(), provenance_export.export_prov, self._location, tuple(ids), fmt, path
        )

    async def export_jobs(self, flt: JobFilter, path: Path) -> int:
        """Write every job ``flt`` lists to ``path`` (CSV, or JSON for ``*.json``); how many.
        Runs on a thread of its own, so the table's readers stay free."""
        fmt = job_export.ExportFormat.for_path(path)
        return await self._isolated(job_export.export, flt, self.now(), path, fmt)

    async def dashboard_history(self, now: datetime, head: int) -> dashboard_reads.History:
        """The job events of the day before ``now``, summed per minute (on a thread of its own:
        a busy day takes a while)."""
        return await self._isolated(dashboard_reads.read_history, now, head)

    async def dashboard_facts(
        self, ids: Iterable[JobId]
    ) -> tuple[JobCounts, datetime | None, dict[JobId, str]]:
        """What the dashboard needs from the store after new job events: the counts of every
        kind, when the oldest waiting job was requested, and the kinds of these jobs."""
        return await self._read(_dashboard_facts, tuple(ids))

    async def _isolated(self, fn: Callable[..., T], *args: object) -> T:
        """Run ``fn(production, *args)`` on a new thread with its own read-only production
        (long reads that must not hold up the table's readers)."""
        self._check_open()
        location, clock = self._location, self._clock

        def work() -> T:
            with Production.open(
                location, read_only=True, clock=clock, allow_injected_clock=True
            ) as production:
                return fn(production, *args)

        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pp-long-read")
        self._long_reads.add(executor)
        try:
            return await self._loop.run_in_executor(executor, work)
        finally:
            self._long_reads.discard(executor)
            executor.shutdown(wait=True)

    # --- writes ------------------------------------------------------------------------

    async def request_job(self, spec: RequestSpec) -> tuple[JobId, int | None]:
        """Request a job with its parameters in one transaction; (job id, revision)."""
        return await self._write(writes.request_job, spec)

    async def cancel_jobs(self, ids: Sequence[JobId]) -> CancelOutcome:
        """Cancel these jobs in one transaction (finished ones are skipped and reported)."""
        return await self._write(writes.cancel_jobs, tuple(ids))

    async def retry_jobs(self, ids: Sequence[JobId]) -> FarmOutcome:
        """Request these failed or cancelled jobs again (``request_again``), in one transaction."""
        return await self._write(writes.retry_jobs, tuple(ids))

    async def requeue_jobs(self, ids: Sequence[JobId]) -> FarmOutcome:
        """Return these claims to requested (``requeue_job``), in one transaction."""
        return await self._write(writes.requeue_jobs, tuple(ids))

    async def finalize_lost(self, limit: int = writes.SWEEP_LIMIT) -> FarmOutcome:
        """Finalise up to ``limit`` expired, unrenewed claims (``finalize_lost``), in one transaction."""
        return await self._write(writes.finalize_lost, limit)

    async def set_priority(self, ids: Sequence[JobId], priority: int) -> FarmOutcome:
        """Give these requested jobs ``priority`` (``set_job_priority``), in one transaction."""
        return await self._write(writes.set_priority, tuple(ids), priority)

    async def enqueue_plans(self, plans: Sequence[RegenerationPlan]) -> EnqueueOutcome:
        """Request the plans' jobs in one transaction; the new job ids and the revision."""
        return await self._write(writes.enqueue_plans, tuple(plans))

    async def observe(self, ids: Sequence[RepresentationId]) -> ObserveOutcome:
        """Re-read these representations' files in one transaction; what changed."""
        return await self._write(writes.observe_representations, tuple(ids))

    # --- plumbing ----------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"the production service for {self.shown} is closed")

    async def _run(self, worker: _Worker, fn: Callable[..., T], *args: object) -> T:
        return await self._submit(worker, fn, *args)

    def _submit(self, worker: _Worker, fn: Callable[..., T], *args: object) -> asyncio.Future[T]:
        """``fn(*args)`` handed to ``worker``'s thread now; its result as a future of the loop."""
        self._check_open()
        worker.pending += 1
        future = self._loop.run_in_executor(worker.executor, fn, *args)
        future.add_done_callback(lambda done: _finished(worker, done))
        return future

    def _pick(self) -> _Worker:
        """The reader with the fewest reads waiting, in turn; a reader not used yet (its
        production not open) only when the others have :data:`OPEN_COST` reads waiting."""
        turn = next(self._turn)
        picked = min(
            self._readers,
            key=lambda w: (
                w.pending + (0 if w.used else OPEN_COST),
                (self._readers.index(w) - turn) % len(self._readers),
            ),
        )
        picked.used = True
        return picked

    async def _read(self, fn: Callable[..., T], *args: object) -> T:
        worker = self._pick()
        return await self._run(worker, self._on_reader, worker, fn, args)

    async def _read_named(self, fn: Callable[..., T], *args: object) -> T:
        worker = self._pick()
        return await self._run(worker, self._on_reader, worker, fn, (worker.names, *args))

    def _on_reader(self, worker: _Worker, fn: Callable[..., T], args: tuple[object, ...]) -> T:
        return fn(self._opened(worker), *args)

    async def _write(self, fn: Callable[..., T], *args: object) -> T:
        return await self._run(self._writer, self._on_writer, fn, args)

    def _on_writer(self, fn: Callable[..., T], args: tuple[object, ...]) -> T:
        worker = self._writer
        if worker.production is None:
            worker.production = Production.open(
                self._location,
                clock=self._clock,
                busy_timeout=WRITE_BUSY_SECONDS,
                root_map=self._root_map,
                allow_injected_clock=True,
            )
        if worker.production.read_only:  # pragma: no cover - opened writable above
            raise ConflictError("production is open read-only", reason=Reason.READ_ONLY)
        return fn(worker.production, *args)


def _finished(worker: _Worker, done: asyncio.Future[Any]) -> None:
    worker.pending -= 1
    if not done.cancelled():
        done.exception()  # retrieved: a future handed out and never awaited (its task was
        # cancelled first, as when a window closes while opening) fails quietly; an awaited
        # one raises to whoever awaits it all the same


def _dashboard_facts(
    production: Production, ids: tuple[JobId, ...]
) -> tuple[JobCounts, datetime | None, dict[JobId, str]]:
    return (
        reads.counts(production, None),
        dashboard_reads.oldest_requested(production),
        dashboard_reads.kinds_of(production, ids),
    )


def _close(worker: _Worker) -> None:
    if worker.production is not None:
        worker.production.close()
        worker.production = None
