-- Reads for /api/v1/status and `manage.py seed_status`.

-- name: ranges_by_status
SELECT status,
       count(*) AS ranges,
       coalesce(sum(end_id - start_id + 1), 0) AS articles,
       coalesce(sum(next_id - start_id), 0) AS reached,
       coalesce(sum(headers), 0) AS headers,
       coalesce(sum(files), 0) AS files
  FROM seed_range
 GROUP BY status;

-- name: nodes_status
SELECT n.name,
       n.last_seen_at,
       n.disabled,
       (SELECT count(*) FROM seed_range AS r
         WHERE r.status = 'leased' AND r.node_id = n.id
           AND r.heartbeat_at >= now() - make_interval(secs => %(ttl)s)) AS live_leases,
       coalesce((SELECT sum(h.headers) FROM header_rollup AS h WHERE h.node_id = n.id), 0) AS headers
  FROM seed_node AS n
 ORDER BY n.name;

-- name: headers_since
SELECT coalesce(sum(headers), 0) FROM header_rollup WHERE bucket >= now() - make_interval(secs => %(seconds)s);
