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
from postproject_gui import cli_command
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
