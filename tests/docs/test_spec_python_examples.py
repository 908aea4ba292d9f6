"""The spec's Python examples run as written (their text is read from the spec file)."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

import postproject
from postproject import (
    AgentIdentity,
    JobState,
    Production,
    RepresentationKind,
    ToolIdentity,
)

SPEC = Path(__file__).resolve().parents[2].parent / "shared" / "spec" / "jobs-and-production-work.md"
LOCAL_SPEC = Path(__file__).resolve().parent / "spec" / "jobs-and-production-work.md"


def spec_text() -> str:
    for candidate in (SPEC, LOCAL_SPEC):
        if candidate.exists():
            return candidate.read_text(encoding="utf-8")
    pytest.fail(f"the spec file is missing (looked at {SPEC} and {LOCAL_SPEC})")


def python_function(name: str) -> str:
    """The text of ``def name(...)`` up to the next top-level non-Python block."""
    text = spec_text()
    match = re.search(rf"^def {name}\(.*?(?=^\S(?!.*def ))", text, re.S | re.M)
    assert match, f"def {name} not found in the spec"
    body = match.group(0)
    # The Python block ends where the next language's example begins (a Rust `fn`).
    body = re.split(r"^fn ", body, flags=re.M)[0]
    return textwrap.dedent(body)


def namespace(**extra: object) -> dict[str, object]:
    names: dict[str, object] = {name: getattr(postproject, name) for name in postproject.__all__}
    names.update(timedelta=timedelta, Path=Path)
    names.update(extra)
    return names


def test_request_and_page_jobs(production: Production, media: Callable[..., Path]) -> None:
    with production.edit() as tx:
        asset = tx.create_asset("A001")
        original = tx.add_representation(asset, RepresentationKind.ORIGINAL, media("A001.mov"))
        tx.commit()
    scope = namespace()
    exec(
        compile(
            python_function("request_and_page_jobs"),
            "spec:request_and_page_jobs",
            "exec",
        ),
        scope,
    )
    scope["request_and_page_jobs"](production, original, asset)  # type: ignore[operator]
    page = production.jobs(state=JobState.REQUESTED, kind="org.example:generate-proxy")
    assert len(page.items) == 2


def test_run_proxy_job(production: Production, media: Callable[..., Path], tmp_path: Path) -> None:
    with production.edit() as tx:
        asset = tx.create_asset("A001")
        original = tx.add_representation(asset, RepresentationKind.ORIGINAL, media("A001.mov"))
        job_id = tx.request_job(
            postproject.JobRequest(
                "org.example:generate-proxy",
                (original,),
                asset,
                RepresentationKind.PROXY,
            )
        )
        tx.add_metadata(
            postproject.JobRef(job_id),
            postproject.Property("https://example.com/transcode", "profile"),
            "proxy-720p",
        )
        tx.commit()
    scope = namespace(
        WORKER=ToolIdentity("Example Transcoder", "3.2", "https://example.com/transcoder"),
        AGENT=AgentIdentity("render-node-07"),
        job_by_id=lambda production, job_id: production.job(job_id),
    )
    exec(compile(python_function("run_proxy_job"), "spec:run_proxy_job", "exec"), scope)
    output = tmp_path / "A001_proxy.mov"
    scope["run_proxy_job"](production, job_id, output)  # type: ignore[operator]

    job = production.job(job_id)
    assert job.state is JobState.SUCCEEDED
    assert job.completion is not None
    activity = production.activity(job.completion.activity_id)
    assert [edge.representation_id for edge in activity.inputs] == [original]
    assert [edge.representation_id for edge in activity.outputs] == [job.completion.representation_id]
    assert activity.outputs[0].snapshot is not None
    parameters = production.metadata[postproject.ActivityRef(activity.id)]
    assert [(p.property.name, p.value) for p in parameters] == [
        ("profile", postproject.StringValue("proxy-720p"))
    ]


def test_the_local_spec_copy_matches_the_shared_spec() -> None:
    if not SPEC.exists():
        pytest.skip("the shared spec folder is not beside this checkout")
    assert LOCAL_SPEC.read_text(encoding="utf-8") == SPEC.read_text(encoding="utf-8")
