-- Schema version 8 (SQLite): what the HTTP service keeps in a production (postproject.service).
-- PostgreSQL's 0008_service.sql makes the same tables, columns and indexes.

-- Who acted: the API token's name for a revision written through the service (origin stays
-- the application's identity). NULL for every other revision.
ALTER TABLE revisions ADD COLUMN principal TEXT
    CHECK (principal IS NULL OR length(CAST(principal AS BLOB)) BETWEEN 1 AND 128);

-- API tokens: stored state (not revisions). Only the SHA-256 of a token's secret is kept;
-- role: 1 reader, 2 submitter, 3 supervisor, 4 worker (postproject.model.access.ApiRole). A
-- revoked token keeps its row (and its name), so its revisions' principal stays unambiguous.
CREATE TABLE api_tokens (
    name        TEXT PRIMARY KEY CHECK (length(CAST(name AS BLOB)) BETWEEN 1 AND 128),
    secret_hash BLOB NOT NULL UNIQUE CHECK (length(secret_hash) = 32),
    role        INTEGER NOT NULL CHECK (role BETWEEN 1 AND 4),
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER,
    revoked_at  INTEGER
) STRICT, WITHOUT ROWID;

-- Replies a front end recorded to repeat them exactly (Idempotency-Key replays, completion
-- reports sent again): written in the same transaction as the change they answer. digest: the
-- SHA-256 of the request the reply answered.
CREATE TABLE recorded_replies (
    scope       TEXT NOT NULL CHECK (length(CAST(scope AS BLOB)) BETWEEN 1 AND 512),
    key         TEXT NOT NULL CHECK (length(CAST(key AS BLOB)) BETWEEN 1 AND 512),
    digest      BLOB NOT NULL CHECK (length(digest) = 32),
    reply       TEXT NOT NULL CHECK (length(CAST(reply AS BLOB)) <= 1048576),
    recorded_at INTEGER NOT NULL,
    PRIMARY KEY (scope, key)
) STRICT, WITHOUT ROWID;
