-- Version 11 (PostgreSQL): history can be rewritten only by functions owned by the schema's
-- owner (issue 28 item 3; docs/postgresql.md, "Database roles").
--
-- History (revisions, revision_events, activities, activity_edges,
-- representation_fingerprints) is append-only for the role that runs the farm's writes
-- (pp_writer: INSERT and SELECT, never UPDATE, DELETE or TRUNCATE). The two places where an
-- edit must change a history row run as the schema's owner instead:
--   pp_publish          numbers what the edit wrote (and snapshots its edges' fingerprints)
--   pp_set_fingerprint  records a representation's fingerprint, replacing an older value of
--                       the same algorithm and version (an INSERT ... ON CONFLICT DO UPDATE,
--                       which would otherwise need UPDATE on the table)
-- Both are SECURITY DEFINER with a fixed search_path (this schema, then pg_temp: nothing a
-- caller creates can stand in for a table), executable by the owner and the roles granted
-- EXECUTE (postproject db-roles create: pp_writer), not by PUBLIC. They are found by name,
-- whatever their arguments, so a later pp_publish keeps the property when a migration
-- replaces it with CREATE OR REPLACE (which keeps SECURITY DEFINER only if it says so: a
-- migration that redefines one of them must say SECURITY DEFINER again).

CREATE FUNCTION pp_set_fingerprint(
    p_representation uuid, p_algorithm text, p_version integer, p_value bytea, p_sequence bigint
) RETURNS SETOF integer LANGUAGE sql AS $$
    INSERT INTO representation_fingerprints AS f (representation_id, algorithm, version, value, recorded_sequence)
    VALUES (p_representation, p_algorithm, p_version, p_value, p_sequence)
    ON CONFLICT (representation_id, algorithm, version)
    DO UPDATE SET value = excluded.value, recorded_sequence = excluded.recorded_sequence
    WHERE f.value <> excluded.value RETURNING 1
$$;

DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
             WHERE p.pronamespace = current_schema()::regnamespace
               AND p.proname IN ('pp_publish', 'pp_set_fingerprint')
    LOOP
        EXECUTE format('ALTER FUNCTION %s SECURITY DEFINER SET search_path = %I, pg_temp', f, current_schema());
        EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f);
    END LOOP;
END
$$;
