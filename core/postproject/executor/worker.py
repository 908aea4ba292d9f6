"""The reference executor: claims proxy and thumbnail jobs, makes the media, publishes it.

One :class:`Worker` runs ``concurrency`` lanes (threads), each with its own
:class:`~postproject.production.Production` handle. A lane loops:

0. the worker registers (its agent name, ``concurrency`` as capacity, its kinds) and a
   :class:`~postproject.executor.presence.Presence` thread heartbeats and sweeps lost work;
1. claim the first claimable job of its kinds as the worker's session
   (``claim_next_job_lease``; once some job has been skipped, it claims by id among the
   remaining candidates instead); a busy database makes it wait, never exit;
2. check it (:func:`postproject.executor.jobs.plan`): an unusable request is *failed* with
   a clear diagnostic, a job this machine cannot reach is *released* and skipped;
3. work on it while a :class:`~postproject.executor.renewal.Renewer` renews the lease every
   third of its duration; the work stops at the next frame when the lease is lost or a
   stop is requested;
4. publish in ONE edit: the output representation (under the job's target root), an
   activity with the job's inputs, the output, tool, agent, start and finish times, the
   ``profile`` it actually used as activity metadata, and the job's completion.

The media is made in a hidden per-attempt folder inside the target directory
(:class:`~postproject.executor.jobs.Staging`) and moved to a free name only once complete, so
a failed, stopped or killed attempt leaves nothing in the target root and never takes a
clean output name; stale attempt folders are swept when a worker starts (and whenever one
stages in the same folder). A tool failure fails the job with a bounded diagnostic, as a
retryable failure (another attempt while attempts remain); an unusable request is never retried. A lost
lease publishes nothing. :meth:`Worker.stop` (Ctrl-C) stops the work and
releases every claim still held, each in its own edit. Without ``watch`` a lane ends when
nothing is claimable; with it, it waits for new work (the revision feed, rechecked every few
seconds because an expired lease makes a job claimable without any revision).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

from postproject import clock as clocks
from postproject._version import __version__
from postproject.errors import ConflictError, ErrorCode, PostProjectError, Reason
from postproject.executor import jobs
from postproject.executor.config import (
    Budget,
    Listener,
    WorkerConfig,
    WorkerEvent,
    WorkerStats,
    default_agent,
    duration_text,
)
from postproject.executor.media import MediaError, MediaStopped
from postproject.executor.presence import Presence, patiently
from postproject.executor.renewal import Renewer
from postproject.ids import JobId
from postproject.leases import JobLease, LeaseState
from postproject.lifecycle import JobState
from postproject.model.activities import ActivitySpec
from postproject.model.jobs import Job
from postproject.model.refs import ActivityRef
from postproject.model.workers import WorkerSession
from postproject.production import Production
from postproject.transaction import Transaction

__all__ = ["Listener", "Worker", "WorkerConfig", "WorkerEvent", "WorkerStats", "default_agent"]

log = logging.getLogger(__name__)

ORIGIN = f"postproject-executor {__version__}"
IDLE_RECHECK = 5.0  # seconds an idle watching lane waits before trying to claim again anyway
WAKE_KINDS = ("job_requested", "job_claim_released", "job_succeeded")  # a success may free dependents


class Worker:
    """Runs jobs until there is nothing left (or, with ``watch``, until :meth:`stop`)."""

    def __init__(self, config: WorkerConfig, listener: Listener | None = None) -> None:
        if config.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if config.proxy_format not in jobs.PROXY_FORMATS:
            raise ValueError(f"proxy format must be one of {jobs.PROXY_FORMATS}")
        if config.thumbnail_format not in jobs.THUMBNAIL_FORMATS:
            raise ValueError(f"thumbnail format must be one of {jobs.THUMBNAIL_FORMATS}")
        self.config = config
        self.stats = WorkerStats()
        self._listener = listener
        self._stop = threading.Event()
        self._skipped: set[JobId] = set()
        self._errors: list[Exception] = []
        self._budget = Budget(1 if config.once else None)
        self._attempts: dict[JobId, int] = {}  # job -> the revision that recorded our claim
        self._interval = config.renew_interval or config.lease.total_seconds() / 3
        self._session: WorkerSession | None = None
        self._lease_text = f"lease {duration_text(config.lease)}"

    # --- running -----------------------------------------------------------------------

    def run(self) -> WorkerStats:
        """Run the lanes and wait for them; Ctrl-C (KeyboardInterrupt) stops them cleanly.

        Raises:
            PostProjectError: the production cannot be opened, or a lane failed (the first
                lane error, after every lane has stopped and released its claim).
        """
        config = self.config
        jobs.check_tools(config.kinds)
        presence = Presence(
            config.open,
            config.agent.name,
            config.concurrency,
            config.kinds,
            origin=ORIGIN,
            sweep=config.sweep,
            on_fenced=self._fenced,
        )
        with config.open() as production:  # fail fast (not_found, storage) before starting threads
            swept = sum(jobs.sweep(directory) for directory in _root_directories(production))
            self._session = presence.register(production)
        if swept:
            log.info("removed %d stale staging folder(s) of killed workers", swept, extra={"action": "swept"})
        log.info(
            "worker %s started on %s: %s, %s, %d at a time%s",
            config.agent,
            config.path,
            ", ".join(jobs.short_kind(k) for k in config.kinds),
            self._lease_text,
            config.concurrency,
            ", watching for new work" if config.watch else "",
            extra={"action": "started"},
        )
        lanes = [
            threading.Thread(target=self._lane, name=f"worker-lane-{n + 1}", daemon=True)
            for n in range(self.config.concurrency)
        ]
        presence.start()
        for lane in lanes:
            lane.start()
        try:
            for lane in lanes:
                while lane.is_alive():
                    lane.join(0.2)
        except KeyboardInterrupt:
            self.stop()
            for lane in lanes:
                lane.join()
            raise
        finally:
            presence.stop()
        if self._errors:
            raise self._errors[0]
        return self.stats

    def stop(self) -> None:
        """Ask every lane to stop its work, release its claim and end (safe from signal handlers)."""
        self._stop.set()

    def _fenced(self, why: str) -> None:
        log.error("stopping: %s", why, extra={"action": "fenced"})
        self._errors.append(ConflictError(why, reason=Reason.WORKER_SESSION_REPLACED))
        self.stop()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def _lane(self) -> None:
        try:
            with self.config.open() as production:
                idle = False
                while not self._stop.is_set() and self._budget.take():
                    head = _head(production)
                    lease = self._claim(production)
                    if lease is None:
                        self._budget.give_back()
                        if not self.config.watch:
                            return
                        if not idle:
                            log.info("no claimable job; waiting for new work", extra={"action": "idle"})
                        idle = True
                        self._idle(production, head)
                        continue
                    idle = False
                    with lease:
                        if not self._guarded(production, lease):
                            self._budget.give_back()  # skipped jobs do not count for --once
        except PostProjectError as exc:  # reported by run()'s caller
            self._errors.append(exc)
            self.stop()
        except Exception as exc:
            log.exception("worker lane stopped by an error", extra={"action": "lane_error"})
            self._errors.append(exc)
            self.stop()

    def _guarded(self, production: Production, lease: JobLease) -> bool:
        """Process one claimed job; on an unexpected error, release the claim if still held."""
        try:
            return self._process(production, lease)
        except BaseException:
            if lease.state is LeaseState.ACTIVE:
                with production.edit(origin=ORIGIN, message="Release job claim") as tx:
                    tx.release_job_lease(lease)
                    tx.commit()
            raise

    def _idle(self, production: Production, head: int) -> None:
        deadline = clocks.monotonic() + IDLE_RECHECK
        while not self._stop.is_set():
            remaining = deadline - clocks.monotonic()
            if remaining <= 0:
                return
            if production.wait_for_changes(head, min(0.25, remaining), limit=1, kinds=WAKE_KINDS):
                return

    # --- claiming ----------------------------------------------------------------------

    def _claim(self, production: Production) -> JobLease | None:
        """Claim as this worker's session; waits while the database is busy."""
        config, session = self.config, self._session

        def attempt() -> JobLease | None:
            with production.edit(origin=ORIGIN, message="Claim job") as tx:
                if not self._skipped:
                    lease = tx.claim_next_job_lease(
                        config.tool, config.lease, kinds=config.kinds, agent=config.agent, worker=session
                    )
                else:
                    lease = None
                    for job in self._candidates(production):
                        try:
                            lease = tx.claim_job_lease(
                                job.id, config.tool, config.lease, agent=config.agent, worker=session
                            )
                        except ConflictError as exc:  # taken meanwhile; the edit stays usable
                            if exc.reason in (Reason.WORKER_OFFLINE, Reason.WORKER_AT_CAPACITY):
                                raise
                            continue
                        break
                tx.commit()
            return lease

        try:
            return patiently(attempt, self._stop, "claiming")
        except ConflictError as exc:
            if exc.reason is Reason.WORKER_SESSION_REPLACED:
                self._fenced(str(exc))
                return None
            if exc.reason in (Reason.WORKER_OFFLINE, Reason.WORKER_AT_CAPACITY):
                log.info("not claiming now: %s", exc, extra={"action": "claim_deferred"})
                return None
            raise

    def _candidates(self, production: Production) -> Iterator[Job]:
        """Claimable jobs of our kinds that this worker has not skipped, oldest first per kind."""
        for kind in self.config.kinds:
            cursor: str | None = None
            while True:
                page = production.jobs(limit=100, cursor=cursor, state=JobState.REQUESTED, kind=kind)
                yield from (job for job in page.items if job.id not in self._skipped)
                if page.next_cursor is None:
                    break
                cursor = page.next_cursor
        expired = production.claims_expiring().items
        yield from (j for j in expired if j.kind in self.config.kinds and j.id not in self._skipped)

    # --- one job -----------------------------------------------------------------------

    def _process(self, production: Production, lease: JobLease) -> bool:
        """Check and run one claimed job; False when it was skipped (released for others)."""
        job = production.job(lease.job_id)
        if job.claim is not None:
            self._attempts[job.id] = job.claim.attempt
        try:
            task = jobs.plan(
                production,
                job,
                proxy_format=self.config.proxy_format,
                thumbnail_format=self.config.thumbnail_format,
            )
        except jobs.JobDefect as defect:
            label = jobs.label_of(production, job)
            self._emit("claimed", job.id, label, detail=self._lease_text)
            self._fail(production, lease, label, str(defect))
            return True
        except jobs.NotHere as reason:
            self._skipped.add(job.id)
            self._release(
                production, lease, jobs.label_of(production, job), f"skipped here: {reason}", "skipped"
            )
            return False
        self._emit("claimed", job.id, task.label, detail=self._lease_text)
        self._work(production, lease, task)
        return True

    def _work(self, production: Production, lease: JobLease, task: jobs.Task) -> None:
        label = task.label

        def lost(reason: str) -> None:
            self._emit("lease_lost", task.job.id, label, detail=f"{reason}; stopping without publishing")

        renewer = Renewer(
            self.config.open, lease.export_token(), self.config.lease, self._interval, lost, origin=ORIGIN
        ).start()
        staging: jobs.Staging | None = None
        try:
            staging = jobs.Staging.create(task.directory)
            staged = staging.path(task)
            started = production.clock.now()
            jobs.execute(
                task,
                staged,
                lambda fraction: self._emit("progress", task.job.id, label, fraction=fraction),
                lambda: renewer.lost or self._stop.is_set(),
            )
            finished = production.clock.now()
            renewer.stop()
            if renewer.lost:
                return
            output = staging.publish(staged, task)
        except (MediaError, jobs.NotHere) as exc:
            renewer.stop()
            self._after_failure(production, lease, label, exc, renewer.lost)
            return
        finally:
            renewer.stop()
            if staging is not None:
                staging.close()
        self._complete(production, lease, task, output, (started, finished))

    def _after_failure(
        self, production: Production, lease: JobLease, label: str, exc: Exception, lost: bool
    ) -> None:
        if lost:
            return  # already reported by the renewer; nothing to publish
        if isinstance(exc, MediaStopped):
            self._release(production, lease, label, "stop requested", "released")
        elif isinstance(exc, jobs.NotHere):
            self._skipped.add(lease.job_id)
            self._release(production, lease, label, f"skipped here: {exc}", "skipped")
        else:
            # A tool crash may pass on another attempt (while attempts remain), on another worker:
            # this one does not take the job again in this run. Bad input is never retried.
            retry = isinstance(exc, MediaError) and exc.retryable
            if retry:
                self._skipped.add(lease.job_id)
            self._fail(production, lease, label, f"{label} failed: {exc}", retry=retry)

    def _complete(
        self,
        production: Production,
        lease: JobLease,
        task: jobs.Task,
        output: Path,
        times: tuple[datetime, datetime],
    ) -> None:
        job, config = task.job, self.config

        def publish() -> None:
            with production.edit(origin=ORIGIN, message="Complete job") as tx:
                rep = tx.add_representation(
                    job.output_asset_id, job.output_representation_kind, output, root=task.root
                )
                spec = ActivitySpec(
                    job.kind,
                    inputs=job.inputs,
                    outputs=(rep,),
                    tool=config.tool,
                    agent=config.agent,
                    started_at=times[0],
                    finished_at=times[1],
                )
                activity = tx.create_activity(spec)
                tx.add_metadata(ActivityRef(activity), jobs.PROFILE, task.profile)
                tx.complete_job_lease(lease, rep, activity)
                tx.commit()

        try:
            patiently(publish, threading.Event(), "publishing")
        except ConflictError as exc:
            _remove(output)
            if exc.reason is Reason.INPUT_CHANGED:
                self._release(
                    production, lease, task.label, f"input changed while working: {exc}", "released"
                )
            else:
                self._emit("lease_lost", job.id, task.label, detail=f"{exc}; output discarded")
            return
        except PostProjectError as exc:
            _remove(output)
            why = f"could not publish the output of {task.label}: {exc}"
            if exc.code in (ErrorCode.STORAGE, ErrorCode.IO):  # transient: let a later attempt redo it
                self._release(production, lease, task.label, why, "released")
            else:
                self._fail(production, lease, task.label, why)
            return
        self._emit("succeeded", job.id, task.label, fraction=1.0, detail=str(output))

    # --- ending a claim without output -------------------------------------------------

    def _fail(
        self, production: Production, lease: JobLease, label: str, diagnostic: str, *, retry: bool = False
    ) -> None:
        """Fail the job; ``retry`` for a tool crash (bad input is never retried)."""
        text = jobs.bounded(diagnostic)
        change: Callable[[Transaction], None] = lambda tx: tx.fail_job_lease(lease, text, retry=retry)  # noqa: E731
        if self._end(production, lease, label, "Fail job", change):
            self._emit("failed", lease.job_id, label, detail=text)

    def _release(self, production: Production, lease: JobLease, label: str, why: str, action: str) -> None:
        if self._end(production, lease, label, "Release job claim", lambda tx: tx.release_job_lease(lease)):
            self._emit(action, lease.job_id, label, detail=why)

    def _end(
        self,
        production: Production,
        lease: JobLease,
        label: str,
        message: str,
        change: Callable[[Transaction], None],
    ) -> bool:
        def attempt() -> bool:
            with production.edit(origin=ORIGIN, message=message) as tx:
                change(tx)
                tx.commit()
            return True

        try:
            return patiently(attempt, threading.Event(), message.lower()) is True
        except ConflictError as exc:
            self._emit("lease_lost", lease.job_id, label, detail=str(exc))
            return False

    def _emit(
        self, action: str, job_id: JobId, label: str, *, fraction: float = 0.0, detail: str = ""
    ) -> None:
        event = WorkerEvent(action, job_id, label, fraction, detail)
        if action != "progress":
            self.stats.add(action)
            text = f"{action.replace('_', ' ')} job {job_id} ({label})" + (f": {detail}" if detail else "")
            level = logging.WARNING if action in ("failed", "lease_lost") else logging.INFO
            fields = {"action": action, "job": str(job_id), "attempt": self._attempts.get(job_id)}
            log.log(level, text, extra=fields)
        if self._listener is not None:
            self._listener(event)


def _root_directories(production: Production) -> Iterator[Path]:
    """This machine's directories of the production's media roots (those that exist here)."""
    for root in production.media_roots():
        directory = production.root_path(root.name)
        if directory is not None and directory.is_dir():
            yield directory


def _head(production: Production) -> int:
    revision = production.latest_revision()
    return revision.sequence if revision else 0


def _remove(path: Path | None) -> None:  # an output published but not recorded
    if path is not None:
        path.unlink(missing_ok=True)
