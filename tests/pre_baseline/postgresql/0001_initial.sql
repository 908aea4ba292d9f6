-- PostProject Monitor production schema, version 1 (PostgreSQL): the same tables, columns,
-- checks and indexes as storage/migrations/0001_initial.sql for SQLite.
-- Runs with search_path set to the production's schema, so every name below lands there.
-- Times are Unix microseconds (bigint); ids are uuid; JSON columns are `json`, which checks
-- the text like SQLite's json_valid() and keeps it byte for byte (jsonb would reorder keys).
-- Text that is listed, sorted or compared uses COLLATE "C": bytewise, like SQLite's BINARY,
-- whatever the database's default collation.

CREATE TABLE production (
    singleton   smallint PRIMARY KEY CHECK (singleton = 1),
    id          uuid NOT NULL,
    created_at  bigint NOT NULL,
    cursor_key  bytea NOT NULL CHECK (length(cursor_key) = 32)
);

-- The durable high-water mark of the job authority clock (notes §2.2) is the larger of
-- job_clock.high_water (written only when a guarded edit fails) and the clock_mark of the
-- newest revision (every revision carries the mark forward), so successful commits pay no
-- extra write for it.
CREATE TABLE job_clock (
    singleton   smallint PRIMARY KEY CHECK (singleton = 1),
    high_water  bigint
);
INSERT INTO job_clock (singleton, high_water) VALUES (1, NULL);

CREATE TABLE revisions (
    sequence        bigint PRIMARY KEY CHECK (sequence >= 1),
    id              uuid NOT NULL,
    committed_at    bigint NOT NULL,
    origin          text CHECK (origin IS NULL OR octet_length(origin) BETWEEN 1 AND 512),
    message         text CHECK (message IS NULL OR octet_length(message) BETWEEN 1 AND 4096),
    clock_mark      bigint
);

-- Semantic events in staging order. subject = the id of the main object; the partial index
-- answers "the history of a job" without costing other events a write.
CREATE TABLE revision_events (
    sequence    bigint NOT NULL REFERENCES revisions (sequence) DEFERRABLE INITIALLY DEFERRED,
    position    integer NOT NULL CHECK (position >= 0),
    kind        text COLLATE "C" NOT NULL,
    subject     uuid,
    payload     json NOT NULL,
    PRIMARY KEY (sequence, position)
);
CREATE INDEX revision_events_by_job ON revision_events (subject, sequence)
    WHERE kind IN ('job_cancelled','job_claim_released','job_claim_renewed','job_claimed','job_failed',
                   'job_requested','job_succeeded');

CREATE TABLE media_roots (
    id          uuid PRIMARY KEY,
    name        text COLLATE "C" NOT NULL UNIQUE CHECK (octet_length(name) BETWEEN 1 AND 128),
    path        text,
    created_sequence bigint NOT NULL
);

CREATE TABLE assets (
    id          uuid PRIMARY KEY,
    name        text COLLATE "C" CHECK (name IS NULL OR octet_length(name) BETWEEN 1 AND 1024),
    created_at  bigint NOT NULL,
    created_sequence bigint NOT NULL
);

CREATE TABLE representations (
    id          uuid PRIMARY KEY,
    asset_id    uuid NOT NULL REFERENCES assets (id),
    kind        smallint NOT NULL CHECK (kind BETWEEN 0 AND 3),
    path        text COLLATE "C" NOT NULL CHECK (length(path) >= 1),
    root_name   text COLLATE "C" REFERENCES media_roots (name),
    size        bigint NOT NULL CHECK (size >= 0),
    mtime       bigint NOT NULL,
    created_at  bigint NOT NULL,
    created_sequence bigint NOT NULL
);
CREATE INDEX representations_by_asset ON representations (asset_id, id);
CREATE INDEX representations_by_kind ON representations (kind, id);

-- At most one current value per (algorithm, version) domain; recorded_sequence = the
-- revision that recorded this value.
CREATE TABLE representation_fingerprints (
    representation_id   uuid NOT NULL REFERENCES representations (id),
    algorithm           text COLLATE "C" NOT NULL CHECK (length(algorithm) BETWEEN 1 AND 64),
    version             integer NOT NULL CHECK (version BETWEEN 0 AND 65535),
    value               bytea NOT NULL,
    recorded_sequence   bigint NOT NULL,
    PRIMARY KEY (representation_id, algorithm, version)
);

CREATE TABLE activities (
    id              uuid PRIMARY KEY,
    kind            text COLLATE "C" NOT NULL CHECK (length(kind) BETWEEN 1 AND 128),
    tool_name       text COLLATE "C",
    tool_version    text COLLATE "C",
    tool_uri        text COLLATE "C",
    agent_name      text COLLATE "C",
    started_at      bigint,
    finished_at     bigint CHECK (finished_at IS NULL OR started_at IS NULL OR finished_at >= started_at),
    created_sequence bigint NOT NULL,
    CHECK (tool_name IS NOT NULL OR (tool_version IS NULL AND tool_uri IS NULL))
);

-- direction: 0 input, 1 output. role '' = no role. Snapshots are captured at commit.
CREATE TABLE activity_edges (
    activity_id         uuid NOT NULL REFERENCES activities (id),
    direction           smallint NOT NULL CHECK (direction IN (0, 1)),
    representation_id   uuid NOT NULL REFERENCES representations (id),
    role                text COLLATE "C" NOT NULL DEFAULT '',
    snapshot_sequence   bigint,
    snapshot_fingerprints json,
    PRIMARY KEY (activity_id, direction, representation_id, role)
);
CREATE INDEX activity_edges_by_representation ON activity_edges (representation_id, direction, activity_id);

-- target_kind: 1 asset, 2 representation, 3 activity, 5 job. id: like SQLite's rowid, assigned
-- in insertion order unless given (a copy between engines keeps the source's ids).
CREATE TABLE metadata (
    id          bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    target_kind smallint NOT NULL CHECK (target_kind IN (1, 2, 3, 5)),
    target_id   uuid NOT NULL,
    vocabulary  text COLLATE "C" NOT NULL,
    property    text COLLATE "C" NOT NULL,
    value       json NOT NULL,
    created_sequence bigint NOT NULL
);
CREATE INDEX metadata_by_target ON metadata (target_kind, target_id, id);

-- state: 1 requested, 2 claimed, 3 succeeded, 4 failed, 5 cancelled. Each state carries
-- exactly its own detail. Job ids are UUIDv7, so id order is request order: the listing
-- indexes below are also the claim indexes (oldest requested = first id in (state, id)).
-- inputs: the sorted input representation ids, 16 bytes each, concatenated.
CREATE TABLE jobs (
    id                  uuid PRIMARY KEY,
    kind                text COLLATE "C" NOT NULL CHECK (length(kind) BETWEEN 1 AND 128),
    inputs              bytea NOT NULL CHECK (length(inputs) % 16 = 0),
    output_asset_id     uuid NOT NULL REFERENCES assets (id),
    output_kind         smallint NOT NULL CHECK (output_kind BETWEEN 0 AND 3),
    target_root         text COLLATE "C" REFERENCES media_roots (name),
    state               smallint NOT NULL CHECK (state BETWEEN 1 AND 5),
    claim_secret        bytea CHECK (claim_secret IS NULL OR length(claim_secret) = 16),
    claim_tool_name     text COLLATE "C",
    claim_tool_version  text COLLATE "C",
    claim_tool_uri      text COLLATE "C",
    claim_agent_name    text COLLATE "C",
    claimed_at          bigint,
    claim_expires_at    bigint,
    claim_sequence      bigint,
    completion_activity_id       uuid REFERENCES activities (id),
    completion_representation_id uuid REFERENCES representations (id),
    failure_diagnostic  text CHECK (failure_diagnostic IS NULL
                                    OR octet_length(failure_diagnostic) BETWEEN 1 AND 4096),
    requested_at        bigint NOT NULL,
    requested_sequence  bigint NOT NULL,
    updated_sequence    bigint NOT NULL,
    CHECK ((state = 2) = (claim_secret IS NOT NULL AND claim_tool_name IS NOT NULL
                          AND claimed_at IS NOT NULL AND claim_expires_at IS NOT NULL
                          AND claim_sequence IS NOT NULL)),
    CHECK (state = 2 OR (claim_secret IS NULL AND claim_tool_name IS NULL AND claim_tool_version IS NULL
                         AND claim_tool_uri IS NULL AND claim_agent_name IS NULL AND claimed_at IS NULL
                         AND claim_expires_at IS NULL AND claim_sequence IS NULL)),
    CHECK ((state = 3) = (completion_activity_id IS NOT NULL AND completion_representation_id IS NOT NULL)),
    CHECK (state = 3 OR (completion_activity_id IS NULL AND completion_representation_id IS NULL)),
    CHECK ((state = 4) = (failure_diagnostic IS NOT NULL))
);
-- Listing, filtering and claiming (keyset by id, either direction).
CREATE INDEX jobs_by_state_kind ON jobs (state, kind, id);
CREATE INDEX jobs_by_kind ON jobs (kind, id);
CREATE INDEX jobs_by_state ON jobs (state, id);
CREATE INDEX jobs_by_completion ON jobs (completion_activity_id) WHERE completion_activity_id IS NOT NULL;
-- Expired claims (stuck work and re-claims); only claimed jobs are in it.
CREATE INDEX jobs_claimed_expiry ON jobs (claim_expires_at) WHERE state = 2;

-- Counts per kind and state, maintained by triggers so the monitor never counts a million rows.
CREATE TABLE job_counts (
    kind    text COLLATE "C" NOT NULL,
    state   smallint NOT NULL,
    count   bigint NOT NULL CHECK (count >= 0),
    PRIMARY KEY (kind, state)
);

-- One function for both triggers; `SET search_path FROM CURRENT` pins it to this schema, so
-- it finds job_counts whatever the caller's search_path.
CREATE FUNCTION job_counts_maintain() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        UPDATE job_counts SET count = count - 1 WHERE kind = OLD.kind AND state = OLD.state;
    END IF;
    INSERT INTO job_counts AS c (kind, state, count) VALUES (NEW.kind, NEW.state, 1)
    ON CONFLICT (kind, state) DO UPDATE SET count = c.count + 1;
    RETURN NULL;
END
$$;

-- Constraint triggers fire like plain AFTER ROW triggers (at the end of each statement, so a
-- transaction reads its own counts, as on SQLite), but an engine may instead run
-- `SET CONSTRAINTS job_counts_insert, job_counts_update DEFERRED` in a write transaction to
-- apply the counts at commit and hold their row locks only as long as the revision number.
CREATE CONSTRAINT TRIGGER job_counts_insert AFTER INSERT ON jobs
    DEFERRABLE INITIALLY IMMEDIATE
    FOR EACH ROW EXECUTE FUNCTION job_counts_maintain();

CREATE CONSTRAINT TRIGGER job_counts_update AFTER UPDATE OF state ON jobs
    DEFERRABLE INITIALLY IMMEDIATE
    FOR EACH ROW WHEN (OLD.state <> NEW.state) EXECUTE FUNCTION job_counts_maintain();
