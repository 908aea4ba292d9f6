"""The reference executor: claims proxy and thumbnail jobs, makes the media, publishes it.

One :class:`Worker` runs ``concurrency`` lanes (threads) over a transport
(:class:`~postproject.executor.backend.WorkerBackend`): the production itself
(:class:`~postproject.executor.backend.DirectBackend`, a handle per thread) or the service's
Worker API (:class:`~postproject.executor.http_backend.HttpBackend`, for a ``http(s)://``
location: no database driver or credentials on the node). A lane loops:

0. the worker registers (its agent name, ``concurrency`` as capacity, its kinds) and a
   :class:`~postproject.executor.presence.Presence` thread heartbeats and sweeps lost work;
1. claim the first claimable job of its kinds as the worker's session
   (``claim_next_job_lease``; once some job has been skipped, it claims by id among the
   remaining candidates instead; over HTTP the service does that with the ``skip`` list);
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
nothing is claimable; with it, it waits for new work (the revision feed, or a claim the
service holds until work arrives, rechecked every few seconds because an expired lease makes
a job claimable without any revision).

Every call follows one recovery policy (:mod:`postproject.executor.recovery`): a busy,
restarting or unreachable database or service is waited out without limit while idle
(said once in the log), a renewal, report or completion in flight is retried until its
lease would have expired and then left to the loss sweep, and a claim whose answer was lost
is never repeated. The worker ends only on a signal or on an error retrying cannot cure (a
refused token or credentials, a missing production, a fenced session).
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from postproject.executor import jobs
from postproject.executor.attemptlog import AttemptLog, AttemptLogs
from postproject.executor.backend import ORIGIN, Claim, ClaimRequest, Success, WorkerBackend
from postproject.executor.config import (
    Budget,
    Listener,
    WorkerConfig,
    WorkerEvent,
    WorkerStats,
    default_agent,
    duration_text,
)
from postproject.executor.presence import Presence
from postproject.executor.profiles import MediaError, MediaStopped
from postproject.executor.recovery import Backoff, Outage, ambiguous, retrying, transient
from postproject.executor.renewal import Renewer
from postproject.model import clock as clocks
from postproject.model.errors import ConflictError, ErrorCode, PostProjectError, Reason
from postproject.model.ids import JobId
from postproject.model.jobs import AttemptOutcome
from postproject.model.values import StringValue

__all__ = ["ORIGIN", "Listener", "Worker", "WorkerConfig", "WorkerEvent", "WorkerStats", "default_agent"]

log = logging.getLogger(__name__)

IDLE_RECHECK = 5.0  # seconds an idle watching lane waits before trying to claim again anyway
AMBIGUOUS = object()  # a claim whose answer was lost


@dataclass
class Held:
    """A claim this worker holds: its token (never logged), its job and, as far as this
    process knows, when its lease expires (a monotonic time, moved by each renewal)."""

    claim: Claim
    deadline: float
    active: bool = True

    @property
    def token(self) -> str:
        return self.claim.token

    @property
    def job_id(self) -> JobId:
        return self.claim.job.id


class Worker:
    """Runs jobs until there is nothing left (or, with ``watch``, until :meth:`stop`)."""

    def __init__(
        self, config: WorkerConfig, listener: Listener | None = None, backend: WorkerBackend | None = None
    ) -> None:
        if config.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if config.proxy_format not in jobs.PROXY_FORMATS:
            raise ValueError(f"proxy format must be one of {jobs.PROXY_FORMATS}")
        if config.thumbnail_format not in jobs.THUMBNAIL_FORMATS:
            raise ValueError(f"thumbnail format must be one of {jobs.THUMBNAIL_FORMATS}")
        self.config = config
        self.stats = WorkerStats()
        self._listener = listener
        self._given = backend
        self._backend: WorkerBackend = backend or config.backend()
        self._outage = Outage(self._backend.peer)
        self._stop = threading.Event()
        self._skipped: set[JobId] = set()
        self._errors: list[Exception] = []
        self._budget = Budget(1 if config.once else None)
        self._attempts: dict[JobId, int] = {}  # job -> the attempt number of our claim
        self._interval = config.renew_interval or config.lease.total_seconds() / 3
        self._presence: Presence | None = None
        self._lease_text = f"lease {duration_text(config.lease)}"
        self._logs = AttemptLogs()

    # --- running -----------------------------------------------------------------------

    def run(self) -> WorkerStats:
        """Run the lanes and wait for them; Ctrl-C (KeyboardInterrupt) stops them cleanly.

        Raises:
            PostProjectError: the production cannot be opened (other than while it is
                unreachable: that is waited out), or a lane failed (the first lane error,
                after every lane has stopped and released its claim).
        """
        config, backend = self.config, self._backend
        jobs.check_tools(config.kinds)
        presence = Presence(
            backend,
            config.agent.name,
            config.concurrency,
            config.kinds,
            socket.gethostname(),
            outage=self._outage,
            sweep=config.sweep,
            on_fenced=self._fenced,
            on_fatal=self._fatal,
        )
        self._presence = presence
        try:
            attached = self._attach()  # fail fast (not_found, auth) before starting threads
            if attached is None:
                return self.stats
            with attached:
                if presence.register(self._stop) is None:
                    return self.stats
                directories = retrying(backend.root_directories, self._outage, stop=self._stop)
                swept = sum(jobs.sweep(directory) for directory in directories or ())
            if swept:
                log.info(
                    "removed %d stale staging folder(s) of killed workers", swept, extra={"action": "swept"}
                )
            log.info(
                "worker %s started on %s: %s, %s, %d at a time%s",
                config.agent,
                backend.where,
                ", ".join(jobs.short_kind(k) for k in config.kinds),
                self._lease_text,
                config.concurrency,
                ", watching for new work" if config.watch else "",
                extra={"action": "started"},
            )
            self._lanes(presence)
        finally:
            if self._given is None:
                backend.close()
        if self._errors:
            raise self._errors[0]
        return self.stats

    def _lanes(self, presence: Presence) -> None:
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

    def stop(self) -> None:
        """Ask every lane to stop its work, release its claim and end (safe from signal handlers)."""
        self._stop.set()

    def _fenced(self, why: str) -> None:
        log.error("stopping: %s", why, extra={"action": "fenced"})
        self._errors.append(ConflictError(why, reason=Reason.WORKER_SESSION_REPLACED))
        self.stop()

    def _fatal(self, error: PostProjectError) -> None:
        self._errors.append(error)
        self.stop()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def _attach(self) -> contextlib.ExitStack | None:
        """The backend attached to the calling thread (its handle opened), an unreachable peer
        waited out (a worker starting while the database restarts keeps trying); None when
        the worker stopped meanwhile. Errors retrying cannot cure (not found, refused) raise."""

        def attempt() -> contextlib.ExitStack:
            stack = contextlib.ExitStack()
            stack.enter_context(self._backend.attached())
            return stack

        return retrying(attempt, self._outage, stop=self._stop)

    def _lane(self) -> None:
        try:
            attached = self._attach()
            if attached is None:
                return
            with attached:
                idle, backoff = False, Backoff(cap=IDLE_RECHECK)
                while not self._stop.is_set() and self._budget.take():
                    claimed = self._claim(IDLE_RECHECK if idle and self.config.watch else 0.0)
                    if claimed is AMBIGUOUS:
                        self._budget.give_back()
                        self._stop.wait(backoff.next())
                        continue
                    if not isinstance(claimed, Held):
                        self._budget.give_back()
                        if not self.config.watch:
                            return
                        if not idle:
                            log.info("no claimable job; waiting for new work", extra={"action": "idle"})
                        idle = True
                        continue
                    idle = False
                    backoff.reset()
                    if not self._guarded(claimed):
                        self._budget.give_back()  # skipped jobs do not count for --once
        except PostProjectError as exc:  # reported by run()'s caller
            self._errors.append(exc)
            self.stop()
        except Exception as exc:
            log.exception("worker lane stopped by an error", extra={"action": "lane_error"})
            self._errors.append(exc)
            self.stop()

    def _guarded(self, held: Held) -> bool:
        """Process one claimed job, its log captured; on an unexpected error, release the claim
        if still held."""
        job = held.claim.job
        self._attempts[job.id] = job.attempt
        log = self._logs.begin(job.id, job.attempt)
        try:
            return self._process(held, log)
        except BaseException:
            if held.active:
                try:
                    retrying(lambda: self._backend.release(held.token, tail=log.tail()), self._outage,
                             until=held.deadline)  # fmt: skip
                except PostProjectError:
                    pass  # it expires by itself
            raise
        finally:
            self._logs.end(log)

    # --- claiming ----------------------------------------------------------------------

    def _claim(self, wait: float) -> Held | object | None:
        """Claim as this worker's session (None when there is nothing to claim now, AMBIGUOUS
        when the answer was lost); an unreachable peer is waited out."""
        config, presence = self.config, self._presence
        assert presence is not None
        sent = clocks.monotonic()
        request = ClaimRequest(
            presence.session,
            config.kinds,
            config.tool,
            config.agent,
            config.lease,
            frozenset(self._skipped),
            wait,
        )

        def attempt() -> Claim | None:
            nonlocal sent
            sent = clocks.monotonic()
            return self._backend.claim(request, self._stop)

        try:
            claim = retrying(attempt, self._outage, stop=self._stop, repeat_ambiguous=False)
        except ConflictError as exc:
            if exc.reason is Reason.WORKER_SESSION_REPLACED:
                self._fenced(str(exc))
                return None
            if exc.reason in (Reason.WORKER_OFFLINE, Reason.WORKER_AT_CAPACITY):
                log.info("not claiming now: %s", exc, extra={"action": "claim_deferred"})
                if self.config.watch:
                    self._stop.wait(1.0)
                return None
            raise
        except PostProjectError as exc:
            if ambiguous(exc):
                log.warning(
                    "a claim failed mid-way (%s); not repeating it: if it was made, it expires and is swept",
                    exc.message,
                    extra={"action": "claim_ambiguous"},
                )
                return AMBIGUOUS
            raise
        if claim is None:
            return None
        return Held(claim, sent + config.lease.total_seconds())

    # --- one job -----------------------------------------------------------------------

    def _process(self, held: Held, log: AttemptLog) -> bool:
        """Check and run one claimed job; False when it was skipped (released for others)."""
        claim = held.claim
        try:
            task = jobs.plan(
                claim, proxy_format=self.config.proxy_format, thumbnail_format=self.config.thumbnail_format
            )
        except jobs.JobDefect as defect:
            label = jobs.label_of(claim)
            self._emit("claimed", claim.job.id, label, detail=self._lease_text)
            self._fail(held, label, "unusable_request", str(defect), log)
            return True
        except jobs.NotHere as reason:
            self._skipped.add(claim.job.id)
            self._release(held, jobs.label_of(claim), f"skipped here: {reason}", "skipped", log)
            return False
        self._emit("claimed", claim.job.id, task.label, detail=self._lease_text)
        self._work(held, task, log)
        return True

    def _work(self, held: Held, task: jobs.Task, log: AttemptLog) -> None:
        label, backend = task.label, self._backend

        def lost(reason: str) -> None:
            self._emit("lease_lost", task.job.id, label, detail=f"{reason}; stopping without publishing")

        renewer = Renewer(
            backend,
            held.token,
            task.job,
            self.config.lease,
            self._interval,
            lost,
            outage=self._outage,
            deadline=held.deadline,
        )
        log.write(f"{task.label}: reading {task.source}, writing into {task.directory}")
        renewer.progress(0.0, "decode", f"reading {task.source.name}")
        renewer.start()
        self._record_log_path(held, log, task)

        def frame(done: int, total: int | None) -> None:
            if total:
                renewer.progress(min(done / total, 1.0), "encode", f"frame {done} of {total}")
            else:
                renewer.progress(None, "encode", f"frame {done}")

        staging: jobs.Staging | None = None
        failure: Exception | None = None
        output: Path | None = None
        times = (backend.now(), backend.now())
        try:
            staging = jobs.Staging.create(task.directory)
            for leftover in jobs.remove_unrecorded(task):
                log.write(
                    f"removed {leftover.name}: an earlier attempt of this job published it, nothing recorded it"
                )
            staged = staging.path(task)
            started = backend.now()
            jobs.execute(
                task,
                staged,
                lambda fraction: self._emit("progress", task.job.id, label, fraction=fraction),
                lambda: renewer.lost or renewer.stop_requested or self._stop.is_set(),
                frame,
            )
            times = (started, backend.now())
            renewer.progress(1.0, "publish", "publishing the output")
            renewer.stop()
            if not (renewer.lost or renewer.stop_requested):
                output = staging.publish(staged, task)
        except (MediaError, jobs.NotHere) as exc:
            failure = exc
        finally:
            renewer.stop()
            held.deadline = renewer.deadline
            if staging is not None:
                staging.close()  # the attempt folder and any partial output go
        if renewer.lost or renewer.stop_requested:
            why = renewer.why or "the claim is gone"
            self._stopped(held, label, why, log, reported=renewer.lost)
        elif failure is not None:
            self._after_failure(held, label, failure, log)
        elif output is not None:
            self._complete(held, task, output, times, log)

    def _record_log_path(self, held: Held, log: AttemptLog, task: jobs.Task) -> None:
        """Start the full log beside the outputs and record where it is (stored state)."""
        path = log.open(task.directory)
        if path is None:
            return
        try:
            retrying(lambda: self._backend.record_log(held.token, path=path, root=task.root), self._outage,
                     stop=self._stop, until=held.deadline)  # fmt: skip
        except PostProjectError as exc:  # the work goes on; the tail is still stored at the end
            log.write(f"could not record where this log is: {exc}")

    def _stopped(self, held: Held, label: str, why: str, log: AttemptLog, *, reported: bool = False) -> None:
        """The work stopped because its claim ended elsewhere (partial output already removed):
        confirm the stop a cancel or requeue asked for, or report the loss (unless ``reported``)."""
        job_id = held.job_id
        log.write(f"stopped ({why}); partial output removed")
        held.active = False
        try:
            outcome = retrying(lambda: self._backend.confirm_stopped(held.token, tail=log.tail()), self._outage,
                               until=held.deadline)  # fmt: skip
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

    def _after_failure(self, held: Held, label: str, exc: Exception, log: AttemptLog) -> None:
        if isinstance(exc, MediaStopped):
            self._release(held, label, "stop requested", "released", log)
        elif isinstance(exc, jobs.NotHere):
            self._skipped.add(held.job_id)
            self._release(held, label, f"skipped here: {exc}", "skipped", log)
        else:
            # A tool crash may pass on another attempt (while attempts remain), on another worker:
            # this one does not take the job again in this run. Bad input is never retried.
            retry = isinstance(exc, MediaError) and exc.retryable
            if retry:
                self._skipped.add(held.job_id)
            self._fail(held, label, "tool_failed", f"{label} failed: {exc}", log, retry=retry)

    def _complete(
        self, held: Held, task: jobs.Task, output: Path, times: tuple[datetime, datetime], log: AttemptLog
    ) -> None:
        job, config = task.job, self.config
        log.write(f"publishing {output.name}")
        report = Success(
            report_id=new_report_id(),
            output=output,
            root=task.root,
            kind=job.output_kind,
            tool=config.tool,
            agent=config.agent,
            started_at=times[0],
            finished_at=times[1],
            parameters=((jobs.PROFILE, StringValue(task.profile)),),
            tail=log.tail(),
        )
        try:
            retrying(
                lambda: self._backend.complete(held.token, job, report), self._outage, until=held.deadline
            )
        except ConflictError as exc:
            _remove(output)
            jobs.forget_published(task)
            if exc.reason is Reason.INPUT_CHANGED:
                self._release(held, task.label, f"input changed while working: {exc}", "released", log)
            else:
                self._stopped(held, task.label, f"{exc}; output discarded", log)
            return
        except PostProjectError as exc:
            if transient(exc):  # it may have been recorded: keep the file, leave the claim to the sweep
                held.active = False
                self._emit("lease_lost", job.id, task.label, detail=f"could not report the output {output} "
                           f"before the lease expired ({exc}); the loss sweep decides")  # fmt: skip
                return
            _remove(output)
            jobs.forget_published(task)
            why = f"could not publish the output of {task.label}: {exc}"
            if exc.code in (ErrorCode.STORAGE, ErrorCode.IO):  # let a later attempt redo it
                self._release(held, task.label, why, "released", log)
            else:
                self._fail(held, task.label, "publish_failed", why, log)
            return
        held.active = False
        jobs.forget_published(task)
        self._emit("succeeded", job.id, task.label, fraction=1.0, detail=str(output))

    # --- ending a claim without output -------------------------------------------------

    def _fail(
        self, held: Held, label: str, code: str, diagnostic: str, log: AttemptLog, *, retry: bool = False
    ) -> None:
        """Fail the job; ``retry`` for a tool crash (bad input is never retried)."""
        text = jobs.bounded(diagnostic)
        log.write(f"failing: {text}")
        report_id = new_report_id()

        def change() -> None:
            self._backend.fail(held.token, report_id, code, text, retry=retry, tail=log.tail())

        if self._end(held, label, change, log):
            self._emit("failed", held.job_id, label, detail=text)

    def _release(self, held: Held, label: str, why: str, action: str, log: AttemptLog) -> None:
        log.write(f"releasing: {why}")
        if self._end(held, label, lambda: self._backend.release(held.token, tail=log.tail()), log):
            self._emit(action, held.job_id, label, detail=why)

    def _end(self, held: Held, label: str, change: Callable[[], None], log: AttemptLog) -> bool:
        """End the claim (with the attempt's log tail); a claim that ended elsewhere meanwhile
        (cancelled, requeued) gets its stop confirmed instead. A peer that stays unreachable
        until the lease expires leaves the claim to the loss sweep."""
        try:
            retrying(change, self._outage, until=held.deadline)
        except ConflictError as exc:
            self._stopped(held, label, str(exc), log)
            return False
        except PostProjectError as exc:
            if not transient(exc):
                raise
            held.active = False
            self._emit("lease_lost", held.job_id, label, detail=f"could not end the claim before its lease "
                       f"expired ({exc}); the loss sweep returns the job")  # fmt: skip
            return False
        held.active = False
        return True

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


def new_report_id() -> str:
    """A completion report's id (sent again unchanged after a lost answer)."""
    return str(uuid.uuid4())


def _remove(path: Path | None) -> None:  # an output published but not recorded
    if path is not None:
        path.unlink(missing_ok=True)
