"""Transactions: the only way to change a production.

``with production.edit() as tx: ...; tx.commit()``. Leaving the block without ``commit()``
rolls back. Each method is atomic on its own (a savepoint): a failed call leaves the
transaction as it was and still usable; a failed commit ends it and publishes nothing.
The write lock is taken at the first operation and held until commit or rollback.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from postproject import feed, files
from postproject import values as metadata_values
from postproject.clock import from_micros, to_micros
from postproject.errors import (
    AlreadyExistsError,
    ConflictError,
    InvalidArgumentError,
    NotFoundError,
)
from postproject.ids import (
    ActivityId,
    AssetId,
    JobId,
    MediaRootId,
    RepresentationId,
    RevisionId,
    _Id,
)
from postproject.leases import JobLease, LeaseState, lease_micros
from postproject.lifecycle import JobState
from postproject.model import names
from postproject.model.activities import ActivitySpec
from postproject.model.assets import RepresentationKind
from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.model.jobs import JobRequest
from postproject.model.jobs import diagnostic as check_diagnostic
from postproject.model.metadata import Property
from postproject.model.refs import ObjectRef, check_ref
from postproject.model.revisions import CommitReceipt, Revision
from postproject.storage.writes import WriteSession

if TYPE_CHECKING:
    from postproject.production import Production
    from postproject.regeneration import RegenerationPlan

log = logging.getLogger(__name__)

I64_MAX = 2**63 - 1
_Effect = tuple[JobLease, Literal["activate", "extend", "end"], int]


class Transaction:
    """An edit of one production (see the module docstring)."""

    def __init__(self, production: Production, *, origin: str | None, message: str | None) -> None:
        self._production = production
        self._origin = origin
        self._message = message
        self._session: WriteSession | None = None
        self._status: Literal["open", "committed", "rolled back", "failed"] = "open"
        self._guards: list[int] = []  # lease expiries the commit must precede
        self._effects: list[_Effect] = []  # lease state changes applied when the commit lands
        self._observed_high: int | None = None  # highest guarded clock sample seen
        self._guarded = False

    # --- plumbing ----------------------------------------------------------------------

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._status == "open":
            self.rollback()

    @property
    def production(self) -> Production:
        return self._production

    @property
    def open(self) -> bool:
        return self._status == "open"

    def _op(self) -> _Operation:
        """One atomic operation (a savepoint); use as ``with self._op() as session:``."""
        return _Operation(self)

    def _now_guarded(self) -> int:
        """Sample the library clock for a guarded lease operation (notes §2.2)."""
        stored = self._session.stored_high_water if self._session else None
        now = self._production._sample_clock(max(filter(None, (stored, self._observed_high)), default=None))
        self._observed_high = max(now, self._observed_high or now)
        self._guarded = True
        return now

    def _held(self, lease: object) -> tuple[JobId, bytes]:
        if not isinstance(lease, JobLease):
            raise TypeError(f"lease must be a JobLease; got {type(lease).__name__}")
        if lease.production_id != self._production.id:
            raise InvalidArgumentError(f"job lease belongs to another production ({lease.production_id})")
        return lease.job_id, lease._usable_in(self)

    def _lease_row(self, session: WriteSession, job_id: JobId, secret: bytes, now: int) -> tuple[int, int]:
        """Require the stored claim to be this lease's and unexpired; (expiry, claim sequence)."""
        row = session.job_row(job_id.bytes)
        if row is None:
            raise NotFoundError(f"job {job_id} does not exist")
        _, stored_secret, expires, claim_sequence = row
        if stored_secret != secret or expires is None or expires <= now or claim_sequence is None:
            raise ConflictError(
                f"job lease on {job_id} is expired, superseded or no longer claimed",
                reason="lease_lost",
            )
        return expires, claim_sequence

    def _event(self, session: WriteSession, kind: str, subject: _Id | None, **payload: object) -> None:
        session.event(
            kind,
            subject.bytes if subject is not None else None,
            {k: str(v) for k, v in payload.items()},
        )

    # --- setup -------------------------------------------------------------------------

    def create_asset(self, name: str | None = None) -> AssetId:
        """Create an asset (the logical identity of media; never a path)."""
        if name is not None:
            names.bounded_text("asset name", name, 1024)
        asset_id = AssetId.new()
        with self._op() as s:
            s.insert_asset(asset_id.bytes, name, self._production._now_micros())
            self._event(s, "asset_imported", asset_id, asset_id=asset_id)
        return asset_id

    def add_media_root(self, name: str, path: str | os.PathLike[str] | None = None) -> None:
        """Configure a named media root, optionally with this machine's directory for it."""
        names.root_name("media root name", name)
        stored = str(Path(path).expanduser().resolve()) if path is not None else None
        with self._op() as s:
            if s.one("SELECT 1 FROM media_roots WHERE name = ?", (name,)):
                raise AlreadyExistsError(f"media root {name!r} already exists")
            root_id = MediaRootId.new()
            s.insert_media_root(root_id.bytes, name, stored)
            s.event("media_root_added", None, {"media_root_id": str(root_id), "name": name})

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
        _typed("asset_id", asset_id, AssetId)
        if not isinstance(kind, RepresentationKind):
            raise InvalidArgumentError(f"representation kind must be a RepresentationKind; got {kind!r}")
        stored, absolute = self._production._locate(path, root, self._root_path)
        facts = files.read_facts(absolute)  # hashed before taking the write lock when we can
        rep_id = RepresentationId.new()
        with self._op() as s:
            if s.missing("assets", [asset_id.bytes]):
                raise NotFoundError(f"asset {asset_id} does not exist")
            s.insert_representation(
                rep_id.bytes,
                asset_id.bytes,
                kind.code,
                stored,
                root,
                facts.size,
                facts.mtime,
                self._production._now_micros(),
            )
            s.set_fingerprint(rep_id.bytes, facts.fingerprint)
            self._event(
                s,
                "representation_added",
                rep_id,
                asset_id=asset_id,
                representation_id=rep_id,
            )
        return rep_id

    def _root_path(self, name: str) -> Path | None:
        """A root's directory as this transaction sees it (roots it added included)."""
        if self._session is None:
            return self._production.root_path(name)
        mapped = self._production._root_map.get(name)
        row = self._session.one("SELECT path FROM media_roots WHERE name = ?", (name,))
        if row is None:
            raise NotFoundError(f"media root {name!r} does not exist")
        return mapped or (Path(row[0]) if row[0] is not None else None)

    def observe_representation(self, representation_id: RepresentationId) -> bool:
        """Re-read a representation's file; record a new fingerprint if its content changed.

        Returns:
            True when a change was recorded (with a ``representation_fingerprint_observed`` event).
        """
        _typed("representation_id", representation_id, RepresentationId)
        located = self._session.location(representation_id.bytes) if self._session else None
        if located is None:  # not staged here: the committed representation
            rep = self._production.representation(representation_id)
            located = (rep.path.as_posix() if rep.root else str(rep.path), rep.root)
        path, root = located
        base = self._root_path(root) if root is not None else None
        if root is not None and base is None:
            raise InvalidArgumentError(
                f"representation {representation_id} lives under media root {root!r}, which has no "
                "directory on this machine (configure it or pass root_map)"
            )
        facts = files.read_facts(base / path if base is not None else Path(path))
        with self._op() as s:
            if not s.set_fingerprint(representation_id.bytes, facts.fingerprint):
                return False
            s.update_file_facts(representation_id.bytes, facts.size, facts.mtime)
            self._event(
                s,
                "representation_fingerprint_observed",
                representation_id,
                representation_id=representation_id,
                algorithm=facts.fingerprint.algorithm,
                version=facts.fingerprint.version,
            )
        return True

    def create_activity(self, spec: ActivitySpec) -> ActivityId:
        """Record a completed activity; storage captures its edge snapshots at commit.

        Raises:
            NotFoundError: (not_found) a referenced representation does not exist.
            InvalidArgumentError: (invalid_argument) the activity would close a provenance cycle.
        """
        if not isinstance(spec, ActivitySpec):
            raise TypeError(f"spec must be an ActivitySpec; got {type(spec).__name__}")
        inputs = [e.representation_id.bytes for e in spec.input_edges]
        outputs = [e.representation_id.bytes for e in spec.output_edges]
        activity_id = ActivityId.new()
        with self._op() as s:
            absent = s.missing("representations", sorted(set(inputs + outputs)))
            if absent:
                raise NotFoundError(f"representation {RepresentationId(absent[0])} does not exist")
            if s.outputs_consumed(outputs) and s.creates_cycle(inputs, outputs):
                raise InvalidArgumentError(
                    "the activity would create a provenance cycle (an output is upstream of an input)"
                )
            s.insert_activity(
                activity_id.bytes,
                spec,
                to_micros(spec.started_at) if spec.started_at else None,
                to_micros(spec.finished_at) if spec.finished_at else None,
            )
            self._event(
                s,
                "activity_created",
                activity_id,
                activity_id=activity_id,
                activity_kind=spec.kind,
            )
        return activity_id

    def add_metadata(self, ref: ObjectRef, property: Property, value: object) -> None:
        """Append a typed value of ``property`` to the object ``ref`` names.

        Plain values convert where unambiguous (str, bool, int, Decimal, aware datetime,
        bytes, Fraction, lists and dicts of those); floats are invalid_argument.
        """
        check_ref(ref)
        if not isinstance(property, Property):
            raise InvalidArgumentError(f"property must be a Property; got {type(property).__name__}")
        typed = metadata_values.to_value(value)
        metadata_values.check_limits(typed)
        encoded = _json(metadata_values.to_json(typed))
        table = {
            "asset": "assets",
            "representation": "representations",
            "activity": "activities",
            "job": "jobs",
        }
        with self._op() as s:
            if s.missing(table[ref.kind], [ref.id.bytes]):
                raise NotFoundError(f"{ref.kind} {ref.id} does not exist")
            s.insert_metadata(ref.code, ref.id.bytes, property.vocabulary, property.name, encoded)
            s.event(
                "metadata_added_or_replaced",
                ref.id.bytes,
                {
                    "target": {"kind": ref.kind, "id": str(ref.id)},
                    "vocabulary": property.vocabulary,
                    "property": property.name,
                },
            )

    # --- jobs --------------------------------------------------------------------------

    def request_job(self, request: JobRequest) -> JobId:
        """Request work; parameters are metadata on ``JobRef(job_id)``.

        Raises:
            NotFoundError: (not_found) the output asset, an input or the target root is absent.
        """
        if not isinstance(request, JobRequest):
            raise TypeError(f"request must be a JobRequest; got {type(request).__name__}")
        job_id = JobId.new()
        with self._op() as s:
            absent = s.missing("representations", [r.bytes for r in request.inputs]) if request.inputs else ()
            if absent:
                raise NotFoundError(f"job input representation {RepresentationId(absent[0])} does not exist")
            if not s.insert_job(job_id.bytes, request, self._production._now_micros()):
                # The foreign keys refused the row: say which reference is missing.
                if s.missing("assets", [request.output_asset_id.bytes]):
                    raise NotFoundError(f"job output asset {request.output_asset_id} does not exist")
                raise NotFoundError(f"job target root {request.target_root!r} does not exist")
            self._event(s, "job_requested", job_id, job_id=job_id)
        return job_id

    def claim_job_lease(
        self,
        job_id: JobId,
        tool: ToolIdentity,
        duration: object,
        agent: AgentIdentity | None = None,
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
        micros = lease_micros(duration)
        _typed("job_id", job_id, JobId)
        _identities(tool, agent)
        secret = os.urandom(16)
        with self._op() as s:
            now = self._now_guarded()
            expires = _expiry(now, micros)
            if not s.claim(job_id.bytes, secret, tool, agent, now, expires):
                row = s.job_row(job_id.bytes)
                if row is None:
                    raise NotFoundError(f"job {job_id} does not exist")
                raise ConflictError(
                    f"job {job_id} is not claimable (it is {_state_name(row[0])}, or its lease is live)"
                )
            return self._claimed(s, job_id, secret, expires)

    def claim_next_job_lease(
        self,
        tool: ToolIdentity,
        duration: object,
        *,
        kinds: Sequence[str] | None = None,
        agent: AgentIdentity | None = None,
    ) -> JobLease | None:
        """Claim the oldest claimable job (of ``kinds``) in one guarded statement; None if none."""
        micros = lease_micros(duration)
        _identities(tool, agent)
        if kinds is not None:
            if isinstance(kinds, str) or not kinds:
                raise InvalidArgumentError("kinds must be a non-empty list of job kinds (or None for any)")
            kinds = sorted({names.namespaced("job kind", k) for k in kinds})
        secret = os.urandom(16)
        with self._op() as s:
            now = self._now_guarded()
            expires = _expiry(now, micros)
            claimed = s.claim_next(kinds, secret, tool, agent, now, expires)
            if claimed is None:
                return None
            return self._claimed(s, JobId(claimed), secret, expires)

    def _claimed(self, s: WriteSession, job_id: JobId, secret: bytes, expires: int) -> JobLease:
        self._event(s, "job_claimed", job_id, job_id=job_id)
        lease = JobLease(self._production.id, job_id, secret, LeaseState.PENDING, None, owner=self)
        self._guards.append(expires)
        self._effects.append((lease, "activate", expires))
        log.info("job claimed", extra={"action": "job_claimed", "job_id": str(job_id)})
        return lease

    def renew_job_lease(self, lease: JobLease, duration: object) -> None:
        """Extend a live lease to now + ``duration`` (must strictly extend; commits before the old expiry)."""
        job_id, secret = self._held(lease)
        micros = lease_micros(duration)
        with self._op() as s:
            now = self._now_guarded()
            expires, _ = self._lease_row(s, job_id, secret, now)
            new_expiry = _expiry(now, micros)
            if not s.renew(job_id.bytes, secret, now, new_expiry):
                raise ConflictError(
                    f"renewal of job {job_id} must extend its lease beyond the current expiry "
                    f"(by {duration} it would end {(expires - new_expiry)} µs earlier or at the same time)"
                )
            self._event(s, "job_claim_renewed", job_id, job_id=job_id)
            self._guards.append(expires)
            self._effects.append((lease, "extend", new_expiry))

    def release_job_lease(self, lease: JobLease) -> None:
        """Give a claimed job back (it returns to requested)."""
        self._finish(
            lease,
            "job_claim_released",
            lambda s, job_id, secret, now: s.release(job_id.bytes, secret, now),
        )

    def fail_job_lease(self, lease: JobLease, diagnostic: str) -> None:
        """Fail a claimed job with a diagnostic of 1-4096 UTF-8 bytes (no activity is created)."""
        self._held(lease)
        text = check_diagnostic(diagnostic)
        self._finish(
            lease,
            "job_failed",
            lambda s, job_id, secret, now: s.fail(job_id.bytes, secret, now, text),
        )

    def _finish(
        self,
        lease: JobLease,
        event: str,
        update: Callable[[WriteSession, JobId, bytes, int], bool],
    ) -> None:
        job_id, secret = self._held(lease)
        with self._op() as s:
            now = self._now_guarded()
            expires, _ = self._lease_row(s, job_id, secret, now)
            if not update(s, job_id, secret, now):
                raise ConflictError(f"job {job_id} changed under this lease", reason="lease_lost")
            self._event(s, event, job_id, job_id=job_id)
            self._guards.append(expires)
            self._effects.append((lease, "end", 0))

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
        job_id, secret = self._held(lease)
        _typed("representation_id", representation_id, RepresentationId)
        _typed("activity_id", activity_id, ActivityId)
        with self._op() as s:
            now = self._now_guarded()
            expires, claim_sequence = self._lease_row(s, job_id, secret, now)
            asset, kind, inputs = s.job_io(job_id.bytes)
            if claim_sequence < s.sequence:
                changed = s.fingerprints_changed_after(inputs, claim_sequence)
                if changed is not None:
                    rep, sequence, revision = changed
                    raise ConflictError(
                        f"input representation {RepresentationId(rep)} of job {job_id} changed in revision "
                        f"{sequence} ({RevisionId(revision)}) after the claim; do the work again under a new claim",
                        reason="input_changed",
                    )
            self._check_output(s, representation_id, asset, kind)
            self._check_activity(s, activity_id, representation_id, inputs)
            if not s.succeed(job_id.bytes, secret, now, activity_id.bytes, representation_id.bytes):
                raise ConflictError(f"job {job_id} claim changed during completion", reason="lease_lost")
            self._event(s, "job_succeeded", job_id, job_id=job_id)
            self._guards.append(expires)
            self._effects.append((lease, "end", 0))

    def _check_output(self, s: WriteSession, rep_id: RepresentationId, asset: bytes, kind: int) -> None:
        row = s.one(
            "SELECT asset_id, kind, created_sequence FROM representations WHERE id = ?",
            (rep_id.bytes,),
        )
        if row is None:
            raise NotFoundError(f"representation {rep_id} does not exist")
        if row[2] != s.sequence:
            raise InvalidArgumentError(
                f"completion output {rep_id} must be added in the same transaction as the completion"
            )
        if row[0] != asset or row[1] != kind:
            raise InvalidArgumentError(
                f"completion output {rep_id} is a {RepresentationKind.from_code(row[1]).value} of asset "
                f"{AssetId(row[0])}; the job requested a {RepresentationKind.from_code(kind).value} of asset {AssetId(asset)}"
            )

    def _check_activity(
        self,
        s: WriteSession,
        activity_id: ActivityId,
        rep_id: RepresentationId,
        inputs: list[bytes],
    ) -> None:
        if not s.staged_here("activities", activity_id.bytes):
            if s.missing("activities", [activity_id.bytes]):
                raise NotFoundError(f"activity {activity_id} does not exist")
            raise InvalidArgumentError(
                f"completion activity {activity_id} must be created in the same transaction as the completion"
            )
        edges = s.all(
            "SELECT direction, representation_id FROM activity_edges WHERE activity_id = ? "
            "ORDER BY direction, representation_id",
            (activity_id.bytes,),
        )
        activity_inputs = [rep for direction, rep in edges if direction == 0]
        outputs = [rep for direction, rep in edges if direction == 1]
        if activity_inputs != inputs:
            raise InvalidArgumentError("completion activity inputs do not match the job inputs")
        if outputs != [rep_id.bytes]:
            raise InvalidArgumentError(
                f"completion activity must have exactly one output, the completion output {rep_id}"
            )

    def cancel_job(self, job_id: JobId) -> None:
        """Cancel requested or claimed work (no lease needed; a live lease is fenced at once)."""
        _typed("job_id", job_id, JobId)
        with self._op() as s:
            if not s.cancel(job_id.bytes):
                row = s.job_row(job_id.bytes)
                if row is None:
                    raise NotFoundError(f"job {job_id} does not exist")
                raise ConflictError(f"job {job_id} cannot be cancelled: it is {_state_name(row[0])}")
            self._event(s, "job_cancelled", job_id, job_id=job_id)

    # --- ending ------------------------------------------------------------------------

    def commit(self) -> CommitReceipt:
        """Publish everything staged as one revision (``revision`` None when nothing was staged).

        Raises:
            ConflictError: (conflict) a lease expired before the commit, or the clock moved
                backward; nothing is published and the transaction ends.
        """
        if self._status != "open":
            raise ConflictError(
                f"this transaction is already {self._status}",
                reason="transaction_closed",
            )
        session = self._session
        if session is None:
            self._status = "committed"
            return CommitReceipt(self._production.id, None)
        try:
            committed_at = self._commit_time()
            revision_id = RevisionId.new()
            published = session.commit(
                committed_at,
                revision_id.bytes,
                self._origin,
                self._message,
                self._observed_high,
            )
        except BaseException:
            self._status = "failed"
            self._end_pending()
            try:
                session.rollback(self._observed_high)
            finally:
                self._production._end_write()
            raise
        self._status = "committed"
        self._production._end_write()
        if not published:
            self._end_pending()
            return CommitReceipt(self._production.id, None)
        for lease, effect, expires in self._effects:
            if effect == "end":
                lease._end()
            else:
                lease._activate(expires)
        feed.notify(self._production.path)
        revision = Revision(
            revision_id,
            session.sequence,
            from_micros(committed_at),
            self._origin,
            self._message,
            tuple(session.staged),
        )
        return CommitReceipt(self._production.id, revision)

    def _commit_time(self) -> int:
        if not self._guarded:
            return self._production._now_micros()
        now = self._now_guarded()
        for expiry in self._guards:
            if expiry <= now:
                raise ConflictError("job lease expired before commit", reason="lease_expired")
        return now

    def rollback(self) -> None:
        """Discard everything staged (the highest clock sample observed is still kept)."""
        if self._status != "open":
            return
        self._status = "rolled back"
        self._end_pending()
        if self._session is not None:
            try:
                self._session.rollback(self._observed_high)
            finally:
                self._production._end_write()

    def _end_pending(self) -> None:
        for lease, effect, _ in self._effects:
            if effect == "activate" and lease._state is LeaseState.PENDING:
                lease._end()

    def __repr__(self) -> str:
        return f"Transaction({self._production.path}, {self._status})"

    # --- artifact knowledge (issue 4) ---------------------------------------------------

    def enqueue_plan(self, plan: RegenerationPlan) -> JobId:
        """Request a plan's job and assert its parameters on that job, as one operation.

        Either the job and all its parameters are staged, or nothing is; the caller commits.

        Raises:
            TypeError: ``plan`` is not a RegenerationPlan.
            NotFoundError: (not_found) an input, the output asset or the target root no longer exists.
        """
        from postproject.model.refs import JobRef
        from postproject.regeneration import RegenerationPlan

        if not isinstance(plan, RegenerationPlan):
            raise TypeError(f"plan must be a RegenerationPlan; got {type(plan).__name__}")
        with self._op():
            job_id = self.request_job(plan.job)
            for assertion in plan.parameters:
                self.add_metadata(JobRef(job_id), assertion.property, assertion.value)
        return job_id

    # --- end artifact knowledge (issue 4) -----------------------------------------------


class _Operation:
    """Savepoint around one transaction method: on failure the database, the staged events,
    the commit guards and the lease effects all return to where they were."""

    __slots__ = ("_effects", "_guards", "_session", "_token", "_tx")

    def __init__(self, tx: Transaction) -> None:
        self._tx = tx

    def __enter__(self) -> WriteSession:
        tx = self._tx
        if tx._status != "open":
            raise ConflictError(f"this transaction is already {tx._status}", reason="transaction_closed")
        if tx._session is None:
            tx._session = tx._production._begin_write()
        self._session = tx._session
        self._guards, self._effects = len(tx._guards), len(tx._effects)
        self._token = self._session.savepoint()
        return self._session

    def __exit__(self, kind: type[BaseException] | None, exc: object, tb: object) -> None:
        if kind is None:
            self._session.release_savepoint(self._token)
            return
        self._session.rollback_savepoint(self._token)
        del self._tx._guards[self._guards :], self._tx._effects[self._effects :]


def _typed(field: str, value: object, kind: type) -> None:
    if type(value) is not kind:
        raise InvalidArgumentError(f"{field} must be a {kind.__name__}; got {type(value).__name__}")


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


def _json(data: object) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)
