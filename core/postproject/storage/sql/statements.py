"""Named statements of an edit, the same on both engines (:class:`.writes.SqlWrites` runs them).

In SQLite's placeholders (:meth:`.dialect.Dialect.sql` gives PostgreSQL its own). A ``{hint}``
is the dialect's ``INDEXED BY`` (:meth:`.dialect.Dialect.indexed_by`), a ``{match}`` an id list
(:meth:`.dialect.Dialect.in_ids`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from postproject.model.jobs import AttemptOutcome, JobRequest
from postproject.model.lifecycle import Action
from postproject.storage import rows
from postproject.storage.sql.leases import (
    AWAITING_STOP,
    CLAIMABLE,
    CLAIMED,
    HELD,
    LOST,
    RETURNING_CLAIM,
    SET_CLAIM,
    codes,
)

SUCCEEDED = AttemptOutcome.SUCCEEDED.code

# --- setup, files, provenance and metadata -------------------------------------------------

INSERT_ASSET = "INSERT INTO assets (id, name, created_at, created_sequence) VALUES (?, ?, ?, ?)"
LOCATION = "SELECT path, root_name FROM representations WHERE id = ?"
UPDATE_FILE_FACTS = "UPDATE representations SET size = ?, mtime = ? WHERE id = ?"
# A fingerprint, unless the same value is current (then nothing is written and nothing returned).
SET_FINGERPRINT = (
    "INSERT INTO representation_fingerprints AS f (representation_id, algorithm, version, value, "
    "recorded_sequence) VALUES (?, ?, ?, ?, ?) ON CONFLICT (representation_id, algorithm, version) "
    "DO UPDATE SET value = excluded.value, recorded_sequence = excluded.recorded_sequence "
    "WHERE f.value <> excluded.value RETURNING 1"
)
INSERT_METADATA = (
    "INSERT INTO metadata (target_kind, target_id, vocabulary, property, value, created_sequence) "
    "VALUES (?, ?, ?, ?, ?, ?)"
)
ACTIVITY_FACTS = (
    "SELECT a.created_sequence, e.direction, e.representation_id FROM activities a "
    "LEFT JOIN activity_edges e ON e.activity_id = a.id WHERE a.id = ? ORDER BY e.direction, e.representation_id"
)
OUTPUT_FACTS = "SELECT asset_id, kind, created_sequence FROM representations WHERE id = ?"
JOB = f"SELECT {rows.JOB_COLUMNS} FROM jobs j WHERE j.id = ?"
DEPENDENCY_ROWS = (
    f"SELECT {rows.DEPENDENCY_COLUMNS} FROM job_dependencies d JOIN jobs u ON u.id = d.upstream_id "
    "WHERE d.job_id = ? ORDER BY d.upstream_id"
)
METADATA = (
    "SELECT vocabulary, property, value FROM metadata WHERE target_kind = ? AND target_id = ? ORDER BY id"
)

# --- workers -------------------------------------------------------------------------------

REGISTER_WORKER = (
    "INSERT INTO workers (id, name, host, capacity, kinds, session, registered_at, last_seen) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET host = excluded.host, "
    "capacity = excluded.capacity, kinds = excluded.kinds, session = excluded.session, "
    "registered_at = excluded.registered_at, last_seen = excluded.last_seen RETURNING id"
)
# last_seen never moves back; a replaced session is fenced (no row).
HEARTBEAT = (
    "UPDATE workers SET last_seen = CASE WHEN last_seen > :now THEN last_seen ELSE :now END "
    "WHERE id = :id AND session = :session"
)
WORKER_FACTS = (
    "SELECT session, last_seen, capacity, kinds, (SELECT count(*) FROM jobs{hint} "
    "WHERE claim_worker_id = w.id AND claim_expires_at > ?) FROM workers w WHERE id = ?"
)

# --- jobs ----------------------------------------------------------------------------------

JOB_STATES = "SELECT id, state FROM jobs WHERE {match}"
MOVE_DEPENDENTS = "UPDATE job_dependencies SET upstream_id = ? WHERE upstream_id = ?"
# The newest representation of rep's chain of replacements gets the replacement.
SUPERSEDE = (
    "WITH RECURSIVE chain (id, successor, depth) AS (SELECT id, superseded_by, 0 FROM representations "
    "WHERE id = :rep UNION ALL SELECT r.id, r.superseded_by, c.depth + 1 FROM chain c "
    "JOIN representations r ON r.id = c.successor WHERE c.depth < 10000) "
    "UPDATE representations SET superseded_by = :replacement WHERE id = "
    "(SELECT id FROM chain WHERE successor IS NULL) AND id <> :replacement RETURNING id"
)


def job_values(
    bind: Callable[[bytes], Any],
    sequence: int,
    job_id: bytes,
    request: JobRequest,
    now: int,
    not_before: int | None,
    digest: bytes | None,
    waiting: int,
) -> dict[str, Any]:
    """A requested job's columns as parameters (``bind``: the dialect's id binding)."""
    return {
        "id": bind(job_id),
        "kind": request.kind,
        "inputs": b"".join(rep.bytes for rep in request.representation_inputs),
        "asset": bind(request.output_asset_id.bytes),
        "output_kind": request.output_representation_kind.code,
        "root": request.target_root,
        "now": now,
        "seq": sequence,
        "priority": request.priority,
        "not_before": not_before,
        "available": max(now, not_before) if not_before is not None else now,
        "max_attempts": request.max_attempts,
        "key": request.idempotency_key,
        "digest": digest,
        "dependencies": len(request.dependencies),
        "waiting": waiting,
        "regenerates": bind(request.regenerates.bytes) if request.regenerates is not None else None,
    }


IDEMPOTENT_JOB = "SELECT id, request_digest FROM jobs WHERE idempotency_key = ?"
COMPLETED_BY = (
    "SELECT j.state, j.completion_representation_id, (SELECT a.secret_hash FROM job_attempts a "
    f"WHERE a.job_id = j.id AND a.outcome = {SUCCEEDED}) FROM jobs j WHERE j.id = ?"
)
# The first of some inputs whose fingerprint was recorded after a sequence: (rep, seq, revision id).
CHANGED_INPUT = (
    "SELECT f.representation_id, f.recorded_sequence, r.id FROM representation_fingerprints f "
    "JOIN revisions r ON r.sequence = f.recorded_sequence WHERE {match} "
    "AND f.recorded_sequence > ? ORDER BY f.recorded_sequence LIMIT 1"
)
CLAIM = f"UPDATE jobs SET {SET_CLAIM} WHERE id = :id AND {CLAIMABLE} {RETURNING_CLAIM}"
SET_PRIORITY = f"UPDATE jobs SET priority = ?, updated_sequence = ? WHERE id = ? AND state IN ({codes(Action.PRIORITIZE)})"
# Claims by their lease's expiry, soonest first (the loss sweep's facts).
CLAIMS_EXPIRING = (
    "SELECT j.id, j.claim_attempt, j.attempts, j.max_attempts, "
    "(SELECT w.name FROM workers w WHERE w.id = j.claim_worker_id), j.claim_agent_name, "
    f"j.claim_expires_at FROM jobs j{{hint}} WHERE j.state = {CLAIMED} AND j.claim_expires_at <= ? "
    "ORDER BY j.claim_expires_at, j.id LIMIT ?"
)

# --- progress, stop confirmations and attempt logs (stored state) ----------------------------

# The running attempt's latest progress, while the secret holds the job's unexpired claim; the
# signal moves (a trigger bumps the progress token) when the last one is :every old or never was.
REPORT_PROGRESS = (
    "UPDATE job_attempts SET "
    "progress_fraction = coalesce(CAST(:fraction AS DOUBLE PRECISION), progress_fraction), "
    "progress_stage = coalesce(CAST(:stage AS TEXT), progress_stage), "
    "progress_message = coalesce(CAST(:message AS TEXT), progress_message), progress_at = :now, "
    "progress_signalled_at = CASE WHEN progress_signalled_at IS NULL OR progress_signalled_at > :now "
    "OR :now - progress_signalled_at >= :every THEN :now ELSE progress_signalled_at END "
    "WHERE job_id = :id AND outcome IS NULL AND number = (SELECT claim_attempt FROM jobs "
    f"WHERE id = :id AND {HELD}) "
    "RETURNING number, progress_signalled_at = :now, (SELECT claim_expires_at FROM jobs WHERE id = :id)"
)
ATTEMPT_FACTS = (
    "SELECT number, outcome, stop_by, stopped_at FROM job_attempts WHERE job_id = ? AND secret_hash = ?"
)
# Before stop_by the stop is recorded (the outcome stays); at or after it the attempt is lost.
CONFIRM_STOP = (
    "UPDATE job_attempts SET stopped_at = CASE WHEN :now < stop_by THEN CAST(:now AS BIGINT) END, "
    f"outcome = CASE WHEN :now < stop_by THEN outcome ELSE {LOST} END "
    f"WHERE job_id = :id AND secret_hash = :secret AND {AWAITING_STOP} RETURNING number, outcome"
)
# Where the attempt's full log lives and/or its tail; a NULL keeps what was recorded.
RECORD_ATTEMPT_LOG = (
    "INSERT INTO job_attempt_logs AS l (job_id, number, root_name, path, tail, tail_at) "
    "SELECT job_id, number, CAST(:root AS TEXT), CAST(:path AS TEXT), CAST(:tail AS TEXT), "
    "CASE WHEN CAST(:tail AS TEXT) IS NOT NULL THEN CAST(:now AS BIGINT) END "
    "FROM job_attempts WHERE job_id = :id AND secret_hash = :secret "
    "ON CONFLICT (job_id, number) DO UPDATE SET "
    "root_name = CASE WHEN excluded.path IS NOT NULL THEN excluded.root_name ELSE l.root_name END, "
    "path = coalesce(excluded.path, l.path), tail = coalesce(excluded.tail, l.tail), "
    "tail_at = coalesce(excluded.tail_at, l.tail_at) RETURNING number"
)
