-- Seed nodes: the token check every API call makes (indexer/authentication.py).

-- name: authenticate_node
-- The node a token digest belongs to (a unique index), and whether
-- last_seen_at is due to be written (at most once per interval): one
-- query per request, time from the database.
SELECT id, name, token_hash, disabled,
       (last_seen_at IS NULL OR last_seen_at < now() - make_interval(secs => %(interval)s)) AS seen_due
  FROM seed_node
 WHERE token_hash = %(hash)s;

-- name: touch_node
UPDATE seed_node SET last_seen_at = now()
 WHERE id = %(id)s
   AND (last_seen_at IS NULL OR last_seen_at < now() - make_interval(secs => %(interval)s));
