-- Version 13 (PostgreSQL): a worker's operations as one server call each (issue 27, third pass).
--
-- The public edit model (several calls, then commit()) cannot send a claim with its COMMIT:
-- the lease is the claim's answer, and the lease check decides whether complete_job_lease
-- raises before the caller's code goes on. A worker's path (the reference executor) does not
-- need those answers early, so it has operations whose call is the commit:
--
--   pp_claim_next   Production.claim_next_job_lease: the claim (the statement of
--                   storage/postgresql/claims.py, SKIP LOCKED, a registered worker's gate),
--                   its job_claimed event as the edit stages it, numbered and published by
--                   pp_publish, in one autocommit call; it answers the lease row's facts so a
--                   completion in the same process can check the lease at its commit.
--                   Its claimed job is pp_claimed() for the reads that follow it in the same round
--                   trip (Production.claim_next_job: the job and its parameters with the lease).
--   pp_lease_check  an edit opened with defer_lease_checks: a completion's lease check
--                   (and its inputs' fingerprints after the claim) sent with the commit's
--                   pipeline instead of read first, raising what complete_job_lease raises
--                   (PPL01 lease lost, PPN01 no such job, PPI01 an input changed).
--
-- Both only update rows pp_writer may update (jobs; the attempt by the jobs trigger) and call
-- pp_publish (SECURITY DEFINER, 0011) for the history: they run with their caller's rights
-- (SECURITY INVOKER), their search_path pinned like pp_commit's (0012).

-- A call that claims nothing still keeps the clock sample it took (as an edit's rollback does).
CREATE FUNCTION pp_keep_mark(p_high_water bigint) RETURNS void LANGUAGE sql SET search_path FROM CURRENT AS $$
    UPDATE job_clock SET high_water = p_high_water WHERE high_water IS NULL OR high_water < p_high_water
$$;

CREATE FUNCTION pp_claim_next(
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
    p_keep bigint            -- the clock sample to keep when nothing is claimed (NULL: known already)
) RETURNS TABLE (
    o_job uuid, o_attempt integer, o_held boolean,
    o_session uuid, o_last_seen bigint, o_capacity integer, o_kinds text, o_active bigint,
    o_asset uuid, o_output_kind smallint, o_inputs bytea, o_attempts integer, o_max_attempts integer,
    o_regenerates uuid, o_resolved uuid[],
    o_published bigint, o_mark bigint, o_server_now bigint
) LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    payload text;
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
            PERFORM set_config('postproject.claimed', '', false);
            RETURN NEXT;  -- not registered, or the gate does not hold: nothing claimed
            RETURN;
        END IF;
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
            claim_expires_at = p_expires, claim_sequence = p_provisional, claim_attempt = j.attempts + 1,
            attempts = j.attempts + 1, updated_sequence = p_provisional
        WHERE j.id = (SELECT id FROM pick)
          AND ((j.state = 1 AND j.waiting = 0 AND (j.not_before IS NULL OR j.not_before <= p_now))
               OR (j.state = 2 AND j.claim_expires_at <= p_now
                   AND (j.max_attempts IS NULL OR j.attempts < j.max_attempts)))
        RETURNING j.id, j.claim_attempt, j.output_asset_id, j.output_kind, j.inputs, j.attempts, j.max_attempts,
                  j.regenerates
        INTO o_job, o_attempt, o_asset, o_output_kind, o_inputs, o_attempts, o_max_attempts, o_regenerates;
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
            claim_expires_at = p_expires, claim_sequence = p_provisional, claim_attempt = j.attempts + 1,
            attempts = j.attempts + 1, updated_sequence = p_provisional
        WHERE j.id = (SELECT id FROM pick)
          AND ((j.state = 1 AND j.waiting = 0 AND (j.not_before IS NULL OR j.not_before <= p_now))
               OR (j.state = 2 AND j.claim_expires_at <= p_now
                   AND (j.max_attempts IS NULL OR j.attempts < j.max_attempts)))
        RETURNING j.id, j.claim_attempt, j.output_asset_id, j.output_kind, j.inputs, j.attempts, j.max_attempts,
                  j.regenerates
        INTO o_job, o_attempt, o_asset, o_output_kind, o_inputs, o_attempts, o_max_attempts, o_regenerates;
    END IF;
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
        PERFORM set_config('postproject.claimed', '', false);
        RETURN NEXT;
        RETURN;
    END IF;
    o_resolved := ARRAY(SELECT resolved_id FROM job_dependencies WHERE job_id = o_job AND resolved_id IS NOT NULL);
    -- the event as the edit stages it: {"job_id":"…","attempt":"…"[,"worker":…]} (json.dumps, compact)
    payload := '{"job_id":"' || o_job::text || '","attempt":"' || o_attempt::text || '"'
               || coalesce(',"worker":' || p_worker_json, '') || '}';
    SELECT p.published, p.mark, p.server_now INTO o_published, o_mark, o_server_now
    FROM pp_publish(p_provisional, p_id, p_committed_at, p_origin, p_message, p_high_water, ARRAY[0],
                    ARRAY['job_claimed'], ARRAY[o_job], ARRAY[payload], NULL, NULL, NULL, NULL, NULL, NULL,
                    NULL, ARRAY[o_job], false) p;
    -- the claimed job, for reads sent after this call in the same round trip (pp_claimed)
    PERFORM set_config('postproject.claimed', o_job::text, false);
    RETURN NEXT;
END
$$;

-- The job the last pp_claim_next of this session claimed (NULL: none), for the reads of its job
-- and parameters pipelined after the call (Production.claim_next_job).
CREATE FUNCTION pp_claimed() RETURNS uuid LANGUAGE sql STABLE AS $$
    SELECT nullif(current_setting('postproject.claimed', true), '')::uuid
$$;

CREATE FUNCTION pp_lease_check(p_job uuid, p_secret bytea, p_now bigint, p_claim_sequence bigint)
RETURNS void LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    j record;
    changed record;
BEGIN
    SELECT state, claim_secret_hash, claim_expires_at, claim_sequence, inputs, dependencies INTO j
    FROM jobs WHERE id = p_job FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'PPN01', MESSAGE = format('job %s does not exist', p_job);
    END IF;
    IF j.claim_secret_hash IS DISTINCT FROM p_secret OR j.claim_expires_at IS NULL OR j.claim_expires_at <= p_now
       OR j.claim_sequence IS DISTINCT FROM p_claim_sequence THEN
        IF j.state IN (3, 4, 5) AND j.claim_secret_hash IS NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'PPL01', MESSAGE = format(
                'job %s already finished (it is %s); this lease no longer holds it', p_job,
                CASE j.state WHEN 3 THEN 'succeeded' WHEN 4 THEN 'failed' ELSE 'cancelled' END);
        END IF;
        RAISE EXCEPTION USING ERRCODE = 'PPL01',
            MESSAGE = format('job lease on %s is expired, superseded or no longer claimed', p_job);
    END IF;
    -- the first input fingerprint recorded after the claim (as LEASE_ROW reads it)
    SELECT f.representation_id, f.recorded_sequence, r.id AS revision INTO changed
    FROM (SELECT encode(substring(j.inputs FROM g * 16 + 1 FOR 16), 'hex')::uuid AS rep
          FROM generate_series(0, length(j.inputs) / 16 - 1) g
          UNION SELECT resolved_id FROM job_dependencies
          WHERE j.dependencies > 0 AND job_id = p_job AND resolved_id IS NOT NULL) i
    CROSS JOIN LATERAL (SELECT x.representation_id, x.recorded_sequence FROM representation_fingerprints x
                        WHERE x.representation_id = i.rep AND x.recorded_sequence > p_claim_sequence
                        ORDER BY x.recorded_sequence LIMIT 1) f
    LEFT JOIN revisions r ON r.sequence = f.recorded_sequence
    ORDER BY f.recorded_sequence LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'PPI01',
            MESSAGE = format('input representation %s of job %s changed in revision %s (%s) after the claim; '
                             'do the work again under a new claim', changed.representation_id, p_job,
                             changed.recorded_sequence, changed.revision),
            DETAIL = changed.representation_id::text || ' ' || changed.recorded_sequence::text || ' '
                     || changed.revision::text;
    END IF;
END
$$;
