-- The live definition of every function, view and trigger the core owns: the
-- rate buckets' counter (core/throttle.py).
--
-- This file is the truth; it is never run by the coordinator. Migrations are
-- deltas toward it (their SQL in sql/migrations/, never edited once run; what
-- is here was made by the indexer's, indexer/sql/migrations/), and
-- tests/core/test_schema_drift.py holds the two equal: change a definition
-- here and in a new migration together.

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
