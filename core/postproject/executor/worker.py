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

import functools
import logging
import threading
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

from postproject._version import __version__
from postproject.base.leases import JobLease, LeaseState
from postproject.executor import jobs
from postproject.executor.attemptlog import AttemptLog, AttemptLogs
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
from postproject.model import clock as clocks
from postproject.model.activities import ActivitySpec
from postproject.model.errors import ConflictError, ErrorCode, PostProjectError, Reason
from postproject.model.ids import JobId
from postproject.model.jobs import AttemptOutcome, Job
from postproject.model.lifecycle import JobState
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
        self._logs = AttemptLogs()

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
        self._logs.install()
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
            self._logs.uninstall()
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
        """Process one claimed job, its log captured; on an unexpected error, release the claim
        if still held."""
        job = production.job(lease.job_id)
        if job.claim is not None:
            self._attempts[job.id] = job.claim.attempt
        log = self._logs.begin(job.id, self._attempts.get(job.id, 1))
        try:
            return self._process(production, lease, job, log)
        except BaseException:
            if lease.state is LeaseState.ACTIVE:
                with production.edit(origin=ORIGIN, message="Release job claim") as tx:
                    tx.record_attempt_log(lease, tail=log.tail())
                    tx.release_job_lease(lease)
                    tx.commit()
            raise
        finally:
            self._logs.end(log)

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

    def _process(self, production: Production, lease: JobLease, job: Job, log: AttemptLog) -> bool:
        """Check and run one claimed job; False when it was skipped (released for others)."""
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
            self._fail(production, lease, label, str(defect), log)
            return True
        except jobs.NotHere as reason:
            self._skipped.add(job.id)
            self._release(
                production, lease, jobs.label_of(production, job), f"skipped here: {reason}", "skipped", log
            )
            return False
        self._emit("claimed", job.id, task.label, detail=self._lease_text)
        self._work(production, lease, task, log)
        return True

    def _work(self, production: Production, lease: JobLease, task: jobs.Task, log: AttemptLog) -> None:
        label = task.label

        def lost(reason: str) -> None:
            self._emit("lease_lost", task.job.id, label, detail=f"{reason}; stopping without publishing")

        renewer = Renewer(
            # a renewal may wait for a SQLite write lock up to the lease (past half of it: a warning)
            functools.partial(self.config.open, busy_timeout=self.config.lease.total_seconds()),
            lease.export_token(),
            self.config.lease,
            self._interval,
            lost,
            origin=ORIGIN,
            since=task.job.updated_sequence,
        )
        log.write(f"{task.label}: reading {task.source}, writing into {task.directory}")
        renewer.progress(0.0, "decode", f"reading {task.source.name}")
        renewer.start()
        self._record_log_path(production, lease, log, task)

        def frame(done: int, total: int | None) -> None:
            if total:
                renewer.progress(min(done / total, 1.0), "encode", f"frame {done} of {total}")
            else:
                renewer.progress(None, "encode", f"frame {done}")

        staging: jobs.Staging | None = None
        failure: Exception | None = None
        output: Path | None = None
        times = (production.clock.now(), production.clock.now())
        try:
            staging = jobs.Staging.create(task.directory)
            for leftover in jobs.remove_unrecorded(production, task):
                log.write(
                    f"removed {leftover.name}: an earlier attempt of this job published it, nothing recorded it"
                )
            staged = staging.path(task)
            started = production.clock.now()
            jobs.execute(
                task,
                staged,
                lambda fraction: self._emit("progress", task.job.id, label, fraction=fraction),
                lambda: renewer.lost or renewer.stop_requested or self._stop.is_set(),
                frame,
            )
            times = (started, production.clock.now())
            renewer.progress(1.0, "publish", "publishing the output")
            renewer.stop()
            if not (renewer.lost or renewer.stop_requested):
                output = staging.publish(staged, task)
        except (MediaError, jobs.NotHere) as exc:
            failure = exc
        finally:
            renewer.stop()
            if staging is not None:
                staging.close()  # the attempt folder and any partial output go
        if renewer.lost or renewer.stop_requested:
            why = renewer.why or "the claim is gone"
            self._stopped(production, lease, label, why, log, reported=renewer.lost)
        elif failure is not None:
            self._after_failure(production, lease, label, failure, log)
        elif output is not None:
            self._complete(production, lease, task, output, times, log)

    def _record_log_path(
        self, production: Production, lease: JobLease, log: AttemptLog, task: jobs.Task
    ) -> None:
        """Start the full log beside the outputs and record where it is (stored state)."""
        path = log.open(task.directory)
        if path is None:
            return

        def record() -> None:
            with production.edit(origin=ORIGIN, message="Record attempt log") as tx:
                tx.record_attempt_log(lease, path=path, root=task.root)
                tx.commit()

        try:
            patiently(record, self._stop, "recording the log's place")
        except PostProjectError as exc:  # the work goes on; the tail is still stored at the end
            log.write(f"could not record where this log is: {exc}")

    def _stopped(
        self,
        production: Production,
        lease: JobLease,
        label: str,
        why: str,
        log: AttemptLog,
        *,
        reported: bool = False,
    ) -> None:
        """The work stopped because its claim ended elsewhere (partial output already removed):
        confirm the stop a cancel or requeue asked for, or report the loss (unless ``reported``)."""
        job_id = lease.job_id
        log.write(f"stopped ({why}); partial output removed")

        def confirm() -> AttemptOutcome:
            with production.edit(origin=ORIGIN, message="Confirm job stopped") as tx:
                tx.record_attempt_log(lease, tail=log.tail())
                outcome = tx.confirm_stopped(lease)
                tx.commit()
            return outcome

        try:
            outcome = patiently(confirm, threading.Event(), "confirming a stop")
        except PostProjectError as exc:
            if not reported:
                self._emit("lease_lost", job_id, label, detail=f"{why}; stopped without publishing ({exc})")
            return
        if outcome is AttemptOutcome.CANCELLED:
            self._emit("cancelled", job_id, label, detail="stopped, partial output removed, stop confirmed")
        elif outcome is AttemptOutcome.RELEASED:
            self._emit("requeued", job_id, label, detail="stopped, partial output removed, stop confirmed")
        elif not reported:
            self._emit("lease_lost", job_id, label, detail=f"{why}; stopped without publishing")

    def _after_failure(
        self, production: Production, lease: JobLease, label: str, exc: Exception, log: AttemptLog
    ) -> None:
        if isinstance(exc, MediaStopped):
            self._release(production, lease, label, "stop requested", "released", log)
        elif isinstance(exc, jobs.NotHere):
            self._skipped.add(lease.job_id)
            self._release(production, lease, label, f"skipped here: {exc}", "skipped", log)
        else:
            # A tool crash may pass on another attempt (while attempts remain), on another worker:
            # this one does not take the job again in this run. Bad input is never retried.
            retry = isinstance(exc, MediaError) and exc.retryable
            if retry:
                self._skipped.add(lease.job_id)
            self._fail(production, lease, label, f"{label} failed: {exc}", log, retry=retry)

    def _complete(
        self,
        production: Production,
        lease: JobLease,
        task: jobs.Task,
        output: Path,
        times: tuple[datetime, datetime],
        log: AttemptLog,
    ) -> None:
        job, config = task.job, self.config
        log.write(f"publishing {output.name}")

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
                tx.record_attempt_log(lease, tail=log.tail())
                tx.complete_job_lease(lease, rep, activity)
                tx.commit()

        try:
            patiently(publish, threading.Event(), "publishing")
        except ConflictError as exc:
            _remove(output)
            jobs.forget_published(task)
            if exc.reason is Reason.INPUT_CHANGED:
                self._release(
                    production, lease, task.label, f"input changed while working: {exc}", "released", log
                )
            else:
                self._stopped(production, lease, task.label, f"{exc}; output discarded", log)
            return
        except PostProjectError as exc:
            _remove(output)
            jobs.forget_published(task)
            why = f"could not publish the output of {task.label}: {exc}"
            if exc.code in (ErrorCode.STORAGE, ErrorCode.IO):  # transient: let a later attempt redo it
                self._release(production, lease, task.label, why, "released", log)
            else:
                self._fail(production, lease, task.label, why, log)
            return
        jobs.forget_published(task)
        self._emit("succeeded", job.id, task.label, fraction=1.0, detail=str(output))

    # --- ending a claim without output -------------------------------------------------

    def _fail(
        self,
        production: Production,
        lease: JobLease,
        label: str,
        diagnostic: str,
        log: AttemptLog,
        *,
        retry: bool = False,
    ) -> None:
        """Fail the job; ``retry`` for a tool crash (bad input is never retried)."""
        text = jobs.bounded(diagnostic)
        log.write(f"failing: {text}")

        def change(tx: Transaction) -> None:
            tx.fail_job_lease(lease, text, retry=retry)

        if self._end(production, lease, label, "Fail job", change, log):
            self._emit("failed", lease.job_id, label, detail=text)

    def _release(
        self, production: Production, lease: JobLease, label: str, why: str, action: str, log: AttemptLog
    ) -> None:
        log.write(f"releasing: {why}")
        if self._end(
            production, lease, label, "Release job claim", lambda tx: tx.release_job_lease(lease), log
        ):
            self._emit(action, lease.job_id, label, detail=why)

    def _end(
        self,
        production: Production,
        lease: JobLease,
        label: str,
        message: str,
        change: Callable[[Transaction], None],
        log: AttemptLog,
    ) -> bool:
        """End the claim (with the attempt's log tail); a claim that ended elsewhere meanwhile
        (cancelled, requeued) gets its stop confirmed instead."""

        def attempt() -> bool:
            with production.edit(origin=ORIGIN, message=message) as tx:
                tx.record_attempt_log(lease, tail=log.tail())
                change(tx)
                tx.commit()
            return True

        try:
            return patiently(attempt, threading.Event(), message.lower()) is True
        except ConflictError as exc:
            self._stopped(production, lease, label, str(exc), log)
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
