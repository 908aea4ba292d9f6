-- PostProject Monitor production schema, version 7: the baseline (PostgreSQL).
--
-- The whole schema as it is: a new production gets exactly this, then every numbered
-- migration after it (0008 and up, none yet). Development builds before it used versions 1-6;
-- a production they made is refused (it cannot be upgraded). The tables, columns, checks and
-- indexes are SQLite's (storage/sqlite/migrations/0007_baseline.sql) in PostgreSQL's dialect;
-- where they differ, it says why.
--
-- Runs with search_path set to the production's schema, so every name below lands there.
-- Times are Unix microseconds (bigint); ids are uuid; JSON columns are `json`, which checks
-- the text like SQLite's json_valid() and keeps it byte for byte (jsonb would reorder keys).
-- Text that is listed, sorted or compared uses COLLATE "C": bytewise, like SQLite's BINARY,
-- whatever the database's default collation.
-- Job states: 1 requested, 2 claimed, 3 succeeded, 4 failed, 5 cancelled
-- (postproject.model.lifecycle.JobState). Attempt outcomes: 1 succeeded, 2 failed,
-- 3 released, 4 lost, 5 cancelled (postproject.model.jobs.AttemptOutcome).


-- == The production and its revision feed ==================================================

-- The production itself: one row, written at creation (its id, and the key of its cursors).
CREATE TABLE production (
    singleton   smallint PRIMARY KEY CHECK (singleton = 1),
    id          uuid NOT NULL,
    created_at  bigint NOT NULL,
    cursor_key  bytea NOT NULL CHECK (length(cursor_key) = 32)
);

-- The durable high-water mark of the job authority clock: one row. The mark is the larger of
-- job_clock.high_water (written only when a guarded edit fails, or by a clock reset) and the
-- clock_mark of the newest revision (every revision carries the mark forward), so successful
-- commits pay no extra write for it.
CREATE TABLE job_clock (
    singleton   smallint PRIMARY KEY CHECK (singleton = 1),
    high_water  bigint
);
INSERT INTO job_clock (singleton, high_water) VALUES (1, NULL);

-- The revision feed: one row per committed edit, numbered without gaps in commit order
-- (pp_publish, below).
CREATE TABLE revisions (
    sequence        bigint PRIMARY KEY CHECK (sequence >= 1),
    id              uuid NOT NULL,
    committed_at    bigint NOT NULL,
    origin          text CHECK (origin IS NULL OR octet_length(origin) BETWEEN 1 AND 512),
    message         text CHECK (message IS NULL OR octet_length(message) BETWEEN 1 AND 4096),
    clock_mark      bigint
);

-- A revision's semantic events, in staging order. subject: the id of the main object; the
-- partial index answers "the history of a job" without costing other events a write.
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
                   'job_lost','job_priority_changed','job_requested','job_requeued','job_retry_scheduled',
                   'job_stop_confirmed','job_stop_missed','job_succeeded');


-- == Assets, files and provenance ==========================================================

-- Named media roots: a representation's path may be relative to one (path NULL: not mapped here).
CREATE TABLE media_roots (
    id          uuid PRIMARY KEY,
    name        text COLLATE "C" NOT NULL UNIQUE CHECK (octet_length(name) BETWEEN 1 AND 128),
    path        text,
    created_sequence bigint NOT NULL
);

-- Assets: the things a production makes (a shot, a plate), named or not.
CREATE TABLE assets (
    id          uuid PRIMARY KEY,
    name        text COLLATE "C" CHECK (name IS NULL OR octet_length(name) BETWEEN 1 AND 1024),
    created_at  bigint NOT NULL,
    created_sequence bigint NOT NULL
);

-- Representations: an asset's files (kind, path, size, mtime). superseded_by: the
-- representation that replaced this one (a chain, see SQLite's baseline); deferrable, so a
-- copy between engines may load representations in id order.
CREATE TABLE representations (
    id          uuid PRIMARY KEY,
    asset_id    uuid NOT NULL REFERENCES assets (id),
    kind        smallint NOT NULL CHECK (kind BETWEEN 0 AND 3),
    path        text COLLATE "C" NOT NULL CHECK (length(path) >= 1),
    root_name   text COLLATE "C" REFERENCES media_roots (name),
    size        bigint NOT NULL CHECK (size >= 0),
    mtime       bigint NOT NULL,
    created_at  bigint NOT NULL,
    created_sequence bigint NOT NULL,
    superseded_by uuid REFERENCES representations (id) DEFERRABLE INITIALLY IMMEDIATE
);
CREATE INDEX representations_by_asset ON representations (asset_id, id);
CREATE INDEX representations_by_kind ON representations (kind, id);

-- A representation's fingerprints: at most one current value per (algorithm, version)
-- domain; recorded_sequence: the revision that recorded this value.
CREATE TABLE representation_fingerprints (
    representation_id   uuid NOT NULL REFERENCES representations (id),
    algorithm           text COLLATE "C" NOT NULL CHECK (length(algorithm) BETWEEN 1 AND 64),
    version             integer NOT NULL CHECK (version BETWEEN 0 AND 65535),
    value               bytea NOT NULL,
    recorded_sequence   bigint NOT NULL,
    PRIMARY KEY (representation_id, algorithm, version)
);

-- Activities: what made representations from others (a render, a transcode), with its tool
-- and agent.
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

-- An activity's inputs and outputs. direction: 0 input, 1 output; role '' = no role. The
-- snapshot (each representation's fingerprints as JSON) is captured at commit (pp_publish).
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

-- Metadata assertions (vocabulary, property, JSON value) about one object, in assertion
-- order. target_kind: 1 asset, 2 representation, 3 activity, 5 job. id: like SQLite's rowid,
-- assigned in insertion order unless given (a copy between engines keeps the source's ids).
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


-- == Jobs and the farm =====================================================================

-- Job counts per kind and state, maintained by triggers (below) so the monitor never counts
-- a million rows.
CREATE TABLE job_counts (
    kind    text COLLATE "C" NOT NULL,
    state   smallint NOT NULL,
    count   bigint NOT NULL CHECK (count >= 0),
    PRIMARY KEY (kind, state)
);

-- Registered workers: stored state (not revisions), one row per name; a new registration
-- replaces the session, which fences the old one.
CREATE TABLE workers (
    id              uuid PRIMARY KEY,
    name            text COLLATE "C" NOT NULL UNIQUE CHECK (octet_length(name) BETWEEN 1 AND 256),
    host            text COLLATE "C" CHECK (host IS NULL OR octet_length(host) BETWEEN 1 AND 256),
    capacity        integer NOT NULL CHECK (capacity BETWEEN 1 AND 1024),
    kinds           json,
    session         uuid NOT NULL,
    registered_at   bigint NOT NULL,
    last_seen       bigint NOT NULL
);

-- Jobs: one row each, carrying exactly its state's detail (see SQLite's baseline for every
-- column). Its invariants (SQLite's CHECK constraints) are one row trigger here,
-- jobs_invariants (below): PostgreSQL rebuilds every CHECK constraint of a table from its
-- stored text at each statement that writes it, and a worker's job writes its row four times
-- (claim, completion, and pp_publish numbering each). The foreign keys keep the names the
-- development builds gave them. Claims and completions update a row two or three times per
-- edit: room on the page (fillfactor) keeps those updates HOT.
CREATE TABLE jobs (
    id                  uuid PRIMARY KEY,
    kind                text COLLATE "C" NOT NULL,
    inputs              bytea NOT NULL,
    output_asset_id     uuid NOT NULL CONSTRAINT jobs_output_asset_id_fkey1 REFERENCES assets (id),
    output_kind         smallint NOT NULL,
    target_root         text COLLATE "C" CONSTRAINT jobs_target_root_fkey1 REFERENCES media_roots (name),
    state               smallint NOT NULL,
    claim_secret_hash   bytea,
    claim_tool_name     text COLLATE "C",
    claim_tool_version  text COLLATE "C",
    claim_tool_uri      text COLLATE "C",
    claim_agent_name    text COLLATE "C",
    claim_worker_id     uuid REFERENCES workers (id),
    claim_session       uuid,
    claimed_at          bigint,
    claim_expires_at    bigint,
    claim_sequence      bigint,
    claim_attempt       integer,
    completion_activity_id       uuid CONSTRAINT jobs_completion_activity_id_fkey1 REFERENCES activities (id),
    completion_representation_id uuid CONSTRAINT jobs_completion_representation_id_fkey1
                                      REFERENCES representations (id),
    failure_diagnostic  text,
    requested_at        bigint NOT NULL,
    requested_sequence  bigint NOT NULL,
    updated_sequence    bigint NOT NULL,
    priority            integer NOT NULL DEFAULT 0,
    not_before          bigint,
    available_at        bigint NOT NULL,
    max_attempts        integer,
    attempts            integer NOT NULL DEFAULT 0,
    idempotency_key     text COLLATE "C",
    request_digest      bytea,
    retry_of            uuid,
    retried_as          uuid,
    dependencies        integer NOT NULL DEFAULT 0,
    waiting             integer NOT NULL DEFAULT 0,
    regenerates         uuid REFERENCES representations (id),
    finished_at         bigint
) WITH (fillfactor = 70);
-- Listing and filtering (keyset by id, either direction).
CREATE INDEX jobs_by_state_kind ON jobs (state, kind, id);
CREATE INDEX jobs_by_kind ON jobs (kind, id);
CREATE INDEX jobs_by_state ON jobs (state, id);
CREATE INDEX jobs_by_completion ON jobs (completion_activity_id) WHERE completion_activity_id IS NOT NULL;
-- Expired claims (stuck work, re-claims and the loss sweep); only claimed jobs are in it.
-- (SQLite's indexes end with the primary key implicitly: id orders equal expiries alike here.)
CREATE INDEX jobs_claimed_expiry ON jobs (claim_expires_at, id) WHERE state = 2;
-- A worker's claims (capacity, running jobs); only claims made by registered workers.
CREATE INDEX jobs_by_worker ON jobs (claim_worker_id, claim_expires_at) WHERE claim_worker_id IS NOT NULL;
CREATE UNIQUE INDEX jobs_by_idempotency_key ON jobs (idempotency_key) WHERE idempotency_key IS NOT NULL;
-- Claim order: priority (descending), then availability, then id, over requested jobs that
-- wait on nothing.
CREATE INDEX jobs_ready ON jobs (priority DESC, available_at, id) WHERE state = 1 AND waiting = 0;
CREATE INDEX jobs_ready_kind ON jobs (kind, priority DESC, available_at, id) WHERE state = 1 AND waiting = 0;
-- Search, time filters and sorts (see SQLite's baseline); the tail is the id's last 3 bytes.
CREATE INDEX jobs_finished ON jobs (finished_at, id) WHERE finished_at IS NOT NULL;
CREATE INDEX jobs_by_requested_at ON jobs (requested_at, id);
CREATE INDEX jobs_by_priority ON jobs (priority, id);
CREATE INDEX jobs_by_output ON jobs (output_asset_id, id);
CREATE INDEX jobs_by_tail ON jobs (substring(uuid_send(id) FROM 14));

-- The jobs table's invariants, SQLite's CHECK constraints one by one: a row that breaks one
-- is refused with SQLSTATE 23514 (check_violation) naming the invariant (as the development
-- builds' constraints were named); like a CHECK, an invariant that evaluates to NULL holds. A
-- BEFORE trigger's PL/pgSQL expression is compiled once per connection (measured: an UPDATE
-- of one row by key, 165 us with the constraints, 95 us with this trigger).
CREATE FUNCTION jobs_invariants() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    invariant text;
BEGIN
    invariant := CASE
        WHEN ((NEW.attempts >= 0)) IS FALSE THEN 'jobs_attempts_check'
        WHEN (((NEW.state = 4) = (NEW.failure_diagnostic IS NOT NULL))) IS FALSE THEN 'jobs_check10'
        WHEN (((NEW.idempotency_key IS NULL) = (NEW.request_digest IS NULL))) IS FALSE THEN 'jobs_check11'
        WHEN (((NEW.state = 2) = ((NEW.claim_secret_hash IS NOT NULL) AND (NEW.claim_tool_name IS NOT NULL) AND (NEW.claimed_at IS NOT NULL) AND (NEW.claim_expires_at IS NOT NULL) AND (NEW.claim_sequence IS NOT NULL) AND (NEW.claim_attempt IS NOT NULL)))) IS FALSE THEN 'jobs_check5'
        WHEN (((NEW.state = 2) OR ((NEW.claim_secret_hash IS NULL) AND (NEW.claim_tool_name IS NULL) AND (NEW.claim_tool_version IS NULL) AND (NEW.claim_tool_uri IS NULL) AND (NEW.claim_agent_name IS NULL) AND (NEW.claim_worker_id IS NULL) AND (NEW.claim_session IS NULL) AND (NEW.claimed_at IS NULL) AND (NEW.claim_expires_at IS NULL) AND (NEW.claim_sequence IS NULL) AND (NEW.claim_attempt IS NULL)))) IS FALSE THEN 'jobs_check6'
        WHEN (((NEW.claim_worker_id IS NULL) = (NEW.claim_session IS NULL))) IS FALSE THEN 'jobs_check7'
        WHEN (((NEW.state = 3) = ((NEW.completion_activity_id IS NOT NULL) AND (NEW.completion_representation_id IS NOT NULL)))) IS FALSE THEN 'jobs_check8'
        WHEN (((NEW.state = 3) OR ((NEW.completion_activity_id IS NULL) AND (NEW.completion_representation_id IS NULL)))) IS FALSE THEN 'jobs_check9'
        WHEN (((NEW.claim_secret_hash IS NULL) OR (length(NEW.claim_secret_hash) = 32))) IS FALSE THEN 'jobs_claim_secret_hash_check'
        WHEN ((NEW.dependencies >= 0)) IS FALSE THEN 'jobs_dependencies_check'
        WHEN (((NEW.failure_diagnostic IS NULL) OR ((octet_length(NEW.failure_diagnostic) >= 1) AND (octet_length(NEW.failure_diagnostic) <= 4096)))) IS FALSE THEN 'jobs_failure_diagnostic_check1'
        WHEN (((length(NEW.inputs) % 16) = 0)) IS FALSE THEN 'jobs_inputs_check1'
        WHEN (((length(NEW.kind) >= 1) AND (length(NEW.kind) <= 128))) IS FALSE THEN 'jobs_kind_check1'
        WHEN (((NEW.max_attempts IS NULL) OR ((NEW.max_attempts >= 1) AND (NEW.max_attempts <= 1000)))) IS FALSE THEN 'jobs_max_attempts_check'
        WHEN (((NEW.output_kind >= 0) AND (NEW.output_kind <= 3))) IS FALSE THEN 'jobs_output_kind_check1'
        WHEN (((NEW.priority >= '-1000'::integer) AND (NEW.priority <= 1000))) IS FALSE THEN 'jobs_priority_check'
        WHEN (((NEW.request_digest IS NULL) OR (length(NEW.request_digest) = 32))) IS FALSE THEN 'jobs_request_digest_check'
        WHEN (((NEW.state >= 1) AND (NEW.state <= 5))) IS FALSE THEN 'jobs_state_check1'
        WHEN ((NEW.waiting >= 0)) IS FALSE THEN 'jobs_waiting_check'
    END;  -- the first invariant the row breaks (as with a CHECK, one that is NULL holds)
    IF invariant IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'check_violation', TABLE = 'jobs', CONSTRAINT = invariant,
            MESSAGE = format('new row for relation "jobs" violates check constraint "%s"', invariant);
    END IF;
    RETURN NEW;
END
$fn$;

CREATE TRIGGER jobs_invariants BEFORE INSERT OR UPDATE ON jobs
    FOR EACH ROW EXECUTE FUNCTION jobs_invariants();

-- The job counts, applied at commit (INITIALLY DEFERRED, under pp_publish's numbering lock):
-- an edit locks its count rows only while it holds the revision number, so concurrent edits
-- never wait for each other's counts (SET CONSTRAINTS ... IMMEDIATE gives a transaction its
-- own counts at once). A state change moves one job from one count to the other in one
-- statement when both rows exist (they almost always do); when one is missing (the first job
-- of a kind to reach a state), that statement is undone and the change applied in steps (the
-- old count lowered, the new one inserted or raised). `SET search_path FROM CURRENT` pins a
-- function to this schema, whatever the caller's search_path.
CREATE FUNCTION job_counts_maintain() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    moved bigint;
BEGIN
    IF TG_OP = 'UPDATE' THEN
        UPDATE job_counts SET count = count + CASE WHEN kind = NEW.kind AND state = NEW.state THEN 1 ELSE -1 END
        WHERE (kind, state) IN ((OLD.kind, OLD.state), (NEW.kind, NEW.state));
        GET DIAGNOSTICS moved = ROW_COUNT;
        IF moved = 2 THEN
            RETURN NULL;
        END IF;
        UPDATE job_counts SET count = count - CASE WHEN kind = NEW.kind AND state = NEW.state THEN 1 ELSE -1 END
        WHERE (kind, state) IN ((OLD.kind, OLD.state), (NEW.kind, NEW.state));
        UPDATE job_counts SET count = count - 1 WHERE kind = OLD.kind AND state = OLD.state;
    END IF;
    INSERT INTO job_counts AS c (kind, state, count) VALUES (NEW.kind, NEW.state, 1)
    ON CONFLICT (kind, state) DO UPDATE SET count = c.count + 1;
    RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER job_counts_insert AFTER INSERT ON jobs
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION job_counts_maintain();

CREATE CONSTRAINT TRIGGER job_counts_update AFTER UPDATE OF state ON jobs
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (OLD.state <> NEW.state) EXECUTE FUNCTION job_counts_maintain();

-- A job's attempts: one per claim, numbered from 1 per job; outcome NULL while running. The
-- running attempt's latest progress, its progress signal and cooperative stops as in
-- SQLite's baseline (stop_by: the holder's deadline to confirm a cancel or requeue;
-- stopped_at: when it confirmed, = ended_at for attempts its holder ended).
CREATE TABLE job_attempts (
    job_id          uuid NOT NULL REFERENCES jobs (id),
    number          integer NOT NULL CHECK (number >= 1),
    worker_id       uuid REFERENCES workers (id),
    agent_name      text COLLATE "C",
    tool_name       text COLLATE "C" NOT NULL,
    tool_version    text COLLATE "C",
    tool_uri        text COLLATE "C",
    secret_hash     bytea NOT NULL CHECK (length(secret_hash) = 32),
    claimed_at      bigint NOT NULL,
    ended_at        bigint,
    outcome         smallint CHECK (outcome IS NULL OR outcome BETWEEN 1 AND 5),
    diagnostic      text CHECK (diagnostic IS NULL OR octet_length(diagnostic) BETWEEN 1 AND 4096),
    progress_fraction double precision
        CHECK (progress_fraction IS NULL OR progress_fraction BETWEEN 0.0 AND 1.0),
    progress_stage  text CHECK (progress_stage IS NULL OR octet_length(progress_stage) BETWEEN 1 AND 1024),
    progress_message text CHECK (progress_message IS NULL OR octet_length(progress_message) BETWEEN 1 AND 1024),
    progress_at     bigint,
    progress_signalled_at bigint,
    stop_by         bigint,
    stopped_at      bigint,
    CHECK ((outcome IS NULL) = (ended_at IS NULL)),
    PRIMARY KEY (job_id, number)
);
CREATE INDEX job_attempts_by_worker ON job_attempts (worker_id, claimed_at) WHERE worker_id IS NOT NULL;
-- Attempts awaiting their holder's confirmation, by deadline (the loss sweep).
CREATE INDEX job_attempts_stopping ON job_attempts (stop_by)
    WHERE stop_by IS NOT NULL AND stopped_at IS NULL AND outcome <> 4;
CREATE INDEX job_attempts_by_agent ON job_attempts (agent_name) WHERE agent_name IS NOT NULL;

-- One row per (dependent job, job it depends on); see SQLite's baseline.
CREATE TABLE job_dependencies (
    job_id          uuid NOT NULL REFERENCES jobs (id),
    upstream_id     uuid NOT NULL REFERENCES jobs (id),
    binds_output    smallint NOT NULL CHECK (binds_output IN (0, 1)),
    resolved_id     uuid REFERENCES representations (id),
    CHECK (binds_output = 1 OR resolved_id IS NULL),
    CHECK (job_id <> upstream_id),
    PRIMARY KEY (job_id, upstream_id)
);
-- Dependents of a job (its success, a request again).
CREATE INDEX job_dependencies_by_upstream ON job_dependencies (upstream_id, job_id);

-- Every claim starts an attempt (and ends a running one, whose lease expired, as lost) in
-- the claim's own statement, and resolves the job's output bindings not resolved yet (every
-- upstream has succeeded, or the job would not be claimable).
CREATE FUNCTION job_attempt_started() RETURNS trigger LANGUAGE plpgsql
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

CREATE TRIGGER job_attempt_started AFTER UPDATE OF claim_attempt ON jobs
    FOR EACH ROW WHEN (NEW.claim_attempt IS NOT NULL AND NEW.claim_attempt IS DISTINCT FROM OLD.claim_attempt)
    EXECUTE FUNCTION job_attempt_started();

-- The progress signal: one counter, bumped by coalesced progress reports; followers compare
-- it to see that progress changed (the revision feed does not tick for progress).
CREATE TABLE progress_signal (
    id      integer PRIMARY KEY CHECK (id = 1),
    token   bigint NOT NULL CHECK (token >= 0)
);
INSERT INTO progress_signal (id, token) VALUES (1, 0);
-- A report that signals moves progress_signalled_at; the token moves in the same statement.
CREATE FUNCTION progress_signalled() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE progress_signal SET token = token + 1 WHERE id = 1;
    RETURN NULL;
END
$$;
CREATE TRIGGER progress_signalled AFTER UPDATE OF progress_signalled_at ON job_attempts
    FOR EACH ROW WHEN (NEW.progress_signalled_at IS DISTINCT FROM OLD.progress_signalled_at)
    EXECUTE FUNCTION progress_signalled();

-- Each attempt's log: where its full log lives and its tail (<= 64 KiB of UTF-8).
CREATE TABLE job_attempt_logs (
    job_id      uuid NOT NULL,
    number      integer NOT NULL,
    root_name   text COLLATE "C",
    path        text COLLATE "C" CHECK (path IS NULL OR octet_length(path) BETWEEN 1 AND 4096),
    tail        text CHECK (tail IS NULL OR octet_length(tail) <= 65536),
    tail_at     bigint,
    CHECK ((tail IS NULL) = (tail_at IS NULL)),
    PRIMARY KEY (job_id, number),
    FOREIGN KEY (job_id, number) REFERENCES job_attempts (job_id, number)
);


-- == Job search ============================================================================
-- As SQLite's (see its baseline), but where SQLite keeps trigram FTS5 tables, asset_search
-- and job_diagnostics are plain tables with GIN trigram indexes (pg_trgm, a trusted extension
-- since PostgreSQL 13, in the public schema), matched with ILIKE.

CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;

-- The distinct agent names that ever claimed a job.
CREATE TABLE job_agents (name text COLLATE "C" PRIMARY KEY);
CREATE FUNCTION job_agent_seen() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO job_agents (name) VALUES (NEW.agent_name) ON CONFLICT (name) DO NOTHING;
    RETURN NULL;
END
$$;
CREATE TRIGGER job_agent_seen AFTER INSERT ON job_attempts
    FOR EACH ROW WHEN (NEW.agent_name IS NOT NULL) EXECUTE FUNCTION job_agent_seen();

-- Named assets, trigram-indexed.
CREATE TABLE asset_search (asset uuid NOT NULL, name text NOT NULL);
CREATE INDEX asset_search_name ON asset_search USING gin (name public.gin_trgm_ops);
CREATE FUNCTION asset_search_created() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO asset_search (asset, name) VALUES (NEW.id, NEW.name);
    RETURN NULL;
END
$$;
CREATE TRIGGER asset_search_created AFTER INSERT ON assets
    FOR EACH ROW WHEN (NEW.name IS NOT NULL) EXECUTE FUNCTION asset_search_created();

-- Failed jobs' diagnostics, trigram-indexed.
CREATE TABLE job_diagnostics (job uuid NOT NULL, body text NOT NULL);
CREATE INDEX job_diagnostics_body ON job_diagnostics USING gin (body public.gin_trgm_ops);
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


-- == Publishing an edit ====================================================================

-- Publishing an edit (the engine's commit, in the same round trip as COMMIT).
--
-- Edits run concurrently; each writes its rows with a provisional sequence (p_provisional,
-- larger than any revision number) and lists what it wrote. Here, under a transaction-scoped
-- advisory lock held until COMMIT, the edit gets the next revision number, its rows get that
-- number, its activities' edge snapshots are captured, the revision and its events are
-- written, and listeners are notified (payload: schema, sequence, clock mark; never a
-- secret). The lock makes numbers follow commit order: the next edit reads the newest
-- revision only after this one committed (READ COMMITTED: each statement here takes a fresh
-- snapshot), so a reader never sees a revision before every smaller one. What the edit wrote
-- is numbered in two statements (what it wrote besides jobs, then its jobs): each statement a
-- PL/pgSQL function runs pays an executor start-up and its own round of foreign-key checks,
-- under the numbering lock.
CREATE FUNCTION pp_publish(
    p_provisional bigint,
    p_id uuid,
    p_committed_at bigint,
    p_origin text,
    p_message text,
    p_high_water bigint,
    p_positions integer[],
    p_kinds text[],
    p_subjects uuid[],
    p_payloads text[],
    p_assets uuid[],
    p_roots uuid[],
    p_representations uuid[],
    p_fingerprinted uuid[],
    p_activities uuid[],
    p_metadata_kinds smallint[],
    p_metadata_targets uuid[],
    p_jobs uuid[],
    p_reset boolean  -- the edit lowered job_clock's mark (reset_clock): this revision carries it
) RETURNS TABLE (published bigint, mark bigint, server_now bigint) LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    seq bigint;
    last_mark bigint;
    stored bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(1347441202, hashtext(current_schema()));
    server_now := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;  -- when the lock was taken
    SELECT r.sequence, r.clock_mark INTO seq, last_mark FROM revisions r ORDER BY r.sequence DESC LIMIT 1;
    seq := coalesce(seq, 0) + 1;
    SELECT c.high_water INTO stored FROM job_clock c;
    mark := CASE WHEN p_reset THEN greatest(stored, p_high_water) ELSE greatest(last_mark, stored, p_high_water) END;
    IF p_assets IS NOT NULL THEN
        UPDATE assets SET created_sequence = seq WHERE id = ANY (p_assets) AND created_sequence = p_provisional;
    END IF;
    IF p_roots IS NOT NULL THEN
        UPDATE media_roots SET created_sequence = seq WHERE id = ANY (p_roots) AND created_sequence = p_provisional;
    END IF;
    IF p_representations IS NOT NULL OR p_fingerprinted IS NOT NULL OR p_activities IS NOT NULL
       OR p_metadata_targets IS NOT NULL THEN
        -- What the edit wrote besides jobs, numbered in one statement (one executor start-up
        -- and one round of foreign-key checks instead of up to five, under the numbering
        -- lock). A table the edit did not write is passed NULL: its part matches no row.
        WITH r AS (
            UPDATE representations SET created_sequence = seq
            WHERE id = ANY (p_representations) AND created_sequence = p_provisional
        ), f AS (
            UPDATE representation_fingerprints SET recorded_sequence = seq
            WHERE representation_id = ANY (p_fingerprinted) AND recorded_sequence = p_provisional
        ), a AS (
            UPDATE activities SET created_sequence = seq
            WHERE id = ANY (p_activities) AND created_sequence = p_provisional
        ), e AS (
            -- each new edge's representation fingerprints as they are now (this statement sees
            -- the fingerprints the edit recorded; the renumbering above does not change them)
            UPDATE activity_edges e SET snapshot_sequence = seq, snapshot_fingerprints = (
                SELECT coalesce('[' || string_agg(format('[%s,%s,"%s"]', to_json(x.algorithm), x.version,
                                                         upper(encode(x.value, 'hex'))), ','
                                                  ORDER BY x.algorithm, x.version) || ']', '[]')::json
                FROM representation_fingerprints x WHERE x.representation_id = e.representation_id)
            WHERE e.activity_id = ANY (p_activities)
        )
        UPDATE metadata m SET created_sequence = seq
        FROM unnest(p_metadata_kinds, p_metadata_targets) AS t (kind, target)
        WHERE m.target_kind = t.kind AND m.target_id = t.target AND m.created_sequence = p_provisional;
    END IF;
    IF p_jobs IS NOT NULL THEN
        UPDATE jobs SET
            requested_sequence = CASE WHEN requested_sequence = p_provisional THEN seq ELSE requested_sequence END,
            updated_sequence = CASE WHEN updated_sequence = p_provisional THEN seq ELSE updated_sequence END,
            claim_sequence = CASE WHEN claim_sequence = p_provisional THEN seq ELSE claim_sequence END
        WHERE id = ANY (p_jobs);
    END IF;
    INSERT INTO revisions (sequence, id, committed_at, origin, message, clock_mark)
    VALUES (seq, p_id, p_committed_at, p_origin, p_message, mark);
    INSERT INTO revision_events (sequence, position, kind, subject, payload)
    SELECT seq, e.position, e.kind, e.subject, e.payload::json
    FROM unnest(p_positions, p_kinds, p_subjects, p_payloads) AS e (position, kind, subject, payload);
    PERFORM pg_notify('postproject', current_schema() || ' ' || seq || ' ' || coalesce(mark::text, ''));
    published := seq;
    RETURN NEXT;
END
$$;

-- A statement an edit sends ahead without waiting for its result (pipelined) states the
-- row count it must have; any other count aborts the edit with SQLSTATE p_state (PPL01: the
-- lease no longer holds the job; PPN01: a row it refers to does not exist; PPC01: a
-- provenance cycle closed by an edit that committed concurrently), so a COMMIT sent in the
-- same round trip cannot publish it.
CREATE FUNCTION pp_expect(p_actual bigint, p_expected bigint, p_state text, p_message text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF p_actual IS DISTINCT FROM p_expected THEN
        RAISE EXCEPTION USING ERRCODE = p_state, MESSAGE = p_message;
    END IF;
END
$$;
