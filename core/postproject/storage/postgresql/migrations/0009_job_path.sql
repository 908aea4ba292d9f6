-- Version 9 (PostgreSQL): an edit's rows written once, with their final revision number.
--
-- Until now every row an edit wrote carried a provisional sequence, and pp_publish rewrote
-- each of them with the revision's number under the numbering lock (an UPDATE per table, a
-- second round of its foreign-key checks, a second write of each row). Now an edit whose
-- statements are still queued at commit sends pp_number first: it takes the numbering lock
-- (the one pp_publish takes; a transaction's advisory locks nest) and the next number, which
-- the queued statements then write through pp_sequence(); pp_publish, sent after them in the
-- same round trip, finds the same number (nobody else can publish meanwhile) and renumbers
-- only the rows written before commit (statements whose answer the edit needed earlier).
--
-- Neither function writes a row: pp_number takes a lock, reads the newest revision and sets a
-- transaction-local setting; pp_sequence reads that setting (and fails outside a numbered
-- transaction, so a statement can never write an unset number). pp_number's search_path is
-- pinned, so it may run as SECURITY DEFINER; pp_sequence reads no table and stays inlinable.

CREATE FUNCTION pp_number() RETURNS TABLE (seq bigint, locked_at bigint) LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(1347441202, hashtext(current_schema()));
    locked_at := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;  -- when the lock was taken
    seq := coalesce((SELECT r.sequence FROM revisions r ORDER BY r.sequence DESC LIMIT 1), 0) + 1;
    PERFORM set_config('postproject.sequence', seq::text, true);
    RETURN NEXT;
END
$$;

CREATE FUNCTION pp_sequence() RETURNS bigint LANGUAGE sql STABLE AS $$
    SELECT current_setting('postproject.sequence')::bigint
$$;

-- A completion's job transition goes before pp_number and the inserts of its output and
-- activity (so it never runs under the numbering lock, where waiting for a row another edit
-- holds could deadlock with that edit's own wait for the lock): the job's references to them
-- are checked at commit, after those inserts, like SQLite's (its foreign keys are checked when
-- each statement ends, within its single writer's transaction, which nothing can reorder).
ALTER TABLE jobs ALTER CONSTRAINT jobs_completion_activity_id_fkey1 DEFERRABLE INITIALLY DEFERRED;
ALTER TABLE jobs ALTER CONSTRAINT jobs_completion_representation_id_fkey1 DEFERRABLE INITIALLY DEFERRED;
