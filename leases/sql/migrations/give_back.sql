-- Giving lanes back, as one SQL function: run by leases' migrations 0009,
-- 0014 and 0018 (a change is a new block and a migration).

-- name: create_lane_give_back_function
-- The lanes named (p_ids) that are still held, by one of p_holders when given
-- and at p_epoch when given (checked again under the row lock), are given
-- back: the range each has in work goes back to queued at its resume point
-- (done when it was read to its end) and the holder is cleared. A fenced give
-- back (an operator, a disabled node) moves the epoch on and keeps the last
-- heartbeat; a holder's own keeps the epoch and was heard now ("unheld the
-- longest" runs from there). Answers the lanes given back and the ranges freed.
CREATE FUNCTION group_lane_give_back(
    p_ids bigint[], p_holders bigint[], p_epoch integer, p_fence boolean
) RETURNS TABLE (lanes bigint, ranges bigint)
LANGUAGE sql VOLATILE AS $$
    WITH cur AS (
        SELECT id, node_id, range_id FROM group_lane
         WHERE id = ANY(p_ids) AND node_id IS NOT NULL
           AND (p_holders IS NULL OR node_id = ANY(p_holders))
           AND (p_epoch IS NULL OR epoch = p_epoch)
           FOR UPDATE
    ), freed AS (
        UPDATE seed_range AS r
           SET status = CASE WHEN r.next_id > r.end_id THEN 'done' ELSE 'queued' END,
               node_id = CASE WHEN r.next_id > r.end_id THEN r.node_id END,
               done_at = CASE WHEN r.next_id > r.end_id THEN now() END
          FROM cur
         WHERE r.id = cur.range_id AND r.status = 'leased' AND r.node_id = cur.node_id
        RETURNING r.id
    ), cleared AS (
        UPDATE group_lane AS gl
           SET node_id = NULL, range_id = NULL, last_held_at = clock_timestamp(),
               epoch = gl.epoch + p_fence::int,
               heartbeat_at = CASE WHEN p_fence THEN gl.heartbeat_at ELSE clock_timestamp() END
          FROM cur
         WHERE gl.id = cur.id
        RETURNING gl.id
    )
    SELECT (SELECT count(*) FROM cleared), (SELECT count(*) FROM freed)
$$;

-- name: create_clean_lane_give_back_function
-- As create_lane_give_back_function (migration 0009), which this replaces
-- in leases' migration 0014: a range read to its end that becomes done
-- keeps no error (a done range did not fail).
CREATE OR REPLACE FUNCTION group_lane_give_back(
    p_ids bigint[], p_holders bigint[], p_epoch integer, p_fence boolean
) RETURNS TABLE (lanes bigint, ranges bigint)
LANGUAGE sql VOLATILE AS $$
    WITH cur AS (
        SELECT id, node_id, range_id FROM group_lane
         WHERE id = ANY(p_ids) AND node_id IS NOT NULL
           AND (p_holders IS NULL OR node_id = ANY(p_holders))
           AND (p_epoch IS NULL OR epoch = p_epoch)
           FOR UPDATE
    ), freed AS (
        UPDATE seed_range AS r
           SET status = CASE WHEN r.next_id > r.end_id THEN 'done' ELSE 'queued' END,
               node_id = CASE WHEN r.next_id > r.end_id THEN r.node_id END,
               done_at = CASE WHEN r.next_id > r.end_id THEN now() END,
               error = CASE WHEN r.next_id > r.end_id THEN '' ELSE r.error END
          FROM cur
         WHERE r.id = cur.range_id AND r.status = 'leased' AND r.node_id = cur.node_id
        RETURNING r.id
    ), cleared AS (
        UPDATE group_lane AS gl
           SET node_id = NULL, range_id = NULL, last_held_at = clock_timestamp(),
               epoch = gl.epoch + p_fence::int,
               heartbeat_at = CASE WHEN p_fence THEN gl.heartbeat_at ELSE clock_timestamp() END
          FROM cur
         WHERE gl.id = cur.id
        RETURNING gl.id
    )
    SELECT (SELECT count(*) FROM cleared), (SELECT count(*) FROM freed)
$$;

-- name: drop_lane_give_back_function
DROP FUNCTION IF EXISTS group_lane_give_back(bigint[], bigint[], integer, boolean);

-- name: create_window_lane_give_back_function
-- As create_clean_lane_give_back_function (migration 0014), which this
-- replaces in leases' migration 0018: the holder's other ranges leased from
-- the lane's window (lane_handout of this lane at the range's epoch: one
-- `next` moved past with `read` whose finish had not come) are freed too, not
-- left leased to a node that no longer holds the lane until their TTL.
CREATE OR REPLACE FUNCTION group_lane_give_back(
    p_ids bigint[], p_holders bigint[], p_epoch integer, p_fence boolean
) RETURNS TABLE (lanes bigint, ranges bigint)
LANGUAGE sql VOLATILE AS $$
    WITH cur AS (
        SELECT id, group_id, lane, node_id, range_id FROM group_lane
         WHERE id = ANY(p_ids) AND node_id IS NOT NULL
           AND (p_holders IS NULL OR node_id = ANY(p_holders))
           AND (p_epoch IS NULL OR epoch = p_epoch)
           FOR UPDATE
    ), freed AS (
        UPDATE seed_range AS r
           SET status = CASE WHEN r.next_id > r.end_id THEN 'done' ELSE 'queued' END,
               node_id = CASE WHEN r.next_id > r.end_id THEN r.node_id END,
               done_at = CASE WHEN r.next_id > r.end_id THEN now() END,
               error = CASE WHEN r.next_id > r.end_id THEN '' ELSE r.error END
          FROM cur
         WHERE r.status = 'leased' AND r.node_id = cur.node_id
           AND (r.id = cur.range_id
                OR (r.group_id = cur.group_id
                    AND EXISTS (SELECT FROM lane_handout AS h
                                 WHERE h.range_id = r.id AND h.epoch = r.epoch
                                   AND h.lane = cur.lane)))
        RETURNING r.id
    ), cleared AS (
        UPDATE group_lane AS gl
           SET node_id = NULL, range_id = NULL, last_held_at = clock_timestamp(),
               epoch = gl.epoch + p_fence::int,
               heartbeat_at = CASE WHEN p_fence THEN gl.heartbeat_at ELSE clock_timestamp() END
          FROM cur
         WHERE gl.id = cur.id
        RETURNING gl.id
    )
    SELECT (SELECT count(*) FROM cleared), (SELECT count(*) FROM freed)
$$;
