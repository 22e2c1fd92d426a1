-- Reads for /api/v1/status and `manage.py seed_status`.

-- name: nodes_status
-- Live leases come from the leased partial index (a small set), headers from
-- the last hour of the rollup (its key leads with the bucket): nothing here
-- reads a node's whole history, so the status stays cheap at any size.
WITH live AS (
    SELECT node_id, count(*) AS leases
      FROM seed_range
     WHERE status = 'leased'
       AND heartbeat_at >= now() - make_interval(secs => %(ttl)s)
     GROUP BY node_id
), recent AS (
    SELECT node_id, sum(headers) AS headers
      FROM header_rollup
     WHERE bucket >= now() - interval '1 hour'
     GROUP BY node_id
)
SELECT n.name,
       n.last_seen_at,
       n.disabled,
       coalesce(live.leases, 0) AS live_leases,
       coalesce(recent.headers, 0) AS headers_last_hour
  FROM seed_node AS n
  LEFT JOIN live ON live.node_id = n.id
  LEFT JOIN recent ON recent.node_id = n.id
 ORDER BY n.name;

-- name: headers_since
SELECT coalesce(sum(headers), 0) AS headers FROM header_rollup WHERE bucket >= now() - make_interval(secs => %(seconds)s);
