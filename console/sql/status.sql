-- Reads for /api/v1/status and `manage.py seed_status`.

-- name: header_fold_mark
-- Where the nodes' folded totals stop: nodes_status scans the rollup from
-- here (or the last hour, if that is longer), and PostgreSQL plans that scan
-- from the value, not from a guess at a subquery's.
SELECT coalesce((SELECT folded_before FROM header_fold WHERE id = 1), '-infinity')::text AS mark;

-- name: nodes_status
-- Leases come from the leased partial index (a small set), live and quiet
-- (heartbeat past the TTL, until the sweep takes them back) apart. One scan
-- of the rollup's minutes (its key leads with the bucket) gives the last
-- hour (headers reported, ranges finished and their headers) and the minutes
-- since the fold's mark; all time is the node's folded total plus those.
-- %(mark)s (header_fold_mark) only bounds the scan: the sums read the mark
-- in this statement's snapshot, so a fold in between counts nothing twice.
-- With %(totals)s false (the dashboard's busiest nodes, which show the last
-- hour only) the scan starts an hour back and headers_total is NULL.
-- Nothing here reads a node's whole history, so the status stays cheap at
-- any size. Run unprepared (fetchdicts_planned): the scan's lower bound is a
-- value the plan must see. `live`: seen within the TTL, by the database's clock.
WITH leases AS (
    SELECT node_id,
           count(*) FILTER (WHERE heartbeat_at >= now() - make_interval(secs => %(ttl)s)) AS live,
           count(*) FILTER (WHERE heartbeat_at < now() - make_interval(secs => %(ttl)s)) AS quiet
      FROM seed_range
     WHERE status = 'leased'
     GROUP BY node_id
), mark AS (
    SELECT coalesce((SELECT folded_before FROM header_fold WHERE id = 1), '-infinity') AS mark
), minutes AS (
    SELECT r.node_id,
           sum(r.headers) FILTER (WHERE r.bucket >= now() - interval '1 hour') AS headers,
           sum(r.ranges_finished) FILTER (WHERE r.bucket >= now() - interval '1 hour')
               AS ranges_finished,
           sum(r.finished_headers) FILTER (WHERE r.bucket >= now() - interval '1 hour')
               AS finished_headers,
           sum(r.headers) FILTER (WHERE %(totals)s AND r.bucket >= mark.mark) AS unfolded
      FROM header_rollup AS r, mark
     WHERE r.bucket >= CASE WHEN %(totals)s
                            THEN least(coalesce(%(mark)s::timestamptz, '-infinity'),
                                       now() - interval '1 hour')
                            ELSE now() - interval '1 hour' END
     GROUP BY r.node_id
), lanes AS (
    SELECT node_id, count(*) AS lanes FROM group_lane WHERE node_id IS NOT NULL GROUP BY node_id
)
SELECT n.name,
       n.last_seen_at,
       ceil(extract(epoch FROM now() - n.last_seen_at))::bigint AS seen_seconds_ago,
       coalesce(n.last_seen_at >= now() - make_interval(secs => %(ttl)s), false) AS live,
       n.disabled,
       coalesce(lanes.lanes, 0) AS lanes_held,
       coalesce(leases.live, 0) AS live_leases,
       coalesce(leases.quiet, 0) AS quiet_leases,
       coalesce(m.headers, 0) AS headers_last_hour,
       CASE WHEN %(totals)s THEN coalesce(t.headers, 0) + coalesce(m.unfolded, 0) END
           AS headers_total,
       coalesce(m.ranges_finished, 0) AS ranges_finished_last_hour,
       coalesce(m.finished_headers, 0) AS finished_headers_last_hour
  FROM seed_node AS n
  LEFT JOIN leases ON leases.node_id = n.id
  LEFT JOIN minutes AS m ON m.node_id = n.id
  LEFT JOIN lanes ON lanes.node_id = n.id
  LEFT JOIN node_header_total AS t ON t.node_id = n.id
 ORDER BY n.name;
