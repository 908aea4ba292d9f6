"""The attempt log handler: routing by thread and job, the file beside the outputs, a bounded tail."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import av.logging

from postproject import JobId
from postproject.executor.attemptlog import AttemptLogs, log_path
from postproject.model.progress import MAX_LOG_TAIL_BYTES

log = logging.getLogger("postproject.executor.test")


def test_a_flood_keeps_the_whole_file_and_a_bounded_valid_tail(tmp_path: Path) -> None:
    logs = AttemptLogs().install()
    try:
        job = JobId.new()
        attempt = logs.begin(job, 3)
        log.info("before the folder is known")
        assert attempt.open(tmp_path) == log_path(tmp_path, job, 3)
        stray = "\udcff\udcfe"  # bytes that are not UTF-8, as a file name carries them
        for n in range(5000):
            log.info("line %d %s é", n, stray)
        av.logging.log(av.logging.INFO, "test", "from the codec library")
        other = threading.Thread(target=lambda: log.info("another thread, no job"))
        other.start()
        other.join()
        log.info("another thread's line naming the job", extra={"job": str(job)})
        tail = attempt.tail()
    finally:
        logs.end(attempt)
        logs.uninstall()
    data = log_path(tmp_path, job, 3).read_bytes()
    assert b"before the folder is known" in data and data.count(b"\xff\xfe") == 5000
    assert b"another thread, no job" not in data and b"naming the job" in data
    assert len(data) > 4 * MAX_LOG_TAIL_BYTES
    assert len(tail.encode("utf-8")) <= MAX_LOG_TAIL_BYTES
    assert tail.endswith("naming the job\n") and "line 4999 \ufffd\ufffd é" in tail
    assert "libav.test: from the codec library" in tail
    assert av.logging.get_level() is None, "PyAV's logging is restored"
