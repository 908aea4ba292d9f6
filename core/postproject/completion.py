"""A worker's completion as one call: ``Production.complete_job``.

The spec's completion edit (jobs-and-production-work.md, ``run_proxy_job``) adds the output as a
representation of the job's asset, creates the activity of the job's kind from the job's inputs
to it, copies the job's parameters onto it, records the attempt's log tail and completes the
lease, then commits. ``complete_job`` records exactly that, with the same rules, errors and
events. On PostgreSQL, for a claim made in this process (``claim_next_job``), it is one server
call (``pp_complete``, migration 0014: the lease check, every row written once with the
revision's number, the commit); otherwise (SQLite, a claim made elsewhere) it is that edit.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from postproject.base import files
from postproject.base.handle import ProductionHandle
from postproject.base.leases import JobLease
from postproject.engine.claims import CompletionRows, completes_in_one_call
from postproject.model import values as metadata_values
from postproject.model.activities import ActivitySpec, check_context
from postproject.model.assets import RepresentationKind
from postproject.model.clock import to_micros
from postproject.model.errors import InvalidArgumentError
from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.model.ids import ActivityId, RepresentationId
from postproject.model.jobs import JobCompletion
from postproject.model.metadata import Property
from postproject.model.progress import log_tail
from postproject.model.refs import ActivityRef, JobRef
from postproject.transaction import complete_committed

Parameters = Iterable[tuple[Property, object]] | None


@dataclass(frozen=True, slots=True)
class _Done:
    """A completion's report, checked (``given``: the parameters encoded, None: the job's own)."""

    output: str | os.PathLike[str]
    root: str | None
    kind: RepresentationKind | None
    tool: ToolIdentity | None
    agent: AgentIdentity | None
    started_at: datetime | None
    finished_at: datetime | None
    given: list[tuple[Property, object, str]] | None
    tail: str | None
    edit: dict[str, str | None]  # the revision's origin, message and principal


def complete_work(
    production: Any,  # a Production
    lease: JobLease,
    output: str | os.PathLike[str],
    *,
    tool: ToolIdentity | None,
    agent: AgentIdentity | None,
    root: str | None,
    kind: RepresentationKind | None,
    started_at: datetime | None,
    finished_at: datetime | None,
    parameters: Parameters,
    tail: str | bytes | None,
    origin: str | None,
    message: str | None,
    principal: str | None,
) -> JobCompletion:
    """``Production.complete_job`` (see the module docstring)."""
    if kind is not None and not isinstance(kind, RepresentationKind):
        raise InvalidArgumentError(f"representation kind must be a RepresentationKind; got {kind!r}")
    check_context(tool, agent, started_at, finished_at)  # the activity's, as create_activity checks them
    given = None if parameters is None else [_parameter(p) for p in parameters]
    text = log_tail(tail) if tail is not None else None
    revision = {"origin": origin, "message": message, "principal": principal}
    done = _Done(output, root, kind, tool, agent, started_at, finished_at, given, text, revision)
    handle = ProductionHandle.of(production)
    if completes_in_one_call(handle.engine):
        stored, absolute = handle.locate(output, root)
        facts = files.read_facts(absolute)  # hashed before the call
        rep_id, activity_id = RepresentationId.new(), ActivityId.new()

        def rows(job_id: bytes, secret: bytes, now: int) -> CompletionRows:
            return CompletionRows(
                job_id, secret, now, rep_id.bytes, kind.code if kind else None, stored, root, facts.size,
                facts.mtime, handle.now_micros(), facts.fingerprint, activity_id.bytes, tool, agent,
                to_micros(started_at) if started_at else None, to_micros(finished_at) if finished_at else None,
                [(p.vocabulary, p.name, encoded) for p, _, encoded in given] if given is not None else None,
                text,
            )  # fmt: skip

        with production.edit(**revision, defer_lease_checks=True) as tx:
            if complete_committed(tx, lease, rows):
                tx.commit()  # (publishes nothing more: ends the lease)
                return JobCompletion(rep_id, activity_id)
    return _as_edit(production, lease, done)


def _parameter(item: object) -> tuple[Property, object, str]:
    """A (property, value) pair as ``add_metadata`` checks and encodes it."""
    if not isinstance(item, tuple) or len(item) != 2:
        raise InvalidArgumentError(f"parameters must be (Property, value) pairs; got {item!r}")
    prop, value = item
    if not isinstance(prop, Property):
        raise InvalidArgumentError(f"property must be a Property; got {type(prop).__name__}")
    typed = metadata_values.to_value(value)
    metadata_values.check_limits(typed)
    encoded = json.dumps(metadata_values.to_json(typed), separators=(",", ":"), ensure_ascii=False)
    return prop, value, encoded


def _as_edit(production: Any, lease: JobLease, done: _Done) -> JobCompletion:
    """The spec's completion edit (its lease check sent with the commit where the engine can)."""
    if not isinstance(lease, JobLease):
        raise TypeError(f"lease must be a JobLease; got {type(lease).__name__}")
    job = production.job(lease.job_id)
    copied = done.given
    if copied is None:
        copied = [(p.property, p.value, "") for p in production.metadata[JobRef(job.id)]]
    with production.edit(**done.edit, defer_lease_checks=True) as tx:
        kind = done.kind or job.output_representation_kind
        rep = tx.add_representation(job.output_asset_id, kind, done.output, root=done.root)
        spec = ActivitySpec(job.kind, inputs=job.inputs, outputs=(rep,), tool=done.tool, agent=done.agent,
                            started_at=done.started_at, finished_at=done.finished_at)  # fmt: skip
        activity = tx.create_activity(spec)
        for prop, value, _ in copied:
            tx.add_metadata(ActivityRef(activity), prop, value)
        if done.tail is not None:
            tx.record_attempt_log(lease, tail=done.tail)
        tx.complete_job_lease(lease, rep, activity)
        tx.commit()
    return JobCompletion(rep, activity)
