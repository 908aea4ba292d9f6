-- Schema version 10: what the monitor needs at a million jobs (PostgreSQL); SQLite's
-- 0010_monitor_scale.sql says what each part is for. The same tables, columns, indexes and
-- triggers, except that where SQLite keeps a trigram FTS5 table (job_parameter_search),
-- job_parameters has a GIN trigram index here, matched with ILIKE.


-- == 1. Job parameters, searchable =========================================================
CREATE TABLE job_parameters (
    job     uuid NOT NULL,
    value   text NOT NULL CHECK (char_length(value) BETWEEN 1 AND 256)
);
CREATE INDEX job_parameters_by_job ON job_parameters (job, value);
CREATE INDEX job_parameters_value ON job_parameters USING gin (value public.gin_trgm_ops);

-- Every object member named "value" that holds a string, at any depth: SQLite's json_tree
-- rows with key 'value' and type 'text'.
CREATE FUNCTION job_parameter_values(document json) RETURNS SETOF text LANGUAGE sql IMMUTABLE
SET search_path FROM CURRENT AS $$
    SELECT left(v #>> '{}', 256)
    FROM jsonb_path_query(document::jsonb, 'lax $.** ? (@.type() == "object").value ? (@.type() == "string")') v
    WHERE v #>> '{}' <> ''
$$;

CREATE FUNCTION job_parameters_asserted() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO job_parameters (job, value) SELECT NEW.target_id, job_parameter_values(NEW.value);
    RETURN NULL;
END
$$;
CREATE TRIGGER job_parameters_asserted AFTER INSERT ON metadata
    FOR EACH ROW WHEN (NEW.target_kind = 5) EXECUTE FUNCTION job_parameters_asserted();

INSERT INTO job_parameters (job, value)
    SELECT m.target_id, job_parameter_values(m.value) FROM metadata m WHERE m.target_kind = 5 ORDER BY m.id;


-- == 2. Attempt outcomes per worker ========================================================
CREATE TABLE worker_outcomes (
    worker_id   uuid NOT NULL REFERENCES workers (id),
    outcome     smallint NOT NULL CHECK (outcome BETWEEN 1 AND 5),
    count       bigint NOT NULL CHECK (count >= 0),
    PRIMARY KEY (worker_id, outcome)
);

CREATE FUNCTION worker_outcome_counted() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.outcome IS NOT NULL THEN
        UPDATE worker_outcomes SET count = count - 1 WHERE worker_id = OLD.worker_id AND outcome = OLD.outcome;
    END IF;
    IF NEW.outcome IS NOT NULL THEN
        INSERT INTO worker_outcomes AS o (worker_id, outcome, count) VALUES (NEW.worker_id, NEW.outcome, 1)
        ON CONFLICT (worker_id, outcome) DO UPDATE SET count = o.count + 1;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER worker_outcome_recorded AFTER INSERT ON job_attempts
    FOR EACH ROW WHEN (NEW.worker_id IS NOT NULL AND NEW.outcome IS NOT NULL)
    EXECUTE FUNCTION worker_outcome_counted();
CREATE TRIGGER worker_outcome_ended AFTER UPDATE OF outcome ON job_attempts
    FOR EACH ROW WHEN (NEW.worker_id IS NOT NULL AND NEW.outcome IS DISTINCT FROM OLD.outcome)
    EXECUTE FUNCTION worker_outcome_counted();

INSERT INTO worker_outcomes (worker_id, outcome, count)
    SELECT worker_id, outcome, count(*) FROM job_attempts
    WHERE worker_id IS NOT NULL AND outcome IS NOT NULL GROUP BY worker_id, outcome;


-- == 3. Sorts by finished time and by worker ===============================================
CREATE INDEX jobs_unfinished ON jobs (id) WHERE finished_at IS NULL;
CREATE INDEX jobs_finished_by_state ON jobs (state, finished_at, id) WHERE finished_at IS NOT NULL;
CREATE INDEX jobs_by_claim_worker ON jobs (claim_worker_id, id) WHERE claim_worker_id IS NOT NULL;
