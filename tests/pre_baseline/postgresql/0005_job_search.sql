-- PostProject Monitor production schema, version 5 (PostgreSQL): job search, time filters and
-- sorts, as storage/sqlite/migrations/0005_job_search.sql. Where SQLite keeps trigram FTS5
-- tables, asset_search and job_diagnostics are plain tables with GIN trigram indexes
-- (pg_trgm, a trusted extension since PostgreSQL 13), matched with ILIKE.

CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;

ALTER TABLE jobs ADD COLUMN finished_at bigint;

UPDATE jobs SET finished_at = coalesce(
    (SELECT max(a.ended_at) FROM job_attempts a WHERE a.job_id = jobs.id),
    (SELECT r.committed_at FROM revisions r WHERE r.sequence = jobs.updated_sequence),
    requested_at)
WHERE state >= 3;

CREATE INDEX jobs_finished ON jobs (finished_at, id) WHERE finished_at IS NOT NULL;
CREATE INDEX jobs_by_requested_at ON jobs (requested_at, id);
CREATE INDEX jobs_by_priority ON jobs (priority, id);
CREATE INDEX jobs_by_output ON jobs (output_asset_id, id);
-- The last 3 bytes of an id: its last 6 hex digits (the monitor shows the last 8).
CREATE INDEX jobs_by_tail ON jobs (substring(uuid_send(id) FROM 14));

CREATE INDEX job_attempts_by_agent ON job_attempts (agent_name) WHERE agent_name IS NOT NULL;
CREATE TABLE job_agents (name text COLLATE "C" PRIMARY KEY);
INSERT INTO job_agents (name) SELECT DISTINCT agent_name FROM job_attempts WHERE agent_name IS NOT NULL;
CREATE FUNCTION job_agent_seen() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO job_agents (name) VALUES (NEW.agent_name) ON CONFLICT (name) DO NOTHING;
    RETURN NULL;
END
$$;
CREATE TRIGGER job_agent_seen AFTER INSERT ON job_attempts
    FOR EACH ROW WHEN (NEW.agent_name IS NOT NULL) EXECUTE FUNCTION job_agent_seen();

CREATE TABLE asset_search (asset uuid NOT NULL, name text NOT NULL);
CREATE INDEX asset_search_name ON asset_search USING gin (name public.gin_trgm_ops);
INSERT INTO asset_search (asset, name) SELECT id, name FROM assets WHERE name IS NOT NULL;
CREATE FUNCTION asset_search_created() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO asset_search (asset, name) VALUES (NEW.id, NEW.name);
    RETURN NULL;
END
$$;
CREATE TRIGGER asset_search_created AFTER INSERT ON assets
    FOR EACH ROW WHEN (NEW.name IS NOT NULL) EXECUTE FUNCTION asset_search_created();

CREATE TABLE job_diagnostics (job uuid NOT NULL, body text NOT NULL);
CREATE INDEX job_diagnostics_body ON job_diagnostics USING gin (body public.gin_trgm_ops);
INSERT INTO job_diagnostics (job, body) SELECT id, failure_diagnostic FROM jobs WHERE failure_diagnostic IS NOT NULL;
CREATE FUNCTION job_diagnostic_failed() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO job_diagnostics (job, body) VALUES (NEW.id, NEW.failure_diagnostic);
    RETURN NULL;
END
$$;
CREATE TRIGGER job_diagnostic_failed AFTER UPDATE OF failure_diagnostic ON jobs
    FOR EACH ROW WHEN (NEW.failure_diagnostic IS NOT NULL AND OLD.failure_diagnostic IS NULL)
    EXECUTE FUNCTION job_diagnostic_failed();
