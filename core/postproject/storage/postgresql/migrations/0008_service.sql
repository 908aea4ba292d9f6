-- Schema version 8 (PostgreSQL): what the HTTP service keeps in a production
-- (postproject.service); SQLite's 0008_service.sql in PostgreSQL's dialect.

-- Who acted: the API token's name for a revision written through the service. pp_publish
-- inserts the revision without naming it, so the column takes its value from the edit's
-- transaction-local setting postproject.principal (set only by an edit that has one; '' and
-- unset both mean NULL): no change to pp_publish, and nothing more for other edits. The
-- default is set apart from the column, so existing revisions are not rewritten (they are NULL).
ALTER TABLE revisions ADD COLUMN principal text
    CHECK (principal IS NULL OR octet_length(principal) BETWEEN 1 AND 128);
ALTER TABLE revisions ALTER COLUMN principal SET DEFAULT nullif(current_setting('postproject.principal', true), '');

-- API tokens: stored state (not revisions); only the SHA-256 of a token's secret is kept.
CREATE TABLE api_tokens (
    name        text COLLATE "C" PRIMARY KEY CHECK (octet_length(name) BETWEEN 1 AND 128),
    secret_hash bytea NOT NULL UNIQUE CHECK (length(secret_hash) = 32),
    role        smallint NOT NULL CHECK (role BETWEEN 1 AND 4),
    created_at  bigint NOT NULL,
    expires_at  bigint,
    revoked_at  bigint
);

-- Replies recorded to repeat them exactly, written with the change they answer.
CREATE TABLE recorded_replies (
    scope       text COLLATE "C" NOT NULL CHECK (octet_length(scope) BETWEEN 1 AND 512),
    key         text COLLATE "C" NOT NULL CHECK (octet_length(key) BETWEEN 1 AND 512),
    digest      bytea NOT NULL CHECK (length(digest) = 32),
    reply       text NOT NULL CHECK (octet_length(reply) <= 1048576),
    recorded_at bigint NOT NULL,
    PRIMARY KEY (scope, key)
);
