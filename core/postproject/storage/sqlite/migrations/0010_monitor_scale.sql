-- Schema version 10: what the monitor needs at a million jobs (SQLite). PostgreSQL's
-- 0010_monitor_scale.sql makes the same tables, columns, indexes and triggers.
--
-- 1. Job search by parameter: the string values of a job's typed parameters (metadata on the
--    job, asserted with its request) are indexed once, as they are asserted, so a ticket,
--    take or shot number a supervisor is handed finds its job.
-- 2. Per-worker attempt outcomes, maintained as the job counts are, so listing the workers
--    never counts a million attempts.
-- 3. Indexes for the sorts by finished time and by worker (keyset pages, either direction).
-- Existing productions get the new structures filled from their rows.


-- == 1. Job parameters, searchable =========================================================
-- job_parameters: one row per string value (string, language-tagged string or URI, also
-- inside lists and structures) of a job's parameters, its first 256 characters; found per
-- job through job_parameters_by_job (the ordered walk of a search tests each job it passes).
-- job_parameter_search: the same values, trigram-indexed (FTS5), to gather the jobs a term
-- matches (terms shorter than a trigram scan job_parameters). Parameters never change after
-- the request, so neither table is written on the hot job path (claims, completions).
CREATE TABLE job_parameters (
    job     BLOB NOT NULL CHECK (length(job) = 16),
    value   TEXT NOT NULL CHECK (length(value) BETWEEN 1 AND 256)
) STRICT;
CREATE INDEX job_parameters_by_job ON job_parameters (job, value);
CREATE VIRTUAL TABLE job_parameter_search USING fts5 (job UNINDEXED, body, tokenize = 'trigram');

CREATE TRIGGER job_parameters_asserted AFTER INSERT ON metadata WHEN NEW.target_kind = 5 BEGIN
    INSERT INTO job_parameters (job, value)
        SELECT NEW.target_id, substr(t.atom, 1, 256) FROM json_tree(NEW.value) t
        WHERE t.key = 'value' AND t.type = 'text' AND t.atom <> '';
    INSERT INTO job_parameter_search (job, body)
        SELECT NEW.target_id, substr(t.atom, 1, 256) FROM json_tree(NEW.value) t
        WHERE t.key = 'value' AND t.type = 'text' AND t.atom <> '';
END;

INSERT INTO job_parameters (job, value)
    SELECT m.target_id, substr(t.atom, 1, 256) FROM metadata m, json_tree(m.value) t
    WHERE m.target_kind = 5 AND t.key = 'value' AND t.type = 'text' AND t.atom <> ''
    ORDER BY m.id;
INSERT INTO job_parameter_search (job, body) SELECT job, value FROM job_parameters ORDER BY rowid;


-- == 2. Attempt outcomes per worker ========================================================
-- How many attempts of each registered worker ended with each outcome (1 succeeded, 2 failed,
-- 3 released, 4 lost, 5 cancelled), kept by triggers as attempts end (an unconfirmed stop
-- that ends lost moves from cancelled or released to lost).
CREATE TABLE worker_outcomes (
    worker_id   BLOB NOT NULL REFERENCES workers (id),
    outcome     INTEGER NOT NULL CHECK (outcome BETWEEN 1 AND 5),
    count       INTEGER NOT NULL CHECK (count >= 0),
    PRIMARY KEY (worker_id, outcome)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER worker_outcome_recorded AFTER INSERT ON job_attempts
WHEN NEW.worker_id IS NOT NULL AND NEW.outcome IS NOT NULL BEGIN
    INSERT INTO worker_outcomes (worker_id, outcome, count) VALUES (NEW.worker_id, NEW.outcome, 1)
    ON CONFLICT (worker_id, outcome) DO UPDATE SET count = count + 1;
END;

CREATE TRIGGER worker_outcome_ended AFTER UPDATE OF outcome ON job_attempts
WHEN NEW.worker_id IS NOT NULL AND NEW.outcome IS NOT OLD.outcome BEGIN
    UPDATE worker_outcomes SET count = count - 1
    WHERE OLD.outcome IS NOT NULL AND worker_id = OLD.worker_id AND outcome = OLD.outcome;
    INSERT INTO worker_outcomes (worker_id, outcome, count)
        SELECT NEW.worker_id, NEW.outcome, 1 WHERE NEW.outcome IS NOT NULL
    ON CONFLICT (worker_id, outcome) DO UPDATE SET count = count + 1;
END;

INSERT INTO worker_outcomes (worker_id, outcome, count)
    SELECT worker_id, outcome, count(*) FROM job_attempts
    WHERE worker_id IS NOT NULL AND outcome IS NOT NULL GROUP BY worker_id, outcome;


-- == 3. Sorts by finished time and by worker ===============================================
-- Finished: jobs not finished yet sort before every finished one (so newest-finished first
-- lists them last); the finished ones through jobs_finished (every state) or
-- jobs_finished_by_state (one state), the others through jobs_unfinished.
CREATE INDEX jobs_unfinished ON jobs (id) WHERE finished_at IS NULL;
CREATE INDEX jobs_finished_by_state ON jobs (state, finished_at, id) WHERE finished_at IS NOT NULL;
-- Worker: the claims of registered workers by worker name (the workers table, few rows, in
-- name order), each worker's by id; every other job after them, by id.
CREATE INDEX jobs_by_claim_worker ON jobs (claim_worker_id, id) WHERE claim_worker_id IS NOT NULL;
