"""The ``postproject`` command lines equivalent to what the monitor shows or does (no Qt).

Follows ``docs/cli.md``: ``postproject job request PROD KIND OUTPUT_ASSET OUTPUT_KIND
[--input REP]... [--target-root NAME] [--param VOCABULARY PROPERTY VALUE_JSON]...
[--profile P]``, ``job show PROD JOB`` and ``job cancel PROD JOB``. A job's typed parameters
become ``--profile P`` for the (first) string ``profile`` parameter of the executor
vocabulary, and otherwise ``--param VOCABULARY PROPERTY VALUE_JSON`` with the tagged JSON of
:func:`postproject.values.to_json`. Every argument is quoted with :func:`shlex.quote`.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence
from pathlib import Path

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
from postproject_gui.params import tagged_json

PROGRAM = "postproject"


def _q(value: object) -> str:
    return shlex.quote(str(value))


def show(production: Path, job_id: JobId) -> str:
    return f"{PROGRAM} job show {_q(production)} {job_id}"


def cancel(production: Path, job_ids: Iterable[JobId]) -> str:
    """One ``job cancel`` line per job."""
    return "\n".join(f"{PROGRAM} job cancel {_q(production)} {job_id}" for job_id in job_ids)


def request(production: Path, job: Job, parameters: Sequence[Assertion] = ()) -> str:
    """The command that requests a job like ``job`` (same kind, inputs, output, parameters)."""
    return request_line(
        production,
        job.kind,
        job.inputs,
        job.output_asset_id,
        job.output_representation_kind,
        job.target_root,
        [(a.property, a.value) for a in parameters],
    )


def request_line(
    production: Path,
    kind: str,
    inputs: Sequence[RepresentationId],
    output_asset: AssetId,
    output_kind: RepresentationKind,
    target_root: str | None,
    parameters: Sequence[tuple[Property, MetadataValue]] = (),
) -> str:
    parts = [PROGRAM, "job", "request", _q(production), _q(kind), str(output_asset), output_kind.value]
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
    return " ".join(parts)


def _is_profile(prop: Property, value: MetadataValue) -> bool:
    """The executor profile, which the CLI spells ``--profile P``."""
    return (
        prop.vocabulary == EXECUTOR_VOCABULARY and prop.name == "profile" and isinstance(value, StringValue)
    )
