"""The schema's floor on PostgreSQL: a worker's job written by the server alone.

What any client of today's schema must make the server do per job, at its cheapest: each row a
job writes is written once, already carrying its final revision number (no provisional number to
renumber), by one PL/pgSQL call per transaction (one round trip, plans kept by the server), from a
client with no core at all (it only generates ids and hashes the lease secret). The rows are the
API's, in the same tables with the same indexes, triggers and foreign keys: the claim (the job
row; its attempt row, by trigger), the completion (output, fingerprint, activity, its two edges
with their fingerprint snapshots, the metadata copy, the job row, the attempt's end), a revision
and its events for each, the job counts (deferred trigger) and the notification; the claim takes
its job with ``SKIP LOCKED`` as the API's does; the completion checks the lease on the locked job
row and reads the job's metadata on the server. Nothing is skipped that the API records.

Not a product path: the functions live only in the benchmark's throwaway production and the
numbering lock is taken before the writes (the API takes it at commit), which is the cheapest
order for one worker. Its figures bound from above what any change to the core's Python, its
statements or its round trips can reach without changing what a job records.
"""

from __future__ import annotations

import hashlib
import os
import resource
import time
import traceback
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

import baselines
import pg_peers
from postproject.storage.postgresql.localserver import LocalServer

_LOCK = "pg_advisory_xact_lock(1347441202, hashtext(current_schema()))"
_NEXT = "SELECT coalesce((SELECT sequence FROM revisions ORDER BY sequence DESC LIMIT 1), 0) + 1 INTO seq"

FUNCTIONS = f"""
CREATE FUNCTION floor_claim(p_now bigint, p_secret bytea, p_expires bigint, p_tool text,
                            p_version text, p_agent text, p_revision uuid)
RETURNS uuid LANGUAGE plpgsql AS $$
DECLARE
    seq bigint;
    claimed uuid;
BEGIN
    PERFORM {_LOCK};
    {_NEXT};
    UPDATE jobs j SET state = 2, claim_secret_hash = p_secret, claim_tool_name = p_tool,
        claim_tool_version = p_version, claim_agent_name = p_agent, claimed_at = p_now,
        claim_expires_at = p_expires, claim_sequence = seq, claim_attempt = attempts + 1,
        attempts = attempts + 1, updated_sequence = seq
    WHERE j.id = (SELECT id FROM jobs WHERE state = 1 AND waiting = 0
                  AND (not_before IS NULL OR not_before <= p_now)
                  ORDER BY priority DESC, available_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
    RETURNING j.id INTO claimed;
    IF claimed IS NULL THEN
        RETURN NULL;
    END IF;
    INSERT INTO revisions (sequence, id, committed_at, clock_mark) VALUES (seq, p_revision, p_now, p_now);
    INSERT INTO revision_events (sequence, position, kind, subject, payload)
    VALUES (seq, 0, 'job_claimed', claimed, json_build_object('job_id', claimed, 'attempt', '1'));
    PERFORM pg_notify('postproject', current_schema() || ' ' || seq || ' ' || p_now);
    RETURN claimed;
END
$$;

CREATE FUNCTION floor_complete(p_job uuid, p_secret bytea, p_now bigint, p_representation uuid,
                               p_activity uuid, p_revision uuid, p_path text, p_fingerprint bytea,
                               p_tool text, p_version text, p_agent text)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    seq bigint;
    j record;
    source uuid;
BEGIN
    SELECT state, claim_secret_hash, claim_expires_at, output_asset_id, output_kind, inputs, kind
    INTO j FROM jobs WHERE id = p_job FOR NO KEY UPDATE;
    IF j.state <> 2 OR j.claim_secret_hash <> p_secret OR j.claim_expires_at <= p_now THEN
        RAISE EXCEPTION 'job % changed under this lease', p_job;
    END IF;
    source := encode(substring(j.inputs FROM 1 FOR 16), 'hex')::uuid;
    PERFORM {_LOCK};
    {_NEXT};
    INSERT INTO representations (id, asset_id, kind, path, size, mtime, created_at, created_sequence)
    VALUES (p_representation, j.output_asset_id, j.output_kind, p_path, 1, p_now, p_now, seq);
    INSERT INTO representation_fingerprints (representation_id, algorithm, version, value, recorded_sequence)
    VALUES (p_representation, 'sha256', 1, p_fingerprint, seq);
    INSERT INTO activities (id, kind, tool_name, tool_version, agent_name, created_sequence)
    VALUES (p_activity, j.kind, p_tool, p_version, p_agent, seq);
    INSERT INTO activity_edges (activity_id, direction, representation_id, role, snapshot_sequence,
                                snapshot_fingerprints)
    SELECT p_activity, e.direction, e.representation, '', seq, (
        SELECT coalesce('[' || string_agg(format('[%s,%s,"%s"]', to_json(x.algorithm), x.version,
                                                 upper(encode(x.value, 'hex'))), ','
                                          ORDER BY x.algorithm, x.version) || ']', '[]')::json
        FROM representation_fingerprints x WHERE x.representation_id = e.representation)
    FROM (VALUES (0::smallint, source), (1::smallint, p_representation)) AS e (direction, representation);
    INSERT INTO metadata (target_kind, target_id, vocabulary, property, value, created_sequence)
    SELECT 3, p_activity, m.vocabulary, m.property, m.value, seq
    FROM metadata m WHERE m.target_kind = 5 AND m.target_id = p_job ORDER BY m.id;
    UPDATE jobs SET state = 3, completion_activity_id = p_activity,
        completion_representation_id = p_representation, finished_at = p_now,
        claim_secret_hash = NULL, claim_tool_name = NULL, claim_tool_version = NULL,
        claim_tool_uri = NULL, claim_agent_name = NULL, claim_worker_id = NULL, claim_session = NULL,
        claimed_at = NULL, claim_expires_at = NULL, claim_sequence = NULL, claim_attempt = NULL,
        updated_sequence = seq
    WHERE id = p_job;
    UPDATE job_attempts SET outcome = 1, ended_at = p_now, stopped_at = p_now
    WHERE job_id = p_job AND outcome IS NULL;
    INSERT INTO revisions (sequence, id, committed_at, clock_mark) VALUES (seq, p_revision, p_now, p_now);
    INSERT INTO revision_events (sequence, position, kind, subject, payload)
    VALUES (seq, 0, 'representation_added', p_representation,
            json_build_object('asset_id', j.output_asset_id, 'representation_id', p_representation)),
           (seq, 1, 'activity_created', p_activity,
            json_build_object('activity_id', p_activity, 'activity_kind', j.kind)),
           (seq, 2, 'metadata_added_or_replaced', p_activity,
            json_build_object('target', json_build_object('kind', 'activity', 'id', p_activity))),
           (seq, 3, 'job_succeeded', p_job, json_build_object('job_id', p_job));
    PERFORM pg_notify('postproject', current_schema() || ' ' || seq || ' ' || p_now);
END
$$;
"""


def install(conninfo: str, schema: str) -> None:
    """The two functions, in the production's schema (as the production's owner)."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
        conn.execute(FUNCTIONS.encode())


def floor_worker(conninfo: str, schema: str, outputs: str, wid: int, barrier: Any, results: Any) -> None:
    try:
        conn = psycopg.connect(conninfo, autocommit=True)
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
        claim = "SELECT floor_claim(%s, %s, %s, %s, %s, %s, %s)"
        complete = "SELECT floor_complete(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
        agent, tool, version = f"bench-w{wid}", "bench-worker", "1"
        ids: list[str] = []
        claim_lat: list[float] = []
        barrier.wait()
        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        while True:
            secret = hashlib.sha256(os.urandom(32)).digest()
            now = time.time_ns() // 1000
            t0 = time.perf_counter()
            row = conn.execute(
                claim, (now, secret, now + 300_000_000, tool, version, agent, uuid.uuid4())
            ).fetchone()
            claim_lat.append(time.perf_counter() - t0)
            if row is None or row[0] is None:
                break
            job = row[0]
            path = f"{outputs}/{job}.out"
            conn.execute(
                complete,
                (
                    job,
                    secret,
                    time.time_ns() // 1000,
                    uuid.uuid4(),
                    uuid.uuid4(),
                    uuid.uuid4(),
                    path,
                    hashlib.sha256(b"x").digest(),
                    tool,
                    version,
                    agent,
                ),
            )
            ids.append(str(job))
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        done = time.perf_counter()
        conn.close()
        cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
        results.put({"ids": ids, "claim_lat": claim_lat, "done": done, "cpu": cpu})
    except BaseException:
        results.put({"fatal": traceback.format_exc()})


def floor_drain(
    server: LocalServer,
    n: int,
    workers: int,
    root: Path,
    seed: Callable[[str, int, Path], None],
    server_cpu: Callable[[Path], float],
) -> dict[str, Any]:
    """W processes drain N seeded jobs through the two functions: jobs/s, duplicates, lost, CPU
    per job (client and server)."""
    outputs = Path(os.path.realpath(root)) / f"floor{workers}_{uuid.uuid4().hex[:8]}"
    outputs.mkdir()
    schema = f"f_{workers}_{outputs.name.rsplit('_', 1)[1]}"
    seed(server.uri("bench", production=schema), n, outputs)
    conninfo = server.uri("bench")
    install(conninfo, schema)
    args = [(conninfo, schema, str(outputs), w) for w in range(workers)]
    outs, t0, cpu_server = pg_peers.run_workers(server, server_cpu, floor_worker, args)
    fatal = [o["fatal"] for o in outs if "fatal" in o]
    if fatal:
        print(fatal[0], flush=True)
        return {"error": fatal[0].strip().splitlines()[-1]}
    ids = [i for o in outs for i in o["ids"]]
    claims = [x for o in outs for x in o["claim_lat"]]
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
        row = conn.execute("SELECT count(*) FROM jobs WHERE state = 3").fetchone()
        succeeded = int(row[0]) if row else 0
    return {
        "jobs_per_s": len(set(ids)) / (max(o["done"] for o in outs) - t0),
        "duplicates": len(ids) - len(set(ids)),
        "lost": n - len(set(ids)),
        "succeeded_in_store": succeeded,
        "claim_p50_ms": 1000 * baselines.percentile(claims, 0.5),
        "claim_p99_ms": 1000 * baselines.percentile(claims, 0.99),
        "cpu_ms_per_job_client": 1000 * sum(o["cpu"] for o in outs) / max(1, len(ids)),
        "cpu_ms_per_job_server": 1000 * cpu_server / max(1, len(ids)),
    }
