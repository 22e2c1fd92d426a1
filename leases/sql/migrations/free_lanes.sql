-- The free lanes the group choice picks from, as one inlinable SQL function:
-- run by migration leases 0006 only (a change is a new block and a migration).

-- name: create_free_lanes_function
-- A lane with an open range (urgent_priority set), no live holder (none, or
-- one quiet past the TTL), of an active group. LANGUAGE sql and STABLE, so
-- PostgreSQL inlines it into each pick, whose ORDER BY ... LIMIT 1 stays an
-- index probe on the lane's choice index.
CREATE FUNCTION group_lane_free(p_lane text, p_ttl integer) RETURNS SETOF group_lane
LANGUAGE sql STABLE AS $$
    SELECT gl.*
      FROM group_lane AS gl
      JOIN news_group AS g ON g.id = gl.group_id
     WHERE gl.lane = p_lane
       AND gl.urgent_priority IS NOT NULL
       AND (gl.node_id IS NULL OR gl.heartbeat_at < now() - make_interval(secs => p_ttl))
       AND g.active
$$;

-- name: drop_free_lanes_function
DROP FUNCTION IF EXISTS group_lane_free(text, integer);
