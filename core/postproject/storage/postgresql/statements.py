"""PostgreSQL's own statements of an edit, where its plan beats the shared one: each writes what
SQLite writes in several statements in one (a round trip each), checks what it refers to
itself, or locks what concurrent edits could change. :mod:`.writes` runs them; the claims are
:mod:`.claims`.
"""

from __future__ import annotations

import functools

from postproject.model.jobs import AttemptOutcome
from postproject.storage.postgresql.types import DIALECT
from postproject.storage.sql.leases import CLAIMED, CLEAR_CLAIM, REQUESTED

LOST = AttemptOutcome.LOST.code

# A job and its dependency rows, written only when everything it refers to exists.
INSERT_JOB = (
    "WITH w AS (INSERT INTO jobs (id, kind, inputs, output_asset_id, output_kind, target_root, state, "
    "requested_at, requested_sequence, updated_sequence, priority, not_before, available_at, "
    "max_attempts, idempotency_key, request_digest, dependencies, waiting, regenerates) "
    f"SELECT %(id)s, %(kind)s, %(inputs)s, %(asset)s, %(output_kind)s, %(root)s, {REQUESTED}, %(now)s, %(seq)s, "
    "%(seq)s, %(priority)s, %(not_before)s, %(available)s, %(max_attempts)s, %(key)s, %(digest)s, "
    "%(dependencies)s, %(waiting)s, %(regenerates)s "
    "WHERE (SELECT count(*) FROM representations WHERE id = ANY(%(reps)s::uuid[])) = %(count)s "
    "AND EXISTS (SELECT 1 FROM assets WHERE id = %(asset)s) "
    "AND (%(root)s::text IS NULL OR EXISTS (SELECT 1 FROM media_roots WHERE name = %(root)s)) "
    "AND (%(regenerates)s::uuid IS NULL OR EXISTS (SELECT 1 FROM representations WHERE id = %(regenerates)s)) "
    "RETURNING id), d AS (INSERT INTO job_dependencies (job_id, upstream_id, binds_output) "
    "SELECT w.id, u.upstream, u.binds FROM w, unnest(%(upstreams)s::uuid[], %(binds)s::smallint[]) "
    "AS u (upstream, binds)) SELECT count(*) FROM w"
)
# A representation and its first fingerprint, when its asset (and root) exist; ``w``: the fingerprint.
INSERT_REPRESENTATION = (
    "WITH r AS (INSERT INTO representations (id, asset_id, kind, path, root_name, size, mtime, "
    "created_at, created_sequence) SELECT %(id)s, %(asset)s, %(kind)s, %(path)s, %(root)s, %(size)s, "
    "%(mtime)s, %(now)s, %(seq)s WHERE EXISTS (SELECT 1 FROM assets WHERE id = %(asset)s) AND "
    "(%(root)s::text IS NULL OR EXISTS (SELECT 1 FROM media_roots WHERE name = %(root)s)) RETURNING id), "
    "w AS (INSERT INTO representation_fingerprints (representation_id, algorithm, version, value, "
    "recorded_sequence) SELECT id, %(algorithm)s, %(version)s, %(value)s, %(seq)s FROM r RETURNING 1)"
)
# An activity and its edges, when every edge's representation exists; ``w``: the activity.
INSERT_ACTIVITY = (
    "WITH a AS (INSERT INTO activities (id, kind, tool_name, tool_version, tool_uri, agent_name, "
    "started_at, finished_at, created_sequence) SELECT %(id)s, %(kind)s, %(tool_name)s, %(tool_version)s, "
    "%(tool_uri)s, %(agent)s, %(started)s, %(finished)s, %(seq)s "
    "WHERE (SELECT count(*) FROM representations WHERE id = ANY(%(reps)s::uuid[])) = %(count)s RETURNING id), "
    "e AS (INSERT INTO activity_edges (activity_id, direction, representation_id, role) "
    "SELECT a.id, d, r, role FROM a, unnest(%(directions)s::smallint[], %(edges)s::uuid[], "
    "%(roles)s::text[]) AS x (d, r, role)), w AS (SELECT id FROM a)"
)
# The same, sent at commit after pp_number (the revision's number known): each edge carries its
# representation's fingerprints as they are now, as pp_publish records them for an activity
# written before commit (the same JSON: [[algorithm, version, "HEX"], ...] by algorithm, version).
INSERT_ACTIVITY_LATE = (
    "WITH a AS (INSERT INTO activities (id, kind, tool_name, tool_version, tool_uri, agent_name, "
    "started_at, finished_at, created_sequence) SELECT %(id)s, %(kind)s, %(tool_name)s, %(tool_version)s, "
    "%(tool_uri)s, %(agent)s, %(started)s, %(finished)s, %(seq)s "
    "WHERE (SELECT count(*) FROM representations WHERE id = ANY(%(reps)s::uuid[])) = %(count)s RETURNING id), "
    "e AS (INSERT INTO activity_edges (activity_id, direction, representation_id, role, snapshot_sequence, "
    "snapshot_fingerprints) SELECT a.id, x.d, x.r, x.role, %(seq)s, (SELECT coalesce('[' || string_agg("
    "format('[%%s,%%s,\"%%s\"]', to_json(f.algorithm), f.version, upper(encode(f.value, 'hex'))), ',' "
    "ORDER BY f.algorithm, f.version) || ']', '[]')::json FROM representation_fingerprints f "
    "WHERE f.representation_id = x.r) FROM a, unnest(%(directions)s::smallint[], %(edges)s::uuid[], "
    "%(roles)s::text[]) AS x (d, r, role)), w AS (SELECT id FROM a)"
)
# A job's stored claim, its row locked until the edit ends, and, in the same round trip, the
# first input fingerprint recorded after the claim (what a completion asks next): each input's
# fingerprints probed by key, never a scan of every fingerprint.
LEASE_ROW = (
    "SELECT j.state, j.claim_secret_hash, j.claim_expires_at, j.claim_sequence, j.output_asset_id, "
    "j.output_kind, j.inputs, j.attempts, j.max_attempts, j.claim_attempt, c.representation_id, "
    "c.recorded_sequence, c.id, j.regenerates, CASE WHEN j.dependencies > 0 THEN ARRAY(SELECT "
    "resolved_id FROM job_dependencies WHERE job_id = j.id AND resolved_id IS NOT NULL) END "
    "FROM jobs j LEFT JOIN LATERAL (SELECT f.representation_id, f.recorded_sequence, "
    "(SELECT r.id FROM revisions r WHERE r.sequence = f.recorded_sequence) "
    "FROM (SELECT encode(substring(j.inputs FROM g * 16 + 1 FOR 16), 'hex')::uuid AS rep "
    "FROM generate_series(0, length(j.inputs) / 16 - 1) g UNION SELECT resolved_id FROM "
    "job_dependencies WHERE job_id = j.id AND resolved_id IS NOT NULL) i CROSS JOIN LATERAL "
    "(SELECT f.representation_id, f.recorded_sequence FROM representation_fingerprints f "
    "WHERE f.representation_id = i.rep AND f.recorded_sequence > j.claim_sequence "
    "ORDER BY f.recorded_sequence LIMIT 1) f "
    "ORDER BY f.recorded_sequence LIMIT 1) c ON true "
    "WHERE j.id = %s FOR NO KEY UPDATE OF j"
)
RENEW = (
    "UPDATE jobs SET claim_expires_at = %(expires)s, updated_sequence = %(seq)s WHERE id = %(id)s "
    f"AND state = {CLAIMED} AND claim_secret_hash = %(secret)s AND claim_expires_at > %(now)s "
    "AND %(expires)s > claim_expires_at"
)
# A success lowers each dependent's waiting count in the same statement.
_RELEASE_DEPENDENTS = (
    ", x AS (UPDATE jobs SET waiting = waiting - 1 WHERE id IN "
    "(SELECT job_id FROM job_dependencies WHERE upstream_id IN (SELECT id FROM w)))"
)


@functools.lru_cache(maxsize=64)
def end_claim(set_job: str, where: str, succeeds: bool) -> str:
    """A lease transition as one statement (``w``: the job it updated): the job's guarded update
    that clears its claim, the end of its attempt and (``succeeds``) the dependents' counts."""
    return DIALECT.sql(
        f"WITH w AS (UPDATE jobs SET {set_job}, {CLEAR_CLAIM}, updated_sequence = :seq "
        f"WHERE id = :id AND {where} RETURNING id), a AS (UPDATE job_attempts SET outcome = :outcome, "
        "ended_at = :now, diagnostic = :diagnostic, stopped_at = CAST(:stopped_at AS BIGINT) "
        "WHERE job_id IN (SELECT id FROM w) AND outcome IS NULL)"
    ) + (_RELEASE_DEPENDENTS if succeeds else "")


@functools.lru_cache(maxsize=64)
def stop_claim(set_job: str, where: str) -> str:
    """A cancel or requeue as one statement: the job's row is locked first, so the attempt ends
    by the claim the update replaced (``stop_by`` = its expiry while live, else lost)."""
    return DIALECT.sql(
        "WITH o AS (SELECT id, state AS old_state, claim_expires_at AS old_expires FROM jobs "
        "WHERE id = :id FOR UPDATE), "
        f"w AS (UPDATE jobs j SET {set_job}, {CLEAR_CLAIM}, updated_sequence = :seq FROM o "
        f"WHERE j.id = o.id AND j.{where} RETURNING j.id, o.old_state, o.old_expires), "
        "a AS (UPDATE job_attempts t SET ended_at = :now, diagnostic = NULL, "
        f"stop_by = CASE WHEN w.old_state = {CLAIMED} AND w.old_expires > :now THEN w.old_expires END, "
        f"outcome = CASE WHEN w.old_state = {CLAIMED} AND w.old_expires > :now THEN CAST(:outcome AS SMALLINT) "
        f"ELSE {LOST} END FROM w WHERE t.job_id = w.id AND t.outcome IS NULL) "
        "SELECT count(*) FROM w"
    )


# Attempts whose holder did not confirm its stop by stop_by, ended lost (soonest deadline first).
END_MISSED_STOPS = (
    "WITH due AS (SELECT job_id, number, stop_by FROM job_attempts WHERE stop_by IS NOT NULL "
    f"AND stopped_at IS NULL AND outcome <> {LOST} "
    "AND stop_by <= %(now)s ORDER BY stop_by, job_id, number LIMIT %(limit)s FOR UPDATE), "
    f"ended AS (UPDATE job_attempts a SET outcome = {LOST} FROM due "
    "WHERE a.job_id = due.job_id AND a.number = due.number AND a.stop_by IS NOT NULL "
    f"AND a.stopped_at IS NULL AND a.outcome <> {LOST} RETURNING a.job_id, a.number, due.stop_by) "
    "SELECT job_id, number FROM ended ORDER BY stop_by, job_id, number"
)
CREATES_CYCLE = (
    "WITH RECURSIVE upstream(id) AS (SELECT unnest(%s::uuid[]) UNION "
    "SELECT i.representation_id FROM upstream u "
    "JOIN activity_edges o ON o.representation_id = u.id AND o.direction = 1 "
    "JOIN activity_edges i ON i.activity_id = o.activity_id AND i.direction = 0) "
    "SELECT 1 FROM upstream WHERE id = ANY(%s::uuid[]) LIMIT 1"
)
# The numbering lock and the revision's number, before the statements that write it (0009).
NUMBER = "SELECT seq, locked_at FROM pp_number()"
# The revision-numbering lock (pp_publish takes it again: a transaction's advisory locks nest).
NUMBERING_LOCK = (
    "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint "
    "FROM (SELECT pg_advisory_xact_lock(1347441202, hashtext(current_schema()))) AS locked"
)
CYCLE = "the activity would create a provenance cycle (an output is upstream of an input)"
# Concurrent edits may each add one edge of a cycle; each passed ``creates_cycle`` before the
# other committed. Under the numbering lock an edit sees every edit published before it, so
# this check at commit finds the cycle the second one would close (PPC01 aborts the edit).
# Sent only when an output of the edit's activities existed before it (see _may_close_cycle;
# never for a completion, whose output is new); it walks only when such an output is an input.
NO_CYCLE = (
    "WITH RECURSIVE mine AS (SELECT unnest(%(activities)s::uuid[]) AS activity_id), "
    "outs AS (SELECT e.activity_id, e.representation_id FROM activity_edges e JOIN mine USING (activity_id) "
    "WHERE e.direction = 1), "
    "consumed AS (SELECT 1 FROM outs o JOIN activity_edges i ON i.representation_id = o.representation_id "
    "AND i.direction = 0 LIMIT 1), "
    "up (activity_id, id) AS (SELECT e.activity_id, e.representation_id FROM activity_edges e "
    "JOIN mine USING (activity_id) WHERE e.direction = 0 AND EXISTS (SELECT 1 FROM consumed) "
    "UNION SELECT u.activity_id, i.representation_id FROM up u "
    "JOIN activity_edges o ON o.representation_id = u.id AND o.direction = 1 "
    "JOIN activity_edges i ON i.activity_id = o.activity_id AND i.direction = 0) "
    "SELECT pp_expect((SELECT count(*) FROM up JOIN outs ON outs.activity_id = up.activity_id "
    "AND outs.representation_id = up.id), 0, 'PPC01', %(message)s)"
)
# The events' kinds and payloads go as binary text[] (no quoting and escaping of each JSON text).
PUBLISH = (
    "SELECT * FROM pp_publish(%s, %s, %s, %s, %s, %s, %s, %b, %s, %b, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
# A commit numbered first whose queued statements are all inserts of new rows: pp_number, the
# rows (one jsonb), pp_publish's arguments after them, in one call (0012).
COMMIT_ROWS = "SELECT * FROM pp_commit(%s::jsonb, " + PUBLISH.split("(", 1)[1]
