"""What the Artifacts and Provenance tabs show about one production, kept live.

:class:`KnowledgeSession` belongs to a :class:`~postproject_gui.session.monitor_session.MonitorSession`. It
owns the Artifacts table model (filled page by page when the tab is first shown), the
stale count of the summary bar and the provenance graph being shown. Revisions that can
change what is known about artifacts (``representation_added``,
``representation_fingerprint_observed``, ``representation_superseded``, ``activity_created``,
``job_succeeded``) start three independent, coalescing loops, each with at most one read in
flight:

- rows: the service names the representations whose knowledge may have changed (the
  changed ones, those a regeneration superseded, and their descendants); the loaded rows among them are read again and new
  representations are inserted (``apply_changes``: in place, selection kept);
- graph: the shown neighbourhood is read again and handed on (the view calls
  ``ProvenanceScene.update_graph``, which keeps zoom and selection);
- stale count: a bounded walk (see ``services/knowledge_reads.py``), never on a timer, and
  after a round it rests four times as long as the round took (at most 5 s) so that a
  production that changes constantly cannot keep a reader thread busy counting.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from typing import Any

from PySide6.QtCore import QObject, Signal

from postproject import ActivityId, JobId, PostProjectError, RepresentationId, Revision
from postproject_gui.models.artifact_model import ArtifactTableModel
from postproject_gui.models.artifact_proxy import ArtifactFilterProxy
from postproject_gui.services.production_service import ProductionService
from postproject_gui.services.types import GraphRead, StaleCount

Spawn = Callable[[Coroutine[Any, Any, Any], str], object]
KNOWLEDGE_EVENTS = frozenset(
    {
        "representation_added",
        "representation_fingerprint_observed",
        "representation_superseded",  # the replaced artifact (and what descends from it)
        "activity_created",
        "job_succeeded",
    }
)
STALE_REST = (4.0, 5.0)  # rest this many times the last count's duration, at most this many seconds


class KnowledgeSession(QObject):
    """See the module docstring.

    Signals:
        graph_loaded(GraphRead): the graph to show (a new focus, or a newer read of it).
        graph_failed(str): the graph of this focus could not be read (the message).
        job_shown(str): the graph a job's "Show provenance" asked for was handed on (just
            after its graph_loaded): the job's id, the node to focus.
        stale_changed(StaleCount): the stale count of the summary bar.
        settled(): nothing is loading or updating any more.
    """

    graph_loaded = Signal(GraphRead)
    graph_failed = Signal(str)
    job_shown = Signal(str)
    stale_changed = Signal(StaleCount)
    settled = Signal()

    def __init__(self, service: ProductionService, spawn: Spawn, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._service, self._spawn = service, spawn
        self.artifacts = ArtifactTableModel(self)  # its loader is set when the tab is first shown
        self.artifacts.status_changed.connect(self._maybe_settled)
        self.proxy = ArtifactFilterProxy(self)
        self.proxy.setSourceModel(self.artifacts)
        self._graph: GraphRead | None = None
        self._focus: RepresentationId | None = None
        self._graph_wanted = False
        self._job_wanted: JobId | None = None
        self._stale: StaleCount | None = None
        self._stale_wanted = False
        self._added: set[RepresentationId] = set()
        self._changed: set[RepresentationId] = set()
        self._activities: set[ActivityId] = set()
        self._jobs: set[JobId] = set()
        self._running: set[str] = set()  # the loops running now: "rows", "graph", "job", "stale"
        self._closed = False
        self._open = False
        self._artifacts_wanted = False

    # --- facts -------------------------------------------------------------------------

    @property
    def graph(self) -> GraphRead | None:
        return self._graph

    @property
    def focus(self) -> RepresentationId | None:
        return self._focus

    @property
    def stale(self) -> StaleCount | None:
        return self._stale

    @property
    def busy(self) -> bool:
        return bool(self._running) or self.artifacts.loading

    @property
    def graph_busy(self) -> bool:
        return bool({"graph", "job"} & self._running)

    # --- requests ------------------------------------------------------------------------

    def start(self) -> None:
        """Count stale artifacts (the production just opened), and list them if asked before."""
        self._open = True
        self.recount()
        if self._artifacts_wanted:
            self.load_artifacts()

    def load_artifacts(self) -> None:
        """Start listing artifacts (once: the Artifacts tab was shown, or a snapshot wants them)."""
        self._artifacts_wanted = True
        if self._open and not self._closed and not self.artifacts.started:
            self.artifacts.set_loader(self._load_page)
            self.artifacts.fetchMore()

    def show_graph(self, rep_id: RepresentationId) -> None:
        """Read (and keep live) the neighbourhood of this representation."""
        self._focus = rep_id
        self._graph_wanted = True
        self._run("graph", self._graph_loop(), "Loading the provenance graph")

    def show_job_graph(self, job_id: JobId) -> None:
        """The graph of what a job produced (else of its first input)."""
        self._job_wanted = job_id
        self._run("job", self._job_loop(), "Showing the job's provenance")

    def refresh_graph(self) -> None:
        if self._focus is not None:
            self.show_graph(self._focus)

    def refresh(self) -> None:
        """Read everything shown again (the user asked)."""
        self._changed.update(row.id for row in self.artifacts.rows())
        if self._changed:
            self._run("rows", self._rows_loop(), "Updating artifacts")
        self.refresh_graph()
        self.recount()

    def recount(self) -> None:
        self._stale_wanted = True
        self._run("stale", self._stale_loop(), "Counting stale artifacts")

    def on_revisions(self, revisions: list[Revision]) -> None:
        """Note what the revisions changed that knowledge depends on; update what is shown."""
        relevant = False
        for revision in revisions:
            for event in revision.events:
                if event.kind not in KNOWLEDGE_EVENTS:
                    continue
                relevant = True
                if event.kind == "activity_created":
                    self._activities.add(ActivityId.parse(event["activity_id"]))
                elif event.kind == "job_succeeded":
                    self._jobs.add(JobId.parse(event["job_id"]))
                else:
                    rep_id = RepresentationId.parse(event["representation_id"])
                    (self._added if event.kind == "representation_added" else self._changed).add(rep_id)
        if not relevant:
            return
        if self.artifacts.started:
            self._run("rows", self._rows_loop(), "Updating artifacts")
        else:
            self._forget_changes()
        if self._focus is not None:
            self._graph_wanted = True
            self._run("graph", self._graph_loop(), "Updating the provenance graph")
        self.recount()

    def close(self) -> None:
        self._closed = True
        self.artifacts.shutdown()

    # --- loops -------------------------------------------------------------------------

    def _run(self, name: str, loop: Coroutine[Any, Any, None], what: str) -> None:
        if name in self._running or self._closed:
            loop.close()  # the running loop picks the new request up
            return
        self._running.add(name)
        self._spawn(self._guarded(name, loop), what)

    async def _guarded(self, name: str, loop: Coroutine[Any, Any, None]) -> None:
        try:
            await loop
        finally:
            self._running.discard(name)
            self._maybe_settled()

    async def _graph_loop(self) -> None:
        while self._graph_wanted and self._focus is not None:
            self._graph_wanted = False
            focus = self._focus
            try:
                read = await self._service.provenance(focus)
            except PostProjectError as exc:
                if focus == self._focus:
                    self.graph_failed.emit(exc.message)
                continue
            if focus == self._focus:
                self._graph = read
                self.graph_loaded.emit(read)

    async def _job_loop(self) -> None:
        while self._job_wanted is not None:
            job_id, self._job_wanted = self._job_wanted, None
            read = await self._service.provenance_for_job(job_id)
            if self._job_wanted is None:  # no other job asked for meanwhile
                self._focus, self._graph = read.graph.focus, read
                self.graph_loaded.emit(read)
                self.job_shown.emit(str(job_id))

    async def _stale_loop(self) -> None:
        while self._stale_wanted:
            self._stale_wanted = False
            started = time.monotonic()
            self._stale = await self._service.stale_count()
            self.stale_changed.emit(self._stale)
            rest = min((time.monotonic() - started) * STALE_REST[0], STALE_REST[1])
            if self._stale_wanted and rest > 0.01:
                await asyncio.sleep(rest)

    async def _rows_loop(self) -> None:
        while self._added or self._changed or self._activities or self._jobs:
            added, changed = self._added, self._changed
            activities, jobs = self._activities, self._jobs
            self._forget_changes()
            model = self.artifacts
            found = await self._service.knowledge_change(added | changed, activities, jobs)
            if found.complete:
                wanted = {r for r in found.representations if model.row_of(r) is not None}
            else:
                wanted = {row.id for row in model.rows()}
            wanted |= {r for r in found.representations | added if model.covers(r)}
            if wanted:
                model.apply_changes(await self._service.artifact_rows(sorted(wanted, key=lambda r: r.int)))

    def _forget_changes(self) -> None:
        self._added, self._changed, self._activities, self._jobs = set(), set(), set(), set()

    # --- paging ------------------------------------------------------------------------

    def _load_page(self, generation: int, cursor: str | None) -> None:
        self._spawn(self._fetch_page(generation, cursor), "Loading artifacts")

    async def _fetch_page(self, generation: int, cursor: str | None) -> None:
        try:
            page = await self._service.artifact_page(cursor)
        except BaseException:
            self.artifacts.page_failed(generation)
            raise
        self.artifacts.page_loaded(generation, page.rows, page.next_cursor)

    def _maybe_settled(self) -> None:
        if not self.busy:
            self.settled.emit()
