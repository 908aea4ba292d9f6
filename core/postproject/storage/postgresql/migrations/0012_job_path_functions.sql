-- Version 12 (PostgreSQL): a commit whose rows are written once (0009) is one statement.
--
-- Since 0009 such a commit sent pp_number, then each queued insert of new rows (an asset, a
-- representation with its first fingerprint, an activity with its edges and their snapshots,
-- metadata), then pp_publish: one statement each, and on the client each statement costs its
-- own pipeline work (a worker's completion: five statements between its lease transition and
-- COMMIT). pp_commit does the same in one call, in the same order: the numbering lock and the
-- next number (pp_number), the rows passed as one jsonb ({"assets": [...],
-- "representations": [...], "activities": [...], "metadata": [...]}, each a list of rows
-- keyed by column) written with that number, then pp_publish. The checks the queued
-- statements made are made here (pp_expect's PPN01 with the row's own message): a
-- representation whose asset or media root is absent, an activity whose representation is
-- absent abort the edit, so the COMMIT sent after it cannot publish anything.
--
-- It only inserts (history stays append-only: no UPDATE here) and calls pp_number and
-- pp_publish, so it runs with its caller's rights (SECURITY INVOKER, the default); its
-- search_path is pinned like theirs.

CREATE FUNCTION pp_commit(
    p_rows jsonb,
    p_provisional bigint,
    p_id uuid,
    p_committed_at bigint,
    p_origin text,
    p_message text,
    p_high_water bigint,
    p_positions integer[],
    p_kinds text[],
    p_subjects uuid[],
    p_payloads text[],
    p_assets uuid[],
    p_roots uuid[],
    p_representations uuid[],
    p_fingerprinted uuid[],
    p_activities uuid[],
    p_metadata_kinds smallint[],
    p_metadata_targets uuid[],
    p_jobs uuid[],
    p_reset boolean
) RETURNS TABLE (published bigint, mark bigint, server_now bigint, locked_at bigint) LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    seq bigint;
    missing text;
BEGIN
    SELECT n.seq, n.locked_at INTO seq, locked_at FROM pp_number() n;
    IF p_rows ? 'assets' THEN
        INSERT INTO assets (id, name, created_at, created_sequence)
        SELECT x.id, x.name, x.created_at, seq
        FROM ROWS FROM (jsonb_to_recordset(p_rows -> 'assets') AS (id uuid, name text, created_at bigint))
             WITH ORDINALITY AS x (id, name, created_at, n)
        ORDER BY x.n;
    END IF;
    IF p_rows ? 'representations' THEN
        WITH x AS (
            SELECT * FROM ROWS FROM (jsonb_to_recordset(p_rows -> 'representations') AS (
                id uuid, asset uuid, kind smallint, path text, root text, size bigint, mtime bigint,
                created_at bigint, algorithm text, version integer, value text, message text
            )) WITH ORDINALITY AS x (id, asset, kind, path, root, size, mtime, created_at, algorithm,
                                     version, value, message, n)
        ), r AS (
            INSERT INTO representations (id, asset_id, kind, path, root_name, size, mtime, created_at,
                                         created_sequence)
            SELECT x.id, x.asset, x.kind, x.path, x.root, x.size, x.mtime, x.created_at, seq FROM x
            WHERE EXISTS (SELECT 1 FROM assets WHERE id = x.asset)
              AND (x.root IS NULL OR EXISTS (SELECT 1 FROM media_roots WHERE name = x.root))
            ORDER BY x.n
            RETURNING id
        ), f AS (
            INSERT INTO representation_fingerprints (representation_id, algorithm, version, value,
                                                     recorded_sequence)
            SELECT x.id, x.algorithm, x.version, decode(x.value, 'hex'), seq FROM x JOIN r USING (id)
        )
        SELECT x.message INTO missing FROM x WHERE x.id NOT IN (SELECT id FROM r) ORDER BY x.n LIMIT 1;
        IF missing IS NOT NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'PPN01', MESSAGE = missing;
        END IF;
    END IF;
    IF p_rows ? 'activities' THEN
        WITH x AS (
            SELECT * FROM ROWS FROM (jsonb_to_recordset(p_rows -> 'activities') AS (
                id uuid, kind text, tool_name text, tool_version text, tool_uri text, agent text,
                started bigint, finished bigint, reps uuid[], directions smallint[], edges uuid[],
                roles text[], message text
            )) WITH ORDINALITY AS x (id, kind, tool_name, tool_version, tool_uri, agent, started, finished,
                                     reps, directions, edges, roles, message, n)
        ), a AS (
            INSERT INTO activities (id, kind, tool_name, tool_version, tool_uri, agent_name, started_at,
                                    finished_at, created_sequence)
            SELECT x.id, x.kind, x.tool_name, x.tool_version, x.tool_uri, x.agent, x.started, x.finished, seq
            FROM x
            WHERE (SELECT count(*) FROM representations WHERE id = ANY (x.reps)) = cardinality(x.reps)
            ORDER BY x.n
            RETURNING id
        ), e AS (
            -- each edge carries its representation's fingerprints as they are now, as
            -- pp_publish records them for an activity written before commit
            INSERT INTO activity_edges (activity_id, direction, representation_id, role, snapshot_sequence,
                                        snapshot_fingerprints)
            SELECT x.id, y.d, y.r, y.role, seq, (
                SELECT coalesce('[' || string_agg(format('[%s,%s,"%s"]', to_json(f.algorithm), f.version,
                                                         upper(encode(f.value, 'hex'))), ','
                                                  ORDER BY f.algorithm, f.version) || ']', '[]')::json
                FROM representation_fingerprints f WHERE f.representation_id = y.r)
            FROM x JOIN a USING (id) CROSS JOIN LATERAL unnest(x.directions, x.edges, x.roles) AS y (d, r, role)
        )
        SELECT x.message INTO missing FROM x WHERE x.id NOT IN (SELECT id FROM a) ORDER BY x.n LIMIT 1;
        IF missing IS NOT NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'PPN01', MESSAGE = missing;
        END IF;
    END IF;
    IF p_rows ? 'metadata' THEN
        -- in assertion order (a metadata row's id is its place)
        INSERT INTO metadata (target_kind, target_id, vocabulary, property, value, created_sequence)
        SELECT x.kind, x.target, x.vocabulary, x.property, x.value::json, seq
        FROM ROWS FROM (jsonb_to_recordset(p_rows -> 'metadata') AS (
            kind smallint, target uuid, vocabulary text, property text, value text
        )) WITH ORDINALITY AS x (kind, target, vocabulary, property, value, n)
        ORDER BY x.n;
    END IF;
    SELECT p.published, p.mark, p.server_now INTO published, mark, server_now
    FROM pp_publish(p_provisional, p_id, p_committed_at, p_origin, p_message, p_high_water, p_positions,
                    p_kinds, p_subjects, p_payloads, p_assets, p_roots, p_representations, p_fingerprinted,
                    p_activities, p_metadata_kinds, p_metadata_targets, p_jobs, p_reset) p;
    IF published IS DISTINCT FROM seq THEN
        RAISE EXCEPTION 'revision % was published as number %', seq, published;
    END IF;
    RETURN NEXT;
END
$$;
