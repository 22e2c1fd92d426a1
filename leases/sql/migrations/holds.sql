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

-- name: create_window_leases
-- The ranges a lane's `next` handed out, at the epoch it gave them
-- (seeding's hook: the range claim's urgency mix counts range leases only).
-- Installed by leases' migration 0012.
CREATE OR REPLACE VIEW seed_range_window_lease AS
SELECT h.range_id, h.epoch FROM lane_handout AS h;

-- name: create_first_laneless_function
-- The first queued range with articles left at or above p_min_priority that
-- belongs to no lane (group_lane_of is NULL: no hold ever covers it), in claim
-- order, locked. The ranges of no lane lie in three priority bands, tried from
-- the most urgent: between the lanes (above the tail bound, below
-- history_min), in the history band but not flagged capture (only with
-- capture_only), above history_max. Each is a range scan of the claim index;
-- the first two stop at their first row, the capture band passes the capture
-- ranges ahead of its first uncaptured one. Migration 0012.
CREATE FUNCTION seed_range_first_laneless(p_tail_max integer, p_history_min integer,
                                          p_history_max integer, p_capture_only boolean,
                                          p_min_priority integer)
RETURNS TABLE (laneless_id bigint, laneless_priority integer)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    RETURN QUERY
    SELECT r.id, r.priority FROM seed_range AS r
     WHERE r.status = 'queued' AND r.next_id <= r.end_id AND r.priority >= p_min_priority
       AND r.priority > p_tail_max AND r.priority < p_history_min
     ORDER BY r.priority, r.id
     LIMIT 1
       FOR UPDATE OF r SKIP LOCKED;
    IF FOUND THEN
        RETURN;
    END IF;
    IF p_capture_only THEN
        RETURN QUERY
        SELECT r.id, r.priority FROM seed_range AS r
         WHERE r.status = 'queued' AND r.next_id <= r.end_id AND r.priority >= p_min_priority
           AND r.priority > p_tail_max
           AND r.priority >= p_history_min AND r.priority <= p_history_max AND NOT r.capture
         ORDER BY r.priority, r.id
         LIMIT 1
           FOR UPDATE OF r SKIP LOCKED;
        IF FOUND THEN
            RETURN;
        END IF;
    END IF;
    RETURN QUERY
    SELECT r.id, r.priority FROM seed_range AS r
     WHERE r.status = 'queued' AND r.next_id <= r.end_id AND r.priority >= p_min_priority
       AND r.priority > p_tail_max AND r.priority > p_history_max
     ORDER BY r.priority, r.id
     LIMIT 1
       FOR UPDATE OF r SKIP LOCKED;
END
$$;

-- name: create_pick_unheld_at_lanes_function
-- The crowded claim's candidate at or above p_min_priority (replacing
-- create_claimable_pick_unheld_function, migration 0008): the first range of
-- no lane (seed_range_first_laneless), unless a free lane has claimable work
-- more urgent than it; the free lanes are asked by their most urgent
-- claimable priority at or above p_min_priority (from group_lane_work), then
-- the most articles left to claim, then the group's id, each for its newest
-- queued range at that priority. Ties of priority go to the range of no lane:
-- only range leases can take it. Installed by leases' migration 0012.
CREATE OR REPLACE FUNCTION seed_range_pick_unheld(p_ttl integer, p_min_priority integer)
RETURNS TABLE (picked_id bigint, picked_priority integer)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    cfg group_lane_config%ROWTYPE;
    lane_row record;
    free_id bigint;
    free_priority integer;
    lane_pick bigint;
BEGIN
    SELECT * INTO cfg FROM group_lane_config WHERE id = 1;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    SELECT l.laneless_id, l.laneless_priority INTO free_id, free_priority
      FROM seed_range_first_laneless(cfg.tail_max, cfg.history_min, cfg.history_max,
                                     cfg.capture_only, p_min_priority) AS l;
    FOR lane_row IN
        SELECT w.group_id, w.lane, min(w.priority) AS priority
          FROM group_lane_work AS w
          JOIN group_lane AS gl ON gl.group_id = w.group_id AND gl.lane = w.lane
         WHERE w.claimable_ranges > 0
           AND w.priority >= p_min_priority
           AND (free_priority IS NULL OR w.priority < free_priority)
           AND NOT (gl.node_id IS NOT NULL
                    AND gl.heartbeat_at >= now() - make_interval(secs => p_ttl))
         GROUP BY w.group_id, w.lane, gl.claimable_articles
         ORDER BY min(w.priority), gl.claimable_articles DESC, w.group_id, w.lane
    LOOP
        SELECT s.id INTO lane_pick
          FROM seed_range AS s
         WHERE s.group_id = lane_row.group_id
           AND s.status = 'queued'
           AND s.next_id <= s.end_id
           AND s.priority = lane_row.priority
           AND group_lane_of(s.priority, s.capture, cfg.tail_max, cfg.history_min,
                             cfg.history_max, cfg.capture_only) = lane_row.lane
         ORDER BY s.start_id DESC
         LIMIT 1
           FOR UPDATE SKIP LOCKED;
        IF lane_pick IS NOT NULL THEN
            RETURN QUERY SELECT lane_pick, lane_row.priority;
            RETURN;
        END IF;
    END LOOP;
    IF free_id IS NOT NULL THEN
        RETURN QUERY SELECT free_id, free_priority;
    END IF;
END
$$;
-- The one-argument hook of 0004/0008 is asked no more.
DROP FUNCTION IF EXISTS seed_range_pick_unheld(integer);

-- name: drop_first_laneless_function
DROP FUNCTION IF EXISTS seed_range_first_laneless(integer, integer, integer, boolean, integer);

-- name: create_crowded_claim_indexes
-- Two partial indexes on the claimable ranges that the crowded claim probes:
-- queued ones (the claim takes no other status; quiet leases come back to
-- the queue through retire_quiet_ranges first). Neither holds a column a
-- heartbeat or a batch writes (heartbeat_at, next_id), so those updates stay
-- HOT; each queued range costs an entry in each. Installed by leases'
-- migration 0013.
--   seed_range_uncaptured_idx: the capture band of seed_range_first_laneless
--     (asked only under capture_only) reads the uncaptured queued ranges
--     alone; through the claim index it passed every queued capture range of
--     the history band ahead of the first uncaptured one (under capture_only,
--     nearly all of them: some 600 blocks more per 30,000 ranges).
--   seed_range_lane_pick_idx: a free lane's pick (below) reads the group's
--     queued ranges at the lane's most urgent priority, newest first; through
--     seed_range_group_queued_idx it passed every newer range of the group's
--     other priorities.
CREATE INDEX seed_range_uncaptured_idx ON seed_range (priority, id)
 WHERE status = 'queued' AND NOT capture;
CREATE INDEX seed_range_lane_pick_idx ON seed_range (group_id, priority, start_id DESC)
 WHERE status = 'queued';

-- name: probe_first_laneless_function
-- seed_range_first_laneless (create_first_laneless_function, migration
-- 0012) without bitmap scans: each band is an ordered scan that stops at its
-- first range, the capture band through seed_range_uncaptured_idx (so it no
-- longer passes the capture ranges); a bitmap scan would read every queued
-- range of the band before sorting, and a generic plan, knowing no bound,
-- cannot tell how many that is. Installed by leases' migration 0013.
ALTER FUNCTION seed_range_first_laneless(integer, integer, integer, boolean, integer)
    SET enable_bitmapscan = off;

-- name: create_indexed_pick_unheld_function
-- As create_pick_unheld_at_lanes_function (migration 0012), which this
-- replaces in 0013: the same candidate, with a free lane's pick asked so that
-- only an ordered scan of seed_range_lane_pick_idx serves it. The priority is
-- a range, lane_row.priority to itself, not an `=`: with `=` the planner drops
-- the priority from the order, and seed_range_group_queued_idx, read from the
-- group's newest range, can look as cheap to it (a few urgent ranges in a big
-- group: the statistics never saw them), a walk past every newer range. No
-- bitmap scans: a range's bounds are unknown to the generic plan, so it
-- guesses few rows, and a bitmap scan would read every range of the group at
-- that priority, then sort.
-- A crowded claim then reads a bounded number of index entries, however long
-- the queue: the live holds' open ranges (group_lane and group_lane_work rows,
-- a few per held lane), each band of seed_range_first_laneless up to its
-- first range, the free lanes' work rows (a few per lane), and one probe of
-- seed_range_lane_pick_idx per free lane tried until one answers. Scans and
-- probes pass only ranges another claim holds locked (no queued range is read
-- to its end: seeding's check seed_range_queued_has_articles_left): at a
-- lane's most urgent priority there is no queued range of no lane to pass,
-- since one at that priority or more urgent would be the laneless candidate,
-- which is asked first and wins ties. Installed by leases' migration 0013.
CREATE OR REPLACE FUNCTION seed_range_pick_unheld(p_ttl integer, p_min_priority integer)
RETURNS TABLE (picked_id bigint, picked_priority integer)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_bitmapscan = off
AS $$
DECLARE
    cfg group_lane_config%ROWTYPE;
    lane_row record;
    free_id bigint;
    free_priority integer;
    lane_pick bigint;
BEGIN
    SELECT * INTO cfg FROM group_lane_config WHERE id = 1;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    SELECT l.laneless_id, l.laneless_priority INTO free_id, free_priority
      FROM seed_range_first_laneless(cfg.tail_max, cfg.history_min, cfg.history_max,
                                     cfg.capture_only, p_min_priority) AS l;
    FOR lane_row IN
        SELECT w.group_id, w.lane, min(w.priority) AS priority
          FROM group_lane_work AS w
          JOIN group_lane AS gl ON gl.group_id = w.group_id AND gl.lane = w.lane
         WHERE w.claimable_ranges > 0
           AND w.priority >= p_min_priority
           AND (free_priority IS NULL OR w.priority < free_priority)
           AND NOT (gl.node_id IS NOT NULL
                    AND gl.heartbeat_at >= now() - make_interval(secs => p_ttl))
         GROUP BY w.group_id, w.lane, gl.claimable_articles
         ORDER BY min(w.priority), gl.claimable_articles DESC, w.group_id, w.lane
    LOOP
        SELECT s.id INTO lane_pick
          FROM seed_range AS s
         WHERE s.group_id = lane_row.group_id
           AND s.status = 'queued'
           AND s.priority BETWEEN lane_row.priority AND lane_row.priority
           AND s.next_id <= s.end_id
           AND group_lane_of(s.priority, s.capture, cfg.tail_max, cfg.history_min,
                             cfg.history_max, cfg.capture_only) = lane_row.lane
         ORDER BY s.priority, s.start_id DESC
         LIMIT 1
           FOR UPDATE SKIP LOCKED;
        IF lane_pick IS NOT NULL THEN
            RETURN QUERY SELECT lane_pick, lane_row.priority;
            RETURN;
        END IF;
    END LOOP;
    IF free_id IS NOT NULL THEN
        RETURN QUERY SELECT free_id, free_priority;
    END IF;
END
$$;

-- name: drop_crowded_claim_indexes
-- Backwards from 0013 (after create_pick_unheld_at_lanes_function has put
-- 0012's function back).
ALTER FUNCTION seed_range_first_laneless(integer, integer, integer, boolean, integer)
    RESET enable_bitmapscan;
DROP INDEX IF EXISTS seed_range_lane_pick_idx;
DROP INDEX IF EXISTS seed_range_uncaptured_idx;

-- name: create_claim_order_pick_unheld_function
-- As create_indexed_pick_unheld_function (migration 0013), which this
-- replaces in 0017: asked for the whole queue (p_min_priority at its least,
-- every claim's first question), the free lanes come from
-- group_lane_claim_order_idx in claim order (claimable_priority is the lane's
-- most urgent claimable priority, kept by the lane-work triggers) instead of
-- grouping the work rows of every free lane: with 10,000 groups that grouping
-- read 40,000 rows and cost 40-70 ms a claim while any lane was held.
CREATE OR REPLACE FUNCTION seed_range_pick_unheld(p_ttl integer, p_min_priority integer)
RETURNS TABLE (picked_id bigint, picked_priority integer)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_bitmapscan = off
AS $$
DECLARE
    cfg group_lane_config%ROWTYPE;
    lanes refcursor;
    lane_row record;
    free_id bigint;
    free_priority integer;
    lane_pick bigint;
BEGIN
    SELECT * INTO cfg FROM group_lane_config WHERE id = 1;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    SELECT l.laneless_id, l.laneless_priority INTO free_id, free_priority
      FROM seed_range_first_laneless(cfg.tail_max, cfg.history_min, cfg.history_max,
                                     cfg.capture_only, p_min_priority) AS l;
    IF p_min_priority = -2147483648 THEN
        OPEN lanes FOR
        SELECT gl.group_id, gl.lane, gl.claimable_priority AS priority
          FROM group_lane AS gl
         WHERE gl.claimable_priority IS NOT NULL
           AND (free_priority IS NULL OR gl.claimable_priority < free_priority)
           AND NOT (gl.node_id IS NOT NULL
                    AND gl.heartbeat_at >= now() - make_interval(secs => p_ttl))
         ORDER BY gl.claimable_priority, gl.claimable_articles DESC, gl.group_id, gl.lane;
    ELSE
        OPEN lanes FOR
        SELECT w.group_id, w.lane, min(w.priority) AS priority
          FROM group_lane_work AS w
          JOIN group_lane AS gl ON gl.group_id = w.group_id AND gl.lane = w.lane
         WHERE w.claimable_ranges > 0
           AND w.priority >= p_min_priority
           AND (free_priority IS NULL OR w.priority < free_priority)
           AND NOT (gl.node_id IS NOT NULL
                    AND gl.heartbeat_at >= now() - make_interval(secs => p_ttl))
         GROUP BY w.group_id, w.lane, gl.claimable_articles
         ORDER BY min(w.priority), gl.claimable_articles DESC, w.group_id, w.lane;
    END IF;
    LOOP
        FETCH lanes INTO lane_row;
        EXIT WHEN NOT FOUND;
        SELECT s.id INTO lane_pick
          FROM seed_range AS s
         WHERE s.group_id = lane_row.group_id
           AND s.status = 'queued'
           AND s.priority BETWEEN lane_row.priority AND lane_row.priority
           AND s.next_id <= s.end_id
           AND group_lane_of(s.priority, s.capture, cfg.tail_max, cfg.history_min,
                             cfg.history_max, cfg.capture_only) = lane_row.lane
         ORDER BY s.priority, s.start_id DESC
         LIMIT 1
           FOR UPDATE SKIP LOCKED;
        IF lane_pick IS NOT NULL THEN
            CLOSE lanes;
            RETURN QUERY SELECT lane_pick, lane_row.priority;
            RETURN;
        END IF;
    END LOOP;
    CLOSE lanes;
    IF free_id IS NOT NULL THEN
        RETURN QUERY SELECT free_id, free_priority;
    END IF;
END
$$;
