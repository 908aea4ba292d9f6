-- Version 14 (PostgreSQL): a worker's completion as one server call (issue 27, fourth pass).
--
-- Production.complete_job records what the spec's completion edit records (the output
-- representation of the job's asset and kind with its fingerprint, an activity of the job's
-- kind from the job's inputs to it with its edges' fingerprint snapshots, the parameters on the
-- activity, the attempt's log tail, the job succeeded with its attempt ended and its
-- dependents released, a regenerated artifact superseded) with the same events in the same
-- order, as one autocommit call:
--
--   pp_complete  the lease check (pp_lease_check: PPL01, PPN01, PPI01 as the deferred check
--                raises them; it locks the job's row), the log tail, the dependents' counts
--                (before the numbering lock: their rows may be held by other edits), then
--                pp_number and every row written once with the revision's number (the job's
--                row too: this call holds it), and pp_publish with the events.
--
-- Parameters come either from the job's own metadata (p_copy: copied in assertion order) or as
-- the caller's encoded values (p_vocabularies, p_properties, p_values). Each event's payload is
-- the JSON object the edit stages, keys in the same order. Like 0013's functions it updates only
-- rows pp_writer may update and publishes through pp_publish: SECURITY INVOKER, search_path
-- pinned.

CREATE FUNCTION pp_complete(
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
    seq bigint;
    kinds text[];
    subjects uuid[];
    payloads text[];
    target text := '{"target":{"kind":"activity","id":"' || p_activity::text || '"}';
BEGIN
    PERFORM pp_lease_check(p_job, p_secret, p_now, p_claim_sequence);
    SELECT output_asset_id, output_kind, kind, inputs, regenerates, dependencies INTO j
    FROM jobs WHERE id = p_job;
    IF p_tail IS NOT NULL THEN  -- as RECORD_ATTEMPT_LOG with a tail only
        INSERT INTO job_attempt_logs AS l (job_id, number, root_name, path, tail, tail_at)
        SELECT job_id, number, NULL, NULL, p_tail, p_tail_at FROM job_attempts
        WHERE job_id = p_job AND secret_hash = p_secret
        ON CONFLICT (job_id, number) DO UPDATE SET tail = excluded.tail, tail_at = excluded.tail_at;
    END IF;
    UPDATE jobs SET waiting = waiting - 1
    WHERE id IN (SELECT job_id FROM job_dependencies WHERE upstream_id = p_job);

    SELECT n.seq, n.locked_at INTO seq, locked_at FROM pp_number() n;
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
    FROM (SELECT DISTINCT 0::smallint, i.rep FROM (
              SELECT encode(substring(j.inputs FROM g * 16 + 1 FOR 16), 'hex')::uuid
              FROM generate_series(0, length(j.inputs) / 16 - 1) g
              UNION SELECT resolved_id FROM job_dependencies
              WHERE j.dependencies > 0 AND job_id = p_job AND resolved_id IS NOT NULL) AS i (rep)
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
    SELECT p.published, p.mark, p.server_now INTO published, mark, server_now
    FROM pp_publish(seq, p_id, p_committed_at, p_origin, p_message, p_high_water,
                    ARRAY(SELECT generate_series(0, cardinality(kinds) - 1)), kinds, subjects, payloads,
                    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, false) p;
    IF published IS DISTINCT FROM seq THEN
        RAISE EXCEPTION 'revision % was published as number %', seq, published;
    END IF;
    RETURN NEXT;
END
$$;

-- Production.claim_next_job as one statement: the claim (pp_claim_next) and, in the same
-- statement, the claimed job as the claim left it, its attempts, dependencies and parameters,
-- as the job's read (JOBS_WITH_ATTEMPTS, storage/postgresql/reads.py) and the metadata read
-- answer them. A query's own subselects see the database as of the query's start, before the
-- call claimed; these functions are VOLATILE, so each query in them takes a fresh snapshot and
-- sees what the call wrote (calls.py joins them LATERAL to the call's row). PL/pgSQL, not SQL:
-- a SQL function that is not inlined plans its query at every call; PL/pgSQL keeps its plans.
CREATE FUNCTION pp_job_now(p_job uuid) RETURNS SETOF jobs LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT AS $$
BEGIN
    RETURN QUERY SELECT * FROM jobs WHERE id = p_job;
END
$$;

CREATE FUNCTION pp_job_attempts(p_job uuid) RETURNS json LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT AS $$
DECLARE
    found json;
BEGIN
    SELECT json_agg(json_build_array(a.number, a.outcome, a.agent_name,
                                     (SELECT w.name FROM workers w WHERE w.id = a.worker_id), a.tool_name,
                                     a.tool_version, a.tool_uri, a.claimed_at, a.ended_at, a.diagnostic,
                                     a.progress_fraction, a.progress_stage, a.progress_message, a.progress_at,
                                     a.stop_by, a.stopped_at) ORDER BY a.number)
    INTO found FROM job_attempts a WHERE a.job_id = p_job;
    RETURN found;
END
$$;

CREATE FUNCTION pp_job_dependencies(p_job uuid) RETURNS json LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT AS $$
DECLARE
    found json;
BEGIN
    SELECT json_agg(json_build_array(d.upstream_id, u.state, d.binds_output, d.resolved_id) ORDER BY d.upstream_id)
    INTO found FROM job_dependencies d JOIN jobs u ON u.id = d.upstream_id WHERE d.job_id = p_job;
    RETURN found;
END
$$;

CREATE FUNCTION pp_job_parameters(p_job uuid) RETURNS json LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT AS $$
DECLARE
    found json;
BEGIN
    SELECT json_agg(json_build_array(m.vocabulary, m.property, m.value::text) ORDER BY m.id)
    INTO found FROM metadata m WHERE m.target_kind = 5 AND m.target_id = p_job;
    RETURN found;
END
$$;
