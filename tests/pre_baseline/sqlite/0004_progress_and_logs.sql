-- PostProject Monitor production schema: live progress, cooperative stops, attempt logs.
-- Progress and logs are stored state, not revisions: a report changes the running
-- attempt's row and, at most once per second per attempt, bumps the progress signal that
-- followers watch (progress_signal.token); the revision feed does not tick.

-- The running attempt's latest progress (each field kept until a report replaces it).
ALTER TABLE job_attempts ADD COLUMN progress_fraction REAL
    CHECK (progress_fraction IS NULL OR progress_fraction BETWEEN 0.0 AND 1.0);
ALTER TABLE job_attempts ADD COLUMN progress_stage TEXT
    CHECK (progress_stage IS NULL OR length(CAST(progress_stage AS BLOB)) BETWEEN 1 AND 1024);
ALTER TABLE job_attempts ADD COLUMN progress_message TEXT
    CHECK (progress_message IS NULL OR length(CAST(progress_message AS BLOB)) BETWEEN 1 AND 1024);
ALTER TABLE job_attempts ADD COLUMN progress_at INTEGER;
-- When this attempt last bumped the progress signal (coalescing: at most once a second).
ALTER TABLE job_attempts ADD COLUMN progress_signalled_at INTEGER;

-- Cooperative stops. cancel_job / requeue_job of a live claim end its attempt (cancelled /
-- released) at once and set stop_by to the lease's expiry: the holder confirms it stopped
-- before then (stopped_at), or the attempt ends lost. An attempt its holder ended itself
-- (succeeded, failed, released) has stopped_at = ended_at; a lost one has none.
ALTER TABLE job_attempts ADD COLUMN stop_by INTEGER;
ALTER TABLE job_attempts ADD COLUMN stopped_at INTEGER;
-- Attempts awaiting their holder's confirmation, by deadline (the loss sweep).
CREATE INDEX job_attempts_stopping ON job_attempts (stop_by)
    WHERE stop_by IS NOT NULL AND stopped_at IS NULL AND outcome <> 4;

-- The single progress signal: a counter bumped by coalesced progress reports.
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

-- Each attempt's log: where its full log lives (a path under a media root, or absolute)
-- and its tail (at most 64 KiB of valid UTF-8), recorded once, when the attempt ends.
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

-- The history index covers the stop events too.
DROP INDEX revision_events_by_job;
CREATE INDEX revision_events_by_job ON revision_events (subject, sequence)
    WHERE kind IN ('job_cancelled','job_claim_released','job_claim_renewed','job_claimed','job_failed',
                   'job_lost','job_priority_changed','job_requested','job_requeued','job_retry_scheduled',
                   'job_stop_confirmed','job_stop_missed','job_succeeded');
