-- PostProject Monitor production schema: job search, time filters and sorts (issue 16).
--
-- A search term matches a job through the small name spaces it refers to, each indexed
-- where it is written rarely, so that the hot job path (request, claim, completion) pays
-- only plain B-tree inserts and no full-text segment per commit:
--   kind          the distinct kinds (job_counts) LIKE the term    -> jobs_by_kind
--   output asset  asset_search: trigram FTS5 over asset names     -> jobs_by_output
--   agent         job_agents: the distinct agent names            -> job_attempts_by_agent
--   worker        workers (registered, few) LIKE the term         -> job_attempts_by_worker
--   diagnostic    job_diagnostics: trigram FTS5 over failure diagnostics (written only
--                 when a job fails; a retried attempt's diagnostic stays in job_attempts)
--   id            the full id, or its tail of >= 6 hex digits     -> PRIMARY KEY, jobs_by_tail
-- The trigram tokenizer matches any substring of 3+ characters, case-insensitively, without
-- word rules that media names (shot_0420_v003.exr) break; shorter terms scan the small
-- tables and the diagnostics.
--
-- finished_at is when the job reached a final state (succeeded, failed, cancelled), written
-- by that transition; jobs_finished answers "finished within a range", jobs_by_requested_at
-- "requested within a range"; jobs_by_priority is the sort by priority (kind and state sort
-- through jobs_by_kind and jobs_by_state).

ALTER TABLE jobs ADD COLUMN finished_at INTEGER;

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
CREATE INDEX jobs_by_tail ON jobs (substr(id, 14));

CREATE INDEX job_attempts_by_agent ON job_attempts (agent_name) WHERE agent_name IS NOT NULL;
CREATE TABLE job_agents (name TEXT PRIMARY KEY) STRICT, WITHOUT ROWID;
INSERT INTO job_agents (name) SELECT DISTINCT agent_name FROM job_attempts WHERE agent_name IS NOT NULL;
CREATE TRIGGER job_agent_seen AFTER INSERT ON job_attempts
WHEN NEW.agent_name IS NOT NULL AND NOT EXISTS (SELECT 1 FROM job_agents WHERE name = NEW.agent_name) BEGIN
    INSERT INTO job_agents (name) VALUES (NEW.agent_name);
END;

CREATE VIRTUAL TABLE asset_search USING fts5 (asset UNINDEXED, name, tokenize = 'trigram');
INSERT INTO asset_search (asset, name) SELECT id, name FROM assets WHERE name IS NOT NULL;
CREATE TRIGGER asset_search_created AFTER INSERT ON assets WHEN NEW.name IS NOT NULL BEGIN
    INSERT INTO asset_search (asset, name) VALUES (NEW.id, NEW.name);
END;

CREATE VIRTUAL TABLE job_diagnostics USING fts5 (job UNINDEXED, body, tokenize = 'trigram');
INSERT INTO job_diagnostics (job, body) SELECT id, failure_diagnostic FROM jobs WHERE failure_diagnostic IS NOT NULL;
CREATE TRIGGER job_diagnostic_failed AFTER UPDATE OF failure_diagnostic ON jobs
WHEN NEW.failure_diagnostic IS NOT NULL AND OLD.failure_diagnostic IS NULL BEGIN
    INSERT INTO job_diagnostics (job, body) VALUES (NEW.id, NEW.failure_diagnostic);
END;
