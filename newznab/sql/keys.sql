-- API keys of the newznab API: the check and the counters every call makes
-- (newznab/services.py).

-- name: find_api_key
-- The key a digest belongs to (a unique index) and its limit per minute.
SELECT id, name, key_hash, disabled,
       coalesce(rate_limit, %(default_limit)s) AS rate_limit
  FROM newznab_api_key
 WHERE key_hash = %(hash)s;

-- name: count_request
-- One statement per call: the key's requests in this minute (one row a key,
-- reset when the minute changes) and its counts for the day (UTC). Time
-- from the database, so every coordinator host shares one window.
WITH win AS (
    INSERT INTO newznab_rate_window AS w (key_id, window_start, requests)
    VALUES (%(key_id)s, date_trunc('minute', now()), 1)
    ON CONFLICT (key_id) DO UPDATE
       SET requests = CASE WHEN w.window_start = excluded.window_start
                           THEN w.requests + 1 ELSE 1 END,
           window_start = excluded.window_start
    RETURNING requests, window_start
), today AS (
    INSERT INTO newznab_api_key_day AS d (key_id, day, requests, grabs, limited)
    SELECT %(key_id)s, (now() AT TIME ZONE 'UTC')::date, 1, 0,
           (win.requests > %(limit)s)::int
      FROM win
    ON CONFLICT (key_id, day) DO UPDATE
       SET requests = d.requests + 1, limited = d.limited + excluded.limited
    RETURNING 1
)
SELECT win.requests,
       greatest(1, ceil(extract(epoch FROM win.window_start + interval '1 minute' - now())))::int
           AS retry_after,
       (SELECT count(*) FROM today) AS days
  FROM win;

-- name: count_grab
-- A grab (t=get) counted on the key's day; count_request made the row.
INSERT INTO newznab_api_key_day AS d (key_id, day, requests, grabs, limited)
VALUES (%(key_id)s, (now() AT TIME ZONE 'UTC')::date, 0, 1, 0)
ON CONFLICT (key_id, day) DO UPDATE SET grabs = d.grabs + 1;
