-- Version 18 (PostgreSQL): a claim takes the numbering lock first when it is free, and writes the
-- claimed job's row once, with its final number (issue 27, eighth pass).
--
-- pp_claim_next (0016) claimed with a provisional number, then took the numbering lock and
-- wrote the claimed row again with the revision's number: two UPDATEs of the job's row (each
-- with its triggers, CHECK constraints and indexes), where the floor (benchmarks/pg_floor.py)
-- writes it once. Now the claim tries the lock first (pg_try_advisory_xact_lock): when it is
-- free, as it always is with one worker, the number is taken before the claim's UPDATE, which
-- writes it; when another transaction holds the lock, nothing changes: the provisional number,
-- the wait for the lock and the renumbering, so a claim never waits for the lock before it has
-- found its job. The claim's UPDATE returns the whole row (its answer's columns are read from
-- it), so the row answered to Production.claim_next_job is the one written, in either case.
--
-- Measured by the server's instructions per job (callgrind on the server's backends, 200
-- one-worker jobs of the executor path, benchmarks/bench_client_instructions.py --server; runs
-- of the same code agree within ~1 %): 5.84-5.90 M -> 5.63-5.70 M (-3 %); the floor 4.62 M.
-- Nothing else changes: same arguments, answers, rows and events.

CREATE OR REPLACE FUNCTION pp_claim_next(
    p_provisional bigint,
    p_secret bytea,
    p_tool_name text,
    p_tool_version text,
    p_tool_uri text,
    p_agent text,
    p_worker uuid,
    p_session uuid,
    p_now bigint,
    p_expires bigint,
    p_kinds text[],          -- NULL: any kind
    p_offline bigint,        -- a registered worker's gate (WorkerGate): offline after, asked kinds
    p_asked text[],
    p_worker_json text,      -- the event's worker name as JSON text (the client's encoding), or NULL
    p_id uuid,
    p_committed_at bigint,
    p_origin text,
    p_message text,
    p_high_water bigint,
    p_keep bigint,           -- the clock sample to keep when nothing is claimed (NULL: known already)
    p_with_job boolean       -- the claimed job too: its row, attempts, dependencies, parameters
) RETURNS TABLE (
    o_job uuid, o_attempt integer, o_held boolean,
    o_session uuid, o_last_seen bigint, o_capacity integer, o_kinds text, o_active bigint,
    o_asset uuid, o_output_kind smallint, o_inputs bytea, o_attempts integer, o_max_attempts integer,
    o_regenerates uuid, o_resolved uuid[],
    o_published bigint, o_mark bigint, o_server_now bigint,
    o_row jobs, o_attempt_list json, o_dependencies json, o_parameters json
) LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    payload text;
    seq bigint;
    last_mark bigint;
    stored bigint;
    upstream integer;  -- the claimed job's dependencies
    locked boolean;    -- the numbering lock taken before the claim (it was free)
    claim_number bigint;  -- the number the claim's row is written with: final when locked, else provisional
BEGIN
    IF p_worker IS NOT NULL THEN
        -- the worker's row, locked first (a statement of its own: the count below sees the
        -- claims committed while it waited), then its facts and the gate (claims.py's _GATE)
        PERFORM 1 FROM workers WHERE id = p_worker FOR NO KEY UPDATE;
        SELECT w.session, w.last_seen, w.capacity, w.kinds::text,
               (SELECT count(*) FROM jobs WHERE claim_worker_id = w.id AND claim_expires_at > p_now)
        INTO o_session, o_last_seen, o_capacity, o_kinds, o_active
        FROM workers w WHERE w.id = p_worker;
        IF NOT FOUND OR NOT (o_session = p_session AND p_now - o_last_seen <= p_offline
                             AND o_active < o_capacity
                             AND (p_asked IS NULL OR o_kinds IS NULL OR o_kinds::jsonb ?| p_asked)) THEN
            PERFORM pp_keep_mark(p_keep);
            RETURN NEXT;  -- not registered, or the gate does not hold: nothing claimed
            RETURN;
        END IF;
    END IF;
    -- the numbering lock first when it is free (always, with one worker): the claim's row is then
    -- written once, with its final number; when another transaction holds it, the claim is
    -- written with the provisional number and renumbered under the lock, as before
    locked := pg_try_advisory_xact_lock(1347441202, hashtext(current_schema()));
    IF locked THEN
        o_server_now := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;  -- when the lock was taken
        SELECT r.sequence, r.clock_mark INTO seq, last_mark FROM revisions r ORDER BY r.sequence DESC LIMIT 1;
        seq := coalesce(seq, 0) + 1;
        claim_number := seq;
    ELSE
        claim_number := p_provisional;
    END IF;
    IF p_kinds IS NULL THEN
        WITH ready AS (
            SELECT id, priority AS p, available_at AS a FROM jobs
            WHERE state = 1 AND waiting = 0 AND (not_before IS NULL OR not_before <= p_now)
            ORDER BY priority DESC, available_at, id LIMIT 1 FOR UPDATE SKIP LOCKED
        ), expired AS (
            SELECT id, priority AS p, claim_expires_at AS a FROM jobs
            WHERE state = 2 AND claim_expires_at <= p_now AND (max_attempts IS NULL OR attempts < max_attempts)
            ORDER BY claim_expires_at, id LIMIT 1 FOR UPDATE SKIP LOCKED
        ), pick AS (
            SELECT id FROM (SELECT * FROM ready UNION ALL SELECT * FROM expired) c ORDER BY p DESC, a, id LIMIT 1
        )
        UPDATE jobs j SET state = 2, claim_secret_hash = p_secret, claim_tool_name = p_tool_name,
            claim_tool_version = p_tool_version, claim_tool_uri = p_tool_uri, claim_agent_name = p_agent,
            claim_worker_id = p_worker, claim_session = p_session, claimed_at = p_now,
            claim_expires_at = p_expires, claim_sequence = claim_number, claim_attempt = j.attempts + 1,
            attempts = j.attempts + 1, updated_sequence = claim_number
        WHERE j.id = (SELECT id FROM pick)
          AND ((j.state = 1 AND j.waiting = 0 AND (j.not_before IS NULL OR j.not_before <= p_now))
               OR (j.state = 2 AND j.claim_expires_at <= p_now
                   AND (j.max_attempts IS NULL OR j.attempts < j.max_attempts)))
        RETURNING j.* INTO o_row;
    ELSE
        WITH ready AS (
            SELECT r.* FROM unnest(p_kinds) AS k (kind) CROSS JOIN LATERAL (
                SELECT id, priority AS p, available_at AS a FROM jobs
                WHERE state = 1 AND waiting = 0 AND kind = k.kind AND (not_before IS NULL OR not_before <= p_now)
                ORDER BY priority DESC, available_at, id LIMIT 1 FOR UPDATE SKIP LOCKED) r
        ), expired AS (
            SELECT id, priority AS p, claim_expires_at AS a FROM jobs
            WHERE state = 2 AND claim_expires_at <= p_now AND (max_attempts IS NULL OR attempts < max_attempts)
              AND kind = ANY (p_kinds)
            ORDER BY claim_expires_at, id LIMIT 1 FOR UPDATE SKIP LOCKED
        ), pick AS (
            SELECT id FROM (SELECT * FROM ready UNION ALL SELECT * FROM expired) c ORDER BY p DESC, a, id LIMIT 1
        )
        UPDATE jobs j SET state = 2, claim_secret_hash = p_secret, claim_tool_name = p_tool_name,
            claim_tool_version = p_tool_version, claim_tool_uri = p_tool_uri, claim_agent_name = p_agent,
            claim_worker_id = p_worker, claim_session = p_session, claimed_at = p_now,
            claim_expires_at = p_expires, claim_sequence = claim_number, claim_attempt = j.attempts + 1,
            attempts = j.attempts + 1, updated_sequence = claim_number
        WHERE j.id = (SELECT id FROM pick)
          AND ((j.state = 1 AND j.waiting = 0 AND (j.not_before IS NULL OR j.not_before <= p_now))
               OR (j.state = 2 AND j.claim_expires_at <= p_now
                   AND (j.max_attempts IS NULL OR j.attempts < j.max_attempts)))
        RETURNING j.* INTO o_row;
    END IF;
    o_job := o_row.id;  -- (NULL: nothing claimed)
    IF o_job IS NULL THEN
        -- claimable jobs exist, all held by other edits: the caller claims through an edit,
        -- which waits for their holders (writes.py, claim_next_row)
        o_held := EXISTS (SELECT 1 FROM jobs WHERE state = 1 AND waiting = 0
                          AND (not_before IS NULL OR not_before <= p_now)
                          AND (p_kinds IS NULL OR kind = ANY (p_kinds)))
               OR EXISTS (SELECT 1 FROM jobs WHERE state = 2 AND claim_expires_at <= p_now
                          AND (max_attempts IS NULL OR attempts < max_attempts)
                          AND (p_kinds IS NULL OR kind = ANY (p_kinds)));
        PERFORM pp_keep_mark(p_keep);
        RETURN NEXT;
        RETURN;
    END IF;
    o_attempt := o_row.claim_attempt;
    o_asset := o_row.output_asset_id;
    o_output_kind := o_row.output_kind;
    o_inputs := o_row.inputs;
    o_attempts := o_row.attempts;
    o_max_attempts := o_row.max_attempts;
    o_regenerates := o_row.regenerates;
    upstream := o_row.dependencies;
    o_resolved := CASE WHEN upstream > 0  -- (a job's dependency rows: as many as its count)
                       THEN ARRAY(SELECT resolved_id FROM job_dependencies WHERE job_id = o_job
                                  AND resolved_id IS NOT NULL)
                       ELSE '{}' END;
    IF p_with_job THEN  -- (under the numbering lock only when it was free before the claim)
        SELECT json_agg(json_build_array(a.number, a.outcome, a.agent_name,
                                         (SELECT w.name FROM workers w WHERE w.id = a.worker_id), a.tool_name,
                                         a.tool_version, a.tool_uri, a.claimed_at, a.ended_at, a.diagnostic,
                                         a.progress_fraction, a.progress_stage, a.progress_message, a.progress_at,
                                         a.stop_by, a.stopped_at) ORDER BY a.number)
        INTO o_attempt_list FROM job_attempts a WHERE a.job_id = o_job;
        IF upstream > 0 THEN
            SELECT json_agg(json_build_array(d.upstream_id, u.state, d.binds_output, d.resolved_id)
                            ORDER BY d.upstream_id)
            INTO o_dependencies FROM job_dependencies d JOIN jobs u ON u.id = d.upstream_id WHERE d.job_id = o_job;
        END IF;
        SELECT json_agg(json_build_array(m.vocabulary, m.property, m.value::text) ORDER BY m.id)
        INTO o_parameters FROM metadata m WHERE m.target_kind = 5 AND m.target_id = o_job;
    END IF;
    -- the event as the edit stages it: {"job_id":"…","attempt":"…"[,"worker":…]} (json.dumps, compact)
    payload := '{"job_id":"' || o_job::text || '","attempt":"' || o_attempt::text || '"'
               || coalesce(',"worker":' || p_worker_json, '') || '}';
    -- published (pp_publish's steps): the numbering lock (when it was not free before the
    -- claim: then the next number, and the claim's row renumbered), the clock mark
    IF NOT locked THEN
        PERFORM pg_advisory_xact_lock(1347441202, hashtext(current_schema()));
        o_server_now := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;  -- when the lock was taken
        SELECT r.sequence, r.clock_mark INTO seq, last_mark FROM revisions r ORDER BY r.sequence DESC LIMIT 1;
        seq := coalesce(seq, 0) + 1;
        UPDATE jobs j SET claim_sequence = seq, updated_sequence = seq WHERE j.id = o_job RETURNING j.* INTO o_row;
    END IF;
    SELECT c.high_water INTO stored FROM job_clock c;
    o_mark := greatest(last_mark, stored, p_high_water);
    INSERT INTO revisions (sequence, id, committed_at, origin, message, clock_mark)
    VALUES (seq, p_id, p_committed_at, p_origin, p_message, o_mark);
    INSERT INTO revision_events (sequence, position, kind, subject, payload)
    VALUES (seq, 0, 'job_claimed', o_job, payload::json);
    PERFORM pg_notify('postproject', current_schema() || ' ' || seq || ' ' || coalesce(o_mark::text, ''));
    o_published := seq;
    RETURN NEXT;
END
$$;
