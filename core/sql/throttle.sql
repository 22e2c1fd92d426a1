-- Rate limits (the table and rate_hit(): sql/migrations/throttle.sql).

-- name: rate_hit
-- One hit on a key; hits in the window so far and the seconds it has left.
SELECT hits, retry_after FROM rate_hit(%(key)s, %(window)s);

-- name: rate_peek
-- Hits on a key in its current window, without counting one.
SELECT hits, greatest(1, ceil(extract(epoch FROM window_start
                                      + make_interval(secs => %(window)s) - now())))::integer
           AS retry_after
  FROM rate_bucket
 WHERE key = %(key)s AND window_start > now() - make_interval(secs => %(window)s);

-- name: rate_forget
DELETE FROM rate_bucket WHERE key = %(key)s;
