-- Version 19 (PostgreSQL): the CHECK constraints of the tables every job writes become row
-- triggers, as the jobs table's did in the baseline (issue 27, ninth pass).
--
-- PostgreSQL rebuilds every CHECK constraint of a table from its stored text (stringToNode,
-- then expression planning) at each statement that writes the table, however few rows it
-- writes: callgrind on the server's backends (one-worker jobs of the executor path) put
-- ExecConstraints at 21 % of a job's server instructions, three quarters of it parsing.
-- A BEFORE row trigger's PL/pgSQL expression is compiled once per connection. A job writes
-- job_attempts twice (the claim's attempt, its end), revisions twice (the claim's and the
-- completion's), and activities, representations and representation_fingerprints once each;
-- their CHECK constraints (21 of them) are now a trigger on each, all five running one function,
-- row_invariants (jobs keeps its own, jobs_invariants). A row that breaks one is refused
-- as before: SQLSTATE 23514 (check_violation) naming the constraint, with the table; like a
-- CHECK, an invariant that evaluates to NULL holds. Tables written with one small CHECK
-- (metadata, activity_edges, revision_events, job_counts, job_clock) keep their constraints:
-- a trigger call costs about what parsing one short constraint does.
--
-- Measured by the server's instructions per job (benchmarks/bench_client_instructions.py
-- --server, 200 one-worker jobs): the executor path 5.70 M -> 4.92 M (-14 %); the floor
-- (benchmarks/pg_floor.py, which writes the same tables) 4.62 M -> 3.85 M; in CPU time, 6
-- alternating pairs of 1,500-job drains: the server's 1.60 -> 1.52 ms a job (-5 %: the parsing
-- this removes runs at a high rate per cycle). (A function per table instead of one: 4.87 M,
-- 1 % fewer.) Every other write to
-- these tables (an edit's revision, an attempt's progress) is cheaper alike. Nothing else
-- changes: the same rows are refused with the same SQLSTATE and constraint names.

-- One function for the five tables: each branch's NEW columns are resolved when it first runs,
-- for its own table (PL/pgSQL compiles a trigger function per table and plans each statement
-- when it first runs), so a branch names only its table's columns.
CREATE FUNCTION row_invariants() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    invariant text;
BEGIN
    IF TG_TABLE_NAME = 'job_attempts' THEN
        invariant := CASE
            WHEN (((NEW.outcome IS NULL) = (NEW.ended_at IS NULL))) IS FALSE THEN 'job_attempts_check'
            WHEN (((NEW.diagnostic IS NULL) OR ((octet_length(NEW.diagnostic) >= 1) AND (octet_length(NEW.diagnostic) <= 4096)))) IS FALSE THEN 'job_attempts_diagnostic_check'
            WHEN ((NEW.number >= 1)) IS FALSE THEN 'job_attempts_number_check'
            WHEN (((NEW.outcome IS NULL) OR ((NEW.outcome >= 1) AND (NEW.outcome <= 5)))) IS FALSE THEN 'job_attempts_outcome_check'
            WHEN (((NEW.progress_fraction IS NULL) OR ((NEW.progress_fraction >= 0.0::double precision) AND (NEW.progress_fraction <= 1.0::double precision)))) IS FALSE THEN 'job_attempts_progress_fraction_check'
            WHEN (((NEW.progress_message IS NULL) OR ((octet_length(NEW.progress_message) >= 1) AND (octet_length(NEW.progress_message) <= 1024)))) IS FALSE THEN 'job_attempts_progress_message_check'
            WHEN (((NEW.progress_stage IS NULL) OR ((octet_length(NEW.progress_stage) >= 1) AND (octet_length(NEW.progress_stage) <= 1024)))) IS FALSE THEN 'job_attempts_progress_stage_check'
            WHEN ((length(NEW.secret_hash) = 32)) IS FALSE THEN 'job_attempts_secret_hash_check'
        END;
    ELSIF TG_TABLE_NAME = 'revisions' THEN
        invariant := CASE
            WHEN (((NEW.message IS NULL) OR ((octet_length(NEW.message) >= 1) AND (octet_length(NEW.message) <= 4096)))) IS FALSE THEN 'revisions_message_check'
            WHEN (((NEW.origin IS NULL) OR ((octet_length(NEW.origin) >= 1) AND (octet_length(NEW.origin) <= 512)))) IS FALSE THEN 'revisions_origin_check'
            WHEN (((NEW.principal IS NULL) OR ((octet_length(NEW.principal) >= 1) AND (octet_length(NEW.principal) <= 128)))) IS FALSE THEN 'revisions_principal_check'
            WHEN ((NEW.sequence >= 1)) IS FALSE THEN 'revisions_sequence_check'
        END;
    ELSIF TG_TABLE_NAME = 'activities' THEN
        invariant := CASE
            WHEN (((NEW.finished_at IS NULL) OR (NEW.started_at IS NULL) OR (NEW.finished_at >= NEW.started_at))) IS FALSE THEN 'activities_check'
            WHEN (((NEW.tool_name IS NOT NULL) OR ((NEW.tool_version IS NULL) AND (NEW.tool_uri IS NULL)))) IS FALSE THEN 'activities_check1'
            WHEN (((length(NEW.kind) >= 1) AND (length(NEW.kind) <= 128))) IS FALSE THEN 'activities_kind_check'
        END;
    ELSIF TG_TABLE_NAME = 'representations' THEN
        invariant := CASE
            WHEN (((NEW.kind >= 0) AND (NEW.kind <= 3))) IS FALSE THEN 'representations_kind_check'
            WHEN ((length(NEW.path) >= 1)) IS FALSE THEN 'representations_path_check'
            WHEN ((NEW.size >= 0)) IS FALSE THEN 'representations_size_check'
        END;
    ELSIF TG_TABLE_NAME = 'representation_fingerprints' THEN
        invariant := CASE
            WHEN (((length(NEW.algorithm) >= 1) AND (length(NEW.algorithm) <= 64))) IS FALSE THEN 'representation_fingerprints_algorithm_check'
            WHEN (((NEW.version >= 0) AND (NEW.version <= 65535))) IS FALSE THEN 'representation_fingerprints_version_check'
        END;
    END IF;  -- the first invariant the row breaks (as with a CHECK, one that is NULL holds)
    IF invariant IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'check_violation', TABLE = TG_TABLE_NAME, CONSTRAINT = invariant,
            MESSAGE = format('new row for relation "%s" violates check constraint "%s"', TG_TABLE_NAME, invariant);
    END IF;
    RETURN NEW;
END
$fn$;

ALTER TABLE job_attempts
    DROP CONSTRAINT job_attempts_check,
    DROP CONSTRAINT job_attempts_diagnostic_check,
    DROP CONSTRAINT job_attempts_number_check,
    DROP CONSTRAINT job_attempts_outcome_check,
    DROP CONSTRAINT job_attempts_progress_fraction_check,
    DROP CONSTRAINT job_attempts_progress_message_check,
    DROP CONSTRAINT job_attempts_progress_stage_check,
    DROP CONSTRAINT job_attempts_secret_hash_check;
ALTER TABLE revisions
    DROP CONSTRAINT revisions_message_check,
    DROP CONSTRAINT revisions_origin_check,
    DROP CONSTRAINT revisions_principal_check,
    DROP CONSTRAINT revisions_sequence_check;
ALTER TABLE activities
    DROP CONSTRAINT activities_check,
    DROP CONSTRAINT activities_check1,
    DROP CONSTRAINT activities_kind_check;
ALTER TABLE representations
    DROP CONSTRAINT representations_kind_check,
    DROP CONSTRAINT representations_path_check,
    DROP CONSTRAINT representations_size_check;
ALTER TABLE representation_fingerprints
    DROP CONSTRAINT representation_fingerprints_algorithm_check,
    DROP CONSTRAINT representation_fingerprints_version_check;

CREATE TRIGGER job_attempts_invariants BEFORE INSERT OR UPDATE ON job_attempts
    FOR EACH ROW EXECUTE FUNCTION row_invariants();
CREATE TRIGGER revisions_invariants BEFORE INSERT OR UPDATE ON revisions
    FOR EACH ROW EXECUTE FUNCTION row_invariants();
CREATE TRIGGER activities_invariants BEFORE INSERT OR UPDATE ON activities
    FOR EACH ROW EXECUTE FUNCTION row_invariants();
CREATE TRIGGER representations_invariants BEFORE INSERT OR UPDATE ON representations
    FOR EACH ROW EXECUTE FUNCTION row_invariants();
CREATE TRIGGER representation_fingerprints_invariants BEFORE INSERT OR UPDATE ON representation_fingerprints
    FOR EACH ROW EXECUTE FUNCTION row_invariants();
