-- PostProject Monitor production schema, version 1.
-- Times are Unix microseconds (INTEGER); ids are 16-byte UUID blobs; every table is STRICT.

CREATE TABLE production (
    singleton   INTEGER PRIMARY KEY CHECK (singleton = 1),
    id          BLOB NOT NULL CHECK (length(id) = 16),
    created_at  INTEGER NOT NULL,
    cursor_key  BLOB NOT NULL CHECK (length(cursor_key) = 32)
) STRICT;

-- The durable high-water mark of the job authority clock (notes §2.2) is the larger of
-- job_clock.high_water (written only when a guarded edit fails) and the clock_mark of the
-- newest revision (every revision carries the mark forward), so successful commits pay no
-- extra write for it.
CREATE TABLE job_clock (
    singleton   INTEGER PRIMARY KEY CHECK (singleton = 1),
    high_water  INTEGER
) STRICT;
INSERT INTO job_clock (singleton, high_water) VALUES (1, NULL);

CREATE TABLE revisions (
    sequence        INTEGER PRIMARY KEY CHECK (sequence >= 1),
    id              BLOB NOT NULL CHECK (length(id) = 16),
    committed_at    INTEGER NOT NULL,
    origin          TEXT CHECK (origin IS NULL OR length(CAST(origin AS BLOB)) BETWEEN 1 AND 512),
    message         TEXT CHECK (message IS NULL OR length(CAST(message AS BLOB)) BETWEEN 1 AND 4096),
    clock_mark      INTEGER
) STRICT;

-- Semantic events in staging order. subject = the id of the main object; the partial index
-- answers "the history of a job" without costing other events a write.
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
                   'job_requested','job_succeeded');

CREATE TABLE media_roots (
    id          BLOB PRIMARY KEY CHECK (length(id) = 16),
    name        TEXT NOT NULL UNIQUE CHECK (length(CAST(name AS BLOB)) BETWEEN 1 AND 128),
    path        TEXT,
    created_sequence INTEGER NOT NULL
) STRICT;

CREATE TABLE assets (
    id          BLOB PRIMARY KEY CHECK (length(id) = 16),
    name        TEXT CHECK (name IS NULL OR length(CAST(name AS BLOB)) BETWEEN 1 AND 1024),
    created_at  INTEGER NOT NULL,
    created_sequence INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE representations (
    id          BLOB PRIMARY KEY CHECK (length(id) = 16),
    asset_id    BLOB NOT NULL REFERENCES assets (id),
    kind        INTEGER NOT NULL CHECK (kind BETWEEN 0 AND 3),
    path        TEXT NOT NULL CHECK (length(path) >= 1),
    root_name   TEXT REFERENCES media_roots (name),
    size        INTEGER NOT NULL CHECK (size >= 0),
    mtime       INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    created_sequence INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX representations_by_asset ON representations (asset_id, id);
CREATE INDEX representations_by_kind ON representations (kind, id);

-- At most one current value per (algorithm, version) domain; recorded_sequence = the
-- revision that recorded this value.
CREATE TABLE representation_fingerprints (
    representation_id   BLOB NOT NULL REFERENCES representations (id),
    algorithm           TEXT NOT NULL CHECK (length(algorithm) BETWEEN 1 AND 64),
    version             INTEGER NOT NULL CHECK (version BETWEEN 0 AND 65535),
    value               BLOB NOT NULL,
    recorded_sequence   INTEGER NOT NULL,
    PRIMARY KEY (representation_id, algorithm, version)
) STRICT, WITHOUT ROWID;

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

-- direction: 0 input, 1 output. role '' = no role. Snapshots are captured at commit.
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

-- target_kind: 1 asset, 2 representation, 3 activity, 5 job.
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

-- state: 1 requested, 2 claimed, 3 succeeded, 4 failed, 5 cancelled. Each state carries
-- exactly its own detail. Job ids are UUIDv7, so id order is request order: the listing
-- indexes below are also the claim indexes (oldest requested = first id in (state, id)).
-- inputs: the sorted input representation ids, 16 bytes each, concatenated.
CREATE TABLE jobs (
    id                  BLOB PRIMARY KEY CHECK (length(id) = 16),
    kind                TEXT NOT NULL CHECK (length(kind) BETWEEN 1 AND 128),
    inputs              BLOB NOT NULL CHECK (length(inputs) % 16 = 0),
    output_asset_id     BLOB NOT NULL REFERENCES assets (id),
    output_kind         INTEGER NOT NULL CHECK (output_kind BETWEEN 0 AND 3),
    target_root         TEXT REFERENCES media_roots (name),
    state               INTEGER NOT NULL CHECK (state BETWEEN 1 AND 5),
    claim_secret        BLOB CHECK (claim_secret IS NULL OR length(claim_secret) = 16),
    claim_tool_name     TEXT,
    claim_tool_version  TEXT,
    claim_tool_uri      TEXT,
    claim_agent_name    TEXT,
    claimed_at          INTEGER,
    claim_expires_at    INTEGER,
    claim_sequence      INTEGER,
    completion_activity_id       BLOB REFERENCES activities (id),
    completion_representation_id BLOB REFERENCES representations (id),
    failure_diagnostic  TEXT CHECK (failure_diagnostic IS NULL
                                    OR length(CAST(failure_diagnostic AS BLOB)) BETWEEN 1 AND 4096),
    requested_at        INTEGER NOT NULL,
    requested_sequence  INTEGER NOT NULL,
    updated_sequence    INTEGER NOT NULL,
    CHECK ((state = 2) = (claim_secret IS NOT NULL AND claim_tool_name IS NOT NULL
                          AND claimed_at IS NOT NULL AND claim_expires_at IS NOT NULL
                          AND claim_sequence IS NOT NULL)),
    CHECK (state = 2 OR (claim_secret IS NULL AND claim_tool_name IS NULL AND claim_tool_version IS NULL
                         AND claim_tool_uri IS NULL AND claim_agent_name IS NULL AND claimed_at IS NULL
                         AND claim_expires_at IS NULL AND claim_sequence IS NULL)),
    CHECK ((state = 3) = (completion_activity_id IS NOT NULL AND completion_representation_id IS NOT NULL)),
    CHECK (state = 3 OR (completion_activity_id IS NULL AND completion_representation_id IS NULL)),
    CHECK ((state = 4) = (failure_diagnostic IS NOT NULL))
) STRICT, WITHOUT ROWID;
-- Listing, filtering and claiming (keyset by id, either direction).
CREATE INDEX jobs_by_state_kind ON jobs (state, kind, id);
CREATE INDEX jobs_by_kind ON jobs (kind, id);
CREATE INDEX jobs_by_state ON jobs (state, id);
CREATE INDEX jobs_by_completion ON jobs (completion_activity_id) WHERE completion_activity_id IS NOT NULL;
-- Expired claims (stuck work and re-claims); only claimed jobs are in it.
CREATE INDEX jobs_claimed_expiry ON jobs (claim_expires_at) WHERE state = 2;

-- Counts per kind and state, maintained by triggers so the monitor never counts a million rows.
CREATE TABLE job_counts (
    kind    TEXT NOT NULL,
    state   INTEGER NOT NULL,
    count   INTEGER NOT NULL CHECK (count >= 0),
    PRIMARY KEY (kind, state)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER job_counts_insert AFTER INSERT ON jobs BEGIN
    INSERT INTO job_counts (kind, state, count) VALUES (NEW.kind, NEW.state, 1)
    ON CONFLICT (kind, state) DO UPDATE SET count = count + 1;
END;

CREATE TRIGGER job_counts_update AFTER UPDATE OF state ON jobs WHEN OLD.state <> NEW.state BEGIN
    UPDATE job_counts SET count = count - 1 WHERE kind = OLD.kind AND state = OLD.state;
    INSERT INTO job_counts (kind, state, count) VALUES (NEW.kind, NEW.state, 1)
    ON CONFLICT (kind, state) DO UPDATE SET count = count + 1;
END;
