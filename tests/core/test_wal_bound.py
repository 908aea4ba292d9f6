"""The SQLite WAL stays bounded under sustained writes while readers poll (issue 28 item 5).

Readers that are always somewhere in a short read transaction (two threads with their own
connections, overlapping) kept the writer's truncating checkpoint from ever winning (it ran
with a zero busy timeout), so the WAL grew without bound. Here the bound is made small
(256 KiB, checked every 8 commits) so that a few thousand small commits show the growth."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from postproject import Production
from postproject.storage.sqlite import connection

BOUND = 256 * 1024


def test_the_wal_stays_bounded_while_readers_overlap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection, "WAL_BOUND", BOUND, raising=False)
    monkeypatch.setattr(connection, "WAL_CHECK_EVERY", 8, raising=False)
    monkeypatch.setattr(connection, "JOURNAL_SIZE_LIMIT", BOUND)
    path = tmp_path / "busy.pproj"
    stop = threading.Event()
    reads = [0, 0]

    def poll(index: int) -> None:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        while not stop.is_set():
            conn.execute("BEGIN")  # a poll: one short read transaction, ended at once
            conn.execute("SELECT count(*) FROM revisions").fetchone()
            stop.wait(0.001)
            conn.execute("COMMIT")
            reads[index] += 1
        conn.close()

    with Production.create(path) as production:
        readers = [threading.Thread(target=poll, args=(i,), daemon=True) for i in range(2)]
        for reader in readers:
            reader.start()
        wal = Path(f"{path}-wal")
        peak = 0
        try:
            for number in range(3000):
                with production.edit() as tx:
                    tx.create_asset(f"A{number:05d}")
                    tx.commit()
                peak = max(peak, wal.stat().st_size)
        finally:
            stop.set()
            for reader in readers:
                reader.join()
    assert min(reads) > 0  # the readers were polling throughout
    assert peak <= 8 * BOUND, f"the WAL reached {peak / 2**20:.1f} MiB"
