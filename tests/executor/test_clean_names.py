"""Clean output names survive a worker killed between publishing and committing (issue 28
item 9): the redo of the same job removes the file its earlier attempt published that no
representation records, and publishes under the clean name again (not ``-2``); another
job's files, and files a representation records, are never touched."""

from __future__ import annotations

from datetime import timedelta

import pytest

from postproject import JobState
from postproject.executor import jobs
from postproject.executor.worker import Worker
from tests.executor.conftest import Studio

CLEAN = "A001_C003_Harbour_dawn_proxy-720p.mp4"


def outputs(studio: Studio) -> list[str]:
    """The media in the proxies root (not the hidden staging folder, nor the attempt logs)."""
    return [name for name in studio.outputs() if name != jobs.STAGING]


def killed_after_publishing(studio: Studio, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run the worker once, dying (in effect) after its output is published, before the commit."""
    with monkeypatch.context() as patch:
        patch.setattr(Worker, "_complete", lambda *args, **kwargs: None)  # the commit never happens
        studio.run()


def test_the_redo_of_a_killed_attempt_keeps_the_clean_name(
    studio: Studio, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = studio.request(profile="proxy-720p")
    killed_after_publishing(studio, monkeypatch)
    assert outputs(studio) == [CLEAN]  # published, recorded by nothing
    assert studio.production.job(job).state is JobState.CLAIMED
    studio.clock.advance(timedelta(minutes=5))  # the dead worker's lease runs out
    with studio.production.edit() as tx:
        assert tx.finalize_lost() == 1
        tx.commit()

    studio.run()
    done = studio.production.job(job)
    assert done.state is JobState.SUCCEEDED and done.completion is not None
    rep = studio.production.representation(done.completion.representation_id)
    assert str(rep.path) == CLEAN
    assert outputs(studio) == [CLEAN]  # the orphan went; no "-2"
    assert not (studio.proxies / jobs.STAGING).exists()  # nor the record of it


def test_another_jobs_unrecorded_file_and_recorded_files_are_kept(
    studio: Studio, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = studio.request(profile="proxy-720p")
    studio.run()  # recorded: A001..._proxy-720p.mp4
    killed = studio.request(profile="proxy-720p")
    killed_after_publishing(studio, monkeypatch)  # publishes -2, never recorded
    assert outputs(studio) == ["A001_C003_Harbour_dawn_proxy-720p-2.mp4", CLEAN]
    studio.clock.advance(timedelta(minutes=5))
    with studio.production.edit() as tx:
        tx.finalize_lost()
        tx.commit()
    other = studio.request(profile="proxy-720p")  # a third job, same names
    with studio.production.edit() as tx:
        tx.cancel_job(killed)  # the killed job never runs again: its orphan is not this job's
        tx.commit()
    studio.run()
    assert studio.production.job(first).state is JobState.SUCCEEDED
    assert studio.production.job(other).state is JobState.SUCCEEDED
    assert outputs(studio) == [
        "A001_C003_Harbour_dawn_proxy-720p-2.mp4",  # another job's leftover: kept
        "A001_C003_Harbour_dawn_proxy-720p-3.mp4",
        CLEAN,
    ]
