-- PostProject Monitor production schema, version 2: the farm's work model.
-- Registered workers with sessions; one attempt per claim; priority, availability, attempt
-- limits, idempotency keys and retry links on jobs; lease secrets stored only as SHA-256
-- hashes (pp_sha256 is registered by the migration runner). The jobs table is rebuilt
-- (SQLite cannot change a column's CHECK): ids, states and live claims are kept.

CREATE TABLE workers (
    id              BLOB PRIMARY KEY CHECK (length(id) = 16),
    name            TEXT NOT NULL UNIQUE CHECK (length(CAST(name AS BLOB)) BETWEEN 1 AND 256),
    host            TEXT CHECK (host IS NULL OR length(CAST(host AS BLOB)) BETWEEN 1 AND 256),
    capacity        INTEGER NOT NULL CHECK (capacity BETWEEN 1 AND 1024),
    kinds           TEXT CHECK (kinds IS NULL OR json_valid(kinds)),
    session         BLOB NOT NULL CHECK (length(session) = 16),
    registered_at   INTEGER NOT NULL,
    last_seen       INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE jobs_v2 (
    id                  BLOB PRIMARY KEY CHECK (length(id) = 16),
    kind                TEXT NOT NULL CHECK (length(kind) BETWEEN 1 AND 128),
    inputs              BLOB NOT NULL CHECK (length(inputs) % 16 = 0),
    output_asset_id     BLOB NOT NULL REFERENCES assets (id),
    output_kind         INTEGER NOT NULL CHECK (output_kind BETWEEN 0 AND 3),
    target_root         TEXT REFERENCES media_roots (name),
    state               INTEGER NOT NULL CHECK (state BETWEEN 1 AND 5),
    claim_secret_hash   BLOB CHECK (claim_secret_hash IS NULL OR length(claim_secret_hash) = 32),
    claim_tool_name     TEXT,
    claim_tool_version  TEXT,
    claim_tool_uri      TEXT,
    claim_agent_name    TEXT,
    claim_worker_id     BLOB REFERENCES workers (id),
    claim_session       BLOB CHECK (claim_session IS NULL OR length(claim_session) = 16),
    claimed_at          INTEGER,
    claim_expires_at    INTEGER,
    claim_sequence      INTEGER,
    claim_attempt       INTEGER,
    completion_activity_id       BLOB REFERENCES activities (id),
    completion_representation_id BLOB REFERENCES representations (id),
    failure_diagnostic  TEXT CHECK (failure_diagnostic IS NULL
                                    OR length(CAST(failure_diagnostic AS BLOB)) BETWEEN 1 AND 4096),
    requested_at        INTEGER NOT NULL,
    requested_sequence  INTEGER NOT NULL,
    updated_sequence    INTEGER NOT NULL,
    priority            INTEGER NOT NULL DEFAULT 0 CHECK (priority BETWEEN -1000 AND 1000),
    not_before          INTEGER,
    available_at        INTEGER NOT NULL,
    max_attempts        INTEGER CHECK (max_attempts IS NULL OR max_attempts BETWEEN 1 AND 1000),
    attempts            INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    idempotency_key     TEXT,
    request_digest      BLOB CHECK (request_digest IS NULL OR length(request_digest) = 32),
    retry_of            BLOB CHECK (retry_of IS NULL OR length(retry_of) = 16),
    retried_as          BLOB CHECK (retried_as IS NULL OR length(retried_as) = 16),
    CHECK ((state = 2) = (claim_secret_hash IS NOT NULL AND claim_tool_name IS NOT NULL
                          AND claimed_at IS NOT NULL AND claim_expires_at IS NOT NULL
                          AND claim_sequence IS NOT NULL AND claim_attempt IS NOT NULL)),
    CHECK (state = 2 OR (claim_secret_hash IS NULL AND claim_tool_name IS NULL AND claim_tool_version IS NULL
                         AND claim_tool_uri IS NULL AND claim_agent_name IS NULL AND claim_worker_id IS NULL
                         AND claim_session IS NULL AND claimed_at IS NULL AND claim_expires_at IS NULL
                         AND claim_sequence IS NULL AND claim_attempt IS NULL)),
    CHECK ((claim_worker_id IS NULL) = (claim_session IS NULL)),
    CHECK ((state = 3) = (completion_activity_id IS NOT NULL AND completion_representation_id IS NOT NULL)),
    CHECK (state = 3 OR (completion_activity_id IS NULL AND completion_representation_id IS NULL)),
    CHECK ((state = 4) = (failure_diagnostic IS NOT NULL)),
    CHECK ((idempotency_key IS NULL) = (request_digest IS NULL))
) STRICT, WITHOUT ROWID;

INSERT INTO jobs_v2 (id, kind, inputs, output_asset_id, output_kind, target_root, state, claim_secret_hash,
    claim_tool_name, claim_tool_version, claim_tool_uri, claim_agent_name, claimed_at, claim_expires_at,
    claim_sequence, claim_attempt, completion_activity_id, completion_representation_id, failure_diagnostic,
    requested_at, requested_sequence, updated_sequence, available_at, attempts)
SELECT id, kind, inputs, output_asset_id, output_kind, target_root, state,
    CASE WHEN claim_secret IS NULL THEN NULL ELSE pp_sha256(claim_secret) END,
    claim_tool_name, claim_tool_version, claim_tool_uri, claim_agent_name, claimed_at, claim_expires_at,
    claim_sequence, CASE WHEN state = 2 THEN 1 END, completion_activity_id, completion_representation_id,
    failure_diagnostic, requested_at, requested_sequence, updated_sequence, requested_at,
    CASE WHEN state = 2 THEN 1 ELSE 0 END
FROM jobs;

DROP TABLE jobs;
ALTER TABLE jobs_v2 RENAME TO jobs;

-- Listing and filtering (keyset by id, either direction), as in version 1.
CREATE INDEX jobs_by_state_kind ON jobs (state, kind, id);
CREATE INDEX jobs_by_kind ON jobs (kind, id);
CREATE INDEX jobs_by_state ON jobs (state, id);
CREATE INDEX jobs_by_completion ON jobs (completion_activity_id) WHERE completion_activity_id IS NOT NULL;
CREATE INDEX jobs_claimed_expiry ON jobs (claim_expires_at) WHERE state = 2;
-- Claim order: priority (descending), then availability, then id; only requested jobs.
CREATE INDEX jobs_ready ON jobs (priority DESC, available_at, id) WHERE state = 1;
CREATE INDEX jobs_ready_kind ON jobs (kind, priority DESC, available_at, id) WHERE state = 1;
-- A worker's claims (capacity, running jobs); only claims made by registered workers.
CREATE INDEX jobs_by_worker ON jobs (claim_worker_id, claim_expires_at) WHERE claim_worker_id IS NOT NULL;
CREATE UNIQUE INDEX jobs_by_idempotency_key ON jobs (idempotency_key) WHERE idempotency_key IS NOT NULL;

CREATE TRIGGER job_counts_insert AFTER INSERT ON jobs BEGIN
    INSERT INTO job_counts (kind, state, count) VALUES (NEW.kind, NEW.state, 1)
    ON CONFLICT (kind, state) DO UPDATE SET count = count + 1;
END;

CREATE TRIGGER job_counts_update AFTER UPDATE OF state ON jobs WHEN OLD.state <> NEW.state BEGIN
    UPDATE job_counts SET count = count - 1 WHERE kind = OLD.kind AND state = OLD.state;
    INSERT INTO job_counts (kind, state, count) VALUES (NEW.kind, NEW.state, 1)
    ON CONFLICT (kind, state) DO UPDATE SET count = count + 1;
END;

-- One attempt per claim, numbered from 1 per job. outcome: 1 succeeded, 2 failed,
-- 3 released, 4 lost, 5 cancelled; NULL while running.
CREATE TABLE job_attempts (
    job_id          BLOB NOT NULL REFERENCES jobs (id),
    number          INTEGER NOT NULL CHECK (number >= 1),
    worker_id       BLOB REFERENCES workers (id),
    agent_name      TEXT,
    tool_name       TEXT NOT NULL,
    tool_version    TEXT,
    tool_uri        TEXT,
    secret_hash     BLOB NOT NULL CHECK (length(secret_hash) = 32),
    claimed_at      INTEGER NOT NULL,
    ended_at        INTEGER,
    outcome         INTEGER CHECK (outcome IS NULL OR outcome BETWEEN 1 AND 5),
    diagnostic      TEXT CHECK (diagnostic IS NULL OR length(CAST(diagnostic AS BLOB)) BETWEEN 1 AND 4096),
    CHECK ((outcome IS NULL) = (ended_at IS NULL)),
    PRIMARY KEY (job_id, number)
) STRICT, WITHOUT ROWID;
CREATE INDEX job_attempts_by_worker ON job_attempts (worker_id, claimed_at) WHERE worker_id IS NOT NULL;

-- Every claim starts an attempt (and ends a running one, whose lease expired, as lost) in
-- the claim's own statement.
CREATE TRIGGER job_attempt_started AFTER UPDATE OF claim_attempt ON jobs
WHEN NEW.claim_attempt IS NOT NULL AND NEW.claim_attempt IS NOT OLD.claim_attempt BEGIN
    UPDATE job_attempts SET outcome = 4, ended_at = NEW.claimed_at WHERE job_id = NEW.id AND outcome IS NULL;
    INSERT INTO job_attempts (job_id, number, worker_id, agent_name, tool_name, tool_version, tool_uri,
                              secret_hash, claimed_at)
    VALUES (NEW.id, NEW.claim_attempt, NEW.claim_worker_id, NEW.claim_agent_name, NEW.claim_tool_name,
            NEW.claim_tool_version, NEW.claim_tool_uri, NEW.claim_secret_hash, NEW.claimed_at);
END;

INSERT INTO job_attempts (job_id, number, agent_name, tool_name, tool_version, tool_uri, secret_hash, claimed_at)
SELECT id, 1, claim_agent_name, claim_tool_name, claim_tool_version, claim_tool_uri, claim_secret_hash, claimed_at
FROM jobs WHERE state = 2;

-- The history index covers the new job events too.
DROP INDEX revision_events_by_job;
CREATE INDEX revision_events_by_job ON revision_events (subject, sequence)
    WHERE kind IN ('job_cancelled','job_claim_released','job_claim_renewed','job_claimed','job_failed',
                   'job_lost','job_priority_changed','job_requested','job_requeued','job_retry_scheduled',
                   'job_succeeded');
