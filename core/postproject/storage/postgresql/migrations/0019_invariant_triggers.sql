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
-- their CHECK constraints (21 of them) are these triggers now. A row that breaks one is refused
-- as before: SQLSTATE 23514 (check_violation) naming the constraint, with the table; like a
-- CHECK, an invariant that evaluates to NULL holds. Tables written with one small CHECK
-- (metadata, activity_edges, revision_events, job_counts, job_clock) keep their constraints:
-- a trigger call costs about what parsing one short constraint does.
--
-- Measured by the server's instructions per job (benchmarks/bench_client_instructions.py
-- --server, 200 one-worker jobs): the executor path 5.70 M -> 4.87 M (-15 %); the floor
-- (benchmarks/pg_floor.py, which writes the same tables) 4.62 M -> 3.79 M. Every other write to
-- these tables (an edit's revision, an attempt's progress) is cheaper alike. Nothing else
-- changes: the same rows are refused with the same SQLSTATE and constraint names.

CREATE FUNCTION job_attempts_invariants() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    invariant text;
BEGIN
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
    IF invariant IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'check_violation', TABLE = 'job_attempts', CONSTRAINT = invariant,
            MESSAGE = format('new row for relation "job_attempts" violates check constraint "%s"', invariant);
    END IF;
    RETURN NEW;
END
$fn$;

CREATE FUNCTION revisions_invariants() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    invariant text;
BEGIN
    invariant := CASE
        WHEN (((NEW.message IS NULL) OR ((octet_length(NEW.message) >= 1) AND (octet_length(NEW.message) <= 4096)))) IS FALSE THEN 'revisions_message_check'
        WHEN (((NEW.origin IS NULL) OR ((octet_length(NEW.origin) >= 1) AND (octet_length(NEW.origin) <= 512)))) IS FALSE THEN 'revisions_origin_check'
        WHEN (((NEW.principal IS NULL) OR ((octet_length(NEW.principal) >= 1) AND (octet_length(NEW.principal) <= 128)))) IS FALSE THEN 'revisions_principal_check'
        WHEN ((NEW.sequence >= 1)) IS FALSE THEN 'revisions_sequence_check'
    END;
    IF invariant IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'check_violation', TABLE = 'revisions', CONSTRAINT = invariant,
            MESSAGE = format('new row for relation "revisions" violates check constraint "%s"', invariant);
    END IF;
    RETURN NEW;
END
$fn$;

CREATE FUNCTION activities_invariants() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    invariant text;
BEGIN
    invariant := CASE
        WHEN (((NEW.finished_at IS NULL) OR (NEW.started_at IS NULL) OR (NEW.finished_at >= NEW.started_at))) IS FALSE THEN 'activities_check'
        WHEN (((NEW.tool_name IS NOT NULL) OR ((NEW.tool_version IS NULL) AND (NEW.tool_uri IS NULL)))) IS FALSE THEN 'activities_check1'
        WHEN (((length(NEW.kind) >= 1) AND (length(NEW.kind) <= 128))) IS FALSE THEN 'activities_kind_check'
    END;
    IF invariant IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'check_violation', TABLE = 'activities', CONSTRAINT = invariant,
            MESSAGE = format('new row for relation "activities" violates check constraint "%s"', invariant);
    END IF;
    RETURN NEW;
END
$fn$;

CREATE FUNCTION representations_invariants() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    invariant text;
BEGIN
    invariant := CASE
        WHEN (((NEW.kind >= 0) AND (NEW.kind <= 3))) IS FALSE THEN 'representations_kind_check'
        WHEN ((length(NEW.path) >= 1)) IS FALSE THEN 'representations_path_check'
        WHEN ((NEW.size >= 0)) IS FALSE THEN 'representations_size_check'
    END;
    IF invariant IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'check_violation', TABLE = 'representations', CONSTRAINT = invariant,
            MESSAGE = format('new row for relation "representations" violates check constraint "%s"', invariant);
    END IF;
    RETURN NEW;
END
$fn$;

CREATE FUNCTION representation_fingerprints_invariants() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    invariant text;
BEGIN
    invariant := CASE
        WHEN (((length(NEW.algorithm) >= 1) AND (length(NEW.algorithm) <= 64))) IS FALSE THEN 'representation_fingerprints_algorithm_check'
        WHEN (((NEW.version >= 0) AND (NEW.version <= 65535))) IS FALSE THEN 'representation_fingerprints_version_check'
    END;
    IF invariant IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'check_violation', TABLE = 'representation_fingerprints', CONSTRAINT = invariant,
            MESSAGE = format('new row for relation "representation_fingerprints" violates check constraint "%s"', invariant);
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
    FOR EACH ROW EXECUTE FUNCTION job_attempts_invariants();
CREATE TRIGGER revisions_invariants BEFORE INSERT OR UPDATE ON revisions
    FOR EACH ROW EXECUTE FUNCTION revisions_invariants();
CREATE TRIGGER activities_invariants BEFORE INSERT OR UPDATE ON activities
    FOR EACH ROW EXECUTE FUNCTION activities_invariants();
CREATE TRIGGER representations_invariants BEFORE INSERT OR UPDATE ON representations
    FOR EACH ROW EXECUTE FUNCTION representations_invariants();
CREATE TRIGGER representation_fingerprints_invariants BEFORE INSERT OR UPDATE ON representation_fingerprints
    FOR EACH ROW EXECUTE FUNCTION representation_fingerprints_invariants();
