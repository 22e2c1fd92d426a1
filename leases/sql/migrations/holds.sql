-- The range claim's hooks (seeding/sql/migrations/claim.sql), filled with the lanes:
-- a lane held by a live group lease keeps range leases off its ranges.
-- Installed by leases' migrations (0004); a block a migration has run is
-- never edited: a change is a new block and a new migration.

-- name: create_lane_holds
-- A held lane holds its group's ranges of the lane's priority band, by the
-- bounds of group_lane_config (the same the lane-work trigger classifies
-- with; no row yet means no lane was ever handed out, so nothing is held).
-- The tail band is everything up to tail_max; history starts above it.
CREATE OR REPLACE VIEW seed_range_hold AS
SELECT gl.group_id,
       CASE gl.lane WHEN 'tail' THEN (-2147483648)::bigint
            ELSE greatest(c.history_min::bigint, c.tail_max::bigint + 1) END AS priority_min,
       CASE gl.lane WHEN 'tail' THEN c.tail_max::bigint ELSE c.history_max::bigint END
           AS priority_max,
       (gl.lane = 'history' AND c.capture_only) AS capture_only,
       gl.heartbeat_at,
       coalesce((SELECT sum(w.ranges) FROM group_lane_work AS w
                  WHERE w.group_id = gl.group_id AND w.lane = gl.lane), 0)::bigint AS open_ranges
  FROM group_lane AS gl
 CROSS JOIN group_lane_config AS c
 WHERE gl.node_id IS NOT NULL;

-- Held lanes own much of the queue: ask the free lanes instead, most urgent
-- first, then most planned work, each for its newest queued range.
CREATE OR REPLACE FUNCTION seed_range_pick_unheld(p_ttl integer) RETURNS bigint
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    cfg group_lane_config%ROWTYPE;
    lane_row record;
    picked bigint;
BEGIN
    SELECT * INTO cfg FROM group_lane_config WHERE id = 1;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    FOR lane_row IN
        SELECT gl.group_id, gl.lane
          FROM group_lane AS gl
         WHERE gl.urgent_priority IS NOT NULL
           AND NOT (gl.node_id IS NOT NULL
                    AND gl.heartbeat_at >= now() - make_interval(secs => p_ttl))
         ORDER BY gl.urgent_priority, gl.planned_articles DESC, gl.id
    LOOP
        SELECT s.id INTO picked
          FROM seed_range AS s
         WHERE s.group_id = lane_row.group_id
           AND s.status = 'queued'
           AND group_lane_of(s.priority, s.capture, cfg.tail_max, cfg.history_min,
                             cfg.history_max, cfg.capture_only) = lane_row.lane
         ORDER BY s.start_id DESC
         LIMIT 1
           FOR UPDATE SKIP LOCKED;
        EXIT WHEN picked IS NOT NULL;
    END LOOP;
    RETURN picked;
END
$$;

-- name: create_claimable_pick_unheld_function
-- As the function above (migration 0004), asking only free lanes with
-- something to claim (claimable_priority set; leases migration 0008), most
-- urgent and most claimable first, and taking only a range with articles
-- left: an empty span is never handed out.
CREATE OR REPLACE FUNCTION seed_range_pick_unheld(p_ttl integer) RETURNS bigint
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    cfg group_lane_config%ROWTYPE;
    lane_row record;
    picked bigint;
BEGIN
    SELECT * INTO cfg FROM group_lane_config WHERE id = 1;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    FOR lane_row IN
        SELECT gl.group_id, gl.lane
          FROM group_lane AS gl
         WHERE gl.claimable_priority IS NOT NULL
           AND NOT (gl.node_id IS NOT NULL
                    AND gl.heartbeat_at >= now() - make_interval(secs => p_ttl))
         ORDER BY gl.claimable_priority, gl.claimable_articles DESC, gl.id
    LOOP
        SELECT s.id INTO picked
          FROM seed_range AS s
         WHERE s.group_id = lane_row.group_id
           AND s.status = 'queued'
           AND s.next_id <= s.end_id
           AND group_lane_of(s.priority, s.capture, cfg.tail_max, cfg.history_min,
                             cfg.history_max, cfg.capture_only) = lane_row.lane
         ORDER BY s.start_id DESC
         LIMIT 1
           FOR UPDATE SKIP LOCKED;
        EXIT WHEN picked IS NOT NULL;
    END LOOP;
    RETURN picked;
END
$$;

-- name: drop_pick_unheld_function
-- Backwards from 0004: seeding's empty hook is created again after this.
DROP FUNCTION IF EXISTS seed_range_pick_unheld(integer);
