-- PostProject Monitor production schema, version 7: the baseline (SQLite).
--
-- The whole schema as it is: a new production file gets exactly this, then every numbered
-- migration after it (0008 and up, none yet). Development builds before it used versions 1-6;
-- a file they made is refused (it cannot be upgraded). PostgreSQL's baseline
-- (storage/postgresql/migrations/0007_baseline.sql) has the same tables, columns and indexes.
--
-- Times are Unix microseconds (INTEGER); ids are 16-byte UUID blobs; every table is STRICT.
-- Job states: 1 requested, 2 claimed, 3 succeeded, 4 failed, 5 cancelled
-- (postproject.model.lifecycle.JobState). Attempt outcomes: 1 succeeded, 2 failed,
-- 3 released, 4 lost, 5 cancelled (postproject.model.jobs.AttemptOutcome). Representation
-- kinds: 0 to 3 (postproject.model.assets.RepresentationKind).


-- == The production and its revision feed ==================================================

-- The production itself: one row, written at creation (its id, and the key of its cursors).
CREATE TABLE production (
    singleton   INTEGER PRIMARY KEY CHECK (singleton = 1),
    id          BLOB NOT NULL CHECK (length(id) = 16),
    created_at  INTEGER NOT NULL,
    cursor_key  BLOB NOT NULL CHECK (length(cursor_key) = 32)
) STRICT;

-- The durable high-water mark of the job authority clock: one row. The mark is the larger of
-- job_clock.high_water (written only when a guarded edit fails, or by a clock reset) and the
-- clock_mark of the newest revision (every revision carries the mark forward), so successful
-- commits pay no extra write for it.
CREATE TABLE job_clock (
    singleton   INTEGER PRIMARY KEY CHECK (singleton = 1),
    high_water  INTEGER
) STRICT;
INSERT INTO job_clock (singleton, high_water) VALUES (1, NULL);

-- The revision feed: one row per committed edit, numbered without gaps in commit order.
CREATE TABLE revisions (
    sequence        INTEGER PRIMARY KEY CHECK (sequence >= 1),
    id              BLOB NOT NULL CHECK (length(id) = 16),
    committed_at    INTEGER NOT NULL,
    origin          TEXT CHECK (origin IS NULL OR length(CAST(origin AS BLOB)) BETWEEN 1 AND 512),
    message         TEXT CHECK (message IS NULL OR length(CAST(message AS BLOB)) BETWEEN 1 AND 4096),
    clock_mark      INTEGER
) STRICT;

-- A revision's semantic events, in staging order. subject: the id of the main object; the
-- partial index answers "the history of a job" (lifecycle.HISTORY_EVENT_KINDS) without
-- costing other events a write.
CREATE TABLE revision_events (
    sequence    INTEGER NOT NULL REFERENCES revisions (sequence) DEFERRABLE INITIALLY DEFERRED,
    position    INTEGER NOT NULL CHECK (position >= 0),
    kind        TEXT NOT NULL,
    subject     BLOB CHECK (subject IS NULL OR length(subject) = 16),
    payload     TEXT NOT NULL CHECK (json_valid(payload)),
    PRIMARY KEY (sequence, position)
) STRICT, WITHOUT ROWID;
CREATE INDEX revision_events_by_job ON revision_events (subject, sequence)
    WHERE kind IN ('job_cancelled','job_claim_released','job_claim_renewed','job_claimed','job_failed',
                   'job_lost','job_priority_changed','job_requested','job_requeued','job_retry_scheduled',
                   'job_stop_confirmed','job_stop_missed','job_succeeded');


-- == Assets, files and provenance ==========================================================

-- Named media roots: a representation's path may be relative to one (path NULL: not mapped here).
CREATE TABLE media_roots (
    id          BLOB PRIMARY KEY CHECK (length(id) = 16),
    name        TEXT NOT NULL UNIQUE CHECK (length(CAST(name AS BLOB)) BETWEEN 1 AND 128),
    path        TEXT,
    created_sequence INTEGER NOT NULL
) STRICT;

-- Assets: the things a production makes (a shot, a plate), named or not.
CREATE TABLE assets (
    id          BLOB PRIMARY KEY CHECK (length(id) = 16),
    name        TEXT CHECK (name IS NULL OR length(CAST(name AS BLOB)) BETWEEN 1 AND 1024),
    created_at  INTEGER NOT NULL,
    created_sequence INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- Representations: an asset's files (kind, path, size, mtime). superseded_by: the
-- representation that replaced this one (the output of a job that regenerated it); a
-- representation is superseded at most once, a later regeneration supersedes its current
-- replacement instead, so replacements form a chain.
CREATE TABLE representations (
    id          BLOB PRIMARY KEY CHECK (length(id) = 16),
    asset_id    BLOB NOT NULL REFERENCES assets (id),
    kind        INTEGER NOT NULL CHECK (kind BETWEEN 0 AND 3),
    path        TEXT NOT NULL CHECK (length(path) >= 1),
    root_name   TEXT REFERENCES media_roots (name),
    size        INTEGER NOT NULL CHECK (size >= 0),
    mtime       INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    created_sequence INTEGER NOT NULL,
    superseded_by BLOB REFERENCES representations (id)
        CHECK (superseded_by IS NULL OR length(superseded_by) = 16)
) STRICT, WITHOUT ROWID;
CREATE INDEX representations_by_asset ON representations (asset_id, id);
CREATE INDEX representations_by_kind ON representations (kind, id);

-- A representation's fingerprints: at most one current value per (algorithm, version)
-- domain; recorded_sequence: the revision that recorded this value.
CREATE TABLE representation_fingerprints (
    representation_id   BLOB NOT NULL REFERENCES representations (id),
    algorithm           TEXT NOT NULL CHECK (length(algorithm) BETWEEN 1 AND 64),
    version             INTEGER NOT NULL CHECK (version BETWEEN 0 AND 65535),
    value               BLOB NOT NULL,
    recorded_sequence   INTEGER NOT NULL,
    PRIMARY KEY (representation_id, algorithm, version)
) STRICT, WITHOUT ROWID;

-- Activities: what made representations from others (a render, a transcode), with its tool
-- and agent.
CREATE TABLE activities (
    id              BLOB PRIMARY KEY CHECK (length(id) = 16),
    kind            TEXT NOT NULL CHECK (length(kind) BETWEEN 1 AND 128),
    tool_name       TEXT,
    tool_version    TEXT,
    tool_uri        TEXT,
    agent_name      TEXT,
    started_at      INTEGER,
    finished_at     INTEGER CHECK (finished_at IS NULL OR started_at IS NULL OR finished_at >= started_at),
    created_sequence INTEGER NOT NULL,
    CHECK (tool_name IS NOT NULL OR (tool_version IS NULL AND tool_uri IS NULL))
) STRICT, WITHOUT ROWID;

-- An activity's inputs and outputs. direction: 0 input, 1 output; role '' = no role. The
-- snapshot (each representation's fingerprints as JSON) is captured when the edit commits.
CREATE TABLE activity_edges (
    activity_id         BLOB NOT NULL REFERENCES activities (id),
    direction           INTEGER NOT NULL CHECK (direction IN (0, 1)),
    representation_id   BLOB NOT NULL REFERENCES representations (id),
    role                TEXT NOT NULL DEFAULT '',
    snapshot_sequence   INTEGER,
    snapshot_fingerprints TEXT CHECK (snapshot_fingerprints IS NULL OR json_valid(snapshot_fingerprints)),
    PRIMARY KEY (activity_id, direction, representation_id, role)
) STRICT, WITHOUT ROWID;
CREATE INDEX activity_edges_by_representation ON activity_edges (representation_id, direction, activity_id);

-- Metadata assertions (vocabulary, property, JSON value) about one object, in assertion
-- order. target_kind: 1 asset, 2 representation, 3 activity, 5 job.
CREATE TABLE metadata (
    id          INTEGER PRIMARY KEY,
    target_kind INTEGER NOT NULL CHECK (target_kind IN (1, 2, 3, 5)),
    target_id   BLOB NOT NULL CHECK (length(target_id) = 16),
    vocabulary  TEXT NOT NULL,
    property    TEXT NOT NULL,
    value       TEXT NOT NULL CHECK (json_valid(value)),
    created_sequence INTEGER NOT NULL
) STRICT;
CREATE INDEX metadata_by_target ON metadata (target_kind, target_id, id);


-- == Jobs and the farm =====================================================================

-- Job counts per kind and state, maintained by triggers (below) so the monitor never counts
-- a million rows.
CREATE TABLE job_counts (
    kind    TEXT NOT NULL,
    state   INTEGER NOT NULL,
    count   INTEGER NOT NULL CHECK (count >= 0),
    PRIMARY KEY (kind, state)
) STRICT, WITHOUT ROWID;

-- Registered workers: stored state (not revisions), one row per name; a new registration
-- replaces the session, which fences the old one.
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

-- Jobs: one row each, carrying exactly its state's detail (the claim while claimed, the
-- completion once succeeded, the diagnostic once failed). Job ids are UUIDv7, so id order is
-- request order. inputs: the sorted input representation ids, 16 bytes each, concatenated.
-- The lease secret is stored only as its SHA-256 hash. available_at orders the queue (a
-- request from a host whose clock runs ahead is claimable at once); not_before holds a job
-- back. dependencies: how many jobs this one depends on; waiting: how many of them have not
-- succeeded yet (a job with waiting > 0 is not claimable). regenerates: the artifact a
-- regeneration job makes again. finished_at: when the job reached a final state.
CREATE TABLE jobs (
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
    dependencies        INTEGER NOT NULL DEFAULT 0 CHECK (dependencies >= 0),
    waiting             INTEGER NOT NULL DEFAULT 0 CHECK (waiting >= 0),
    regenerates         BLOB REFERENCES representations (id)
                        CHECK (regenerates IS NULL OR length(regenerates) = 16),
    finished_at         INTEGER,
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
-- Listing and filtering (keyset by id, either direction).
CREATE INDEX jobs_by_state_kind ON jobs (state, kind, id);
CREATE INDEX jobs_by_kind ON jobs (kind, id);
CREATE INDEX jobs_by_state ON jobs (state, id);
CREATE INDEX jobs_by_completion ON jobs (completion_activity_id) WHERE completion_activity_id IS NOT NULL;
-- Expired claims (stuck work, re-claims and the loss sweep); only claimed jobs are in it.
CREATE INDEX jobs_claimed_expiry ON jobs (claim_expires_at) WHERE state = 2;
-- A worker's claims (capacity, running jobs); only claims made by registered workers.
CREATE INDEX jobs_by_worker ON jobs (claim_worker_id, claim_expires_at) WHERE claim_worker_id IS NOT NULL;
CREATE UNIQUE INDEX jobs_by_idempotency_key ON jobs (idempotency_key) WHERE idempotency_key IS NOT NULL;
-- Claim order: priority (descending), then availability, then id, over requested jobs that
-- wait on nothing: a claim is one index probe (per kind).
CREATE INDEX jobs_ready ON jobs (priority DESC, available_at, id) WHERE state = 1 AND waiting = 0;
CREATE INDEX jobs_ready_kind ON jobs (kind, priority DESC, available_at, id) WHERE state = 1 AND waiting = 0;
-- Search, time filters and sorts: finished within a range, requested within a range, by
-- priority, by output asset, and by the last 3 bytes of the id (its last 6 hex digits; the
-- monitor shows the last 8). Kind and state sort through jobs_by_kind and jobs_by_state.
CREATE INDEX jobs_finished ON jobs (finished_at, id) WHERE finished_at IS NOT NULL;
CREATE INDEX jobs_by_requested_at ON jobs (requested_at, id);
CREATE INDEX jobs_by_priority ON jobs (priority, id);
CREATE INDEX jobs_by_output ON jobs (output_asset_id, id);
CREATE INDEX jobs_by_tail ON jobs (substr(id, 14));

CREATE TRIGGER job_counts_insert AFTER INSERT ON jobs BEGIN
    INSERT INTO job_counts (kind, state, count) VALUES (NEW.kind, NEW.state, 1)
    ON CONFLICT (kind, state) DO UPDATE SET count = count + 1;
END;

CREATE TRIGGER job_counts_update AFTER UPDATE OF state ON jobs WHEN OLD.state <> NEW.state BEGIN
    UPDATE job_counts SET count = count - 1 WHERE kind = OLD.kind AND state = OLD.state;
    INSERT INTO job_counts (kind, state, count) VALUES (NEW.kind, NEW.state, 1)
    ON CONFLICT (kind, state) DO UPDATE SET count = count + 1;
END;

-- A job's attempts: one per claim, numbered from 1 per job; outcome NULL while running.
-- Progress is the running attempt's latest report (each field kept until a report replaces
-- it; stored state, not revisions); progress_signalled_at: when it last bumped the progress
-- signal (at most once a second). Cooperative stops: a cancel or requeue of a live claim
-- ends its attempt at once and sets stop_by to the lease's expiry; the holder confirms it
-- stopped before then (stopped_at), or the attempt ends lost. An attempt its holder ended
-- itself (succeeded, failed, released) has stopped_at = ended_at; a lost one has none.
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
    progress_fraction REAL
        CHECK (progress_fraction IS NULL OR progress_fraction BETWEEN 0.0 AND 1.0),
    progress_stage  TEXT
        CHECK (progress_stage IS NULL OR length(CAST(progress_stage AS BLOB)) BETWEEN 1 AND 1024),
    progress_message TEXT
        CHECK (progress_message IS NULL OR length(CAST(progress_message AS BLOB)) BETWEEN 1 AND 1024),
    progress_at     INTEGER,
    progress_signalled_at INTEGER,
    stop_by         INTEGER,
    stopped_at      INTEGER,
    CHECK ((outcome IS NULL) = (ended_at IS NULL)),
    PRIMARY KEY (job_id, number)
) STRICT, WITHOUT ROWID;
CREATE INDEX job_attempts_by_worker ON job_attempts (worker_id, claimed_at) WHERE worker_id IS NOT NULL;
-- Attempts awaiting their holder's confirmation, by deadline (the loss sweep).
CREATE INDEX job_attempts_stopping ON job_attempts (stop_by)
    WHERE stop_by IS NOT NULL AND stopped_at IS NULL AND outcome <> 4;
CREATE INDEX job_attempts_by_agent ON job_attempts (agent_name) WHERE agent_name IS NOT NULL;

-- One row per (dependent job, job it depends on). binds_output = 1 when the dependent has
-- the upstream's output among its inputs; resolved_id is that output (the upstream's
-- completion representation), recorded when the dependent is claimed (NULL before, and for
-- plain dependencies). The dependent's inputs are its stored inputs plus its resolved ids.
CREATE TABLE job_dependencies (
    job_id          BLOB NOT NULL REFERENCES jobs (id),
    upstream_id     BLOB NOT NULL REFERENCES jobs (id),
    binds_output    INTEGER NOT NULL CHECK (binds_output IN (0, 1)),
    resolved_id     BLOB REFERENCES representations (id),
    CHECK (binds_output = 1 OR resolved_id IS NULL),
    CHECK (job_id <> upstream_id),
    PRIMARY KEY (job_id, upstream_id)
) STRICT, WITHOUT ROWID;
-- Dependents of a job (its success, a request again).
CREATE INDEX job_dependencies_by_upstream ON job_dependencies (upstream_id, job_id);

-- Every claim starts an attempt (and ends a running one, whose lease expired, as lost) in
-- the claim's own statement, and resolves the job's output bindings not resolved yet: each
-- takes its upstream job's completion representation (every upstream has succeeded, or the
-- job would not be claimable). The success of a job lowers its dependents' waiting counts in
-- the success's own step (the adapter's succeed).
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

-- The progress signal: one counter, bumped by coalesced progress reports; followers compare
-- it to see that progress changed (the revision feed does not tick for progress).
CREATE TABLE progress_signal (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    token   INTEGER NOT NULL CHECK (token >= 0)
) STRICT;
INSERT INTO progress_signal (id, token) VALUES (1, 0);
-- A report that signals moves progress_signalled_at; the token moves in the same statement.
CREATE TRIGGER progress_signalled AFTER UPDATE OF progress_signalled_at ON job_attempts
WHEN NEW.progress_signalled_at IS NOT OLD.progress_signalled_at BEGIN
    UPDATE progress_signal SET token = token + 1 WHERE id = 1;
END;

-- Each attempt's log: where its full log lives (a path under a media root, or absolute) and
-- its tail (at most 64 KiB of valid UTF-8), recorded when the attempt ends.
CREATE TABLE job_attempt_logs (
    job_id      BLOB NOT NULL,
    number      INTEGER NOT NULL,
    root_name   TEXT,
    path        TEXT CHECK (path IS NULL OR length(CAST(path AS BLOB)) BETWEEN 1 AND 4096),
    tail        TEXT CHECK (tail IS NULL OR length(CAST(tail AS BLOB)) <= 65536),
    tail_at     INTEGER,
    CHECK ((tail IS NULL) = (tail_at IS NULL)),
    PRIMARY KEY (job_id, number),
    FOREIGN KEY (job_id, number) REFERENCES job_attempts (job_id, number)
) STRICT;


-- == Job search ============================================================================
-- A search term matches a job through the small name spaces it refers to, each indexed where
-- it is written rarely, so that the hot job path (request, claim, completion) pays only plain
-- B-tree inserts and no full-text segment per commit:
--   kind          the distinct kinds (job_counts) LIKE the term    -> jobs_by_kind
--   output asset  asset_search: trigram FTS5 over asset names     -> jobs_by_output
--   agent         job_agents: the distinct agent names            -> job_attempts_by_agent
--   worker        workers (registered, few) LIKE the term         -> job_attempts_by_worker
--   diagnostic    job_diagnostics: trigram FTS5 over failure diagnostics (written only when
--                 a job fails; a retried attempt's diagnostic stays in job_attempts)
--   id            the full id, or its tail of >= 6 hex digits     -> PRIMARY KEY, jobs_by_tail
-- The trigram tokenizer matches any substring of 3+ characters, case-insensitively, without
-- word rules that media names (shot_0420_v003.exr) break; shorter terms scan the small tables
-- and the diagnostics.

-- The distinct agent names that ever claimed a job.
CREATE TABLE job_agents (name TEXT PRIMARY KEY) STRICT, WITHOUT ROWID;
CREATE TRIGGER job_agent_seen AFTER INSERT ON job_attempts
WHEN NEW.agent_name IS NOT NULL AND NOT EXISTS (SELECT 1 FROM job_agents WHERE name = NEW.agent_name) BEGIN
    INSERT INTO job_agents (name) VALUES (NEW.agent_name);
END;

-- Named assets, trigram-indexed.
CREATE VIRTUAL TABLE asset_search USING fts5 (asset UNINDEXED, name, tokenize = 'trigram');
CREATE TRIGGER asset_search_created AFTER INSERT ON assets WHEN NEW.name IS NOT NULL BEGIN
    INSERT INTO asset_search (asset, name) VALUES (NEW.id, NEW.name);
END;

-- Failed jobs' diagnostics, trigram-indexed.
CREATE VIRTUAL TABLE job_diagnostics USING fts5 (job UNINDEXED, body, tokenize = 'trigram');
CREATE TRIGGER job_diagnostic_failed AFTER UPDATE OF failure_diagnostic ON jobs
WHEN NEW.failure_diagnostic IS NOT NULL AND OLD.failure_diagnostic IS NULL BEGIN
    INSERT INTO job_diagnostics (job, body) VALUES (NEW.id, NEW.failure_diagnostic);
END;
