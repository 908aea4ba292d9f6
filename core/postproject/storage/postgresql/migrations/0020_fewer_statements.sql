-- Version 20 (PostgreSQL): fewer statements in a worker's two calls (issue 27, tenth pass).
--
-- In PL/pgSQL an expression without a subquery (an assignment, an IF's condition, a FOR
-- loop's bounds) is evaluated directly, while a statement, or an expression holding a
-- subquery, goes through the executor (a plan fetched, an executor started and ended, a
-- snapshot taken): most of what a job's statements cost the server beyond the floor's
-- (benchmarks/pg_floor.py) is that start-up, statement by statement. Now:
-- - pp_claim_next answers a job's first attempt (the only one it has) from the claim's own
--   columns, as the row job_attempt_started wrote, instead of reading it back: the same JSON
--   values, the registered worker's name read with the gate's facts (a later attempt's list
--   is read as before);
-- - pp_claim_next reads the job's resolved inputs only when it has dependencies, by IF, where
--   a CASE holding the subquery went through the executor at every claim;
-- - pp_complete decodes the job's inputs (16 bytes each) by a loop of expressions instead of
--   a query over generate_series.
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
    worker_name text;     -- the registered worker's (NULL: none)
BEGIN
    IF p_worker IS NOT NULL THEN
        -- the worker's row, locked first (a statement of its own: the count below sees the
        -- claims committed while it waited), then its facts and the gate (claims.py's _GATE)
        PERFORM 1 FROM workers WHERE id = p_worker FOR NO KEY UPDATE;
        SELECT w.session, w.last_seen, w.capacity, w.kinds::text,
               (SELECT count(*) FROM jobs WHERE claim_worker_id = w.id AND claim_expires_at > p_now), w.name
        INTO o_session, o_last_seen, o_capacity, o_kinds, o_active, worker_name
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
    IF upstream > 0 THEN  -- (a job's dependency rows: as many as its count)
        o_resolved := ARRAY(SELECT resolved_id FROM job_dependencies WHERE job_id = o_job
                            AND resolved_id IS NOT NULL);
    ELSE
        o_resolved := '{}';
    END IF;
    IF p_with_job THEN  -- (under the numbering lock only when it was free before the claim)
        IF o_attempt = 1 THEN
            -- the job's first attempt, its only one: the row job_attempt_started wrote, as the
            -- read below answers it (the claim's columns; the rest is NULL until it runs)
            o_attempt_list := json_build_array(json_build_array(
                o_attempt, NULL, p_agent, worker_name, p_tool_name, p_tool_version, p_tool_uri, p_now,
                NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
        ELSE
            SELECT json_agg(json_build_array(a.number, a.outcome, a.agent_name,
                                             (SELECT w.name FROM workers w WHERE w.id = a.worker_id), a.tool_name,
                                             a.tool_version, a.tool_uri, a.claimed_at, a.ended_at, a.diagnostic,
                                             a.progress_fraction, a.progress_stage, a.progress_message,
                                             a.progress_at, a.stop_by, a.stopped_at) ORDER BY a.number)
            INTO o_attempt_list FROM job_attempts a WHERE a.job_id = o_job;
        END IF;
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

CREATE OR REPLACE FUNCTION pp_complete(
    p_job uuid,
    p_secret bytea,
    p_now bigint,
    p_claim_sequence bigint,
    p_rep uuid,
    p_path text,
    p_root text,
    p_size bigint,
    p_mtime bigint,
    p_created_at bigint,
    p_algorithm text,
    p_version integer,
    p_value bytea,
    p_activity uuid,
    p_tool_name text,
    p_tool_version text,
    p_tool_uri text,
    p_agent text,
    p_started bigint,
    p_finished bigint,
    p_copy boolean,
    p_vocabularies text[],
    p_properties text[],
    p_values text[],
    p_tail text,
    p_tail_at bigint,
    p_id uuid,
    p_committed_at bigint,
    p_origin text,
    p_message text,
    p_high_water bigint
) RETURNS TABLE (published bigint, mark bigint, server_now bigint, locked_at bigint, superseded uuid)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    j record;
    changed record;
    seq bigint;
    last_mark bigint;
    stored bigint;
    kinds text[];
    subjects uuid[];
    payloads text[];
    ins uuid[];
    target text := '{"target":{"kind":"activity","id":"' || p_activity::text || '"}';
BEGIN
    -- the lease check (pp_lease_check's: the same errors and messages) on the job's row, locked
    SELECT state, claim_secret_hash, claim_expires_at, claim_sequence, inputs, dependencies, output_asset_id,
           output_kind, kind, regenerates INTO j
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
    -- its inputs as the job reads after the claim (its bound inputs resolved)
    ins := '{}';
    FOR g IN 0 .. length(j.inputs) / 16 - 1 LOOP
        ins := ins || encode(substring(j.inputs FROM g * 16 + 1 FOR 16), 'hex')::uuid;
    END LOOP;
    IF j.dependencies > 0 THEN
        ins := ins || ARRAY(SELECT resolved_id FROM job_dependencies
                            WHERE job_id = p_job AND resolved_id IS NOT NULL);
    END IF;
    -- the first input fingerprint recorded after the claim (as LEASE_ROW reads it), its
    -- revision read only when there is one
    PERFORM FROM representation_fingerprints x
    WHERE x.representation_id = ANY (ins) AND x.recorded_sequence > p_claim_sequence LIMIT 1;
    IF FOUND THEN
        SELECT f.representation_id, f.recorded_sequence, r.id AS revision INTO changed
        FROM representation_fingerprints f LEFT JOIN revisions r ON r.sequence = f.recorded_sequence
        WHERE f.representation_id = ANY (ins) AND f.recorded_sequence > p_claim_sequence
        ORDER BY f.recorded_sequence LIMIT 1;
        RAISE EXCEPTION USING ERRCODE = 'PPI01',
            MESSAGE = format('input representation %s of job %s changed in revision %s (%s) after the claim; '
                             'do the work again under a new claim', changed.representation_id, p_job,
                             changed.recorded_sequence, changed.revision),
            DETAIL = changed.representation_id::text || ' ' || changed.recorded_sequence::text || ' '
                     || changed.revision::text;
    END IF;
    IF p_tail IS NOT NULL THEN  -- as RECORD_ATTEMPT_LOG with a tail only
        INSERT INTO job_attempt_logs AS l (job_id, number, root_name, path, tail, tail_at)
        SELECT job_id, number, NULL, NULL, p_tail, p_tail_at FROM job_attempts
        WHERE job_id = p_job AND secret_hash = p_secret
        ON CONFLICT (job_id, number) DO UPDATE SET tail = excluded.tail, tail_at = excluded.tail_at;
    END IF;
    UPDATE jobs SET waiting = waiting - 1
    WHERE id IN (SELECT job_id FROM job_dependencies WHERE upstream_id = p_job);

    -- the numbering lock and the next number (pp_number's steps), the newest revision's mark
    PERFORM pg_advisory_xact_lock(1347441202, hashtext(current_schema()));
    locked_at := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;  -- when the lock was taken
    SELECT r.sequence, r.clock_mark INTO seq, last_mark FROM revisions r ORDER BY r.sequence DESC LIMIT 1;
    seq := coalesce(seq, 0) + 1;
    INSERT INTO representations (id, asset_id, kind, path, root_name, size, mtime, created_at, created_sequence)
    SELECT p_rep, j.output_asset_id, j.output_kind, p_path, p_root, p_size, p_mtime, p_created_at, seq
    WHERE p_root IS NULL OR EXISTS (SELECT 1 FROM media_roots WHERE name = p_root);
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'PPN01', MESSAGE = format('media root %L does not exist', p_root);
    END IF;
    INSERT INTO representation_fingerprints (representation_id, algorithm, version, value, recorded_sequence)
    VALUES (p_rep, p_algorithm, p_version, p_value, seq);
    INSERT INTO activities (id, kind, tool_name, tool_version, tool_uri, agent_name, started_at, finished_at,
                            created_sequence)
    VALUES (p_activity, j.kind, p_tool_name, p_tool_version, p_tool_uri, p_agent, p_started, p_finished, seq);
    -- its inputs as the job reads after the claim (its bound inputs resolved), its one output;
    -- each edge with its representation's fingerprints as they are now (as pp_publish records them)
    INSERT INTO activity_edges (activity_id, direction, representation_id, role, snapshot_sequence,
                                snapshot_fingerprints)
    SELECT p_activity, e.direction, e.representation, '', seq, (
        SELECT coalesce('[' || string_agg(format('[%s,%s,"%s"]', to_json(x.algorithm), x.version,
                                                 upper(encode(x.value, 'hex'))), ','
                                          ORDER BY x.algorithm, x.version) || ']', '[]')::json
        FROM representation_fingerprints x WHERE x.representation_id = e.representation)
    FROM (SELECT DISTINCT 0::smallint, i.rep FROM unnest(ins) AS i (rep)
          UNION ALL SELECT 1::smallint, p_rep) AS e (direction, representation);
    kinds := ARRAY['representation_added', 'activity_created'];
    subjects := ARRAY[p_rep, p_activity];
    payloads := ARRAY[
        '{"asset_id":"' || j.output_asset_id::text || '","representation_id":"' || p_rep::text || '"}',
        '{"activity_id":"' || p_activity::text || '","activity_kind":' || to_json(j.kind)::text || '}'];
    IF p_copy THEN  -- the job's parameters, in assertion order (a metadata row's id is its place)
        WITH m AS (
            INSERT INTO metadata (target_kind, target_id, vocabulary, property, value, created_sequence)
            SELECT 3, p_activity, vocabulary, property, value, seq FROM metadata
            WHERE target_kind = 5 AND target_id = p_job ORDER BY id
            RETURNING id, vocabulary, property
        )
        SELECT kinds || array_agg('metadata_added_or_replaced'::text ORDER BY m.id),
               subjects || array_agg(p_activity ORDER BY m.id),
               payloads || array_agg(target || ',"vocabulary":' || to_json(m.vocabulary)::text || ',"property":'
                                     || to_json(m.property)::text || '}' ORDER BY m.id)
        INTO kinds, subjects, payloads FROM m;  -- (no parameters: each array || NULL is itself)
    ELSIF cardinality(p_vocabularies) > 0 THEN
        INSERT INTO metadata (target_kind, target_id, vocabulary, property, value, created_sequence)
        SELECT 3, p_activity, x.v, x.p, x.value::json, seq
        FROM unnest(p_vocabularies, p_properties, p_values) WITH ORDINALITY AS x (v, p, value, n) ORDER BY x.n;
        SELECT kinds || array_agg('metadata_added_or_replaced'::text ORDER BY x.n),
               subjects || array_agg(p_activity ORDER BY x.n),
               payloads || array_agg(target || ',"vocabulary":' || to_json(x.v)::text || ',"property":'
                                     || to_json(x.p)::text || '}' ORDER BY x.n)
        INTO kinds, subjects, payloads
        FROM unnest(p_vocabularies, p_properties) WITH ORDINALITY AS x (v, p, n);
    END IF;
    UPDATE jobs SET state = 3, completion_activity_id = p_activity, completion_representation_id = p_rep,
        finished_at = p_now, claim_secret_hash = NULL, claim_tool_name = NULL, claim_tool_version = NULL,
        claim_tool_uri = NULL, claim_agent_name = NULL, claim_worker_id = NULL, claim_session = NULL,
        claimed_at = NULL, claim_expires_at = NULL, claim_sequence = NULL, claim_attempt = NULL,
        updated_sequence = seq
    WHERE id = p_job;
    UPDATE job_attempts SET outcome = 1, ended_at = p_now, diagnostic = NULL, stopped_at = p_now
    WHERE job_id = p_job AND outcome IS NULL;
    kinds := kinds || 'job_succeeded'::text;
    subjects := subjects || p_job;
    payloads := payloads || ('{"job_id":"' || p_job::text || '"}');
    IF j.regenerates IS NOT NULL THEN  -- its output replaces the artifact it regenerated (SUPERSEDE)
        WITH RECURSIVE chain (id, successor, depth) AS (
            SELECT id, superseded_by, 0 FROM representations WHERE id = j.regenerates
            UNION ALL SELECT r.id, r.superseded_by, c.depth + 1 FROM chain c
            JOIN representations r ON r.id = c.successor WHERE c.depth < 10000
        )
        UPDATE representations SET superseded_by = p_rep
        WHERE id = (SELECT id FROM chain WHERE successor IS NULL) AND id <> p_rep
        RETURNING id INTO superseded;
        IF superseded IS NOT NULL THEN
            kinds := kinds || 'representation_superseded'::text;
            subjects := subjects || superseded;
            payloads := payloads || ('{"representation_id":"' || superseded::text || '","superseded_by":"'
                                     || p_rep::text || '","job_id":"' || p_job::text || '"}');
        END IF;
    END IF;
    -- published (pp_publish's steps): the clock mark, the revision, its events, the notification
    server_now := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;
    SELECT c.high_water INTO stored FROM job_clock c;
    mark := greatest(last_mark, stored, p_high_water);
    INSERT INTO revisions (sequence, id, committed_at, origin, message, clock_mark)
    VALUES (seq, p_id, p_committed_at, p_origin, p_message, mark);
    INSERT INTO revision_events (sequence, position, kind, subject, payload)
    SELECT seq, e.n - 1, e.kind, e.subject, e.payload::json
    FROM unnest(kinds, subjects, payloads) WITH ORDINALITY AS e (kind, subject, payload, n);
    PERFORM pg_notify('postproject', current_schema() || ' ' || seq || ' ' || coalesce(mark::text, ''));
    published := seq;
    RETURN NEXT;
END
$$;
