-- PostProject Monitor production schema, version 2 (PostgreSQL): the farm's work model, as
-- storage/sqlite/migrations/0002_work_model.sql. Registered workers with sessions; one
-- attempt per claim; priority, availability, attempt limits, idempotency keys and retry links
-- on jobs; lease secrets stored only as SHA-256 hashes. The jobs table is rebuilt so its
-- columns keep SQLite's order; ids, states and live claims are kept.
-- Also the engine's server-side functions (pp_publish: revision numbering at commit).

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

ALTER TABLE jobs RENAME TO jobs_v1;
ALTER INDEX jobs_pkey RENAME TO jobs_v1_pkey;
DROP INDEX jobs_by_state_kind, jobs_by_kind, jobs_by_state, jobs_by_completion, jobs_claimed_expiry;

CREATE TABLE jobs (
    id                  uuid PRIMARY KEY,
    kind                text COLLATE "C" NOT NULL CHECK (length(kind) BETWEEN 1 AND 128),
    inputs              bytea NOT NULL CHECK (length(inputs) % 16 = 0),
    output_asset_id     uuid NOT NULL REFERENCES assets (id),
    output_kind         smallint NOT NULL CHECK (output_kind BETWEEN 0 AND 3),
    target_root         text COLLATE "C" REFERENCES media_roots (name),
    state               smallint NOT NULL CHECK (state BETWEEN 1 AND 5),
    claim_secret_hash   bytea CHECK (claim_secret_hash IS NULL OR length(claim_secret_hash) = 32),
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
    completion_activity_id       uuid REFERENCES activities (id),
    completion_representation_id uuid REFERENCES representations (id),
    failure_diagnostic  text CHECK (failure_diagnostic IS NULL
                                    OR octet_length(failure_diagnostic) BETWEEN 1 AND 4096),
    requested_at        bigint NOT NULL,
    requested_sequence  bigint NOT NULL,
    updated_sequence    bigint NOT NULL,
    priority            integer NOT NULL DEFAULT 0 CHECK (priority BETWEEN -1000 AND 1000),
    not_before          bigint,
    available_at        bigint NOT NULL,
    max_attempts        integer CHECK (max_attempts IS NULL OR max_attempts BETWEEN 1 AND 1000),
    attempts            integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    idempotency_key     text COLLATE "C",
    request_digest      bytea CHECK (request_digest IS NULL OR length(request_digest) = 32),
    retry_of            uuid,
    retried_as          uuid,
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
);

INSERT INTO jobs (id, kind, inputs, output_asset_id, output_kind, target_root, state, claim_secret_hash,
    claim_tool_name, claim_tool_version, claim_tool_uri, claim_agent_name, claimed_at, claim_expires_at,
    claim_sequence, claim_attempt, completion_activity_id, completion_representation_id, failure_diagnostic,
    requested_at, requested_sequence, updated_sequence, available_at, attempts)
SELECT id, kind, inputs, output_asset_id, output_kind, target_root, state, sha256(claim_secret),
    claim_tool_name, claim_tool_version, claim_tool_uri, claim_agent_name, claimed_at, claim_expires_at,
    claim_sequence, CASE WHEN state = 2 THEN 1 END, completion_activity_id, completion_representation_id,
    failure_diagnostic, requested_at, requested_sequence, updated_sequence, requested_at,
    CASE WHEN state = 2 THEN 1 ELSE 0 END
FROM jobs_v1;

DROP TABLE jobs_v1;

-- Listing and filtering (keyset by id, either direction), as in version 1.
CREATE INDEX jobs_by_state_kind ON jobs (state, kind, id);
CREATE INDEX jobs_by_kind ON jobs (kind, id);
CREATE INDEX jobs_by_state ON jobs (state, id);
CREATE INDEX jobs_by_completion ON jobs (completion_activity_id) WHERE completion_activity_id IS NOT NULL;
-- (SQLite's indexes end with the primary key implicitly: id orders equal expiries alike here.)
CREATE INDEX jobs_claimed_expiry ON jobs (claim_expires_at, id) WHERE state = 2;
-- Claim order: priority (descending), then availability, then id; only requested jobs.
CREATE INDEX jobs_ready ON jobs (priority DESC, available_at, id) WHERE state = 1;
CREATE INDEX jobs_ready_kind ON jobs (kind, priority DESC, available_at, id) WHERE state = 1;
-- A worker's claims (capacity, running jobs); only claims made by registered workers.
CREATE INDEX jobs_by_worker ON jobs (claim_worker_id, claim_expires_at) WHERE claim_worker_id IS NOT NULL;
CREATE UNIQUE INDEX jobs_by_idempotency_key ON jobs (idempotency_key) WHERE idempotency_key IS NOT NULL;

-- Counts as in version 1, but applied at commit by default (INITIALLY DEFERRED): an edit locks
-- its count rows only while it holds the revision number, so concurrent edits never wait for
-- each other's counts. (SET CONSTRAINTS ... IMMEDIATE gives a transaction its own counts at once.)
CREATE CONSTRAINT TRIGGER job_counts_insert AFTER INSERT ON jobs
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION job_counts_maintain();

CREATE CONSTRAINT TRIGGER job_counts_update AFTER UPDATE OF state ON jobs
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (OLD.state <> NEW.state) EXECUTE FUNCTION job_counts_maintain();

-- Claims and completions update a job row two or three times per edit (the transition, then
-- its revision number at commit): room on the page keeps those updates HOT.
ALTER TABLE jobs SET (fillfactor = 70);

-- One attempt per claim, numbered from 1 per job. outcome: 1 succeeded, 2 failed,
-- 3 released, 4 lost, 5 cancelled; NULL while running.
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
    CHECK ((outcome IS NULL) = (ended_at IS NULL)),
    PRIMARY KEY (job_id, number)
);
CREATE INDEX job_attempts_by_worker ON job_attempts (worker_id, claimed_at) WHERE worker_id IS NOT NULL;

-- Every claim starts an attempt (and ends a running one, whose lease expired, as lost) in
-- the claim's own statement.
CREATE FUNCTION job_attempt_started() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE job_attempts SET outcome = 4, ended_at = NEW.claimed_at WHERE job_id = NEW.id AND outcome IS NULL;
    INSERT INTO job_attempts (job_id, number, worker_id, agent_name, tool_name, tool_version, tool_uri,
                              secret_hash, claimed_at)
    VALUES (NEW.id, NEW.claim_attempt, NEW.claim_worker_id, NEW.claim_agent_name, NEW.claim_tool_name,
            NEW.claim_tool_version, NEW.claim_tool_uri, NEW.claim_secret_hash, NEW.claimed_at);
    RETURN NULL;
END
$$;

CREATE TRIGGER job_attempt_started AFTER UPDATE OF claim_attempt ON jobs
    FOR EACH ROW WHEN (NEW.claim_attempt IS NOT NULL AND NEW.claim_attempt IS DISTINCT FROM OLD.claim_attempt)
    EXECUTE FUNCTION job_attempt_started();

INSERT INTO job_attempts (job_id, number, agent_name, tool_name, tool_version, tool_uri, secret_hash, claimed_at)
SELECT id, 1, claim_agent_name, claim_tool_name, claim_tool_version, claim_tool_uri, claim_secret_hash, claimed_at
FROM jobs WHERE state = 2;

-- The history index covers the new job events too.
DROP INDEX revision_events_by_job;
CREATE INDEX revision_events_by_job ON revision_events (subject, sequence)
    WHERE kind IN ('job_cancelled','job_claim_released','job_claim_renewed','job_claimed','job_failed',
                   'job_lost','job_priority_changed','job_requested','job_requeued','job_retry_scheduled',
                   'job_succeeded');

-- Publishing an edit (the engine's commit, in the same round trip as COMMIT).
--
-- Edits run concurrently; each writes its rows with a provisional sequence (p_provisional,
-- larger than any revision number) and lists what it wrote. Here, under a transaction-scoped
-- advisory lock held until COMMIT, the edit gets the next revision number, its rows get that
-- number, its activities' edge snapshots are captured, the revision and its events are
-- written, and listeners are notified (payload: schema, sequence, clock mark; never a
-- secret). The lock makes numbers follow commit order: the next edit reads the newest
-- revision only after this one committed (READ COMMITTED: each statement here takes a fresh
-- snapshot), so a reader never sees a revision before every smaller one.
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
    IF p_representations IS NOT NULL THEN
        UPDATE representations SET created_sequence = seq
        WHERE id = ANY (p_representations) AND created_sequence = p_provisional;
    END IF;
    IF p_fingerprinted IS NOT NULL THEN
        UPDATE representation_fingerprints SET recorded_sequence = seq
        WHERE representation_id = ANY (p_fingerprinted) AND recorded_sequence = p_provisional;
    END IF;
    IF p_activities IS NOT NULL THEN
        UPDATE activities SET created_sequence = seq WHERE id = ANY (p_activities) AND created_sequence = p_provisional;
        UPDATE activity_edges e SET snapshot_sequence = seq, snapshot_fingerprints = (
            SELECT coalesce('[' || string_agg(format('[%s,%s,"%s"]', to_json(f.algorithm), f.version,
                                                     upper(encode(f.value, 'hex'))), ','
                                              ORDER BY f.algorithm, f.version) || ']', '[]')::json
            FROM representation_fingerprints f WHERE f.representation_id = e.representation_id)
        WHERE e.activity_id = ANY (p_activities);
    END IF;
    IF p_metadata_targets IS NOT NULL THEN
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
-- lease no longer holds the job; PPN01: a row it refers to does not exist), so a COMMIT sent
-- in the same round trip cannot publish it.
CREATE FUNCTION pp_expect(p_actual bigint, p_expected bigint, p_state text, p_message text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF p_actual IS DISTINCT FROM p_expected THEN
        RAISE EXCEPTION USING ERRCODE = p_state, MESSAGE = p_message;
    END IF;
END
$$;
