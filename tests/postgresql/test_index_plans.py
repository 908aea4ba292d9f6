"""Edits reach their rows through indexes, whatever the planner statistics say (PostgreSQL).

The write connection plans each statement once (generic plans). A plan made while a table
was small scans it whole, and kept doing so as the table grew: a completion's input check
read every fingerprint, an activity's input check every representation, publishing every
activity, and a claim every claimable job. Here the statistics stay those of the empty
production (analyzed empty, autovacuum off) while a worker drains a queue: not one row of the
big tables may be read by a sequential scan.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlsplit, urlunsplit

import psycopg
from psycopg import sql

from postproject import ActivitySpec, JobRequest, JobState, Production, RepresentationKind, ToolIdentity

TOOL = ToolIdentity("index-plans", "1")
BIG = (
    "jobs",
    "job_attempts",
    "representations",
    "representation_fingerprints",
    "activities",
    "activity_edges",
    "metadata",
    "revisions",
    "revision_events",
)
JOBS = 150


def _database_and_schema(uri: str) -> tuple[str, str]:
    parts = urlsplit(uri)
    schema = parse_qs(parts.query)["production"][0]
    return urlunsplit(parts._replace(query="")), schema


def _settled(database: str, schema: str) -> dict[str, int]:
    """Rows read by sequential scans of the big tables, once the production's sessions have
    ended (each sends its statistics as it exits): polls until none is left and two reads agree."""
    last: dict[str, int] | None = None
    with psycopg.connect(database, autocommit=True) as conn:
        for _ in range(5000):
            conn.execute("SELECT pg_stat_clear_snapshot()")
            alive = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND application_name LIKE 'postproject%%' AND pid <> pg_backend_pid()"
            ).fetchone()
            rows = conn.execute(
                "SELECT relname, seq_tup_read FROM pg_stat_user_tables WHERE schemaname = %s", (schema,)
            ).fetchall()
            counts = {name: reads for name, reads in rows if name in BIG}
            if alive == (0,) and counts == last:
                return counts
            last = counts
    raise AssertionError("the production's sessions never ended")


def test_a_worker_draining_a_queue_reads_no_table_sequentially(postgres_uri: str, tmp_path: Path) -> None:
    database, schema = _database_and_schema(postgres_uri)
    source = tmp_path / "source.mov"
    source.write_bytes(b"source")
    with Production.create(postgres_uri):
        pass
    with psycopg.connect(database, autocommit=True) as conn:  # statistics of the empty production, kept
        for table in (*BIG, "job_clock"):
            name = sql.Identifier(schema, table)
            conn.execute(sql.SQL("ANALYZE {}").format(name))
            conn.execute(sql.SQL("ALTER TABLE {} SET (autovacuum_enabled = false)").format(name))
    with Production.open(postgres_uri) as production, production.edit() as tx:
        asset = tx.create_asset("A")
        original = tx.add_representation(asset, RepresentationKind.ORIGINAL, source)
        for _ in range(JOBS):
            tx.request_job(JobRequest("org.example:plans", (original,), asset, RepresentationKind.PROXY))
        tx.commit()
    before = _settled(database, schema)

    with Production.open(postgres_uri) as production:
        for number in range(JOBS):
            with production.edit() as tx:
                lease = tx.claim_next_job_lease(TOOL, timedelta(minutes=5))
                tx.commit()
            assert lease is not None
            output = tmp_path / f"{number}.out"
            output.write_bytes(b"x")
            with production.edit() as tx:
                rep = tx.add_representation(asset, RepresentationKind.PROXY, output)
                activity = tx.create_activity(
                    ActivitySpec("org.example:plans", inputs=(original,), outputs=(rep,), tool=TOOL)
                )
                tx.complete_job_lease(lease, rep, activity)
                tx.commit()
        assert production.job_counts()[JobState.SUCCEEDED] == JOBS
    after = _settled(database, schema)

    read = {table: after[table] - before.get(table, 0) for table in after}
    assert {table: rows for table, rows in read.items() if rows} == {}
