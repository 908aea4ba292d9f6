""" "Copy as CLI command" round-trips: the copied line, run by the real ``postproject`` command
line on a real production, requests an identical job (kind, inputs, output, target root and
typed parameters)."""

from __future__ import annotations

import json
import shlex
from decimal import Decimal

import pytest

from postproject import (
    EXECUTOR_VOCABULARY,
    BoolValue,
    DecimalValue,
    JobRef,
    JobRequest,
    ListValue,
    Property,
    RationalValue,
    RepresentationKind,
    StringValue,
    StructValue,
)
from postproject.cli import app
from postproject_gui.text import cli_command
from tests.gui.helpers import KIND, ProductionBuilder

CONFORM = "https://northlight.example/ns/conform#"


def test_copied_command_requests_an_identical_job(
    builder: ProductionBuilder, capsys: pytest.CaptureFixture[str]
) -> None:
    production = builder.production
    parameters = [
        (Property(EXECUTOR_VOCABULARY, "profile"), StringValue("proxy 720p, 'fast' $HOME")),
        (Property(CONFORM, "fps"), RationalValue(24000, 1001)),
        (Property(EXECUTOR_VOCABULARY, "burn_in"), BoolValue(True)),
        (Property(CONFORM, "gain"), DecimalValue(Decimal("1.25"))),
        (
            Property("https://x.example/ns", "reel"),
            StructValue((("name", StringValue("A001")), ("tags", ListValue((StringValue("day 3"),))))),
        ),
    ]
    with production.edit() as tx:
        job_id = tx.request_job(
            JobRequest(KIND, [builder.rep], builder.asset, RepresentationKind.PROXY, "proxies")
        )
        for prop, value in parameters:
            tx.add_metadata(JobRef(job_id), prop, value)
        tx.commit()
    job = production.job(job_id)
    line = cli_command.request(production.path, job, production.metadata[JobRef(job_id)])
    assert "--param 'https://northlight.example/ns/conform#' fps" in line
    assert line.endswith("--profile 'proxy 720p, '\"'\"'fast'\"'\"' $HOME'")

    argv = shlex.split(line)
    assert argv[0] == "postproject"
    capsys.readouterr()
    assert app.main(["--json", *argv[1:]]) == 0
    copy_id = json.loads(capsys.readouterr().out)["id"]

    copy = next(j for j in production.jobs().items if str(j.id) == copy_id)
    assert copy.id != job.id
    assert (
        copy.kind,
        copy.inputs,
        copy.output_asset_id,
        copy.output_representation_kind,
        copy.target_root,
    ) == (
        job.kind,
        job.inputs,
        job.output_asset_id,
        job.output_representation_kind,
        job.target_root,
    )

    def assertions(ref: JobRef) -> list[tuple[str, str, object]]:
        return sorted(
            ((a.property.vocabulary, a.property.name, a.value) for a in production.metadata[ref]), key=repr
        )

    assert assertions(JobRef(copy.id)) == assertions(JobRef(job.id))
    assert len(assertions(JobRef(copy.id))) == len(parameters)


def test_copied_scheduling_and_farm_commands_run_on_the_real_command_line(
    builder: ProductionBuilder, capsys: pytest.CaptureFixture[str]
) -> None:
    """Priority, not-before, attempt limit and idempotency key round-trip; the farm actions'
    equivalent commands (priority, requeue, sweep, retry) do what the monitor's actions do."""
    from datetime import timedelta

    from postproject import JobId, JobState, ToolIdentity

    production = builder.production
    when = production.clock.now() + timedelta(hours=3)
    line = cli_command.request_line(
        production.path,
        KIND,
        [builder.rep],
        builder.asset,
        RepresentationKind.PROXY,
        "proxies",
        priority=-3,
        not_before=when,
        max_attempts=2,
        idempotency_key="dailies 0142",
    )

    def run(command: str) -> dict[str, object]:
        argv = shlex.split(command)
        assert argv[0] == "postproject"
        capsys.readouterr()
        assert app.main(["--json", *argv[1:]]) == 0, capsys.readouterr().err
        result: dict[str, object] = json.loads(capsys.readouterr().out)
        return result

    job_id = JobId.parse(str(run(line)["id"]))
    job = production.job(job_id)
    assert (job.priority, job.not_before, job.max_attempts) == (-3, when, 2)
    assert str(job_id) == run(line)["id"]  # the same key and request: the same job
    run(cli_command.priority(production.path, [job_id], 9))
    assert production.job(job_id).priority == 9
    production.clock.advance(timedelta(hours=3))  # type: ignore[attr-defined]  # past not-before
    with production.edit() as tx:
        tx.claim_job_lease(job_id, ToolIdentity("ffmpeg", "6.1"), timedelta(seconds=30))
        tx.commit()
    run(cli_command.requeue(production.path, [job_id]))
    assert production.job(job_id).state is JobState.REQUESTED
    with production.edit() as tx:
        tx.claim_job_lease(job_id, ToolIdentity("ffmpeg", "6.1"), timedelta(seconds=30))
        tx.commit()
    production.clock.advance(timedelta(minutes=1))  # type: ignore[attr-defined]
    run(cli_command.sweep(production.path, 100))
    assert production.job(job_id).state is JobState.FAILED  # its two attempts are used up
    run(cli_command.retry(production.path, [job_id]))
    assert production.job(job_id).retried_as is not None
