"""Transactions: the only way to change a production.

``with production.edit() as tx: ...; tx.commit()``. Leaving the block without ``commit()``
rolls back, and so does dropping the edit (garbage collection) or closing its production:
the write lock is released and the edit's pending leases end. Each method is atomic on its
own: a failed call leaves the transaction as it was and still usable, except a failed
completion, which poisons the edit (notes §2.6): every later call and ``commit()`` raise
the same error until ``rollback()``, so nothing staged for it can be published. A failed
commit ends the edit and publishes nothing. The write lock is taken at the first operation
and held until commit or rollback.

:class:`Transaction` is a facade: it holds the edit's state (:class:`postproject.base.edit.EditState`)
and its commit, and delegates every operation to one object per area, each built here with
what it needs: :mod:`~postproject.areas.setup` (assets, media roots, representations),
:mod:`~postproject.areas.provenance` (activities), :mod:`~postproject.areas.metadata`,
:mod:`~postproject.areas.jobs` (requests, claims, lease transitions),
:mod:`~postproject.areas.farm` (workers, the loss sweep, the clock reset, retries, requeue,
priority; given the jobs area), :mod:`~postproject.areas.progress` (progress, stop
confirmations, attempt logs; given the jobs area), :mod:`~postproject.areas.regeneration`
(plans; given the jobs and metadata areas) and :mod:`~postproject.areas.completion` (a worker's
completion in one call, ``Production.complete_job``; given the jobs area).
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from postproject.areas.access import AccessOperations
from postproject.areas.completion import CompletionOperations, RowsOf
from postproject.areas.farm import ClockReset, FarmOperations
from postproject.areas.jobs import JobOperations
from postproject.areas.metadata import MetadataOperations, assertions
from postproject.areas.progress import ProgressOperations
from postproject.areas.provenance import ProvenanceOperations
from postproject.areas.regeneration import RegenerationOperations
from postproject.areas.setup import SetupOperations
from postproject.base import leases
from postproject.base.edit import EditState
from postproject.base.handle import ProductionHandle
from postproject.base.leases import ClaimedWork, InputChangedError, JobLease
from postproject.engine.claims import InputChangedAtCommit
from postproject.knowledge.regeneration import RegenerationPlan
from postproject.model.access import ApiRole, ApiToken, NewApiToken
from postproject.model.activities import ActivitySpec
from postproject.model.assets import RepresentationKind
from postproject.model.clock import from_micros
from postproject.model.errors import ConflictError, NotFoundError, Reason
from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.model.ids import ActivityId, AssetId, JobId, RepresentationId, RevisionId
from postproject.model.jobs import AttemptOutcome, Job, JobRequest
from postproject.model.metadata import Property
from postproject.model.refs import JobRef, ObjectRef
from postproject.model.revisions import CommitReceipt, Revision
from postproject.model.workers import WorkerSession


class Transaction:
    """An edit of one production (see the module docstring)."""

    def __init__(
        self,
        production: object,
        handle: ProductionHandle,
        *,
        origin: str | None,
        message: str | None,
        principal: str | None = None,
        defer_lease_checks: bool = False,
    ) -> None:
        self._production = production
        self._handle = handle
        self._origin = origin
        self._message = message
        self._principal = principal
        edit = self._edit = EditState(handle, defer_lease_checks=defer_lease_checks)
        self._finalizer = weakref.finalize(self, edit.abandon)
        self._setup = SetupOperations(edit)
        self._provenance = ProvenanceOperations(edit)
        self._metadata = MetadataOperations(edit)
        self._jobs = JobOperations(edit)
        self._farm = FarmOperations(edit, self._jobs)
        self._progress = ProgressOperations(edit, self._jobs)
        self._regeneration = RegenerationOperations(edit, self._jobs, self._metadata)
        self._completion = CompletionOperations(edit, self._jobs)
        self._access = AccessOperations(edit)

    # --- plumbing ----------------------------------------------------------------------

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._edit.status == "open":
            self.rollback()

    @property
    def production(self) -> object:
        """The ``Production`` this edit changes."""
        return self._production

    @property
    def open(self) -> bool:
        return self._edit.status == "open"

    # --- setup: assets, media roots, representations -----------------------------------

    def create_asset(self, name: str | None = None) -> AssetId:
        """Create an asset (the logical identity of media; never a path)."""
        return self._setup.create_asset(name)

    def add_media_root(self, name: str, path: str | os.PathLike[str] | None = None) -> None:
        """Configure a named media root, optionally with this machine's directory for it."""
        self._setup.add_media_root(name, path)

    def add_representation(
        self,
        asset_id: AssetId,
        kind: RepresentationKind,
        path: str | os.PathLike[str],
        *,
        root: str | None = None,
    ) -> RepresentationId:
        """Add one file as a representation of an asset; records size, mtime and a fingerprint.

        With ``root``, ``path`` is relative to that media root (or absolute inside it) and is
        stored relative to it.

        Raises:
            NotFoundError: (not_found) the asset or the root does not exist.
            IoError: (io) the file cannot be read.
            InvalidArgumentError: (invalid_argument) bad kind, path outside its root, not a file.
        """
        return self._setup.add_representation(asset_id, kind, path, root=root)

    def observe_representation(self, representation_id: RepresentationId) -> bool:
        """Re-read a representation's file; record a new fingerprint if its content changed.

        Returns:
            True when a change was recorded (with a ``representation_fingerprint_observed`` event).
        """
        return self._setup.observe_representation(representation_id)

    # --- provenance and metadata -------------------------------------------------------

    def create_activity(self, spec: ActivitySpec) -> ActivityId:
        """Record a completed activity; storage captures its edge snapshots at commit.

        Raises:
            NotFoundError: (not_found) a referenced representation does not exist.
            InvalidArgumentError: (invalid_argument) the activity would close a provenance cycle.
        """
        return self._provenance.create_activity(spec)

    def add_metadata(self, ref: ObjectRef, property: Property, value: object) -> None:
        """Append a typed value of ``property`` to the object ``ref`` names.

        Plain values convert where unambiguous (str, bool, int, Decimal, aware datetime,
        bytes, Fraction, lists and dicts of those); floats are invalid_argument.
        """
        self._metadata.add_metadata(ref, property, value)

    # --- jobs --------------------------------------------------------------------------

    def request_job(self, request: JobRequest) -> JobId:
        """Request work; parameters are metadata on ``JobRef(job_id)``.

        A request with dependencies (``after``, ``JobOutput`` inputs) is claimable only once
        every job it depends on has succeeded.

        Raises:
            NotFoundError: (not_found) the output asset, an input, the target root, a job it
                depends on or the artifact it regenerates is absent.
            InvalidArgumentError: (invalid_argument) a dependency given as a Job of another
                production; the regenerated artifact is not of the output's asset and kind.
            ConflictError: (conflict, reason ``dependency_failed``) a job it depends on is
                failed or cancelled.
        """
        return self._jobs.request_job(request)

    def claim_job_lease(
        self,
        job_id: JobId,
        tool: ToolIdentity,
        duration: object,
        agent: AgentIdentity | None = None,
        *,
        worker: WorkerSession | None = None,
    ) -> JobLease:
        """Claim a requested job (or one whose lease expired) for ``duration``.

        Returns a pending lease that becomes active when this transaction commits.

        Raises:
            TypeError: ``duration`` is not a timedelta.
            InvalidArgumentError: (invalid_argument) duration outside 1 µs-24 h.
            NotFoundError: (not_found) no such job.
            ConflictError: (conflict) the job is claimed by a live lease or finished, or the
                clock moved backward.
        """
        return self._jobs.claim_job_lease(job_id, tool, duration, agent, worker=worker)

    def claim_next_job_lease(
        self,
        tool: ToolIdentity,
        duration: object,
        *,
        kinds: Sequence[str] | None = None,
        agent: AgentIdentity | None = None,
        worker: WorkerSession | None = None,
    ) -> JobLease | None:
        """Claim the first claimable job (of ``kinds``) in one guarded statement; None if none.

        Order: priority (higher first), then availability, then id. With ``worker`` the claim
        is made by that registered session: only while it is current and online, for its
        kinds, and while its unexpired claims are below its capacity (else None).
        """
        return self._jobs.claim_next_job_lease(tool, duration, kinds=kinds, agent=agent, worker=worker)

    def renew_job_lease(self, lease: JobLease, duration: object) -> None:
        """Extend a live lease to now + ``duration`` (must strictly extend; commits before the old expiry)."""
        self._jobs.renew_job_lease(lease, duration)

    def release_job_lease(self, lease: JobLease) -> None:
        """Give a claimed job back (it returns to requested)."""
        self._jobs.release_job_lease(lease)

    def fail_job_lease(self, lease: JobLease, diagnostic: str, retry: bool = False) -> None:
        """Fail a claimed job with a diagnostic of 1-4096 UTF-8 bytes (no activity is created).

        With ``retry`` the job returns to requested for another attempt while it has attempts
        left (``job_retry_scheduled``); out of attempts it fails (``job_failed``, terminal).
        """
        self._jobs.fail_job_lease(lease, diagnostic, retry)

    def complete_job_lease(
        self,
        lease: JobLease,
        representation_id: RepresentationId,
        activity_id: ActivityId,
    ) -> None:
        """Mark the job succeeded with an output and activity staged in this transaction.

        The output representation, the activity (with its snapshots) and the succeeded state
        commit in one revision or not at all. Job parameters are not copied to the activity.

        Raises:
            InvalidArgumentError: (invalid_argument) the output's asset or kind differs from the
                request, the activity's inputs differ from the job's, or it has other outputs.
            ConflictError: (conflict) the lease is expired, superseded or cancelled, or an input
                changed after the claim (the message names the input and the revision).
        """
        self._jobs.complete_job_lease(lease, representation_id, activity_id)

    def cancel_job(self, job_id: JobId) -> None:
        """Cancel requested or claimed work (no lease needed; a live lease is fenced at once)."""
        self._jobs.cancel_job(job_id)

    # --- the farm: workers, lost work, the clock, retries, requeue, priority -----------

    def register_worker(
        self,
        name: str,
        *,
        capacity: int = 1,
        kinds: list[str] | tuple[str, ...] | None = None,
        host: str | None = None,
    ) -> WorkerSession:
        """Register the worker ``name`` (a stable identity) with a fresh session for this process.

        Registering the same name again replaces the session and fences the old one: its
        heartbeats and claims are refused (reason ``worker_session_replaced``).
        """
        return self._farm.register_worker(name, capacity=capacity, kinds=kinds, host=host)

    def heartbeat(self, session: WorkerSession) -> None:
        """Record that the worker is alive (stored state: no revision, the feed does not tick)."""
        self._farm.heartbeat(session)

    def finalize_lost(self, limit: int = 100) -> int:
        """End up to ``limit`` expired, unrenewed claims' attempts as ``lost``, then, within
        the same limit, the attempts a cancel or requeue asked to stop whose holder did not
        confirm before its lease's expiry (``job_stop_missed``); returns how many attempts it
        ended.

        A lost claim's job with attempts left returns to ``requested`` (``job_lost``); one out
        of attempts fails (``job_failed``) with a diagnostic naming the attempt, its worker
        and when the lease expired. Safe with several sweepers and racing re-claims: the
        first committed transition wins.
        """
        return self._farm.finalize_lost(limit)

    def reset_clock(self) -> ClockReset:
        """Lower the job clock's durable high-water mark to now.

        The way out after a process with a clock running ahead (a day fast, or a host that
        booted with a future clock) raised the mark, as the spec requires, and every correct
        process is now refused claims, renewals and completions. Recorded as a revision
        (``clock_reset`` names the old and new mark); the leases granted under the future
        clock are fenced (their jobs return to requested, ``job_requeued``).
        """
        return self._farm.reset_clock()

    def request_again(self, job_id: JobId) -> JobId:
        """Request a failed or cancelled job again: same kind, inputs (its output bindings and
        other dependencies too), output, root, priority, attempt limit, regenerated artifact
        and parameters, linked both ways (``retry_of`` / ``retried_as``). Every job that
        depended on it depends on the new job instead (in the same transaction), so a job
        blocked by it waits again."""
        return self._farm.request_again(job_id)

    def requeue_job(self, job_id: JobId) -> None:
        """Return a claimed job (expired or not) to ``requested`` without a token: fences the
        lease like ``cancel_job`` and ends its attempt ``released``."""
        self._farm.requeue_job(job_id)

    def set_job_priority(self, job_id: JobId, priority: int) -> None:
        """Change a requested job's priority (-1000 to 1000, higher is claimed first)."""
        self._farm.set_job_priority(job_id, priority)

    # --- progress, stops and attempt logs ----------------------------------------------

    def report_progress(
        self,
        lease: JobLease,
        *,
        fraction: float | None = None,
        stage: str | None = None,
        message: str | None = None,
        renew: timedelta | None = None,
    ) -> bool:
        """Keep the running attempt's latest progress; fenced by the lease like a renewal.

        ``fraction`` is done work from 0 to 1, ``stage`` a short name ("decode", "encode",
        "publish"), ``message`` free text (each 1-1024 UTF-8 bytes); a field left None keeps
        its previous value. Stored state, not a revision. At most one report per attempt per
        second signals followers (:meth:`Production.progress_token` moves); returns whether
        this one did. With ``renew`` the lease is also renewed to now + ``renew`` in the same
        call (that part is a revision, ``job_claim_renewed``, exactly like
        :meth:`renew_job_lease`).

        Raises:
            InvalidArgumentError: (invalid_argument) a fraction outside 0-1 or NaN, a stage
                or message empty or over 1 KiB, a bad ``renew`` duration.
            ConflictError: (conflict, ``lease_lost``) the lease no longer holds the job
                (cancelled, requeued, expired, superseded); (``lease_expired``) it expired
                before the commit.
        """
        return self._progress.report_progress(
            lease, fraction=fraction, stage=stage, message=message, renew=renew
        )

    def confirm_stopped(self, lease: JobLease) -> AttemptOutcome:
        """Confirm that this lease's holder stopped working after ``cancel_job`` or
        ``requeue_job`` ended its attempt (and removed its partial output).

        Before the lease's expiry the attempt keeps its outcome (``cancelled`` or
        ``released``) and records ``stopped_at`` (event ``job_stop_confirmed``); at or after
        it the attempt ends ``lost`` instead (``job_stop_missed``). Returns the attempt's
        outcome. Repeating a confirmation, or confirming an attempt that already ended
        otherwise, changes nothing and returns its outcome. The lease ends when this commits.

        Raises:
            ConflictError: (conflict, ``stop_not_requested``) the attempt is still running:
                nobody asked it to stop.
            NotFoundError: (not_found) the job does not exist.
        """
        return self._progress.confirm_stopped(lease)

    def record_attempt_log(
        self,
        lease: JobLease,
        *,
        tail: str | bytes | None = None,
        path: str | os.PathLike[str] | None = None,
        root: str | None = None,
    ) -> int:
        """Record this lease's attempt's log: where the full log lives (``path``, relative to
        media ``root`` or absolute) and/or its tail, kept as the last 64 KiB of valid UTF-8
        (bytes that are not UTF-8 become U+FFFD). Works on the attempt the lease claimed,
        running or ended (record it before or with the commit that ends the lease). Stored
        state, not a revision. Returns the attempt's number.

        Raises:
            InvalidArgumentError: (invalid_argument) neither ``tail`` nor ``path`` given, a
                bad path or root.
            NotFoundError: (not_found) the job does not exist.
        """
        return self._progress.record_attempt_log(lease, tail=tail, path=path, root=root)

    # --- regeneration ------------------------------------------------------------------

    def enqueue_plan(self, plan: RegenerationPlan) -> JobId:
        """Request a plan's job and assert its parameters on that job, as one operation.

        The job records the artifact it regenerates (``job.regenerates``): when it succeeds,
        its output supersedes that artifact. Either the job and all its parameters are
        staged, or nothing is; the caller commits.

        Raises:
            TypeError: ``plan`` is not a RegenerationPlan.
            NotFoundError: (not_found) an input, the output asset or the target root no longer exists.
        """
        return self._regeneration.enqueue_plan(plan)

    def enqueue_plans(self, plans: Iterable[RegenerationPlan]) -> tuple[JobId, ...]:
        """Request several plans as one dependency graph, in one operation; their job ids in
        the order given.

        An input of a plan that another plan of ``plans`` regenerates is bound to that plan's
        job output (``JobOutput``: the job waits for it and, once claimed, works from what it
        made). Jobs are requested upstream first; each records the artifact it regenerates
        and carries its plan's parameters. All or nothing.

        Raises:
            TypeError: an item is not a RegenerationPlan.
            InvalidArgumentError: (invalid_argument) two plans regenerate the same artifact,
                more than 100 000 plans, or plans that bind each other in a cycle.
            NotFoundError: (not_found) an input, the output asset or the target root no longer exists.
        """
        return self._regeneration.enqueue_plans(plans)

    def job(self, job_id: JobId) -> Job:
        """A job as this edit sees it, its own changes included (``production.job`` reads
        committed state only).

        Raises:
            NotFoundError: (not_found) no such job.
        """
        found = self._jobs.job(job_id)
        if found is None:
            raise NotFoundError(f"job {job_id} does not exist")
        return found

    # --- access: API tokens and recorded replies ---------------------------------------

    def create_api_token(
        self, name: str, role: ApiRole | str, *, expires_at: datetime | None = None
    ) -> NewApiToken:
        """Create an API token for the service: ``result.secret`` (``ppa1_...``) is shown this
        once; the production keeps only its SHA-256 (stored state, not a revision).

        Raises:
            InvalidArgumentError: (invalid_argument) a bad name or role, an expiry not in the future.
            AlreadyExistsError: (already_exists) a token of that name exists (revoked ones too).
        """
        return self._access.create_api_token(name, role, expires_at=expires_at)

    def revoke_api_token(self, name: str) -> ApiToken:
        """Revoke the token ``name``: refused from the next request on (revoking again keeps
        the first time). Returns the token as it is now.

        Raises:
            NotFoundError: (not_found) no token of that name.
        """
        return self._access.revoke_api_token(name)

    def record_reply(self, scope: str, key: str, digest: bytes, reply: str) -> None:
        """Record a front end's ``reply`` under ``(scope, key)`` with the SHA-256 ``digest`` of
        the request it answers, in this edit (so it commits exactly with the change it
        answers); read it back with ``production.access.reply``.

        Raises:
            AlreadyExistsError: (already_exists) a reply is recorded under that key (a
                concurrent edit that committed it first wins; roll back and read it).
        """
        self._access.record_reply(scope, key, digest, reply)

    # --- ending ------------------------------------------------------------------------

    def commit(self) -> CommitReceipt:
        """Publish everything staged as one revision (``revision`` None when nothing was staged).

        Raises:
            ConflictError: (conflict) a lease expired before the commit, or the clock moved
                backward; nothing is published and the transaction ends. A poisoned edit
                (a failed completion) raises that completion's error and stays open until
                ``rollback()``.
        """
        edit = self._edit
        edit.check_usable()
        session = edit.session
        if session is None:
            edit.status = "committed"
            return CommitReceipt(self._handle.production_id, None)
        try:
            if edit.call_revision is not None:  # a call published it: its revision, as stored
                revision_id, committed_at = edit.call_revision
            else:  # (an edit a call ended without publishing has nothing left to guard)
                committed_at = self._handle.now_micros() if edit.called else self._commit_time()
                revision_id = RevisionId.new()
            published = session.commit(
                committed_at,
                revision_id.bytes,
                self._origin,
                self._message,
                edit.observed_high,
                self._principal,
            )
        except BaseException as exc:
            edit.status = "failed"
            edit.end_pending()
            edit.session = None
            try:
                session.rollback(edit.observed_high)
            finally:
                self._handle.end_write()
            if isinstance(exc, InputChangedAtCommit):  # a lease check deferred to the commit
                raise InputChangedError.at_commit(exc) from None
            raise
        edit.status = "committed"
        edit.session = None
        self._handle.end_write()
        if not published:
            edit.end_pending()
            return CommitReceipt(self._handle.production_id, None)
        for lease, effect, expires in edit.effects:
            if effect == "end":
                leases.end(lease)
            else:
                leases.activate(lease, expires)
        revision = Revision(
            revision_id,
            session.sequence,
            from_micros(committed_at),
            self._origin,
            self._message,
            tuple(session.staged),
            self._principal,
        )
        return CommitReceipt(self._handle.production_id, revision)

    def _commit_time(self) -> int:
        if not self._edit.guarded:
            return self._handle.now_micros()
        now = self._edit.now_guarded()
        for expiry in self._edit.guards:
            if expiry <= now:
                raise ConflictError("job lease expired before commit", reason=Reason.LEASE_EXPIRED)
        return now

    def rollback(self) -> None:
        """Discard everything staged (the highest clock sample observed is still kept)."""
        self._edit.abandon()

    def __repr__(self) -> str:
        return f"Transaction({self._handle.location}, {self._edit.status})"


def claim_next_committed(
    tx: Transaction,
    tool: ToolIdentity,
    duration: object,
    kinds: Sequence[str] | None,
    agent: AgentIdentity | None,
    worker: WorkerSession | None,
) -> JobLease | None:
    """``tx.claim_next_job_lease`` committed in the same call where the engine can
    (``Production.claim_next_job_lease``: then ``tx.commit()`` publishes nothing more)."""
    committed = (tx._origin, tx._message, tx._principal)
    return tx._jobs.claim_next_job_lease(
        tool, duration, kinds=kinds, agent=agent, worker=worker, committed=committed
    )


def claim_next_work(
    production: Any,
    tool: ToolIdentity,
    duration: object,
    kinds: Sequence[str] | None,
    agent: AgentIdentity | None,
    worker: WorkerSession | None,
    origin: str | None,
    message: str | None,
    principal: str | None = None,
) -> ClaimedWork | None:
    """``Production.claim_next_job``: the claim committed in one call where the engine can, the
    job and its parameters read in the same round trip (else read after the commit)."""
    with production.edit(origin=origin, message=message, principal=principal) as tx:
        committed = (tx._origin, tx._message, tx._principal)
        lease = tx._jobs.claim_next_job_lease(
            tool, duration, kinds=kinds, agent=agent, worker=worker, committed=committed, with_job=True
        )
        tx.commit()
    if lease is None:
        return None
    answer = tx._jobs.committed_claim
    if answer is None or answer.job is None or answer.parameters is None:  # an edit's claim
        return ClaimedWork(lease, production.job(lease.job_id), production.metadata[JobRef(lease.job_id)])
    return ClaimedWork(lease, answer.job, assertions(answer.parameters))


def complete_committed(tx: Transaction, lease: JobLease, rows: RowsOf) -> bool:
    """``Production.complete_job`` in one call where the engine can (postproject.completion)."""
    return tx._completion.complete_committed(lease, rows, (tx._origin, tx._message, tx._principal))
