-- PostProject Monitor production schema, version 3 (PostgreSQL): regeneration that converges,
-- as storage/sqlite/migrations/0003_converging_regeneration.sql. Job dependencies (a job is
-- claimable only once every job it depends on has succeeded), inputs bound to an upstream
-- job's output (resolved when the job is claimed), the artifact a regeneration job makes
-- again, and superseded representations.

ALTER TABLE jobs ADD COLUMN dependencies integer NOT NULL DEFAULT 0 CHECK (dependencies >= 0);
ALTER TABLE jobs ADD COLUMN waiting integer NOT NULL DEFAULT 0 CHECK (waiting >= 0);
ALTER TABLE jobs ADD COLUMN regenerates uuid REFERENCES representations (id);

-- One row per (dependent job, job it depends on); see SQLite's 0003.
CREATE TABLE job_dependencies (
    job_id          uuid NOT NULL REFERENCES jobs (id),
    upstream_id     uuid NOT NULL REFERENCES jobs (id),
    binds_output    smallint NOT NULL CHECK (binds_output IN (0, 1)),
    resolved_id     uuid REFERENCES representations (id),
    CHECK (binds_output = 1 OR resolved_id IS NULL),
    CHECK (job_id <> upstream_id),
    PRIMARY KEY (job_id, upstream_id)
);
CREATE INDEX job_dependencies_by_upstream ON job_dependencies (upstream_id, job_id);

-- Claim order as in version 2, over requested jobs that wait on nothing.
DROP INDEX jobs_ready;
DROP INDEX jobs_ready_kind;
CREATE INDEX jobs_ready ON jobs (priority DESC, available_at, id) WHERE state = 1 AND waiting = 0;
CREATE INDEX jobs_ready_kind ON jobs (kind, priority DESC, available_at, id) WHERE state = 1 AND waiting = 0;

-- A claim now also resolves the job's output bindings not resolved yet (every upstream has
-- succeeded, or the job would not be claimable).
CREATE OR REPLACE FUNCTION job_attempt_started() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE job_attempts SET outcome = 4, ended_at = NEW.claimed_at WHERE job_id = NEW.id AND outcome IS NULL;
    INSERT INTO job_attempts (job_id, number, worker_id, agent_name, tool_name, tool_version, tool_uri,
                              secret_hash, claimed_at)
    VALUES (NEW.id, NEW.claim_attempt, NEW.claim_worker_id, NEW.claim_agent_name, NEW.claim_tool_name,
            NEW.claim_tool_version, NEW.claim_tool_uri, NEW.claim_secret_hash, NEW.claimed_at);
    IF NEW.dependencies > 0 THEN
        UPDATE job_dependencies d SET resolved_id = (
            SELECT u.completion_representation_id FROM jobs u WHERE u.id = d.upstream_id)
        WHERE d.job_id = NEW.id AND d.binds_output = 1 AND d.resolved_id IS NULL;
    END IF;
    RETURN NULL;
END
$$;

-- superseded_by: the representation that replaced this one (a chain). Deferrable, so a copy
-- between engines may load representations in id order.
ALTER TABLE representations ADD COLUMN superseded_by uuid
    REFERENCES representations (id) DEFERRABLE INITIALLY IMMEDIATE;
