"""The jobs area of a transaction: requests, claims and every lease transition.

``Transaction`` builds one :class:`JobOperations` per edit, given the edit's state, and
delegates ``request_job``, the ``*_job_lease`` methods and ``cancel_job`` to it (their
public docstrings are on :class:`postproject.transaction.Transaction`). It holds the rules
(lease fencing, the guarded clock, atomic completion) and asks the engine's write session
for the facts and the guarded statements. The farm, progress and regeneration areas use it
too (``request_job``, :meth:`JobOperations.held`, :meth:`JobOperations.lease_row`).
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Literal

from postproject.base import leases
from postproject.base.edit import EditState, event
from postproject.base.leases import InputChangedError, JobLease, LeaseState, lease_micros
from postproject.engine import LeaseRow, WorkerFacts, WriteSession
from postproject.engine.claims import (
    CommittedClaim,
    GatedClaims,
    WorkerGate,
    commits_claims,
    defers_lease_checks,
)
from postproject.model import names
from postproject.model.assets import RepresentationKind
from postproject.model.clock import to_micros
from postproject.model.errors import (
    ConflictError,
    InvalidArgumentError,
    NotFoundError,
    PostProjectError,
    Reason,
)
from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.model.ids import ActivityId, AssetId, JobId, RepresentationId, RevisionId, check_id
from postproject.model.jobs import Job, JobRequest
from postproject.model.jobs import diagnostic as check_diagnostic
from postproject.model.lifecycle import JobState
from postproject.model.workers import OFFLINE_AFTER, WorkerSession

log = logging.getLogger(__name__)

I64_MAX = 2**63 - 1
FINISHED = frozenset(s.code for s in (JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED))


class JobOperations:
    """Requests, claims, renewals, releases, failures, completions and cancellations."""

    def __init__(self, edit: EditState) -> None:
        self._edit = edit
        self._handle = edit.handle
        self.committed_claim: CommittedClaim | None = None  # the last one-call claim's answer

    @staticmethod
    def _expiry_of(row: LeaseRow) -> int:
        assert row.expires is not None  # lease_row checked it
        return row.expires

    def held(self, lease: object) -> tuple[JobId, bytes]:
        """(job id, secret hash) of a lease usable in this edit (type, production and state checked)."""
        if not isinstance(lease, JobLease):
            raise TypeError(f"lease must be a JobLease; got {type(lease).__name__}")
        if lease.production_id != self._handle.production_id:
            raise InvalidArgumentError(f"job lease belongs to another production ({lease.production_id})")
        return lease.job_id, secret_hash(leases.usable_secret(lease, self._edit))

    def lease_row(
        self, session: WriteSession, job_id: JobId, secret: bytes, now: int, *, deferrable: bool = False
    ) -> LeaseRow:
        """Require the stored claim to be this lease's and unexpired (expiry and claim sequence set).
        ``deferrable``: in an edit that defers its lease checks, a claim this process knows is
        taken as known, its check sent with the commit (:class:`DeferredLeaseChecks`)."""
        if deferrable and self._edit.defer_lease_checks and defers_lease_checks(session):
            known = session.held_lease_row(job_id.bytes, secret, now)
            if known is not None:
                return known
        row = session.lease_row(job_id.bytes)
        if row is None:
            raise NotFoundError(f"job {job_id} does not exist")
        if (
            row.secret_hash != secret
            or row.expires is None
            or row.expires <= now
            or row.claim_sequence is None
        ):
            if row.state in FINISHED and row.secret_hash is None:
                raise ConflictError(
                    f"job {job_id} already finished (it is {_state_name(row.state)}); this lease no longer holds it",
                    reason=Reason.LEASE_LOST,
                )
            raise ConflictError(
                f"job lease on {job_id} is expired, superseded or no longer claimed",
                reason=Reason.LEASE_LOST,
            )
        return row

    def job(self, job_id: JobId) -> Job | None:
        """The job as this edit sees it (its own changes included), or None."""
        check_id("job_id", job_id, JobId)
        with self._edit.operation(savepoint=False) as s:
            return s.job(job_id.bytes)

    def request_job(self, request: JobRequest) -> JobId:
        """Request work; parameters are metadata on ``JobRef(job_id)``."""
        if not isinstance(request, JobRequest):
            raise TypeError(f"request must be a JobRequest; got {type(request).__name__}")
        not_before = to_micros(request.not_before) if request.not_before is not None else None
        digest = request.digest(not_before) if request.idempotency_key is not None else None
        job_id = JobId.new()
        with self._edit.operation(savepoint=False) as s:
            if request.idempotency_key is not None:
                found = s.idempotent_job(request.idempotency_key)
                if found is not None:
                    original, original_digest = found
                    if original_digest != digest:
                        raise ConflictError(
                            f"idempotency key {request.idempotency_key!r} was used for a different request "
                            f"(job {JobId(original)})",
                            reason=Reason.IDEMPOTENCY_KEY_CONFLICT,
                        )
                    return JobId(original)  # an equivalent replay: nothing new is staged
            waiting = self._check_dependencies(s, request)
            if not s.insert_job(
                job_id.bytes, request, self._handle.now_micros(), not_before, digest, waiting
            ):
                # A reference is missing (the insert wrote nothing): say which one.
                absent = s.missing("representations", [r.bytes for r in request.representation_inputs])
                if absent:
                    raise NotFoundError(
                        f"job input representation {RepresentationId(absent[0])} does not exist"
                    )
                if s.missing("assets", [request.output_asset_id.bytes]):
                    raise NotFoundError(f"job output asset {request.output_asset_id} does not exist")
                raise NotFoundError(f"job target root {request.target_root!r} does not exist")
            event(s, "job_requested", job_id, job_id=job_id)
        return job_id

    def _check_dependencies(self, s: WriteSession, request: JobRequest) -> int:
        """Check what a request depends on and regenerates; how many dependencies it waits on."""
        production = self._handle.production_id
        for job_id, origin in request.origins:
            if origin != production:
                raise InvalidArgumentError(f"job {job_id} belongs to another production ({origin})")
        if request.regenerates is not None:
            facts = s.output_facts(request.regenerates.bytes)
            if facts is None:
                raise NotFoundError(f"regenerated representation {request.regenerates} does not exist")
            if (
                facts.asset_id != request.output_asset_id.bytes
                or facts.kind != request.output_representation_kind.code
            ):
                raise InvalidArgumentError(
                    f"regenerated representation {request.regenerates} is a "
                    f"{RepresentationKind.from_code(facts.kind).value} of asset {AssetId(facts.asset_id)}; the job "
                    f"makes a {request.output_representation_kind.value} of asset {request.output_asset_id}"
                )
        dependencies = request.dependencies
        if not dependencies:
            return 0
        states = s.job_states([d.bytes for d in dependencies])
        bound = {b.job_id for b in request.bound_outputs}
        for job_id in dependencies:
            state = states.get(job_id.bytes)
            if state is None:
                raise NotFoundError(f"job {job_id} (a dependency of the request) does not exist")
            if state in (JobState.FAILED.code, JobState.CANCELLED.code):
                what = "take the output of" if job_id in bound else "wait for"
                raise ConflictError(
                    f"job {job_id} is {_state_name(state)}; a request cannot {what} a failed or cancelled job "
                    "(request it again first)",
                    reason=Reason.DEPENDENCY_FAILED,
                )
        return sum(1 for state in states.values() if state != JobState.SUCCEEDED.code)

    def claim_job_lease(
        self,
        job_id: JobId,
        tool: ToolIdentity,
        duration: object,
        agent: AgentIdentity | None = None,
        *,
        worker: WorkerSession | None = None,
    ) -> JobLease:
        """Claim a requested job (or one whose lease expired) for ``duration``."""
        micros = lease_micros(duration)
        check_id("job_id", job_id, JobId)
        _identities(tool, agent)
        secret = os.urandom(16)
        with self._edit.operation(savepoint=False) as s:
            now = self._edit.now_guarded()
            expires = _expiry(now, micros)
            ident = self._worker_may_claim(s, worker, now, None)
            if ident is False:
                assert worker is not None
                raise ConflictError(
                    f"worker {worker.name!r} is at its capacity ({worker.capacity})",
                    reason=Reason.WORKER_AT_CAPACITY,
                )
            attempt = s.claim(job_id.bytes, secret_hash(secret), tool, agent, ident, now, expires)
            if attempt is None:
                row = s.lease_row(job_id.bytes)
                if row is None:
                    raise NotFoundError(f"job {job_id} does not exist")
                if row.state in FINISHED:
                    raise ConflictError(
                        f"job {job_id} is not claimable: it is {_state_name(row.state)}",
                        reason=Reason.JOB_FINISHED,
                    )
                if row.state == JobState.REQUESTED.code:
                    job = s.job(job_id.bytes)
                    assert job is not None
                    if job.waiting_on or job.blocked_by:
                        names_ = ", ".join(str(j) for j in (*job.waiting_on, *job.blocked_by))
                        raise ConflictError(
                            f"job {job_id} is not claimable: it waits on job(s) that have not succeeded ({names_})",
                            reason=Reason.WAITING_ON_DEPENDENCIES,
                        )
                    raise ConflictError(f"job {job_id} is not claimable yet (its not_before is later)")
                raise ConflictError(f"job {job_id} is not claimable: its lease is live")
            return self._claimed(s, job_id, secret, expires, attempt, worker)

    def claim_next_job_lease(
        self,
        tool: ToolIdentity,
        duration: object,
        *,
        kinds: Sequence[str] | None = None,
        agent: AgentIdentity | None = None,
        worker: WorkerSession | None = None,
        committed: tuple[str | None, str | None, str | None] | None = None,
        with_job: bool = False,
    ) -> JobLease | None:
        """Claim the first claimable job (of ``kinds``) in one guarded statement; None if none.
        ``committed`` (the revision's origin, message and principal): claim and commit in one call where
        the engine can (:class:`CommittedClaims`; the edit's ``commit`` then publishes nothing
        more), else as an edit; ``with_job``: the call also reads the job and its parameters
        (:attr:`committed_claim`)."""
        micros = lease_micros(duration)
        _identities(tool, agent)
        if kinds is not None:
            if isinstance(kinds, str) or not kinds:
                raise InvalidArgumentError("kinds must be a non-empty list of job kinds (or None for any)")
            kinds = sorted({names.namespaced("job kind", k) for k in kinds})
        secret = os.urandom(16)
        with self._edit.operation(savepoint=False) as s:
            now = self._edit.now_guarded()
            expires = _expiry(now, micros)
            asked = kinds
            if worker is not None and isinstance(worker, WorkerSession) and worker.kinds is not None:
                kinds = sorted(set(worker.kinds) & set(kinds)) if kinds is not None else list(worker.kinds)
            one_call = committed is not None and commits_claims(s)  # (a bool: s stays a WriteSession)
            if one_call:
                lease = self._claim_committed(
                    s,
                    tool,
                    agent,
                    worker,
                    kinds,
                    asked,
                    secret,
                    now,
                    expires,
                    committed or (None, None, None),
                    with_job,
                )
                if lease is not False:
                    return lease  # else claimable jobs exist, all held: claim through the edit (it waits)
            if worker is not None and isinstance(s, GatedClaims):  # check and claim in one round trip
                self._worker_session(worker)
                gate = WorkerGate(worker.worker_id, worker.session_id, _offline_micros(), _kinds(asked))
                facts, claimed = s.claim_next_gated(
                    gate, kinds, secret_hash(secret), tool, agent, now, expires
                )
                if self._worker_allowed(worker, facts, now, asked) is False:
                    return None  # at capacity, or none of the asked kinds is the worker's
            else:
                ident = self._worker_may_claim(s, worker, now, asked)
                if ident is False:
                    return None  # at capacity, or none of the asked kinds is the worker's
                claimed = s.claim_next(kinds, secret_hash(secret), tool, agent, ident or None, now, expires)
            if claimed is None:
                return None
            job_id, attempt = claimed
            return self._claimed(s, JobId(job_id), secret, expires, attempt, worker)

    def _claim_committed(
        self,
        s: WriteSession,
        tool: ToolIdentity,
        agent: AgentIdentity | None,
        worker: WorkerSession | None,
        kinds: Sequence[str] | None,
        asked: Sequence[str] | None,
        secret: bytes,
        now: int,
        expires: int,
        committed: tuple[str | None, str | None, str | None],
        with_job: bool,
    ) -> JobLease | Literal[False] | None:
        """The claim, its event and its commit in one call (the rules as the edit applies them);
        False when claimable jobs exist but other edits hold them all."""
        gate = None
        if worker is not None:
            self._worker_session(worker)
            gate = WorkerGate(worker.worker_id, worker.session_id, _offline_micros(), _kinds(asked))
        calls = s
        assert commits_claims(calls)
        origin, message, principal = committed
        revision_id = RevisionId.new()
        revision = (revision_id.bytes, now, origin, message, self._edit.observed_high)
        done = calls.claim_next_committed(
            gate,
            kinds,
            secret_hash(secret),
            tool,
            agent,
            now,
            expires,
            worker.name if worker is not None else None,
            revision,
            with_job,
            principal=principal,
        )
        self.committed_claim = done
        if worker is not None and self._worker_allowed(worker, done.facts, now, asked) is False:
            return None  # at capacity, or none of the asked kinds is the worker's
        if done.claimed is None and done.held:
            return False
        self._edit.called = True  # committed (at ``now``, before ``expires``), or nothing to commit
        if done.claimed is None:
            return None
        self._edit.call_revision = (revision_id, now)
        job_id, attempt = done.claimed
        return self._claimed(s, JobId(job_id), secret, expires, attempt, worker)

    def _worker_may_claim(
        self, s: WriteSession, worker: WorkerSession | None, now: int, kinds: Sequence[str] | None
    ) -> tuple[bytes, bytes] | Literal[False] | None:
        """(worker id, session) when ``worker`` may claim now; None without a worker; False at
        capacity or when ``kinds`` and the worker's kinds share none."""
        if worker is None:
            return None
        self._worker_session(worker)
        return self._worker_allowed(worker, s.worker_facts(worker.worker_id, now), now, kinds)

    def _worker_session(self, worker: object) -> None:
        if not isinstance(worker, WorkerSession):
            raise InvalidArgumentError(f"worker must be a WorkerSession; got {type(worker).__name__}")
        if worker.production_id != self._handle.production_id:
            raise InvalidArgumentError("worker session belongs to another production")

    def _worker_allowed(
        self, worker: WorkerSession, facts: WorkerFacts | None, now: int, kinds: Sequence[str] | None
    ) -> tuple[bytes, bytes] | Literal[False]:
        """The rules of a worker's claim on its stored facts (``GatedClaims`` engines apply the same)."""
        if facts is None:
            raise NotFoundError(f"worker {worker.name!r} is not registered")
        if facts.session != worker.session_id:
            raise ConflictError(
                f"worker {worker.name!r} registered again elsewhere; this session is fenced",
                reason=Reason.WORKER_SESSION_REPLACED,
            )
        if now - facts.last_seen > _offline_micros():
            raise ConflictError(
                f"worker {worker.name!r} is offline (no heartbeat for {OFFLINE_AFTER.seconds} s); heartbeat first",
                reason=Reason.WORKER_OFFLINE,
            )
        if facts.active >= facts.capacity:
            return False
        if kinds is not None and facts.kinds is not None and not set(kinds) & set(facts.kinds):
            return False
        return worker.worker_id, worker.session_id

    def _claimed(
        self,
        s: WriteSession,
        job_id: JobId,
        secret: bytes,
        expires: int,
        attempt: int,
        worker: WorkerSession | None,
    ) -> JobLease:
        if worker is not None:
            event(s, "job_claimed", job_id, job_id=job_id, attempt=attempt, worker=worker.name)
        else:
            event(s, "job_claimed", job_id, job_id=job_id, attempt=attempt)
        lease = JobLease(
            self._handle.production_id, job_id, secret, LeaseState.PENDING, None, owner=self._edit
        )
        self._edit.guards.append(expires)
        self._edit.effects.append((lease, "activate", expires))
        if log.isEnabledFor(logging.INFO):  # (the id's text is built only when it is logged)
            log.info("job claimed", extra={"action": "job_claimed", "job_id": str(job_id)})
        return lease

    def renew_job_lease(self, lease: JobLease, duration: object) -> None:
        """Extend a live lease to now + ``duration`` (must strictly extend; commits before the old expiry)."""
        job_id, secret = self.held(lease)
        micros = lease_micros(duration)
        with self._edit.operation(savepoint=False) as s:
            now = self._edit.now_guarded()
            expires = self._expiry_of(self.lease_row(s, job_id, secret, now))
            new_expiry = _expiry(now, micros)
            if not s.renew(job_id.bytes, secret, now, new_expiry):
                raise ConflictError(
                    f"renewal of job {job_id} must extend its lease beyond the current expiry "
                    f"(by {duration} it would end {(expires - new_expiry)} µs earlier or at the same time)"
                )
            event(s, "job_claim_renewed", job_id, job_id=job_id)
            self._edit.guards.append(expires)
            self._edit.effects.append((lease, "extend", new_expiry))

    def release_job_lease(self, lease: JobLease) -> None:
        """Give a claimed job back (it returns to requested)."""
        self._finish(
            lease,
            "job_claim_released",
            lambda s, job_id, secret, now: s.release(job_id.bytes, secret, now),
        )

    def fail_job_lease(self, lease: JobLease, diagnostic: str, retry: bool = False) -> None:
        """Fail a claimed job with a diagnostic of 1-4096 UTF-8 bytes (no activity is created)."""
        self.held(lease)
        text = check_diagnostic(diagnostic)
        if not isinstance(retry, bool):
            raise InvalidArgumentError(f"retry must be a bool; got {retry!r}")
        self._finish(
            lease,
            "job_failed",
            lambda s, job_id, secret, now: s.fail(job_id.bytes, secret, now, text, retry=False),
            retry=(
                "job_retry_scheduled",
                lambda s, job_id, secret, now: s.fail(job_id.bytes, secret, now, text, retry=True),
            )
            if retry
            else None,
        )

    def _finish(
        self,
        lease: JobLease,
        kind: str,
        update: Callable[[WriteSession, JobId, bytes, int], bool],
        retry: tuple[str, Callable[[WriteSession, JobId, bytes, int], bool]] | None = None,
    ) -> None:
        job_id, secret = self.held(lease)
        with self._edit.operation(savepoint=False) as s:
            now = self._edit.now_guarded()
            row = self.lease_row(s, job_id, secret, now)
            expires = self._expiry_of(row)
            if retry is not None and (row.max_attempts is None or row.attempts < row.max_attempts):
                kind, update = retry
            if not update(s, job_id, secret, now):
                raise ConflictError(f"job {job_id} changed under this lease", reason=Reason.LEASE_LOST)
            event(s, kind, job_id, job_id=job_id)
            self._edit.guards.append(expires)
            self._edit.effects.append((lease, "end", 0))

    def complete_job_lease(
        self,
        lease: JobLease,
        representation_id: RepresentationId,
        activity_id: ActivityId,
    ) -> None:
        """Mark the job succeeded with an output and activity staged in this transaction."""
        check_id("representation_id", representation_id, RepresentationId)
        check_id("activity_id", activity_id, ActivityId)
        self._edit.check_usable()
        try:
            self._complete(lease, representation_id, activity_id)
        except PostProjectError as error:
            self._edit.poison = error  # notes §2.6: the whole edit then publishes nothing
            raise

    def _complete(
        self, lease: JobLease, representation_id: RepresentationId, activity_id: ActivityId
    ) -> None:
        job_id, secret = self.held(lease)
        with self._edit.operation(savepoint=False) as s:
            now = self._edit.now_guarded()
            row = self.lease_row(s, job_id, secret, now, deferrable=True)
            expires, claim_sequence, inputs = self._expiry_of(row), row.claim_sequence or 0, row.inputs
            if claim_sequence < s.sequence:
                changed = s.fingerprints_changed_after(inputs, claim_sequence)
                if changed is not None:
                    input_id = RepresentationId(changed.representation_id)
                    raise InputChangedError(
                        f"input representation {input_id} of job {job_id} changed in revision "
                        f"{changed.sequence} ({RevisionId(changed.revision_id)}) after the claim; "
                        "do the work again under a new claim",
                        input_id=input_id,
                        superseding_revision=changed.sequence,
                    )
            self._check_output(s, representation_id, row.output_asset_id, row.output_kind)
            self._check_activity(s, activity_id, representation_id, inputs)
            if not s.succeed(job_id.bytes, secret, now, activity_id.bytes, representation_id.bytes):
                raise ConflictError(f"job {job_id} claim changed during completion", reason=Reason.LEASE_LOST)
            event(s, "job_succeeded", job_id, job_id=job_id)
            if row.regenerates is not None:  # its output replaces the artifact it regenerated
                replaced = s.supersede(row.regenerates, representation_id.bytes)
                if replaced is not None:
                    old = RepresentationId(replaced)
                    event(
                        s,
                        "representation_superseded",
                        old,
                        representation_id=old,
                        superseded_by=representation_id,
                        job_id=job_id,
                    )
            self._edit.guards.append(expires)
            self._edit.effects.append((lease, "end", 0))

    def _check_output(self, s: WriteSession, rep_id: RepresentationId, asset: bytes, kind: int) -> None:
        row = s.output_facts(rep_id.bytes)
        if row is None:
            raise NotFoundError(f"representation {rep_id} does not exist")
        if row.created_sequence != s.sequence:
            raise InvalidArgumentError(
                f"completion output {rep_id} must be added in the same transaction as the completion"
            )
        if row.asset_id != asset or row.kind != kind:
            raise InvalidArgumentError(
                f"completion output {rep_id} is a {RepresentationKind.from_code(row.kind).value} of asset "
                f"{AssetId(row.asset_id)}; the job requested a {RepresentationKind.from_code(kind).value} of asset {AssetId(asset)}"
            )

    def _check_activity(
        self,
        s: WriteSession,
        activity_id: ActivityId,
        rep_id: RepresentationId,
        inputs: list[bytes],
    ) -> None:
        facts = s.activity_facts(activity_id.bytes)
        if facts is None:
            raise NotFoundError(f"activity {activity_id} does not exist")
        if facts.created_sequence != s.sequence:
            raise InvalidArgumentError(
                f"completion activity {activity_id} must be created in the same transaction as the completion"
            )
        activity_inputs, outputs = facts.inputs, facts.outputs
        if activity_inputs != inputs:
            raise InvalidArgumentError("completion activity inputs do not match the job inputs")
        if outputs != [rep_id.bytes]:
            raise InvalidArgumentError(
                f"completion activity must have exactly one output, the completion output {rep_id}"
            )

    def cancel_job(self, job_id: JobId) -> None:
        """Cancel requested or claimed work (no lease needed; a live lease is fenced at once)."""
        check_id("job_id", job_id, JobId)
        with self._edit.operation(savepoint=False) as s:
            if not s.cancel(job_id.bytes, self._handle.now_micros()):
                row = s.lease_row(job_id.bytes)
                if row is None:
                    raise NotFoundError(f"job {job_id} does not exist")
                raise ConflictError(
                    f"job {job_id} cannot be cancelled: it is {_state_name(row.state)}",
                    reason=Reason.JOB_FINISHED,
                )
            event(s, "job_cancelled", job_id, job_id=job_id)


def _offline_micros() -> int:
    return OFFLINE_AFTER // timedelta(microseconds=1)


def _kinds(kinds: Sequence[str] | None) -> tuple[str, ...] | None:
    return tuple(kinds) if kinds is not None else None


def secret_hash(secret: bytes) -> bytes:
    """Lease secrets are stored only as SHA-256 hashes."""
    return hashlib.sha256(secret).digest()


def _identities(tool: object, agent: object) -> None:
    if not isinstance(tool, ToolIdentity):
        raise InvalidArgumentError(f"tool must be a ToolIdentity; got {type(tool).__name__}")
    if agent is not None and not isinstance(agent, AgentIdentity):
        raise InvalidArgumentError(f"agent must be an AgentIdentity or None; got {type(agent).__name__}")


def _expiry(now: int, micros: int) -> int:
    if now + micros > I64_MAX:
        raise InvalidArgumentError("lease expiry overflows the timestamp range")
    return now + micros


def _state_name(code: int) -> str:
    return JobState.from_code(code).value
