"""S8 (perf-anchors.md C1): the claim and job-page statements keep their query plans.

Left to itself, SQLite's planner may pick a listing index that does not match the claim's
order and sort every ready row on each claim (0.18x throughput in the research note). The store
pins its claim probes with ``INDEXED BY``: jobs are keyed by UUIDv7 ids (request order), so the
``(state, id)`` and ``(state, kind, id)`` listing indexes double as the ready-job indexes and
``jobs_claimed_expiry`` (claimed jobs only) finds expired claims. These tests run ``EXPLAIN QUERY PLAN`` on the *exact* statements the store
executes: a recorder stands in for the connection under the store's own ``WriteSession`` and
``Reader``, and explains each statement on a read-only connection to a production created
through the public API. The "analyzed" variant repeats this on a scratch copy of a populated
production after ``ANALYZE``, so planner statistics cannot silently change the plans either.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from postproject import (
    AgentIdentity,
    JobRequest,
    JobState,
    Production,
    RepresentationKind,
    ToolIdentity,
)
from postproject.storage.sqlite.reads import Reader
from postproject.storage.sqlite.writes import WriteSession

pytestmark = pytest.mark.sqlite_only("SQLite's query plans (EXPLAIN QUERY PLAN) on a production file")

LIST_INDEXES = ("jobs_by_state_kind", "jobs_by_kind", "jobs_by_state", "jobs_by_completion")
READY = "jobs_ready"  # partial (requested jobs only), in claim order: priority desc, availability, id
READY_KIND = "jobs_ready_kind"  # the same per kind: (kind, priority desc, availability, id)
EXPIRY = "jobs_claimed_expiry"  # partial: claimed jobs by lease expiry
CLAIM_INDEXES = (READY, READY_KIND, EXPIRY)
KINDS = ("org.example:proxy", "org.example:render", "org.example:transcode")
TOOL = ToolIdentity("plan-test", "1")
_CONTROL = ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE")
_INDEX = re.compile(r"USING (?:COVERING )?INDEX (\w+)")


class PlanRecorder:
    """A stand-in connection: explains every statement instead of running it (returns no rows)."""

    in_transaction = False

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.plans: list[tuple[str, list[str]]] = []

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Cursor:
        if sql.split(None, 1)[0].upper() not in _CONTROL:
            details = [row[3] for row in self.conn.execute(f"EXPLAIN QUERY PLAN {sql}", params)]
            self.plans.append((sql, details))
        return self.conn.execute("SELECT 1 WHERE 0")

    def only_plan(self) -> list[str]:
        assert len(self.plans) == 1, [sql for sql, _ in self.plans]
        return self.plans[0][1]


def _read_only(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)


def _populate(production: Production, media: Callable[..., Path]) -> None:
    """Jobs of three kinds in every state, mostly finished (the shape of a real history)."""
    with production.edit() as tx:
        asset = tx.create_asset("A001")
        original = tx.add_representation(asset, RepresentationKind.ORIGINAL, media("A001.mov"))
        jobs = [
            tx.request_job(JobRequest(KINDS[i % 3], (original,), asset, RepresentationKind.PROXY))
            for i in range(600)
        ]
        tx.commit()
    with production.edit() as tx:
        for i, job_id in enumerate(jobs[:540]):
            if i % 10 == 0:
                tx.fail_job_lease(tx.claim_job_lease(job_id, TOOL, timedelta(minutes=5)), "failed on purpose")
            else:
                tx.cancel_job(job_id)
        for job_id in jobs[540:560]:
            tx.claim_job_lease(job_id, TOOL, timedelta(minutes=5), agent=AgentIdentity("node-1"))
        tx.commit()


@pytest.fixture(params=["fresh", "analyzed"])
def plan_db(
    request: pytest.FixtureRequest,
    production: Production,
    media: Callable[..., Path],
    tmp_path: Path,
) -> Iterator[tuple[sqlite3.Connection, Path]]:
    """A read-only connection to a production with every index (and, for "analyzed", to a
    populated scratch copy with planner statistics)."""
    path = production.path
    if request.param == "analyzed":
        _populate(production, media)
        production.close()  # checkpoints the WAL into the file we copy
        path = tmp_path / "analyzed-copy.pproj"
        shutil.copyfile(production.path, path)
        scratch = sqlite3.connect(path)
        try:
            scratch.execute("ANALYZE")
            scratch.commit()
            assert scratch.execute("SELECT count(*) FROM sqlite_stat1 WHERE tbl = 'jobs'").fetchone()[0] > 0
        finally:
            scratch.close()
    conn = _read_only(path)
    try:
        yield conn, path
    finally:
        conn.close()


def _indexes(details: list[str], table: str) -> list[str]:
    """Index names used to reach ``table`` (alias), in plan order; fails on a bare table scan."""
    used = []
    for line in details:
        if re.match(rf"(SCAN|SEARCH) {table}\b", line):
            if "PRIMARY KEY" in line:  # the rowid, or a WITHOUT ROWID table's key
                used.append("primary key")
                continue
            match = _INDEX.search(line)
            used.append(match.group(1) if match else "table scan")
    return used


def test_every_list_and_claim_index_exists(plan_db: tuple[sqlite3.Connection, Path]) -> None:
    conn, _ = plan_db
    names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert set(LIST_INDEXES + CLAIM_INDEXES) <= names
    table = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'jobs'").fetchone()[0]
    assert "WITHOUT ROWID" in table  # id order is the table's own order (request order)


@pytest.mark.parametrize(
    ("kinds", "ready_index"),
    [
        (None, [READY]),
        ([KINDS[0]], [READY_KIND]),
        (sorted(KINDS[:2]), [READY_KIND, READY_KIND]),
    ],
    ids=["no-kinds", "one-kind", "two-kinds"],
)
def test_claim_next_uses_the_claim_indexes_without_sorting(
    plan_db: tuple[sqlite3.Connection, Path], kinds: list[str] | None, ready_index: list[str]
) -> None:
    conn, path = plan_db
    recorder = PlanRecorder(conn)
    session = WriteSession(recorder, path, busy_timeout=1.0)  # type: ignore[arg-type]
    assert session.claim_next(kinds, b"\x01" * 32, TOOL, None, None, 1_000, 2_000) is None
    details = recorder.only_plan()
    # One small sort picks the best of the candidates (one row per probe, at most kinds + 1);
    # no probe ever sorts ready rows.
    assert len([line for line in details if "TEMP B-TREE" in line]) <= 1, details
    used = _indexes(details, "jobs")
    # the outer UPDATE finds its row by key; each probe reads its index in claim order
    assert used == ["primary key", *ready_index, EXPIRY], details
    probes = [line for line in details if re.match(r"(SCAN|SEARCH) jobs\b", line)][1:]
    if kinds is not None:
        assert all(line.startswith("SEARCH jobs ") for line in probes), details
        for line in probes[:-1]:
            assert "(kind=?" in line, details  # a seek to the kind's requested jobs, not a filter
    else:  # the partial index holds only requested jobs, already in claim order: LIMIT 1 stops at once
        assert probes[0].startswith(
            ("SCAN jobs USING INDEX jobs_ready", "SEARCH jobs USING INDEX jobs_ready")
        ), details
    assert "claim_expires_at<?" in probes[-1], details  # the expired claims: a seek on the expiry


def test_claim_by_id_uses_the_id_index(plan_db: tuple[sqlite3.Connection, Path]) -> None:
    conn, path = plan_db
    recorder = PlanRecorder(conn)
    session = WriteSession(recorder, path, busy_timeout=1.0)  # type: ignore[arg-type]
    session.claim(b"\x02" * 16, b"\x01" * 32, TOOL, None, None, 1_000, 2_000)
    details = recorder.only_plan()
    assert not [line for line in details if "TEMP B-TREE" in line], details
    assert _indexes(details, "jobs") == ["primary key"], details
    assert all(line.startswith("SEARCH jobs") for line in details if re.match(r"(SCAN|SEARCH) jobs\b", line))


@pytest.mark.parametrize("newest_first", [False, True], ids=["oldest-first", "newest-first"])
@pytest.mark.parametrize("after", [None, b"\x7f" * 16], ids=["first-page", "next-page"])
@pytest.mark.parametrize(
    ("state", "kind", "expected"),
    [
        (None, None, None),
        (JobState.FAILED, None, "jobs_by_state"),
        (None, KINDS[1], "jobs_by_kind"),
        (JobState.REQUESTED, KINDS[1], "jobs_by_state_kind"),
    ],
    ids=["no-filter", "state", "kind", "state-and-kind"],
)
def test_job_pages_use_an_index_without_sorting(
    plan_db: tuple[sqlite3.Connection, Path],
    state: JobState | None,
    kind: str | None,
    expected: str | None,
    after: bytes | None,
    newest_first: bool,
) -> None:
    conn, path = plan_db
    recorder = PlanRecorder(conn)
    reader = Reader(recorder, path)  # type: ignore[arg-type]
    assert reader.jobs(state, kind, after, 51, descending=newest_first) == []
    details = recorder.only_plan()
    assert not [line for line in details if "TEMP B-TREE" in line], details
    used = _indexes(details, "j")
    assert len(used) == 1, details
    if expected is not None:
        assert used == [expected], details
        assert details[0].startswith("SEARCH j "), details  # a seek on the filter, never a scan
    else:
        # the table (or an id index) in id order: with no sort, LIMIT stops after one page
        assert used[0] in ("table scan", "primary key") or used[0].startswith("sqlite_autoindex"), details
    if after is not None:  # the keyset bound is part of the seek, never a filter on a scan
        assert details[0].startswith("SEARCH j ") and ("id<?" in details[0] or "id>?" in details[0]), details
