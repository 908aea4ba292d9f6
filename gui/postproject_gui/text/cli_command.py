"""The ``postproject`` command lines equivalent to what the monitor shows or does (no Qt).

Follows ``docs/cli.md``: ``postproject job request PROD KIND OUTPUT_ASSET OUTPUT_KIND
[--input REP]... [--target-root NAME] [--param VOCABULARY PROPERTY VALUE_JSON]...
[--profile P] [--priority N] [--not-before WHEN] [--max-attempts N] [--idempotency-key K]``,
``job show PROD JOB``, ``job cancel PROD JOB`` and the farm's ``job retry PROD JOB``,
``job requeue PROD JOB``, ``job sweep PROD [--limit N]`` and ``job priority PROD JOB N``. A job's typed parameters
become ``--profile P`` for the (first) string ``profile`` parameter of the executor
vocabulary, and otherwise ``--param VOCABULARY PROPERTY VALUE_JSON`` with the tagged JSON of
:func:`postproject.model.values.to_json`. Every argument is quoted with :func:`shlex.quote`.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Sequence
from datetime import datetime

from postproject import (
    EXECUTOR_VOCABULARY,
    Assertion,
    AssetId,
    Job,
    JobId,
    MetadataValue,
    Property,
    RepresentationId,
    RepresentationKind,
    StringValue,
)
from postproject_gui.text import location as production_location
from postproject_gui.text.params import tagged_json

PROGRAM = "postproject"
Location = str | os.PathLike[str]  # a .pproj path or a postgresql:// URI


def _q(value: object) -> str:
    return shlex.quote(str(value))


def _p(production: Location) -> str:
    """The production argument: a path, or a URI without its password (``PGPASSWORD`` or a
    passfile supplies it; a command line the monitor shows never holds one)."""
    return shlex.quote(production_location.shown(os.fspath(production)))


def show(production: Location, job_id: JobId) -> str:
    return f"{PROGRAM} job show {_p(production)} {job_id}"


def cancel(production: Location, job_ids: Iterable[JobId]) -> str:
    """One ``job cancel`` line per job."""
    return "\n".join(f"{PROGRAM} job cancel {_p(production)} {job_id}" for job_id in job_ids)


def retry(production: Location, job_ids: Iterable[JobId]) -> str:
    """One ``job retry`` line per job (request a failed or cancelled job again)."""
    return "\n".join(f"{PROGRAM} job retry {_p(production)} {job_id}" for job_id in job_ids)


def requeue(production: Location, job_ids: Iterable[JobId]) -> str:
    """One ``job requeue`` line per job (return a claim to requested)."""
    return "\n".join(f"{PROGRAM} job requeue {_p(production)} {job_id}" for job_id in job_ids)


def sweep(production: Location, limit: int | None = None) -> str:
    """``job sweep``: finalise expired, unrenewed claims."""
    return f"{PROGRAM} job sweep {_p(production)}" + (f" --limit {limit}" if limit is not None else "")


def priority(production: Location, job_ids: Iterable[JobId], value: int | str) -> str:
    """One ``job priority`` line per job."""
    return "\n".join(f"{PROGRAM} job priority {_p(production)} {job_id} {value}" for job_id in job_ids)


def request(production: Location, job: Job, parameters: Sequence[Assertion] = ()) -> str:
    """The command that requests a job like ``job`` (same kind, inputs, output, parameters,
    priority, attempt limit and not-before instant)."""
    return request_line(
        production,
        job.kind,
        job.inputs,
        job.output_asset_id,
        job.output_representation_kind,
        job.target_root,
        [(a.property, a.value) for a in parameters],
        priority=job.priority,
        not_before=job.not_before,
        max_attempts=job.max_attempts,
    )


def request_line(
    production: Location,
    kind: str,
    inputs: Sequence[RepresentationId],
    output_asset: AssetId,
    output_kind: RepresentationKind,
    target_root: str | None,
    parameters: Sequence[tuple[Property, MetadataValue]] = (),
    *,
    priority: int = 0,
    not_before: datetime | None = None,
    max_attempts: int | None = None,
    idempotency_key: str | None = None,
) -> str:
    parts = [PROGRAM, "job", "request", _p(production), _q(kind), str(output_asset), output_kind.value]
    parts += [f"--input {rep}" for rep in inputs]
    if target_root:
        parts.append(f"--target-root {_q(target_root)}")
    profile: str | None = None
    for prop, value in parameters:
        if profile is None and _is_profile(prop, value):
            assert isinstance(value, StringValue)
            profile = value.value
        else:
            parts.append(f"--param {_q(prop.vocabulary)} {_q(prop.name)} {_q(tagged_json(value))}")
    if profile is not None:
        parts.append(f"--profile {_q(profile)}")
    if priority:
        parts.append(f"--priority {priority}")
    if not_before is not None:
        parts.append(f"--not-before {_q(not_before.isoformat())}")
    if max_attempts is not None:
        parts.append(f"--max-attempts {max_attempts}")
    if idempotency_key is not None:
        parts.append(f"--idempotency-key {_q(idempotency_key)}")
    return " ".join(parts)


def _is_profile(prop: Property, value: MetadataValue) -> bool:
    """The executor profile, which the CLI spells ``--profile P``."""
    return (
        prop.vocabulary == EXECUTOR_VOCABULARY and prop.name == "profile" and isinstance(value, StringValue)
    )
