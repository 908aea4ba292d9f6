"""``wait_for_activity``: one wait for new revisions or a moved progress signal (what the
monitor's feed watcher blocks in), on both engines."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from postproject import FakeClock, InvalidArgumentError, Production
from tests.core.jobs_helpers import Setup, make_setup
from tests.waiting import wait_until_in_feed_wait


@pytest.fixture
def s(production: Production, clock: FakeClock, tmp_path: Path) -> Setup:
    return make_setup(production, clock, tmp_path)


def once_waiting(action: Callable[[], object]) -> threading.Thread:
    """Run ``action`` in another thread as soon as this thread sleeps in ``wait_for_activity``."""
    waiter = threading.current_thread()

    def run() -> None:
        wait_until_in_feed_wait(waiter)
        action()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_it_times_out_with_nothing_new_and_beats_meanwhile(s: Setup) -> None:
    head, token = s.head(), s.production.progress_token()
    beats: list[float] = []
    timeout = 0.3
    started = time.monotonic()
    changes, found = s.production.wait_for_activity(head, token, timeout, heartbeat=lambda: beats.append(1))
    assert changes.revisions == () and found == token
    assert time.monotonic() - started >= timeout  # it waited its whole timeout (a lower bound, not a speed)
    assert len(beats) >= 2  # alive between its short sleeps


def test_a_commit_elsewhere_wakes_it_with_the_revisions(s: Setup) -> None:
    head, token = s.head(), s.production.progress_token()
    thread = once_waiting(s.request)
    changes, found = s.production.wait_for_activity(head, token, 20)
    thread.join()
    assert [r.sequence for r in changes.revisions] == [head + 1] and found == token


def test_a_progress_report_wakes_it_without_a_revision(s: Setup) -> None:
    job = s.request()
    lease = s.claim(job, 10_000_000)
    head, token = s.head(), s.production.progress_token()

    def report() -> None:
        with s.production.edit() as tx:
            assert tx.report_progress(lease, fraction=0.5)
            tx.commit()

    thread = once_waiting(report)
    changes, found = s.production.wait_for_activity(head, token, 20)
    thread.join()
    assert changes.revisions == () and found != token


def test_stop_ends_it_and_bad_arguments_are_refused(s: Setup) -> None:
    head, token = s.head(), s.production.progress_token()
    stop = threading.Event()
    thread = once_waiting(stop.set)
    timeout = 30
    started = time.monotonic()
    assert s.production.wait_for_activity(head, token, timeout, stop=stop)[0].revisions == ()
    thread.join()
    assert time.monotonic() - started < timeout  # the stop ended it, not its timeout
    with pytest.raises(InvalidArgumentError):
        s.production.wait_for_activity(head, True, 1)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        s.production.wait_for_activity(head, token, 61)


def test_a_waiter_can_be_stopped(s: Setup) -> None:
    import threading

    stop = threading.Event()
    stop.set()
    assert s.production.wait_for_changes(s.head(), 30, stop=stop).revisions == ()
