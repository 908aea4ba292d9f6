-- PostProject Monitor production schema: job search, time filters and sorts (issue 16).
--
-- job_search is an FTS5 index with the trigram tokenizer: any substring of three or more
-- characters matches (ids, kind names, asset names, agent and worker names, diagnostics),
-- case-insensitively, without word rules that media names (shot_0420_v003.exr) break. It is
-- append-only: one document when a job is requested (its id, kind, output asset name and
-- target root), one when a claim brings an agent or worker the job has not had before, one
-- per failure diagnostic (a final failure, or a failed attempt that is retried). A job
-- matches when any of its documents does, so a search by worker finds every job that ran
-- there. Nothing is ever updated or deleted in it: a transition adds at most one small
-- document, and a completion adds none.
--
-- finished_at is when the job reached a final state (succeeded, failed, cancelled),
-- written by that transition; jobs_finished answers "finished within a range" and
-- jobs_by_requested_at "requested within a range". jobs_by_priority is the sort by
-- priority (kind and state sort through jobs_by_kind and jobs_by_state).

ALTER TABLE jobs ADD COLUMN finished_at INTEGER;

UPDATE jobs SET finished_at = coalesce(
    (SELECT max(a.ended_at) FROM job_attempts a WHERE a.job_id = jobs.id),
    (SELECT r.committed_at FROM revisions r WHERE r.sequence = jobs.updated_sequence),
    requested_at)
WHERE state >= 3;

CREATE INDEX jobs_finished ON jobs (finished_at, id) WHERE finished_at IS NOT NULL;
CREATE INDEX jobs_by_requested_at ON jobs (requested_at, id);
CREATE INDEX jobs_by_priority ON jobs (priority, id);

CREATE VIRTUAL TABLE job_search USING fts5 (job UNINDEXED, body, tokenize = 'trigram');

CREATE TRIGGER job_search_requested AFTER INSERT ON jobs BEGIN
    INSERT INTO job_search (job, body) VALUES (NEW.id,
        lower(substr(hex(NEW.id), 1, 8) || '-' || substr(hex(NEW.id), 9, 4) || '-' || substr(hex(NEW.id), 13, 4)
              || '-' || substr(hex(NEW.id), 17, 4) || '-' || substr(hex(NEW.id), 21, 12))
        || ' ' || NEW.kind
        || coalesce(' ' || (SELECT name FROM assets WHERE id = NEW.output_asset_id), '')
        || coalesce(' ' || NEW.target_root, ''));
END;

CREATE TRIGGER job_search_claimed AFTER INSERT ON job_attempts
WHEN (NEW.agent_name IS NOT NULL OR NEW.worker_id IS NOT NULL)
     AND NOT EXISTS (SELECT 1 FROM job_attempts a WHERE a.job_id = NEW.job_id AND a.number < NEW.number
                     AND a.agent_name IS NEW.agent_name AND a.worker_id IS NEW.worker_id) BEGIN
    INSERT INTO job_search (job, body) VALUES (NEW.job_id,
        trim(coalesce(NEW.agent_name, '') || ' '
             || coalesce((SELECT name FROM workers WHERE id = NEW.worker_id), '')));
END;

CREATE TRIGGER job_search_failed AFTER UPDATE OF failure_diagnostic ON jobs
WHEN NEW.failure_diagnostic IS NOT NULL AND OLD.failure_diagnostic IS NULL BEGIN
    INSERT INTO job_search (job, body) VALUES (NEW.id, NEW.failure_diagnostic);
END;

CREATE TRIGGER job_search_retried AFTER UPDATE OF diagnostic ON job_attempts
WHEN NEW.diagnostic IS NOT NULL AND OLD.diagnostic IS NULL
     AND (SELECT state FROM jobs WHERE id = NEW.job_id) <> 4 BEGIN
    INSERT INTO job_search (job, body) VALUES (NEW.job_id, NEW.diagnostic);
END;

-- The jobs already stored: one document each with everything known about them.
INSERT INTO job_search (job, body)
SELECT j.id,
    lower(substr(hex(j.id), 1, 8) || '-' || substr(hex(j.id), 9, 4) || '-' || substr(hex(j.id), 13, 4)
          || '-' || substr(hex(j.id), 17, 4) || '-' || substr(hex(j.id), 21, 12))
    || ' ' || j.kind
    || coalesce(' ' || (SELECT name FROM assets WHERE id = j.output_asset_id), '')
    || coalesce(' ' || j.target_root, '')
    || coalesce(' ' || (SELECT group_concat(coalesce(a.agent_name, '') || ' '
                                            || coalesce((SELECT w.name FROM workers w WHERE w.id = a.worker_id), '')
                                            || coalesce(' ' || a.diagnostic, ''), ' ')
                        FROM job_attempts a WHERE a.job_id = j.id), '')
    || coalesce(' ' || j.failure_diagnostic, '')
FROM jobs j;
