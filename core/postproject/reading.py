"""The reads of :class:`postproject.production.Production` that go straight to one area each:
paths, assets and representations, activities, jobs, workers, progress and the revision feed
(the facade's lifecycle, writing and knowledge are in :mod:`postproject.production`).

Each read checks its arguments in its area (:mod:`postproject.areas`), built here from the
production's handle.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from pathlib import Path

from postproject.areas.attempts import AttemptReads
from postproject.areas.feed import FeedReads
from postproject.areas.job_reads import JobReads
from postproject.areas.pending import PendingReads
from postproject.areas.provenance import ProvenanceReads
from postproject.areas.search import FailureGroup
from postproject.areas.setup import SetupReads
from postproject.areas.workers import WorkerReads
from postproject.base.handle import ProductionHandle
from postproject.model.activities import Activity
from postproject.model.assets import Asset, Availability, MediaRoot, Representation, RepresentationKind
from postproject.model.ids import ActivityId, AssetId, JobId, RepresentationId
from postproject.model.jobs import Attempt, Job
from postproject.model.lifecycle import JobState
from postproject.model.pages import Page
from postproject.model.pending import PendingExplanation
from postproject.model.progress import AttemptLog
from postproject.model.revisions import Changes, JobHistoryEntry, Revision, RevisionSummary
from postproject.model.workers import Worker


class ProductionReads:
    """Reads by area; :class:`~postproject.production.Production` builds on it."""

    def __init__(self, handle: ProductionHandle) -> None:
        self._handle = handle
        self._setup = SetupReads(handle)
        self._provenance = ProvenanceReads(handle)
        self._jobs = JobReads(handle)
        self._workers = WorkerReads(handle)
        self._pending = PendingReads(handle, self._workers)
        self._attempts = AttemptReads(handle)
        self._feed = FeedReads(handle)

    # --- paths -------------------------------------------------------------------------

    def root_path(self, name: str) -> Path | None:
        """This machine's directory for a media root (the root map wins over the stored path)."""
        return self._handle.root_path(name)

    def resolve(self, representation: Representation) -> Path | None:
        """The representation's file on this machine (None when its root is not mapped)."""
        return self._handle.resolve(representation)

    def availability(self, representation_id: RepresentationId) -> Availability:
        """Online when the representation's file exists here as a regular file."""
        return self._setup.availability(representation_id)

    # --- reads: assets, representations, media roots -----------------------------------

    def asset(self, asset_id: AssetId) -> Asset:
        return self._setup.asset(asset_id)

    def assets_by_id(self, asset_ids: Iterable[AssetId]) -> dict[AssetId, Asset]:
        """The assets among ``asset_ids`` that exist, by id, read together (an id that names no
        asset is left out): what a view naming many assets at once reads instead of one
        :meth:`asset` each."""
        return self._setup.assets_by_id(asset_ids)

    def assets(self, limit: int = 100, cursor: str | None = None) -> Page[Asset]:
        """Assets in id (creation) order."""
        return self._setup.assets(limit, cursor)

    def representation(self, representation_id: RepresentationId) -> Representation:
        return self._setup.representation(representation_id)

    def representations_by_id(
        self, representation_ids: Iterable[RepresentationId]
    ) -> dict[RepresentationId, Representation]:
        """The representations among ``representation_ids`` that exist, by id, read together
        (an id that names none is left out)."""
        return self._setup.representations_by_id(representation_ids)

    def representations(
        self,
        asset_id: AssetId | None = None,
        kind: RepresentationKind | None = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> Page[Representation]:
        """Representations (optionally of one asset and/or kind) in id order."""
        return self._setup.representations(asset_id, kind, limit, cursor)

    def media_roots(self) -> tuple[MediaRoot, ...]:
        return self._setup.media_roots()

    # --- reads: activities -------------------------------------------------------------

    def activity(self, activity_id: ActivityId) -> Activity:
        return self._provenance.activity(activity_id)

    def activities(
        self, limit: int = 100, cursor: str | None = None, kind: str | None = None
    ) -> Page[Activity]:
        """Activities (optionally of one kind) in id order."""
        return self._provenance.activities(limit, cursor, kind)

    def producing_activities(self, representation_id: RepresentationId) -> tuple[ActivityId, ...]:
        """Activities that output the representation (normally one)."""
        return self._provenance.producing_activities(representation_id)

    def consuming_activities(self, representation_id: RepresentationId) -> tuple[ActivityId, ...]:
        """Activities that used the representation as an input (up to 1000)."""
        return self._provenance.consuming_activities(representation_id)

    # --- reads: jobs -------------------------------------------------------------------

    def job(self, job_id: JobId) -> Job:
        """One job (not_found when absent)."""
        return self._jobs.job(job_id)

    def jobs(
        self,
        limit: int = 100,
        cursor: str | None = None,
        state: JobState | None = None,
        kind: str | None = None,
        *,
        newest_first: bool = False,
        search: str | None = None,
        requested_after: datetime | None = None,
        requested_before: datetime | None = None,
        finished_after: datetime | None = None,
        finished_before: datetime | None = None,
        sort: str = "requested",
        descending: bool | None = None,
    ) -> Page[Job]:
        """A keyset page of jobs, by default in id order (ids are time-ordered: request order).

        Filters are exact; ``state=CLAIMED`` includes claims whose lease expired. ``search``
        finds jobs over the whole store (indexed): each whitespace-separated term is a
        case-insensitive substring of the job's kind, output asset name, an agent or worker of
        its attempts, its failure diagnostic or a string value of its parameters (a ticket), or
        the tail (6+ hex digits) of its id. ``requested_*``/``finished_*`` bound when it was
        requested or reached a final state (``*_after`` inclusive, ``*_before`` exclusive).
        ``sort``: "requested", "kind", "state", "priority", "finished" (unfinished jobs first)
        or "worker" (the claim's worker by name, the rest last), ties by id; ``descending``
        (default ``newest_first``) reverses it. Cursors are bound to the production and options.
        """
        return self._jobs.jobs(
            limit,
            cursor,
            state,
            kind,
            search=search,
            requested_after=requested_after,
            requested_before=requested_before,
            finished_after=finished_after,
            finished_before=finished_before,
            sort=sort,
            descending=newest_first if descending is None else descending,
        )

    def failure_groups(self, kind: str | None = None, limit: int = 100) -> tuple[FailureGroup, ...]:
        """Failed jobs grouped by reason (a normalised first line of the diagnostic), largest
        first: ``group.summary()`` reads "37 failed: unsupported profile #". List a group's
        jobs with ``jobs(state=JobState.FAILED, search=group.search)``."""
        return self._jobs.failure_groups(kind, limit)

    def claims_expiring(
        self,
        before: datetime | None = None,
        limit: int = 100,
        cursor: str | None = None,
        *,
        kind: str | None = None,
    ) -> Page[Job]:
        """Claimed jobs whose lease expires at or before ``before``, soonest-expired first.

        The default bound is now: the stuck claims. A cursor keeps the bound of its first page,
        so paging with the default does not drift as time passes.
        """
        return self._jobs.claims_expiring(before, limit, cursor, kind=kind)

    def job_counts(self, kind: str | None = None) -> dict[JobState, int]:
        """How many jobs are in each state (maintained counts: constant time)."""
        return self._jobs.job_counts(kind)

    def job_kinds(self) -> tuple[str, ...]:
        """The kinds of the jobs in this production."""
        return self._jobs.job_kinds()

    def job_history(self, job_id: JobId) -> tuple[JobHistoryEntry, ...]:
        """Every lifecycle event of a job, oldest first, with its revision's time, origin and message."""
        return self._jobs.job_history(job_id)

    # --- reads: workers and why jobs wait ----------------------------------------------

    def workers(self) -> list[Worker]:
        """Every registered worker, by name, with liveness derived from its last heartbeat."""
        return self._workers.workers()

    def worker_attempts(self, name: str, limit: int = 100) -> tuple[tuple[JobId, Attempt], ...]:
        """The newest attempts of the worker ``name``: (job id, attempt), newest first."""
        return self._workers.worker_attempts(name, limit)

    def explain_pending(self, job_id: JobId) -> PendingExplanation:
        """Why a job is still requested, in plain words with ids (read-only).

        Reasons, in this order: each job it waits on (``waiting_on``), each failed or
        cancelled job that blocks it (``blocked_by``), its ``not_before`` when that is later
        than now, ``no_online_worker`` when no online registered worker takes its kind, and,
        when nothing else holds it back, how many claimable jobs of its kind come first
        (``jobs_ahead``, counted up to 10 000). A job in any other state gets one
        ``not_pending`` reason.

        Raises:
            NotFoundError: (not_found) no such job.
            InvalidArgumentError: (invalid_argument) not a JobId.
        """
        return self._pending.explain_pending(job_id)

    # --- reads: progress and attempt logs ----------------------------------------------

    def progress_token(self) -> int:
        """The progress signal's current value: it moves when a progress report signals (at
        most once per running attempt per second); compare it with an earlier value."""
        return self._attempts.progress_token()

    def wait_for_progress(
        self, after_token: int, timeout: float | timedelta, *, stop: threading.Event | None = None
    ) -> int:
        """Block until the progress signal differs from ``after_token`` (or ``timeout`` passes,
        or ``stop`` is set); returns the current token. Another process's report is noticed
        within a few tens of milliseconds (the engine's change notifications: on PostgreSQL a
        signalling report NOTIFYs, so nothing is polled)."""
        return self._attempts.wait_for_progress(after_token, timeout, stop=stop)

    def attempt_log(self, job_id: JobId, attempt: int | None = None) -> AttemptLog:
        """The log of a job's attempt ``attempt`` (its newest when None): where the full log
        lives and the stored tail (None while the attempt runs).

        Raises:
            NotFoundError: (not_found) no such job, or the job has no such attempt.
        """
        return self._attempts.attempt_log(job_id, attempt)

    def log_file(self, log: AttemptLog) -> Path | None:
        """The attempt's full log here, confined to its media root (None: no path, no root here, or
        a path leaving it). Read it with :func:`postproject.base.files.read_regular` (bounded)."""
        return self._attempts.log_file(log)

    # --- the revision feed -------------------------------------------------------------

    def latest_sequence(self) -> int:
        """The newest revision's sequence (0 when there is none); never loads events."""
        return self._feed.latest_sequence()

    def revisions(self, limit: int = 100, before: int | None = None) -> tuple[RevisionSummary, ...]:
        """Revision headers, newest first (those before sequence ``before``), with event counts
        per kind instead of the events themselves (a bulk edit may hold millions)."""
        return self._feed.revisions(limit, before)

    def commit_times(self, sequences: Iterable[int]) -> dict[int, datetime]:
        """When each revision numbered in ``sequences`` committed, read together (a number no
        revision has is left out)."""
        return self._feed.commit_times(sequences)

    def latest_revision(self) -> Revision | None:
        """The newest revision, or None for a production nobody has changed yet."""
        return self._feed.latest_revision()

    def changes_since(self, sequence: int, limit: int = 100, kinds: Iterable[str] | None = None) -> Changes:
        """Revisions after ``sequence``, oldest first, with their events.

        With ``kinds``, only revisions holding at least one event of those kinds are returned
        (with all their events); ``through_sequence`` tells how far the page covered.
        """
        return self._feed.changes_since(sequence, limit, kinds)

    def wait_for_changes(
        self,
        after_sequence: int,
        timeout: float | timedelta,
        *,
        limit: int = 100,
        kinds: Iterable[str] | None = None,
        stop: threading.Event | None = None,
    ) -> Changes:
        """Block until revisions after ``after_sequence`` exist (or ``timeout`` passes, or
        ``stop`` is set by another thread).

        Another process's commit is noticed within a few tens of milliseconds, and the feed is
        read again only when something committed: on SQLite the wait probes ``PRAGMA
        data_version`` (microseconds per probe) with a 5-50 ms backoff; on PostgreSQL it sleeps
        until a LISTEN/NOTIFY notification (no table is polled while the notifications are
        heard). Commits from this process wake it at once.

        Args:
            timeout: seconds (or a timedelta) from 0 to 60; 0 checks once.
        """
        return self._feed.wait_for_changes(after_sequence, timeout, limit=limit, kinds=kinds, stop=stop)

    def wait_for_head(
        self, after_sequence: int, timeout: float | timedelta, *, stop: threading.Event | None = None
    ) -> int:
        """Block until the newest revision's sequence passes ``after_sequence`` (or ``timeout``
        passes, or ``stop`` is set); that sequence. Woken as :meth:`wait_for_changes` is, but
        reads only the sequence: what a process that follows the head alone waits with (the
        service's one listener that wakes its held claims and event streams)."""
        return self._feed.wait_for_head(after_sequence, timeout, stop=stop)

    def wait_for_activity(
        self,
        after_sequence: int,
        after_progress: int,
        timeout: float | timedelta,
        *,
        limit: int = 100,
        stop: threading.Event | None = None,
        heartbeat: Callable[[], object] | None = None,
    ) -> tuple[Changes, int]:
        """Block until revisions after ``after_sequence`` exist or the progress signal
        (:meth:`progress_token`) differs from ``after_progress`` (or ``timeout`` passes, or
        ``stop`` is set); (the changes, the current progress token). What a monitor follows:
        one wait for both, woken like :meth:`wait_for_changes`, reading nothing while nothing
        commits (on PostgreSQL) however long the timeout.

        Args:
            timeout: seconds (or a timedelta) from 0 to 60; 0 checks once.
            heartbeat: called every few tens of milliseconds while the wait is alive and
                nothing changed, so a caller can tell a quiet production from a hung one.
        """
        return self._feed.wait_for_activity(
            after_sequence, after_progress, timeout, limit=limit, stop=stop, heartbeat=heartbeat
        )
