-- Migration 0006: less server work per job write. The jobs table's invariants are checked by
-- one row trigger instead of nineteen CHECK constraints, pp_publish numbers what an edit wrote
-- in two statements instead of up to six, and a state change moves its job count in one.
--
-- PostgreSQL rebuilds every CHECK constraint of a table from its stored text (stringToNode, then
-- expression planning) at each statement that writes the table; nothing is kept between
-- statements. The jobs table has nineteen, and a worker's job writes its row four times (claim,
-- completion, and pp_publish numbering each): measured, the constraints cost ~70 us per write
-- (UPDATE of one row by key: 165 us with them, 70 us without, 95 us with this trigger), about
-- a tenth of the server's CPU per job. A BEFORE trigger's PL/pgSQL expression is compiled once
-- per connection. Same invariants, same refusal: a row that breaks one is refused with SQLSTATE
-- 23514 (check_violation), naming the invariant as the constraint did; like a CHECK, an
-- invariant that evaluates to NULL holds. Other tables keep their few, small CHECKs (cheaper
-- than a trigger call). SQLite compiles its CHECKs into each prepared statement: its 0006 is empty.

DO $$
DECLARE
    name text;
BEGIN
    FOR name IN SELECT c.conname FROM pg_constraint c
                WHERE c.conrelid = 'jobs'::regclass AND c.contype = 'c' ORDER BY c.conname LOOP
        EXECUTE format('ALTER TABLE jobs DROP CONSTRAINT %I', name);
    END LOOP;
END
$$;

CREATE FUNCTION jobs_invariants() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    invariant text;
BEGIN
    invariant := CASE
        WHEN ((NEW.attempts >= 0)) IS FALSE THEN 'jobs_attempts_check'
        WHEN (((NEW.state = 4) = (NEW.failure_diagnostic IS NOT NULL))) IS FALSE THEN 'jobs_check10'
        WHEN (((NEW.idempotency_key IS NULL) = (NEW.request_digest IS NULL))) IS FALSE THEN 'jobs_check11'
        WHEN (((NEW.state = 2) = ((NEW.claim_secret_hash IS NOT NULL) AND (NEW.claim_tool_name IS NOT NULL) AND (NEW.claimed_at IS NOT NULL) AND (NEW.claim_expires_at IS NOT NULL) AND (NEW.claim_sequence IS NOT NULL) AND (NEW.claim_attempt IS NOT NULL)))) IS FALSE THEN 'jobs_check5'
        WHEN (((NEW.state = 2) OR ((NEW.claim_secret_hash IS NULL) AND (NEW.claim_tool_name IS NULL) AND (NEW.claim_tool_version IS NULL) AND (NEW.claim_tool_uri IS NULL) AND (NEW.claim_agent_name IS NULL) AND (NEW.claim_worker_id IS NULL) AND (NEW.claim_session IS NULL) AND (NEW.claimed_at IS NULL) AND (NEW.claim_expires_at IS NULL) AND (NEW.claim_sequence IS NULL) AND (NEW.claim_attempt IS NULL)))) IS FALSE THEN 'jobs_check6'
        WHEN (((NEW.claim_worker_id IS NULL) = (NEW.claim_session IS NULL))) IS FALSE THEN 'jobs_check7'
        WHEN (((NEW.state = 3) = ((NEW.completion_activity_id IS NOT NULL) AND (NEW.completion_representation_id IS NOT NULL)))) IS FALSE THEN 'jobs_check8'
        WHEN (((NEW.state = 3) OR ((NEW.completion_activity_id IS NULL) AND (NEW.completion_representation_id IS NULL)))) IS FALSE THEN 'jobs_check9'
        WHEN (((NEW.claim_secret_hash IS NULL) OR (length(NEW.claim_secret_hash) = 32))) IS FALSE THEN 'jobs_claim_secret_hash_check'
        WHEN ((NEW.dependencies >= 0)) IS FALSE THEN 'jobs_dependencies_check'
        WHEN (((NEW.failure_diagnostic IS NULL) OR ((octet_length(NEW.failure_diagnostic) >= 1) AND (octet_length(NEW.failure_diagnostic) <= 4096)))) IS FALSE THEN 'jobs_failure_diagnostic_check1'
        WHEN (((length(NEW.inputs) % 16) = 0)) IS FALSE THEN 'jobs_inputs_check1'
        WHEN (((length(NEW.kind) >= 1) AND (length(NEW.kind) <= 128))) IS FALSE THEN 'jobs_kind_check1'
        WHEN (((NEW.max_attempts IS NULL) OR ((NEW.max_attempts >= 1) AND (NEW.max_attempts <= 1000)))) IS FALSE THEN 'jobs_max_attempts_check'
        WHEN (((NEW.output_kind >= 0) AND (NEW.output_kind <= 3))) IS FALSE THEN 'jobs_output_kind_check1'
        WHEN (((NEW.priority >= '-1000'::integer) AND (NEW.priority <= 1000))) IS FALSE THEN 'jobs_priority_check'
        WHEN (((NEW.request_digest IS NULL) OR (length(NEW.request_digest) = 32))) IS FALSE THEN 'jobs_request_digest_check'
        WHEN (((NEW.state >= 1) AND (NEW.state <= 5))) IS FALSE THEN 'jobs_state_check1'
        WHEN ((NEW.waiting >= 0)) IS FALSE THEN 'jobs_waiting_check'
    END;  -- the first invariant the row breaks (as with a CHECK, one that is NULL holds)
    IF invariant IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'check_violation', TABLE = 'jobs', CONSTRAINT = invariant,
            MESSAGE = format('new row for relation "jobs" violates check constraint "%s"', invariant);
    END IF;
    RETURN NEW;
END
$fn$;

CREATE TRIGGER jobs_invariants BEFORE INSERT OR UPDATE ON jobs
    FOR EACH ROW EXECUTE FUNCTION jobs_invariants();

-- pp_publish numbers an edit's rows in two statements (what it wrote besides jobs, then its
-- jobs). It runs under the numbering lock, and each statement a PL/pgSQL function runs pays an
-- executor start-up and its own round of foreign-key checks: a worker's completion renumbered
-- its output, fingerprint, activity, edges, metadata and job in six. (Unchanged: what is
-- numbered, the lock, the revision, its events and the notification.)
CREATE OR REPLACE FUNCTION pp_publish(
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
    p_reset boolean  -- the edit lowered job_clock's mark (reset_clock): this revision carries it
) RETURNS TABLE (published bigint, mark bigint, server_now bigint) LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    seq bigint;
    last_mark bigint;
    stored bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(1347441202, hashtext(current_schema()));
    server_now := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;  -- when the lock was taken
    SELECT r.sequence, r.clock_mark INTO seq, last_mark FROM revisions r ORDER BY r.sequence DESC LIMIT 1;
    seq := coalesce(seq, 0) + 1;
    SELECT c.high_water INTO stored FROM job_clock c;
    mark := CASE WHEN p_reset THEN greatest(stored, p_high_water) ELSE greatest(last_mark, stored, p_high_water) END;
    IF p_assets IS NOT NULL THEN
        UPDATE assets SET created_sequence = seq WHERE id = ANY (p_assets) AND created_sequence = p_provisional;
    END IF;
    IF p_roots IS NOT NULL THEN
        UPDATE media_roots SET created_sequence = seq WHERE id = ANY (p_roots) AND created_sequence = p_provisional;
    END IF;
    IF p_representations IS NOT NULL OR p_fingerprinted IS NOT NULL OR p_activities IS NOT NULL
       OR p_metadata_targets IS NOT NULL THEN
        -- What the edit wrote besides jobs, numbered in one statement (one executor start-up
        -- and one round of foreign-key checks instead of up to five, under the numbering
        -- lock). A table the edit did not write is passed NULL: its part matches no row.
        WITH r AS (
            UPDATE representations SET created_sequence = seq
            WHERE id = ANY (p_representations) AND created_sequence = p_provisional
        ), f AS (
            UPDATE representation_fingerprints SET recorded_sequence = seq
            WHERE representation_id = ANY (p_fingerprinted) AND recorded_sequence = p_provisional
        ), a AS (
            UPDATE activities SET created_sequence = seq
            WHERE id = ANY (p_activities) AND created_sequence = p_provisional
        ), e AS (
            -- each new edge's representation fingerprints as they are now (this statement sees
            -- the fingerprints the edit recorded; the renumbering above does not change them)
            UPDATE activity_edges e SET snapshot_sequence = seq, snapshot_fingerprints = (
                SELECT coalesce('[' || string_agg(format('[%s,%s,"%s"]', to_json(x.algorithm), x.version,
                                                         upper(encode(x.value, 'hex'))), ','
                                                  ORDER BY x.algorithm, x.version) || ']', '[]')::json
                FROM representation_fingerprints x WHERE x.representation_id = e.representation_id)
            WHERE e.activity_id = ANY (p_activities)
        )
        UPDATE metadata m SET created_sequence = seq
        FROM unnest(p_metadata_kinds, p_metadata_targets) AS t (kind, target)
        WHERE m.target_kind = t.kind AND m.target_id = t.target AND m.created_sequence = p_provisional;
    END IF;
    IF p_jobs IS NOT NULL THEN
        UPDATE jobs SET
            requested_sequence = CASE WHEN requested_sequence = p_provisional THEN seq ELSE requested_sequence END,
            updated_sequence = CASE WHEN updated_sequence = p_provisional THEN seq ELSE updated_sequence END,
            claim_sequence = CASE WHEN claim_sequence = p_provisional THEN seq ELSE claim_sequence END
        WHERE id = ANY (p_jobs);
    END IF;
    INSERT INTO revisions (sequence, id, committed_at, origin, message, clock_mark)
    VALUES (seq, p_id, p_committed_at, p_origin, p_message, mark);
    INSERT INTO revision_events (sequence, position, kind, subject, payload)
    SELECT seq, e.position, e.kind, e.subject, e.payload::json
    FROM unnest(p_positions, p_kinds, p_subjects, p_payloads) AS e (position, kind, subject, payload);
    PERFORM pg_notify('postproject', current_schema() || ' ' || seq || ' ' || coalesce(mark::text, ''));
    published := seq;
    RETURN NEXT;
END
$$;

-- The job counts (applied at commit, under the numbering lock): a state change moves one job
-- from one count to the other in one statement when both rows exist (they almost always do);
-- when one is missing (the first job of a kind to reach a state), that statement is undone and
-- the change applied as before (the old count lowered, the new one inserted or raised).
CREATE OR REPLACE FUNCTION job_counts_maintain() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    moved bigint;
BEGIN
    IF TG_OP = 'UPDATE' THEN
        UPDATE job_counts SET count = count + CASE WHEN kind = NEW.kind AND state = NEW.state THEN 1 ELSE -1 END
        WHERE (kind, state) IN ((OLD.kind, OLD.state), (NEW.kind, NEW.state));
        GET DIAGNOSTICS moved = ROW_COUNT;
        IF moved = 2 THEN
            RETURN NULL;
        END IF;
        UPDATE job_counts SET count = count - CASE WHEN kind = NEW.kind AND state = NEW.state THEN 1 ELSE -1 END
        WHERE (kind, state) IN ((OLD.kind, OLD.state), (NEW.kind, NEW.state));
        UPDATE job_counts SET count = count - 1 WHERE kind = OLD.kind AND state = OLD.state;
    END IF;
    INSERT INTO job_counts AS c (kind, state, count) VALUES (NEW.kind, NEW.state, 1)
    ON CONFLICT (kind, state) DO UPDATE SET count = c.count + 1;
    RETURN NULL;
END
$$;
