"""The ``postproject`` command lines equivalent to what the monitor shows or does (no Qt).

Follows the CLI conventions (design §4, notes §6): ``postproject job request PROD KIND
OUTPUT_ASSET OUTPUT_KIND [--input REP]... [--target-root NAME] [--profile P]``,
``job show PROD JOB`` and ``job cancel PROD JOB``. A job's typed parameters become
``--profile P`` for the executor's string ``profile`` parameter, and otherwise
``--param [VOCABULARY#]NAME=TAGGED_JSON`` (the vocabulary is left out for the executor's).
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
    parts += [_parameter(prop, value) for prop, value in parameters]
    return " ".join(parts)


def _parameter(prop: Property, value: MetadataValue) -> str:
    executor = prop.vocabulary == EXECUTOR_VOCABULARY
    if executor and prop.name == "profile" and isinstance(value, StringValue):
        return f"--profile {_q(value.value)}"
    name = prop.name if executor else f"{prop.vocabulary}#{prop.name}"
    return f"--param {_q(f'{name}={tagged_json(value)}')}"
