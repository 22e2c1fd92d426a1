-- Reads for /api/v1/status and `manage.py seed_status`.

-- name: nodes_status
-- Leases come from the leased partial index (a small set), live and quiet
-- (heartbeat past the TTL, until the sweep takes them back) apart; the last
-- hour from the rollup (its key leads with the bucket): headers reported,
-- ranges finished and their headers. All time is the node's folded total
-- plus its minutes since the fold's mark (a few minutes' rows). Nothing here
-- reads a node's whole history, so the status stays cheap at any size. The
-- dashboard's busiest nodes are the first rows of this, ordered by activity.
WITH leases AS (
    SELECT node_id,
           count(*) FILTER (WHERE heartbeat_at >= now() - make_interval(secs => %(ttl)s)) AS live,
           count(*) FILTER (WHERE heartbeat_at < now() - make_interval(secs => %(ttl)s)) AS quiet
      FROM seed_range
     WHERE status = 'leased'
     GROUP BY node_id
), recent AS (
    SELECT node_id, sum(headers) AS headers, sum(ranges_finished) AS ranges_finished,
           sum(finished_headers) AS finished_headers
      FROM header_rollup
     WHERE bucket >= now() - interval '1 hour'
     GROUP BY node_id
), lanes AS (
    SELECT node_id, count(*) AS lanes FROM group_lane WHERE node_id IS NOT NULL GROUP BY node_id
), unfolded AS (
    SELECT node_id, sum(headers) AS headers
      FROM header_rollup
     WHERE bucket >= coalesce((SELECT folded_before FROM header_fold WHERE id = 1), '-infinity')
     GROUP BY node_id
)
SELECT n.name,
       n.last_seen_at,
       extract(epoch FROM now() - n.last_seen_at)::bigint AS seen_seconds_ago,
       n.disabled,
       coalesce(lanes.lanes, 0) AS lanes_held,
       coalesce(leases.live, 0) AS live_leases,
       coalesce(leases.quiet, 0) AS quiet_leases,
       coalesce(recent.headers, 0) AS headers_last_hour,
       coalesce(t.headers, 0) + coalesce(unfolded.headers, 0) AS headers_total,
       coalesce(recent.ranges_finished, 0) AS ranges_finished_last_hour,
       coalesce(recent.finished_headers, 0) AS finished_headers_last_hour
  FROM seed_node AS n
  LEFT JOIN leases ON leases.node_id = n.id
  LEFT JOIN recent ON recent.node_id = n.id
  LEFT JOIN lanes ON lanes.node_id = n.id
  LEFT JOIN unfolded ON unfolded.node_id = n.id
  LEFT JOIN node_header_total AS t ON t.node_id = n.id
 ORDER BY n.name;

-- name: headers_since
SELECT coalesce(sum(headers), 0) AS headers FROM header_rollup WHERE bucket >= now() - make_interval(secs => %(seconds)s);
