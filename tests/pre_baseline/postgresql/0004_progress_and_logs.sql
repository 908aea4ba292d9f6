-- PostProject Monitor production schema, version 4 (PostgreSQL): live progress, cooperative
-- stops, attempt logs, as storage/sqlite/migrations/0004_progress_and_logs.sql. Progress and
-- logs are stored state, not revisions: a report changes the running attempt's row and, at
-- most once per second per attempt, bumps the progress signal (progress_signal.token).

-- The running attempt's latest progress (each field kept until a report replaces it).
ALTER TABLE job_attempts ADD COLUMN progress_fraction double precision
    CHECK (progress_fraction IS NULL OR progress_fraction BETWEEN 0.0 AND 1.0);
ALTER TABLE job_attempts ADD COLUMN progress_stage text
    CHECK (progress_stage IS NULL OR octet_length(progress_stage) BETWEEN 1 AND 1024);
ALTER TABLE job_attempts ADD COLUMN progress_message text
    CHECK (progress_message IS NULL OR octet_length(progress_message) BETWEEN 1 AND 1024);
ALTER TABLE job_attempts ADD COLUMN progress_at bigint;
-- When this attempt last bumped the progress signal (coalescing: at most once a second).
ALTER TABLE job_attempts ADD COLUMN progress_signalled_at bigint;

-- Cooperative stops (see SQLite's 0004): stop_by, the holder's deadline to confirm a cancel
-- or requeue; stopped_at, when it confirmed (= ended_at for attempts its holder ended).
ALTER TABLE job_attempts ADD COLUMN stop_by bigint;
ALTER TABLE job_attempts ADD COLUMN stopped_at bigint;
-- Attempts awaiting their holder's confirmation, by deadline (the loss sweep).
CREATE INDEX job_attempts_stopping ON job_attempts (stop_by)
    WHERE stop_by IS NOT NULL AND stopped_at IS NULL AND outcome <> 4;

-- The single progress signal: a counter bumped by coalesced progress reports.
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

-- The history index covers the stop events too.
DROP INDEX revision_events_by_job;
CREATE INDEX revision_events_by_job ON revision_events (subject, sequence)
    WHERE kind IN ('job_cancelled','job_claim_released','job_claim_renewed','job_claimed','job_failed',
                   'job_lost','job_priority_changed','job_requested','job_requeued','job_retry_scheduled',
                   'job_stop_confirmed','job_stop_missed','job_succeeded');
