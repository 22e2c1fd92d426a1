-- What a lane could take now, kept beside its planned work by the same
-- triggers on seed_range (docs/window-indexing.md, "Choosing a group").
-- Installed by leases' migration 0008; a block a migration has run is never
-- edited: a change is a new block and a new migration.

-- name: create_lane_work_function
-- As group_lane_apply (sql/migrations/tracking.sql), with the claimable
-- deltas too (cn ranges, ca articles: queued ranges with articles left, by
-- next..end): locks the lane rows first, adds the deltas per priority, then
-- recomputes the lane's summary from its few work rows under that lock.
CREATE FUNCTION group_lane_apply_work(g bigint[], l text[], p integer[], n bigint[], a bigint[],
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

-- name: create_lane_claim_function
-- The claim's and the requeue's case: a range of one lane and priority goes
-- in or out of the queue (or its resume point moves while queued), nothing
-- else changes. Two primary-key updates, lane row first (the lock order of
-- group_lane_apply_work); the lane's claimable priority is recomputed only
-- when that priority's queue empties or fills.
CREATE FUNCTION group_lane_claimable_delta(p_group bigint, p_lane text, p_priority integer,
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

-- name: replace_lane_track_functions
-- The trigger functions of migration 0002, now with the claimable deltas: a
-- range counts as claimable while queued with articles left (next <= end).
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

-- name: replace_lane_update_trigger
-- Fires as in 0002, and also when a range enters or leaves the queue (the
-- range claim, a lane's `next`, a requeue) or its resume point moves while
-- queued: what the lane could take changed. Batches (leased, next moving)
-- still never fire it.
DROP TRIGGER IF EXISTS group_lane_track_update ON seed_range;
CREATE TRIGGER group_lane_track_update
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

-- name: create_group_priority_tracking
-- group_lane.group_priority follows news_group.priority: set when a lane row
-- is created, updated when the group's priority changes.
CREATE FUNCTION group_lane_set_group_priority() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.group_priority := coalesce((SELECT priority FROM news_group WHERE id = NEW.group_id), 0);
    RETURN NEW;
END
$$;

CREATE TRIGGER group_lane_group_priority
BEFORE INSERT ON group_lane
FOR EACH ROW
EXECUTE FUNCTION group_lane_set_group_priority();

CREATE FUNCTION group_lane_follow_group_priority() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE group_lane SET group_priority = NEW.priority WHERE group_id = NEW.id;
    RETURN NULL;
END
$$;

CREATE TRIGGER news_group_priority_to_lanes
AFTER UPDATE OF priority ON news_group
FOR EACH ROW
WHEN (OLD.priority IS DISTINCT FROM NEW.priority)
EXECUTE FUNCTION group_lane_follow_group_priority();

UPDATE group_lane AS gl SET group_priority = g.priority
  FROM news_group AS g
 WHERE g.id = gl.group_id AND gl.group_priority IS DISTINCT FROM g.priority;

-- name: count_claimable_work
-- The claimable figures of the lanes as they stand, from the ranges (once,
-- by the saved bounds; without saved bounds the first lease rebuilds).
UPDATE group_lane_work AS w
   SET claimable_ranges = coalesce(c.ranges, 0), claimable_articles = coalesce(c.articles, 0)
  FROM group_lane_work AS k
  LEFT JOIN (SELECT r.group_id,
                    group_lane_of(r.priority, r.capture, cfg.tail_max, cfg.history_min,
                                  cfg.history_max, cfg.capture_only) AS lane,
                    r.priority, count(*) AS ranges, sum(r.end_id - r.next_id + 1) AS articles
               FROM seed_range AS r
              CROSS JOIN group_lane_config AS cfg
              WHERE r.status = 'queued' AND r.next_id <= r.end_id
              GROUP BY 1, 2, 3) AS c
    ON c.group_id = k.group_id AND c.lane = k.lane AND c.priority = k.priority
 WHERE w.group_id = k.group_id AND w.lane = k.lane AND w.priority = k.priority;

UPDATE group_lane AS gl
   SET claimable_articles = coalesce(s.claimable, 0), claimable_priority = s.urgent
  FROM group_lane AS k
  LEFT JOIN (SELECT group_id, lane, sum(claimable_articles) AS claimable,
                    min(priority) AS urgent
               FROM group_lane_work
              WHERE claimable_ranges > 0
              GROUP BY 1, 2) AS s
    ON s.group_id = k.group_id AND s.lane = k.lane
 WHERE gl.id = k.id;

-- name: replace_free_lanes_function
-- group_lane_free (0006) offers only lanes with something to claim now
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

-- name: drop_claimable_tracking
-- Backwards from 0008: the functions and triggers of 0002 and 0006 come back
-- (their blocks are run again after this).
DROP TRIGGER IF EXISTS news_group_priority_to_lanes ON news_group;
DROP TRIGGER IF EXISTS group_lane_group_priority ON group_lane;
DROP FUNCTION IF EXISTS group_lane_follow_group_priority();
DROP FUNCTION IF EXISTS group_lane_set_group_priority();
DROP TRIGGER IF EXISTS group_lane_track_update ON seed_range;
DROP TRIGGER IF EXISTS group_lane_track_insert ON seed_range;
DROP TRIGGER IF EXISTS group_lane_track_delete ON seed_range;
DROP FUNCTION IF EXISTS group_lane_track_rows();
DROP FUNCTION IF EXISTS group_lane_track_insert();
DROP FUNCTION IF EXISTS group_lane_track_delete();
DROP FUNCTION IF EXISTS group_lane_claimable_delta(bigint, text, integer, bigint, bigint);
DROP FUNCTION IF EXISTS group_lane_apply_work(bigint[], text[], integer[], bigint[], bigint[],
                                              bigint[], bigint[]);
DROP FUNCTION IF EXISTS group_lane_free(text, integer);
