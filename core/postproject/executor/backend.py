"""The worker's transport seam: what the executor asks of a production, and the direct answer.

The reference executor does the same work whichever way it reaches the production: it
registers and heartbeats, claims, reads what the job needs, renews and reports progress,
records its log, and completes, fails, releases or confirms a stop. :class:`WorkerBackend`
is that list; :class:`DirectBackend` answers it with the public API on the production itself
(a ``.pproj`` file or a ``postgresql://`` URI), and
:class:`~postproject.executor.http_backend.HttpBackend` through the service's Worker API
(``http(s)://``, no database driver or credentials on the node). The work (media, staging,
clean names, logs) stays one code path above it (:mod:`postproject.executor.worker`).

A claim travels as its lease token (``ppl1:...``, never logged) inside a :class:`Claim`,
with everything the job's work needs to read: the job, its parameters, its inputs, its
output asset's name and this machine's directories of the media roots involved. Errors are
the core's (:mod:`postproject.model.errors`) on both transports; a lost or busy peer is
transient (:mod:`postproject.executor.recovery`).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Protocol

from postproject._version import __version__
from postproject.base.leases import ClaimedWork, JobLease
from postproject.executor.recovery import transient
from postproject.model.assets import RepresentationKind
from postproject.model.errors import ConflictError, NotFoundError, PostProjectError, Reason, StorageError
from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.model.ids import AssetId, JobId, RepresentationId
from postproject.model.jobs import AttemptOutcome, Job
from postproject.model.lifecycle import JobState
from postproject.model.metadata import Assertion, Property
from postproject.model.refs import JobRef
from postproject.model.values import MetadataValue
from postproject.model.workers import WorkerSession
from postproject.production import Production

ORIGIN = f"postproject-executor {__version__}"
LOST_REASONS = frozenset({Reason.LEASE_LOST, Reason.LEASE_EXPIRED, Reason.LEASE_NOT_ACTIVE})
# Events that end our claim from outside: a cancel, a requeue, a re-claim or the loss sweep.
STOP_EVENTS = ("job_cancelled", "job_requeued", "job_claimed", "job_lost", "job_failed")
WAKE_KINDS = ("job_requested", "job_claim_released", "job_succeeded")  # a success may free dependents
Parameters = tuple[tuple[Property, MetadataValue], ...]


# --- values --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClaimedJob:
    """What the worker knows of a job it claimed."""

    id: JobId
    kind: str
    inputs: tuple[RepresentationId, ...]
    output_asset_id: AssetId
    output_kind: RepresentationKind
    target_root: str | None
    attempt: int  # the claim's attempt number
    since: int | None = None  # the claim's revision (the direct transport follows the feed from it)


@dataclass(frozen=True, slots=True)
class InputFile:
    """One input representation and its file here (None when its root is not mapped here)."""

    id: RepresentationId
    asset_id: AssetId
    root: str | None
    path: str
    file: Path | None


@dataclass(frozen=True, slots=True)
class Claim:
    """A claim and what its work reads. ``roots`` maps each media root the job names (its
    target root and its inputs' roots) that exists in the production to this machine's
    directory for it (None: not mapped here); a root missing from it does not exist."""

    token: str = field(repr=False)
    job: ClaimedJob
    parameters: Parameters
    inputs: tuple[InputFile, ...]
    output_asset_name: str | None
    roots: Mapping[str, Path | None]


@dataclass(frozen=True, slots=True)
class LeaseStatus:
    """A renewal's or progress report's answer: ``stop`` is ``"cancelled"`` or ``"requeued"``
    once a supervisor ended the claim (stop the work, then confirm)."""

    stop: str | None = None


@dataclass(frozen=True, slots=True)
class Success:
    """A frozen completion report: sent again unchanged (same ``report_id``) after a lost answer."""

    report_id: str
    output: Path  # the published file here
    root: str | None  # the media root it is stored under (None: an absolute path)
    kind: RepresentationKind
    tool: ToolIdentity
    agent: AgentIdentity | None
    started_at: datetime
    finished_at: datetime
    parameters: Parameters  # what the work actually used (recorded on the activity)
    tail: str  # the attempt log's last 64 KiB


@dataclass(frozen=True, slots=True)
class ClaimRequest:
    """How to claim: as which session, for what, for how long; ``skip`` are jobs this worker
    released because it cannot do them here; ``wait`` holds the claim until work arrives."""

    session: object
    kinds: tuple[str, ...]
    tool: ToolIdentity
    agent: AgentIdentity
    lease: timedelta
    skip: frozenset[JobId] = frozenset()
    wait: float = 0.0


class WorkerBackend(Protocol):
    """What the executor asks of a production (see the module docstring)."""

    where: str  # the production's location (or the service's URL) for people
    peer: str  # "database" or "service": what an outage is named after
    sweeps: bool  # whether workers finalise lost work themselves (the service does it)
    report_every: float | None  # seconds between progress reports at least (a cancel's path)

    def attached(self) -> contextlib.AbstractContextManager[None]:
        """Bind a connection to the calling thread for the block (one thread, one handle)."""
        ...

    def now(self) -> datetime: ...

    def root_directories(self) -> list[Path]:
        """This machine's directories of the production's media roots (for the staging sweep)."""
        ...

    def register(self, name: str, capacity: int, kinds: tuple[str, ...], host: str) -> object: ...

    def heartbeat(self, session: object) -> None: ...

    def finalize_lost(self, limit: int) -> int: ...

    def claim(self, request: ClaimRequest, stop: threading.Event) -> Claim | None: ...

    def renew(self, token: str, duration: timedelta) -> LeaseStatus: ...

    def progress(
        self,
        token: str,
        fraction: float | None,
        stage: str | None,
        message: str | None,
        renew: timedelta | None,
    ) -> LeaseStatus: ...

    def watch(
        self, job: ClaimedJob, head: int, timeout: float, wake: threading.Event
    ) -> tuple[int, str | None]:
        """Wait up to ``timeout`` (or until ``wake``) for an event that ends the claim from
        outside; (the feed position now, the event's kind or None)."""
        ...

    def record_log(self, token: str, *, path: Path, root: str | None) -> None: ...

    def complete(self, token: str, job: ClaimedJob, report: Success) -> None: ...

    def fail(self, token: str, report_id: str, code: str, diagnostic: str, *, retry: bool, tail: str) -> None:
        """Fail the job: the direct transport records ``diagnostic``, the service
        ``"{code}: {diagnostic}"`` (a report's error code)."""
        ...

    def release(self, token: str, *, tail: str) -> None: ...

    def confirm_stopped(self, token: str, *, tail: str) -> AttemptOutcome: ...

    def close(self) -> None: ...


# --- the direct transport ------------------------------------------------------------------


class DirectBackend:
    """The production itself, through the public API: each thread works on a handle of its
    own (:meth:`attached`; a handle is not for concurrent edits), taken from a small pool so
    a renewal per job does not open a new connection pool per job."""

    peer = "database"
    sweeps = True
    report_every: float | None = None

    def __init__(self, open_production: OpenProduction, where: str) -> None:
        self._open = open_production
        self.where = where
        self._free: list[Production] = []
        self._all: list[Production] = []
        self._guard = threading.Lock()
        self._local = threading.local()

    # --- handles ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def attached(self) -> Iterator[None]:
        if getattr(self._local, "production", None) is not None:  # nested: keep the outer one
            yield
            return
        with self._guard:
            production = self._free.pop() if self._free else None
        if production is None:
            production = self._open()
            with self._guard:
                self._all.append(production)
        self._local.production = production
        try:
            yield
        finally:
            self._local.production = None
            with self._guard:
                self._free.append(production)

    @property
    def production(self) -> Production:
        production: Production | None = getattr(self._local, "production", None)
        if production is None:
            raise RuntimeError("DirectBackend used outside attached()")
        return production

    def close(self) -> None:
        with self._guard:
            handles, self._all, self._free = self._all, [], []
        for production in handles:
            with contextlib.suppress(Exception):
                production.close()

    def now(self) -> datetime:
        return self.production.clock.now()

    def root_directories(self) -> list[Path]:
        production = self.production
        found = []
        for root in production.media_roots():
            directory = production.root_path(root.name)
            if directory is not None and directory.is_dir():
                found.append(directory)
        return found

    # --- presence --------------------------------------------------------------------------

    def register(self, name: str, capacity: int, kinds: tuple[str, ...], host: str) -> WorkerSession:
        with self.production.edit(origin=ORIGIN, message=f"Register worker {name}") as tx:
            session = tx.register_worker(name, capacity=capacity, kinds=list(kinds), host=host)
            tx.commit()
        return session

    def heartbeat(self, session: object) -> None:
        assert isinstance(session, WorkerSession)
        with self.production.edit(origin=ORIGIN) as tx:
            tx.heartbeat(session)
            tx.commit()

    def finalize_lost(self, limit: int) -> int:
        with self.production.edit(origin=ORIGIN, message="Finalize lost work") as tx:
            count = tx.finalize_lost(limit)
            tx.commit()
        return count

    # --- claims ----------------------------------------------------------------------------

    def claim(self, request: ClaimRequest, stop: threading.Event) -> Claim | None:
        production = self.production
        head = production.latest_sequence() if request.wait > 0 else 0
        work = self._claim(production, request)
        if work is None:
            if request.wait > 0:
                try:
                    _wait_for_work(production, head, request.wait, stop)
                except PostProjectError as exc:  # nothing was claimed: the next claim retries
                    if not transient(exc):
                        raise
            return None
        lease = work.lease if isinstance(work, ClaimedWork) else work
        with lease:
            token = lease.export_token()
        try:
            if isinstance(work, ClaimedWork):  # the job and its parameters came with the claim
                return self.context(production, work.job, token, work.parameters)
            return self.context(production, production.job(lease.job_id), token)
        except PostProjectError as exc:  # claimed, but unusable here: never repeat it (it expires)
            if not transient(exc):
                raise
            raise StorageError(f"the claim committed but could not be read: {exc.message}",
                               reason=Reason.CONNECTION_LOST) from None  # fmt: skip

    def _claim(self, production: Production, request: ClaimRequest) -> ClaimedWork | JobLease | None:
        session = request.session
        assert isinstance(session, WorkerSession)
        if not request.skip:  # the claim, its commit and its job's reads in one call (PostgreSQL)
            return production.claim_next_job(
                request.tool,
                request.lease,
                kinds=request.kinds,
                agent=request.agent,
                worker=session,
                origin=ORIGIN,
                message="Claim job",
            )
        with production.edit(origin=ORIGIN, message="Claim job") as tx:
            lease = None
            for job in candidates(production, request.kinds, request.skip):
                try:
                    lease = tx.claim_job_lease(
                        job.id, request.tool, request.lease, agent=request.agent, worker=session
                    )
                except ConflictError as exc:  # taken meanwhile; the edit stays usable
                    if exc.reason in (Reason.WORKER_OFFLINE, Reason.WORKER_AT_CAPACITY):
                        raise
                    continue
                break
            tx.commit()
        return lease

    @staticmethod
    def context(
        production: Production, job: Job, token: str, parameters: tuple[Assertion, ...] | None = None
    ) -> Claim:
        """A claim with what its work reads, from ``production`` (also the service's answer);
        ``parameters``: the job's, when already read."""
        found = production.metadata[JobRef(job.id)] if parameters is None else parameters
        params = tuple((a.property, a.value) for a in found)
        inputs = []
        names = {job.target_root} if job.target_root is not None else set()
        for rep_id in job.inputs[:MAX_CONTEXT_INPUTS]:
            rep = production.representation(rep_id)
            inputs.append(
                InputFile(rep.id, rep.asset_id, rep.root, rep.path.as_posix(), production.resolve(rep))
            )
            if rep.root is not None:
                names.add(rep.root)
        roots: dict[str, Path | None] = {}
        for name in sorted(names):
            with contextlib.suppress(NotFoundError):
                roots[name] = production.root_path(name)
        asset = production.asset(job.output_asset_id)
        return Claim(token, claimed_job(job), params, tuple(inputs), asset.name, roots)

    # --- leases ----------------------------------------------------------------------------

    def _lease(self, token: str) -> JobLease:
        return JobLease.import_token(self.production, token, live=False)

    def renew(self, token: str, duration: timedelta) -> LeaseStatus:
        lease = self._lease(token)
        try:
            with self.production.edit(origin=ORIGIN, message="Renew job claim") as tx:
                tx.renew_job_lease(lease, duration)
                tx.commit()
        except ConflictError as exc:
            return self._stopped_or_raise(lease.job_id, exc)
        return LeaseStatus()

    def progress(
        self,
        token: str,
        fraction: float | None,
        stage: str | None,
        message: str | None,
        renew: timedelta | None,
    ) -> LeaseStatus:
        lease = self._lease(token)
        try:
            with self.production.edit(origin=ORIGIN, message="Renew job claim") as tx:
                tx.report_progress(lease, fraction=fraction, stage=stage, message=message, renew=renew)
                tx.commit()
        except ConflictError as exc:
            return self._stopped_or_raise(lease.job_id, exc)
        return LeaseStatus()

    def _stopped_or_raise(self, job_id: JobId, error: ConflictError) -> LeaseStatus:
        """A refused renewal or report: a stop when a cancel or requeue ended the claim."""
        if error.reason in LOST_REASONS:
            job = self.production.job(job_id)
            if job.stopping is not None:
                return LeaseStatus("cancelled" if job.state is JobState.CANCELLED else "requeued")
        raise error

    def watch(
        self, job: ClaimedJob, head: int, timeout: float, wake: threading.Event
    ) -> tuple[int, str | None]:
        changes = self.production.wait_for_changes(head, min(timeout, 60.0), kinds=STOP_EVENTS, stop=wake)
        head = max(head, changes.through_sequence)
        wanted = str(job.id)
        for revision in changes:
            for event in revision.events:
                if event.kind in STOP_EVENTS and event.payload.get("job_id") == wanted:
                    return head, event.kind
        return head, None

    def record_log(self, token: str, *, path: Path, root: str | None) -> None:
        lease = self._lease(token)
        with self.production.edit(origin=ORIGIN, message="Record attempt log") as tx:
            tx.record_attempt_log(lease, path=path, root=root)
            tx.commit()

    def complete(self, token: str, job: ClaimedJob, report: Success) -> None:
        production = self.production
        lease = self._lease(token)
        try:
            # the spec's completion edit as one call (PostgreSQL, a claim made here: one
            # pp_complete round trip; else the edit, its lease check sent with the commit)
            production.complete_job(
                lease,
                report.output,
                kind=report.kind,
                root=report.root,
                tool=report.tool,
                agent=report.agent,
                started_at=report.started_at,
                finished_at=report.finished_at,
                parameters=report.parameters,
                tail=report.tail,
                origin=ORIGIN,
                message="Complete job",
            )
        except ConflictError:
            # Sent again after a lost answer: the first one may have committed.
            if JobLease.replayed_completion(production, token) is None:
                raise

    def fail(self, token: str, report_id: str, code: str, diagnostic: str, *, retry: bool, tail: str) -> None:
        lease = self._lease(token)
        with self.production.edit(origin=ORIGIN, message="Fail job") as tx:
            tx.record_attempt_log(lease, tail=tail)
            tx.fail_job_lease(lease, diagnostic, retry=retry)
            tx.commit()

    def release(self, token: str, *, tail: str) -> None:
        lease = self._lease(token)
        with self.production.edit(origin=ORIGIN, message="Release job claim") as tx:
            tx.record_attempt_log(lease, tail=tail)
            tx.release_job_lease(lease)
            tx.commit()

    def confirm_stopped(self, token: str, *, tail: str) -> AttemptOutcome:
        lease = self._lease(token)
        with self.production.edit(origin=ORIGIN, message="Confirm job stopped") as tx:
            tx.record_attempt_log(lease, tail=tail)
            outcome = tx.confirm_stopped(lease)
            tx.commit()
        return outcome


MAX_CONTEXT_INPUTS = 1000  # input representations a claim's context describes


class OpenProduction(Protocol):
    def __call__(self) -> Production: ...


def claimed_job(job: Job) -> ClaimedJob:
    attempt = job.claim.attempt if job.claim is not None else (job.attempts[-1].number if job.attempts else 1)
    return ClaimedJob(
        job.id,
        job.kind,
        job.inputs,
        job.output_asset_id,
        job.output_representation_kind,
        job.target_root,
        attempt,
        job.updated_sequence,
    )


def candidates(production: Production, kinds: tuple[str, ...], skip: frozenset[JobId]) -> Iterator[Job]:
    """Claimable jobs of ``kinds`` not in ``skip``, oldest first per kind, then expired claims."""
    for kind in kinds:
        cursor: str | None = None
        while True:
            page = production.jobs(limit=100, cursor=cursor, state=JobState.REQUESTED, kind=kind)
            yield from (job for job in page.items if job.id not in skip)
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
    expired = production.claims_expiring().items
    yield from (j for j in expired if j.kind in kinds and j.id not in skip)


def _wait_for_work(production: Production, head: int, seconds: float, stop: threading.Event) -> None:
    """Until a revision that may make work claimable, ``seconds`` pass, or ``stop``."""
    production.wait_for_changes(head, seconds, limit=1, kinds=WAKE_KINDS, stop=stop)
