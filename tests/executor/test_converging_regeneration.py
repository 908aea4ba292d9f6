"""Issue 14's acceptance, end to end with real media and real processes: after an original
changed, one ``job enqueue --downstream-of`` and one ``worker run`` leave nothing stale, and
the new thumbnail is made from the new proxy."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from postproject import JobOutput, JobRef, JobRequest, JobState, Production, RepresentationKind
from postproject.executor import jobs
from postproject.executor.testclip import ClipInfo, generate_test_clip
from tests.cli.helpers import run_script
from tests.executor.conftest import FRAMES, SIZE


def cli(cwd: Path, *args: str, timeout: float = 240) -> Any:
    done = run_script(["--json", *args], cwd, timeout=timeout)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return json.loads(done.stdout)


def worker_run(cwd: Path, path: Path) -> None:
    done = run_script(["worker", "run", str(path), "--concurrency", "2", "--lease", "30s"], cwd, timeout=300)
    assert done.returncode == 0, (done.stdout, done.stderr)


@pytest.mark.slow
def test_one_downstream_enqueue_and_one_worker_run_leave_nothing_stale(
    tmp_path: Path, clip: ClipInfo
) -> None:
    media, proxies = tmp_path / "media", tmp_path / "proxies"
    media.mkdir()
    proxies.mkdir()
    path = tmp_path / "show.pproj"
    names = ("A001_C001", "A001_C002")
    for name in names:
        shutil.copyfile(clip.path, media / f"{name}.mov")
    # A demo-like production: per asset, a proxy of the original and a thumbnail of the proxy
    # (the thumbnail's input bound to the proxy job's output), made by the reference executor.
    with Production.create(path) as production, production.edit(message="Import and request") as tx:
        tx.add_media_root("media", media)
        tx.add_media_root("proxies", proxies)
        originals, thumb_jobs = {}, {}
        for name in names:
            asset = tx.create_asset(name)
            originals[name] = tx.add_representation(
                asset, RepresentationKind.ORIGINAL, f"{name}.mov", root="media"
            )
            proxy_job = tx.request_job(
                JobRequest(jobs.PROXY_KIND, (originals[name],), asset, RepresentationKind.PROXY, "proxies")
            )
            tx.add_metadata(JobRef(proxy_job), jobs.PROFILE, "proxy-720p")
            thumb_jobs[name] = tx.request_job(
                JobRequest(
                    jobs.THUMBNAIL_KIND, (JobOutput(proxy_job),), asset, RepresentationKind.DERIVED, "proxies"
                )
            )
            tx.add_metadata(JobRef(thumb_jobs[name]), jobs.PROFILE, "thumbnail-640")
        tx.commit()
    worker_run(tmp_path, path)
    counts = cli(tmp_path, "job", "counts", str(path))["counts"]
    assert counts["succeeded"] == 4, counts
    first_thumb = cli(tmp_path, "job", "show", str(path), str(thumb_jobs["A001_C001"]))
    old_thumb = first_thumb["completion_representation_id"]
    (binding,) = first_thumb["bound_inputs"]
    old_proxy = binding["representation_id"]
    assert first_thumb["inputs"] == [old_proxy]
    assert cli(tmp_path, "artifact", "stale", str(path))["items"] == []

    # The original of A001_C001 is re-delivered (another picture) and observed.
    changed = originals["A001_C001"]
    generate_test_clip(
        media / "A001_C001.mov", name="A001_C001 re-delivered", frames=FRAMES, size=SIZE, hue=200
    )
    cli(tmp_path, "representation", "observe", str(path), str(changed))
    stale = cli(tmp_path, "artifact", "stale", str(path))["items"]
    assert sorted(k["representation_id"] for k in stale) == sorted([old_proxy, old_thumb])

    enqueued = cli(tmp_path, "job", "enqueue", str(path), "--downstream-of", str(changed))
    proxy_job, thumb_job = enqueued["jobs"]
    assert (proxy_job["regenerates"], thumb_job["regenerates"]) == (old_proxy, old_thumb)
    assert thumb_job["waiting_on"] == [proxy_job["id"]]
    assert thumb_job["bound_inputs"] == [{"job_id": proxy_job["id"], "representation_id": None}]
    assert enqueued["unplannable"] == []

    worker_run(tmp_path, path)
    assert cli(tmp_path, "artifact", "stale", str(path))["items"] == []
    new_proxy = cli(tmp_path, "job", "show", str(path), proxy_job["id"])
    thumb = cli(tmp_path, "job", "show", str(path), thumb_job["id"])
    assert (new_proxy["state"], thumb["state"]) == (JobState.SUCCEEDED.value, JobState.SUCCEEDED.value)
    activity = cli(tmp_path, "activity", "show", str(path), thumb["completion_activity_id"])
    assert [e["representation_id"] for e in activity["inputs"]] == [new_proxy["completion_representation_id"]]
    assert (
        cli(tmp_path, "representation", "show", str(path), old_proxy)["superseded_by"]
        == (new_proxy["completion_representation_id"])
    )
    replaced = cli(tmp_path, "artifact", "stale", str(path), "--include-superseded")["items"]
    assert sorted(k["representation_id"] for k in replaced) == sorted([old_proxy, old_thumb])
    assert {k["state"] for k in replaced} == {"superseded"}
    new_thumb = cli(tmp_path, "artifact", "evaluate", str(path), thumb["completion_representation_id"])
    assert new_thumb["state"] == "current"
    assert cli(tmp_path, "job", "plan", str(path), "--downstream-of", str(changed))["plans"] == []
