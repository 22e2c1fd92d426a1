-- Rate limits kept in PostgreSQL, so they hold across coordinator hosts and
-- gunicorn workers (docs/security.md). Installed by indexer migration 0008;
-- a block a migration has run is never edited.

-- name: create_rate_bucket
-- One row per limited key (a node's lease calls, a login's failures): hits in
-- the fixed window that started at window_start. UNLOGGED: a crash forgets
-- the counts (a window's worth of leniency) and no WAL is written per hit.
CREATE UNLOGGED TABLE rate_bucket (
    key text PRIMARY KEY,
    window_start timestamptz NOT NULL,
    hits integer NOT NULL
);
ALTER TABLE rate_bucket SET (fillfactor = 50);

-- name: create_rate_hit_function
-- Count one hit on `p_key` in a window of p_window seconds; returns the hits
-- so far in the current window (this one included) and the seconds until it
-- ends (at least 1). One upsert: the row lock serializes hits on the key.
-- plpgsql, with a generic plan: a LANGUAGE sql function that cannot be
-- inlined plans its INSERT again on every call, and this runs on every lease.
CREATE OR REPLACE FUNCTION rate_hit(p_key text, p_window integer)
RETURNS TABLE (hits integer, retry_after integer)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    INSERT INTO rate_bucket AS b (key, window_start, hits)
    VALUES (p_key, now(), 1)
    ON CONFLICT (key) DO UPDATE
       SET window_start = CASE WHEN b.window_start <= now() - make_interval(secs => p_window)
                               THEN now() ELSE b.window_start END,
           hits = CASE WHEN b.window_start <= now() - make_interval(secs => p_window)
                       THEN 1 ELSE b.hits + 1 END
    RETURNING b.hits,
              greatest(1, ceil(extract(epoch FROM b.window_start
                                       + make_interval(secs => p_window) - now())))::integer;
END
$$;

-- name: drop_rate_bucket
DROP FUNCTION IF EXISTS rate_hit(text, integer);
DROP TABLE IF EXISTS rate_bucket;
