-- Each group lane's planned work, kept current by triggers on seed_range
-- (docs/window-indexing.md). Installed by leases' migration 0002.
-- A block a migration has run is never edited: a change is a new block and
-- a new migration (docs/architecture.md, "SQL").

-- name: create_lane_of_function
-- Which lane a range belongs to (NULL: none). An inlinable SQL function, so
-- the range claim, a lane's `next` and the trigger classify ranges alike.
CREATE FUNCTION group_lane_of(priority integer, capture boolean, tail_max integer,
                              history_min integer, history_max integer, capture_only boolean)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE
        WHEN priority <= tail_max THEN 'tail'
        WHEN priority BETWEEN history_min AND history_max AND (capture OR NOT capture_only)
            THEN 'history'
    END
$$;

-- name: create_lane_apply_function
-- Adds deltas of open ranges to the lanes: locks the group_lane rows first
-- (every writer of a lane takes that row lock before anything else), adds
-- the article deltas, then recomputes the lane's most urgent priority from
-- group_lane_work under that lock, so concurrent writers lose nothing.
CREATE FUNCTION group_lane_apply(g bigint[], l text[], p integer[], n bigint[], a bigint[])
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    dg bigint[];
    dl text[];
    dp integer[];
    dn bigint[];
    da bigint[];
BEGIN
    SELECT array_agg(x.g ORDER BY x.g, x.l, x.p), array_agg(x.l ORDER BY x.g, x.l, x.p),
           array_agg(x.p ORDER BY x.g, x.l, x.p), array_agg(x.n ORDER BY x.g, x.l, x.p),
           array_agg(x.a ORDER BY x.g, x.l, x.p)
      INTO dg, dl, dp, dn, da
      FROM (SELECT d.g, d.l, d.p, sum(d.n)::bigint AS n, sum(d.a)::bigint AS a
              FROM unnest(g, l, p, n, a) AS d(g, l, p, n, a)
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
    INSERT INTO group_lane_work AS w (group_id, lane, priority, ranges, articles)
    SELECT d.g, d.l, d.p, d.n, d.a FROM unnest(dg, dl, dp, dn, da) AS d(g, l, p, n, a)
    ON CONFLICT (group_id, lane, priority)
    DO UPDATE SET ranges = w.ranges + excluded.ranges, articles = w.articles + excluded.articles;

    -- 3. The lane summary, read under the row locks taken in 1.
    UPDATE group_lane AS gl
       SET planned_articles = s.planned, urgent_priority = s.urgent
      FROM (SELECT k.g, k.l,
                   coalesce(sum(w.articles) FILTER (WHERE w.ranges > 0), 0)::bigint AS planned,
                   min(w.priority) FILTER (WHERE w.ranges > 0) AS urgent
              FROM (SELECT DISTINCT d.g, d.l FROM unnest(dg, dl) AS d(g, l)) AS k
              JOIN group_lane_work AS w ON w.group_id = k.g AND w.lane = k.l
             GROUP BY 1, 2) AS s
     WHERE gl.group_id = s.g AND gl.lane = s.l;
END
$$;

-- name: create_lane_track_functions
-- The trigger functions: row-level for UPDATE, statement-level with
-- transition tables for INSERT and DELETE (planning loads a million
-- ranges in one statement).
CREATE FUNCTION group_lane_track_rows() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    cfg group_lane_config%ROWTYPE;
    old_lane text;
    new_lane text;
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
    PERFORM group_lane_apply(
        ARRAY[OLD.group_id, NEW.group_id], ARRAY[old_lane, new_lane],
        ARRAY[OLD.priority, NEW.priority], ARRAY[-1, 1]::bigint[],
        ARRAY[-(OLD.end_id - OLD.start_id + 1), NEW.end_id - NEW.start_id + 1]);
    RETURN NULL;
END
$$;

CREATE FUNCTION group_lane_track_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    cfg group_lane_config%ROWTYPE;
BEGIN
    SELECT * INTO cfg FROM group_lane_config WHERE id = 1;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    PERFORM group_lane_apply(array_agg(group_id), array_agg(lane), array_agg(priority),
                             array_agg(n), array_agg(a))
       FROM (SELECT group_id,
                    group_lane_of(priority, capture, cfg.tail_max, cfg.history_min,
                                  cfg.history_max, cfg.capture_only) AS lane,
                    priority, count(*) AS n, sum(end_id - start_id + 1)::bigint AS a
               FROM new_rows
              WHERE status IN ('queued', 'leased')
              GROUP BY 1, 2, 3) AS d
      HAVING count(*) > 0;
    RETURN NULL;
END
$$;

CREATE FUNCTION group_lane_track_delete() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    cfg group_lane_config%ROWTYPE;
BEGIN
    SELECT * INTO cfg FROM group_lane_config WHERE id = 1;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    PERFORM group_lane_apply(array_agg(group_id), array_agg(lane), array_agg(priority),
                             array_agg(-n), array_agg(-a))
       FROM (SELECT group_id,
                    group_lane_of(priority, capture, cfg.tail_max, cfg.history_min,
                                  cfg.history_max, cfg.capture_only) AS lane,
                    priority, count(*) AS n, sum(end_id - start_id + 1)::bigint AS a
               FROM old_rows
              WHERE status IN ('queued', 'leased')
              GROUP BY 1, 2, 3) AS d
      HAVING count(*) > 0;
    RETURN NULL;
END
$$;

-- name: create_lane_track_triggers
-- queued <-> leased keeps a range open, so the range claim and a lane's
-- `next` never fire the UPDATE trigger.
CREATE TRIGGER group_lane_track_update
AFTER UPDATE ON seed_range
FOR EACH ROW
WHEN ((OLD.status IN ('queued', 'leased')) IS DISTINCT FROM (NEW.status IN ('queued', 'leased'))
      OR (NEW.status IN ('queued', 'leased')
          AND (OLD.priority <> NEW.priority OR OLD.capture <> NEW.capture
               OR OLD.group_id <> NEW.group_id OR OLD.start_id <> NEW.start_id
               OR OLD.end_id <> NEW.end_id)))
EXECUTE FUNCTION group_lane_track_rows();

CREATE TRIGGER group_lane_track_insert
AFTER INSERT ON seed_range
REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT
EXECUTE FUNCTION group_lane_track_insert();

CREATE TRIGGER group_lane_track_delete
AFTER DELETE ON seed_range
REFERENCING OLD TABLE AS old_rows
FOR EACH STATEMENT
EXECUTE FUNCTION group_lane_track_delete();

-- name: create_lane_queued_index
-- A lane's `next`: a group's queued ranges in article order, without
-- walking its done ranges.
CREATE INDEX seed_range_group_queued_idx ON seed_range (group_id, start_id) WHERE status = 'queued';

-- name: create_lane_turn_sequence
-- Counts the turns of the group choice (most planned, then unheld longest).
CREATE SEQUENCE group_lane_turn_seq;

-- name: drop_lane_tracking
DROP SEQUENCE IF EXISTS group_lane_turn_seq;
DROP INDEX IF EXISTS seed_range_group_queued_idx;
DROP TRIGGER IF EXISTS group_lane_track_update ON seed_range;
DROP TRIGGER IF EXISTS group_lane_track_insert ON seed_range;
DROP TRIGGER IF EXISTS group_lane_track_delete ON seed_range;
DROP FUNCTION IF EXISTS group_lane_track_rows();
DROP FUNCTION IF EXISTS group_lane_track_insert();
DROP FUNCTION IF EXISTS group_lane_track_delete();
DROP FUNCTION IF EXISTS group_lane_apply(bigint[], text[], integer[], bigint[], bigint[]);
DROP FUNCTION IF EXISTS group_lane_of(integer, boolean, integer, integer, integer, boolean);

-- name: drop_unused_lane_apply
-- group_lane_apply_work (claimable.sql) replaced it in every trigger; nothing
-- calls it (leases/sql/schema.sql showed it beside its successor).
DROP FUNCTION group_lane_apply(bigint[], text[], integer[], bigint[], bigint[]);
