-- PostProject Monitor production schema, version 3: regeneration that converges.
-- Job dependencies (a job is claimable only once every job it depends on has succeeded),
-- inputs bound to an upstream job's output (resolved when the job is claimed), the artifact
-- a regeneration job makes again, and superseded representations.

-- dependencies: how many jobs this one depends on; waiting: how many of them have not
-- succeeded yet (maintained: decremented when one succeeds); regenerates: the artifact a
-- regeneration job makes again (its output supersedes it when the job succeeds).
ALTER TABLE jobs ADD COLUMN dependencies INTEGER NOT NULL DEFAULT 0 CHECK (dependencies >= 0);
ALTER TABLE jobs ADD COLUMN waiting INTEGER NOT NULL DEFAULT 0 CHECK (waiting >= 0);
ALTER TABLE jobs ADD COLUMN regenerates BLOB REFERENCES representations (id)
    CHECK (regenerates IS NULL OR length(regenerates) = 16);

-- One row per (dependent job, job it depends on). binds_output = 1 when the dependent has
-- JobOutput(upstream) among its inputs; resolved_id is that upstream's completion
-- representation, recorded when the dependent is claimed (NULL before, and for plain
-- dependencies). The dependent's inputs are its stored inputs plus its resolved ids.
CREATE TABLE job_dependencies (
    job_id          BLOB NOT NULL REFERENCES jobs (id),
    upstream_id     BLOB NOT NULL REFERENCES jobs (id),
    binds_output    INTEGER NOT NULL CHECK (binds_output IN (0, 1)),
    resolved_id     BLOB REFERENCES representations (id),
    CHECK (binds_output = 1 OR resolved_id IS NULL),
    CHECK (job_id <> upstream_id),
    PRIMARY KEY (job_id, upstream_id)
) STRICT, WITHOUT ROWID;
-- Dependents of a job (success, request again).
CREATE INDEX job_dependencies_by_upstream ON job_dependencies (upstream_id, job_id);

-- Claim order as in version 2, over requested jobs that wait on nothing: a job waiting on a
-- dependency is never claimable, and a claim stays one index probe per kind.
DROP INDEX jobs_ready;
DROP INDEX jobs_ready_kind;
CREATE INDEX jobs_ready ON jobs (priority DESC, available_at, id) WHERE state = 1 AND waiting = 0;
CREATE INDEX jobs_ready_kind ON jobs (kind, priority DESC, available_at, id) WHERE state = 1 AND waiting = 0;

-- Every claim starts an attempt (and ends a running one, whose lease expired, as lost) in
-- the claim's own statement, as in version 2; it now also resolves the job's output bindings
-- not resolved yet: each takes its upstream job's completion representation (every upstream
-- has succeeded, or the job would not be claimable). (The success of a job lowers the
-- waiting count of its dependents in the success's own step: see the SQLite adapter's
-- succeed.)
DROP TRIGGER job_attempt_started;
CREATE TRIGGER job_attempt_started AFTER UPDATE OF claim_attempt ON jobs
WHEN NEW.claim_attempt IS NOT NULL AND NEW.claim_attempt IS NOT OLD.claim_attempt BEGIN
    UPDATE job_attempts SET outcome = 4, ended_at = NEW.claimed_at WHERE job_id = NEW.id AND outcome IS NULL;
    INSERT INTO job_attempts (job_id, number, worker_id, agent_name, tool_name, tool_version, tool_uri,
                              secret_hash, claimed_at)
    VALUES (NEW.id, NEW.claim_attempt, NEW.claim_worker_id, NEW.claim_agent_name, NEW.claim_tool_name,
            NEW.claim_tool_version, NEW.claim_tool_uri, NEW.claim_secret_hash, NEW.claimed_at);
    UPDATE job_dependencies SET resolved_id = (
        SELECT u.completion_representation_id FROM jobs u WHERE u.id = job_dependencies.upstream_id)
    WHERE NEW.dependencies > 0 AND job_id = NEW.id AND binds_output = 1 AND resolved_id IS NULL;
END;

-- superseded_by: the representation that replaced this one (the output of a job that
-- regenerated it). A representation is superseded at most once; a later regeneration of it
-- supersedes its current replacement instead, so replacements form a chain.
ALTER TABLE representations ADD COLUMN superseded_by BLOB REFERENCES representations (id)
    CHECK (superseded_by IS NULL OR length(superseded_by) = 16);
