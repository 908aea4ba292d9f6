-- Migration 0006: the jobs table's invariants, checked by one row trigger instead of twenty
-- CHECK constraints.
--
-- PostgreSQL rebuilds every CHECK constraint of a table from its stored text (stringToNode, then
-- expression planning) at each statement that writes the table; nothing is kept between
-- statements. The jobs table has twenty, and a worker's job writes its row four times (claim,
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
    IF ((NEW.attempts >= 0)) IS FALSE
        OR (((NEW.state = 4) = (NEW.failure_diagnostic IS NOT NULL))) IS FALSE
        OR (((NEW.idempotency_key IS NULL) = (NEW.request_digest IS NULL))) IS FALSE
        OR (((NEW.state = 2) = ((NEW.claim_secret_hash IS NOT NULL) AND (NEW.claim_tool_name IS NOT NULL) AND (NEW.claimed_at IS NOT NULL) AND (NEW.claim_expires_at IS NOT NULL) AND (NEW.claim_sequence IS NOT NULL) AND (NEW.claim_attempt IS NOT NULL)))) IS FALSE
        OR (((NEW.state = 2) OR ((NEW.claim_secret_hash IS NULL) AND (NEW.claim_tool_name IS NULL) AND (NEW.claim_tool_version IS NULL) AND (NEW.claim_tool_uri IS NULL) AND (NEW.claim_agent_name IS NULL) AND (NEW.claim_worker_id IS NULL) AND (NEW.claim_session IS NULL) AND (NEW.claimed_at IS NULL) AND (NEW.claim_expires_at IS NULL) AND (NEW.claim_sequence IS NULL) AND (NEW.claim_attempt IS NULL)))) IS FALSE
        OR (((NEW.claim_worker_id IS NULL) = (NEW.claim_session IS NULL))) IS FALSE
        OR (((NEW.state = 3) = ((NEW.completion_activity_id IS NOT NULL) AND (NEW.completion_representation_id IS NOT NULL)))) IS FALSE
        OR (((NEW.state = 3) OR ((NEW.completion_activity_id IS NULL) AND (NEW.completion_representation_id IS NULL)))) IS FALSE
        OR (((NEW.claim_secret_hash IS NULL) OR (length(NEW.claim_secret_hash) = 32))) IS FALSE
        OR ((NEW.dependencies >= 0)) IS FALSE
        OR (((NEW.failure_diagnostic IS NULL) OR ((octet_length(NEW.failure_diagnostic) >= 1) AND (octet_length(NEW.failure_diagnostic) <= 4096)))) IS FALSE
        OR (((length(NEW.inputs) % 16) = 0)) IS FALSE
        OR (((length(NEW.kind) >= 1) AND (length(NEW.kind) <= 128))) IS FALSE
        OR (((NEW.max_attempts IS NULL) OR ((NEW.max_attempts >= 1) AND (NEW.max_attempts <= 1000)))) IS FALSE
        OR (((NEW.output_kind >= 0) AND (NEW.output_kind <= 3))) IS FALSE
        OR (((NEW.priority >= '-1000'::integer) AND (NEW.priority <= 1000))) IS FALSE
        OR (((NEW.request_digest IS NULL) OR (length(NEW.request_digest) = 32))) IS FALSE
        OR (((NEW.state >= 1) AND (NEW.state <= 5))) IS FALSE
        OR ((NEW.waiting >= 0)) IS FALSE THEN
        IF ((NEW.attempts >= 0)) IS FALSE THEN invariant := 'jobs_attempts_check';
        ELSIF (((NEW.state = 4) = (NEW.failure_diagnostic IS NOT NULL))) IS FALSE THEN invariant := 'jobs_check10';
        ELSIF (((NEW.idempotency_key IS NULL) = (NEW.request_digest IS NULL))) IS FALSE THEN invariant := 'jobs_check11';
        ELSIF (((NEW.state = 2) = ((NEW.claim_secret_hash IS NOT NULL) AND (NEW.claim_tool_name IS NOT NULL) AND (NEW.claimed_at IS NOT NULL) AND (NEW.claim_expires_at IS NOT NULL) AND (NEW.claim_sequence IS NOT NULL) AND (NEW.claim_attempt IS NOT NULL)))) IS FALSE THEN invariant := 'jobs_check5';
        ELSIF (((NEW.state = 2) OR ((NEW.claim_secret_hash IS NULL) AND (NEW.claim_tool_name IS NULL) AND (NEW.claim_tool_version IS NULL) AND (NEW.claim_tool_uri IS NULL) AND (NEW.claim_agent_name IS NULL) AND (NEW.claim_worker_id IS NULL) AND (NEW.claim_session IS NULL) AND (NEW.claimed_at IS NULL) AND (NEW.claim_expires_at IS NULL) AND (NEW.claim_sequence IS NULL) AND (NEW.claim_attempt IS NULL)))) IS FALSE THEN invariant := 'jobs_check6';
        ELSIF (((NEW.claim_worker_id IS NULL) = (NEW.claim_session IS NULL))) IS FALSE THEN invariant := 'jobs_check7';
        ELSIF (((NEW.state = 3) = ((NEW.completion_activity_id IS NOT NULL) AND (NEW.completion_representation_id IS NOT NULL)))) IS FALSE THEN invariant := 'jobs_check8';
        ELSIF (((NEW.state = 3) OR ((NEW.completion_activity_id IS NULL) AND (NEW.completion_representation_id IS NULL)))) IS FALSE THEN invariant := 'jobs_check9';
        ELSIF (((NEW.claim_secret_hash IS NULL) OR (length(NEW.claim_secret_hash) = 32))) IS FALSE THEN invariant := 'jobs_claim_secret_hash_check';
        ELSIF ((NEW.dependencies >= 0)) IS FALSE THEN invariant := 'jobs_dependencies_check';
        ELSIF (((NEW.failure_diagnostic IS NULL) OR ((octet_length(NEW.failure_diagnostic) >= 1) AND (octet_length(NEW.failure_diagnostic) <= 4096)))) IS FALSE THEN invariant := 'jobs_failure_diagnostic_check1';
        ELSIF (((length(NEW.inputs) % 16) = 0)) IS FALSE THEN invariant := 'jobs_inputs_check1';
        ELSIF (((length(NEW.kind) >= 1) AND (length(NEW.kind) <= 128))) IS FALSE THEN invariant := 'jobs_kind_check1';
        ELSIF (((NEW.max_attempts IS NULL) OR ((NEW.max_attempts >= 1) AND (NEW.max_attempts <= 1000)))) IS FALSE THEN invariant := 'jobs_max_attempts_check';
        ELSIF (((NEW.output_kind >= 0) AND (NEW.output_kind <= 3))) IS FALSE THEN invariant := 'jobs_output_kind_check1';
        ELSIF (((NEW.priority >= '-1000'::integer) AND (NEW.priority <= 1000))) IS FALSE THEN invariant := 'jobs_priority_check';
        ELSIF (((NEW.request_digest IS NULL) OR (length(NEW.request_digest) = 32))) IS FALSE THEN invariant := 'jobs_request_digest_check';
        ELSIF (((NEW.state >= 1) AND (NEW.state <= 5))) IS FALSE THEN invariant := 'jobs_state_check1';
        ELSIF ((NEW.waiting >= 0)) IS FALSE THEN invariant := 'jobs_waiting_check';
        END IF;
        RAISE EXCEPTION USING ERRCODE = 'check_violation', TABLE = 'jobs', CONSTRAINT = invariant,
            MESSAGE = format('new row for relation "jobs" violates check constraint "%s"', invariant);
    END IF;
    RETURN NEW;
END
$fn$;

CREATE TRIGGER jobs_invariants BEFORE INSERT OR UPDATE ON jobs
    FOR EACH ROW EXECUTE FUNCTION jobs_invariants();
