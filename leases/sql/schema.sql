-- The live definition of every function, view and trigger the leases app owns:
-- the lanes' tracking of their ranges (the triggers on seed_range, group_lane
-- and news_group), the lane claim's helpers, and the hooks the range claim
-- asks: `seed_range_hold` (the ranges a live lane holds),
-- `seed_range_window_lease` (the ranges a lane handed out) and
-- `seed_range_pick_unheld` (the claim's walk when many are held).
--
-- This file is the truth; it is never run by the coordinator. Migrations are
-- deltas toward it (their SQL in sql/migrations/, never edited once run), and
-- tests/core/test_schema_drift.py holds the two equal: change a definition
-- here and in a new migration together.

-- Adds deltas of open ranges to the lanes, the claimable ones too (cn ranges,
-- ca articles: queued ranges with articles left, by next..end): locks the
-- group_lane rows first (every writer of a lane takes that row lock before
-- anything else), adds the deltas per priority, then recomputes the lane's
-- summary from its few work rows under that lock, so concurrent writers lose
-- nothing.
CREATE OR REPLACE FUNCTION group_lane_apply_work(g bigint[], l text[], p integer[], n bigint[], a bigint[],
                                      cn bigint[], ca bigint[])
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    dg bigint[];
    dl text[];
    dp integer[];
    dn bigint[];
    da bigint[];
    dcn bigint[];
    dca bigint[];
BEGIN
    SELECT array_agg(x.g ORDER BY x.g, x.l, x.p), array_agg(x.l ORDER BY x.g, x.l, x.p),
           array_agg(x.p ORDER BY x.g, x.l, x.p), array_agg(x.n ORDER BY x.g, x.l, x.p),
           array_agg(x.a ORDER BY x.g, x.l, x.p), array_agg(x.cn ORDER BY x.g, x.l, x.p),
           array_agg(x.ca ORDER BY x.g, x.l, x.p)
      INTO dg, dl, dp, dn, da, dcn, dca
      FROM (SELECT d.g, d.l, d.p, sum(d.n)::bigint AS n, sum(d.a)::bigint AS a,
                   sum(d.cn)::bigint AS cn, sum(d.ca)::bigint AS ca
              FROM unnest(g, l, p, n, a, cn, ca) AS d(g, l, p, n, a, cn, ca)
             WHERE d.l IS NOT NULL
             GROUP BY 1, 2, 3) AS x;
    IF dg IS NULL THEN
        RETURN;
    END IF;

    -- 1. Lock (and create, for new work) the lanes' rows, in key order.
    PERFORM 1 FROM group_lane AS gl
      JOIN (SELECT DISTINCT d.g, d.l FROM unnest(dg, dl) AS d(g, l)) AS k
        ON gl.group_id = k.g AND gl.lane = k.l
     ORDER BY gl.group_id, gl.lane
       FOR UPDATE OF gl;
    INSERT INTO group_lane AS gl (group_id, lane)
    SELECT k.g, k.l
      FROM (SELECT d.g, d.l FROM unnest(dg, dl, dn) AS d(g, l, n)
             GROUP BY 1, 2 HAVING sum(d.n) > 0) AS k
     WHERE EXISTS (SELECT 1 FROM news_group AS ng WHERE ng.id = k.g)
     ORDER BY 1, 2
    ON CONFLICT (group_id, lane) DO UPDATE SET planned_articles = gl.planned_articles;

    -- 2. The work per priority.
    INSERT INTO group_lane_work AS w (group_id, lane, priority, ranges, articles,
                                      claimable_ranges, claimable_articles)
    SELECT d.g, d.l, d.p, d.n, d.a, d.cn, d.ca
      FROM unnest(dg, dl, dp, dn, da, dcn, dca) AS d(g, l, p, n, a, cn, ca)
    ON CONFLICT (group_id, lane, priority)
    DO UPDATE SET ranges = w.ranges + excluded.ranges, articles = w.articles + excluded.articles,
                  claimable_ranges = w.claimable_ranges + excluded.claimable_ranges,
                  claimable_articles = w.claimable_articles + excluded.claimable_articles;

    -- 3. The lane summary, read under the row locks taken in 1.
    UPDATE group_lane AS gl
       SET planned_articles = s.planned, urgent_priority = s.urgent,
           claimable_articles = s.claimable, claimable_priority = s.claimable_urgent
      FROM (SELECT k.g, k.l,
                   coalesce(sum(w.articles) FILTER (WHERE w.ranges > 0), 0)::bigint AS planned,
                   min(w.priority) FILTER (WHERE w.ranges > 0) AS urgent,
                   coalesce(sum(w.claimable_articles) FILTER (WHERE w.claimable_ranges > 0),
                            0)::bigint AS claimable,
                   min(w.priority) FILTER (WHERE w.claimable_ranges > 0) AS claimable_urgent
              FROM (SELECT DISTINCT d.g, d.l FROM unnest(dg, dl) AS d(g, l)) AS k
              JOIN group_lane_work AS w ON w.group_id = k.g AND w.lane = k.l
             GROUP BY 1, 2) AS s
     WHERE gl.group_id = s.g AND gl.lane = s.l;
END
$$;

-- The claim's and the requeue's case: a range of one lane and priority goes
-- in or out of the queue (or its resume point moves while queued), nothing
-- else changes. Two primary-key updates, lane row first (the lock order of
-- group_lane_apply_work); the lane's claimable priority is recomputed only
-- when that priority's queue empties or fills.
CREATE OR REPLACE FUNCTION group_lane_claimable_delta(p_group bigint, p_lane text, p_priority integer,
                                           p_ranges bigint, p_articles bigint)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    left_ranges bigint;
BEGIN
    UPDATE group_lane
       SET claimable_articles = claimable_articles + p_articles
     WHERE group_id = p_group AND lane = p_lane;
    UPDATE group_lane_work
       SET claimable_ranges = claimable_ranges + p_ranges,
           claimable_articles = claimable_articles + p_articles
     WHERE group_id = p_group AND lane = p_lane AND priority = p_priority
    RETURNING claimable_ranges INTO left_ranges;
    IF left_ranges IS NULL THEN
        -- no work row (the summaries are being rebuilt): the general path
        PERFORM group_lane_apply_work(ARRAY[p_group], ARRAY[p_lane], ARRAY[p_priority],
                                      ARRAY[0]::bigint[], ARRAY[0]::bigint[],
                                      ARRAY[p_ranges], ARRAY[p_articles]);
        RETURN;
    END IF;
    IF (p_ranges < 0 AND left_ranges = 0) OR (p_ranges > 0 AND left_ranges = p_ranges) THEN
        UPDATE group_lane AS gl
           SET claimable_priority = (SELECT min(w.priority) FROM group_lane_work AS w
                                      WHERE w.group_id = p_group AND w.lane = p_lane
                                        AND w.claimable_ranges > 0)
         WHERE gl.group_id = p_group AND gl.lane = p_lane;
    END IF;
END
$$;

-- The trigger functions that keep the lanes' work rows, with the claimable
-- deltas: a range counts as claimable while queued with articles left
-- (next <= end).
CREATE OR REPLACE FUNCTION group_lane_track_rows() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    cfg group_lane_config%ROWTYPE;
    old_lane text;
    new_lane text;
    old_left bigint := 0;
    new_left bigint := 0;
BEGIN
    SELECT * INTO cfg FROM group_lane_config WHERE id = 1;
    IF NOT FOUND THEN
        RETURN NULL;  -- not configured yet: the first group lease rebuilds
    END IF;
    IF OLD.status IN ('queued', 'leased') THEN
        old_lane := group_lane_of(OLD.priority, OLD.capture, cfg.tail_max,
                                  cfg.history_min, cfg.history_max, cfg.capture_only);
    END IF;
    IF NEW.status IN ('queued', 'leased') THEN
        new_lane := group_lane_of(NEW.priority, NEW.capture, cfg.tail_max,
                                  cfg.history_min, cfg.history_max, cfg.capture_only);
    END IF;
    IF old_lane IS NULL AND new_lane IS NULL THEN
        RETURN NULL;
    END IF;
    IF OLD.status = 'queued' AND OLD.next_id <= OLD.end_id THEN
        old_left := OLD.end_id - OLD.next_id + 1;
    END IF;
    IF NEW.status = 'queued' AND NEW.next_id <= NEW.end_id THEN
        new_left := NEW.end_id - NEW.next_id + 1;
    END IF;
    IF old_lane = new_lane AND OLD.group_id = NEW.group_id AND OLD.priority = NEW.priority
       AND OLD.start_id = NEW.start_id AND OLD.end_id = NEW.end_id THEN
        -- still open in the same lane: only what it leaves to claim changed
        IF new_left <> old_left THEN
            PERFORM group_lane_claimable_delta(
                NEW.group_id, new_lane, NEW.priority,
                (new_left > 0)::integer - (old_left > 0)::integer, new_left - old_left);
        END IF;
        RETURN NULL;
    END IF;
    PERFORM group_lane_apply_work(
        ARRAY[OLD.group_id, NEW.group_id], ARRAY[old_lane, new_lane],
        ARRAY[OLD.priority, NEW.priority], ARRAY[-1, 1]::bigint[],
        ARRAY[-(OLD.end_id - OLD.start_id + 1), NEW.end_id - NEW.start_id + 1],
        ARRAY[-(old_left > 0)::integer, (new_left > 0)::integer]::bigint[],
        ARRAY[-old_left, new_left]);
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION group_lane_track_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    cfg group_lane_config%ROWTYPE;
BEGIN
    SELECT * INTO cfg FROM group_lane_config WHERE id = 1;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    PERFORM group_lane_apply_work(array_agg(group_id), array_agg(lane), array_agg(priority),
                                  array_agg(n), array_agg(a), array_agg(cn), array_agg(ca))
       FROM (SELECT group_id,
                    group_lane_of(priority, capture, cfg.tail_max, cfg.history_min,
                                  cfg.history_max, cfg.capture_only) AS lane,
                    priority, count(*) AS n, sum(end_id - start_id + 1)::bigint AS a,
                    count(*) FILTER (WHERE status = 'queued' AND next_id <= end_id) AS cn,
                    coalesce(sum(end_id - next_id + 1)
                             FILTER (WHERE status = 'queued' AND next_id <= end_id), 0)::bigint
                        AS ca
               FROM new_rows
              WHERE status IN ('queued', 'leased')
              GROUP BY 1, 2, 3) AS d
      HAVING count(*) > 0;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION group_lane_track_delete() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    cfg group_lane_config%ROWTYPE;
BEGIN
    SELECT * INTO cfg FROM group_lane_config WHERE id = 1;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    PERFORM group_lane_apply_work(array_agg(group_id), array_agg(lane), array_agg(priority),
                                  array_agg(-n), array_agg(-a), array_agg(-cn), array_agg(-ca))
       FROM (SELECT group_id,
                    group_lane_of(priority, capture, cfg.tail_max, cfg.history_min,
                                  cfg.history_max, cfg.capture_only) AS lane,
                    priority, count(*) AS n, sum(end_id - start_id + 1)::bigint AS a,
                    count(*) FILTER (WHERE status = 'queued' AND next_id <= end_id) AS cn,
                    coalesce(sum(end_id - next_id + 1)
                             FILTER (WHERE status = 'queued' AND next_id <= end_id), 0)::bigint
                        AS ca
               FROM old_rows
              WHERE status IN ('queued', 'leased')
              GROUP BY 1, 2, 3) AS d
      HAVING count(*) > 0;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER group_lane_track_update
AFTER UPDATE ON seed_range
FOR EACH ROW
WHEN ((OLD.status IN ('queued', 'leased')) IS DISTINCT FROM (NEW.status IN ('queued', 'leased'))
      OR (OLD.status = 'queued') IS DISTINCT FROM (NEW.status = 'queued')
      OR (NEW.status = 'queued' AND OLD.next_id <> NEW.next_id)
      OR (NEW.status IN ('queued', 'leased')
          AND (OLD.priority <> NEW.priority OR OLD.capture <> NEW.capture
               OR OLD.group_id <> NEW.group_id OR OLD.start_id <> NEW.start_id
               OR OLD.end_id <> NEW.end_id)))
EXECUTE FUNCTION group_lane_track_rows();

-- group_lane.group_priority follows news_group.priority: set when a lane row
-- is created, updated when the group's priority changes.
CREATE OR REPLACE FUNCTION group_lane_set_group_priority() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.group_priority := coalesce((SELECT priority FROM news_group WHERE id = NEW.group_id), 0);
    RETURN NEW;
END
$$;

CREATE OR REPLACE TRIGGER group_lane_group_priority
BEFORE INSERT ON group_lane
FOR EACH ROW
EXECUTE FUNCTION group_lane_set_group_priority();

CREATE OR REPLACE FUNCTION group_lane_follow_group_priority() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE group_lane SET group_priority = NEW.priority WHERE group_id = NEW.id;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER news_group_priority_to_lanes
AFTER UPDATE OF priority ON news_group
FOR EACH ROW
WHEN (OLD.priority IS DISTINCT FROM NEW.priority)
EXECUTE FUNCTION group_lane_follow_group_priority();

-- group_lane_free offers only free lanes with something to claim now
-- (claimable_priority set), so a lane whose work is all under live range
-- leases or read to its end is not handed out.
CREATE OR REPLACE FUNCTION group_lane_free(p_lane text, p_ttl integer) RETURNS SETOF group_lane
LANGUAGE sql STABLE AS $$
    SELECT gl.*
      FROM group_lane AS gl
      JOIN news_group AS g ON g.id = gl.group_id
     WHERE gl.lane = p_lane
       AND gl.claimable_priority IS NOT NULL
       AND (gl.node_id IS NULL OR gl.heartbeat_at < now() - make_interval(secs => p_ttl))
       AND g.active
$$;

-- The lanes named (p_ids) that are still held, by one of p_holders when given
-- and at p_epoch when given (checked again under the row lock), are given
-- back: the range each has in work, and every other range the holder still
-- has leased from the lane's window (lane_handout of this lane at the range's
-- epoch, as reset_lane_ranges reads it: a range `next` moved past with `read`
-- whose finish had not come), goes back to queued at its resume point (done,
-- with no error, when it was read to its end) and the holder is cleared. A
-- fenced give back (an operator, a disabled node) moves the epoch on and
-- keeps the last heartbeat; a holder's own keeps the epoch and was heard now
-- ("unheld the longest" runs from there). Answers the lanes given back and
-- the ranges freed.
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

-- The ranges a lane's `next` handed out, at the epoch it gave them
-- (seeding's hook: the range claim's urgency mix counts range leases only).
CREATE OR REPLACE VIEW seed_range_window_lease AS
SELECT h.range_id, h.epoch FROM lane_handout AS h;

-- The first queued range with articles left at or above p_min_priority that
-- belongs to no lane (group_lane_of is NULL: no hold ever covers it), in claim
-- order, locked. The ranges of no lane lie in three priority bands, tried from
-- the most urgent: between the lanes (above the tail bound, below
-- history_min), in the history band but not flagged capture (only with
-- capture_only), above history_max. Each is a range scan of the claim index;
-- the first two stop at their first row, the capture band passes the capture
-- ranges ahead of its first uncaptured one.
CREATE OR REPLACE FUNCTION seed_range_first_laneless(p_tail_max integer, p_history_min integer,
                                          p_history_max integer, p_capture_only boolean,
                                          p_min_priority integer)
RETURNS TABLE (laneless_id bigint, laneless_priority integer)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_bitmapscan = off
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

-- The crowded claim's candidate at or above p_min_priority (seeding's hook):
-- the first range of no lane (seed_range_first_laneless), unless a free lane has claimable work
-- more urgent than it; the free lanes are asked by their most urgent
-- claimable priority at or above p_min_priority (from group_lane_work), then
-- the most articles left to claim, then the group's id, each for its newest
-- queued range at that priority. Ties of priority go to the range of no lane:
-- only range leases can take it.
-- A free lane's pick is an ordered scan of seed_range_lane_pick_idx: its
-- priority is a range (lane_row.priority to itself), since with `=` the
-- planner drops it from the order and may walk seed_range_group_queued_idx
-- from the group's newest range. No bitmap scans here or in
-- seed_range_first_laneless: a generic plan knows no bound, and a bitmap scan
-- would read every queued range of a band before sorting. The free lanes come
-- in that order from group_lane_claim_order_idx when the whole queue is asked
-- (p_min_priority at its least, every claim's first question): a lane's most
-- urgent claimable priority is its claimable_priority, kept by the lane-work
-- triggers, so no lane's work rows are read and the scan stops at the first
-- lane that answers (held lanes, few, are passed). Only the urgency mix's
-- second question (at or above p_urgent_below) groups the work rows of every
-- free lane. So a crowded claim reads a bounded number of index entries
-- however many groups and ranges there are.
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

-- Which lane a range belongs to (NULL: none). An inlinable SQL function, so
-- the range claim, a lane's `next` and the trigger classify ranges alike.
CREATE OR REPLACE FUNCTION group_lane_of(priority integer, capture boolean, tail_max integer,
                              history_min integer, history_max integer, capture_only boolean)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE
        WHEN priority <= tail_max THEN 'tail'
        WHEN priority BETWEEN history_min AND history_max AND (capture OR NOT capture_only)
            THEN 'history'
    END
$$;

CREATE OR REPLACE TRIGGER group_lane_track_insert
AFTER INSERT ON seed_range
REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT
EXECUTE FUNCTION group_lane_track_insert();

CREATE OR REPLACE TRIGGER group_lane_track_delete
AFTER DELETE ON seed_range
REFERENCING OLD TABLE AS old_rows
FOR EACH STATEMENT
EXECUTE FUNCTION group_lane_track_delete();
