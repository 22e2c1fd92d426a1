-- The live definition of every function, view and trigger the seeding app
-- owns: the range claim (`claim_seed_range`, which `lease_range` calls), the
-- finished ranges' rollup and the per-group range summary (the triggers on
-- seed_range that keep group_range_summary). The claim asks `seed_range_hold`,
-- `seed_range_window_lease` and `seed_range_pick_unheld`, which the leases app
-- defines (leases/sql/schema.sql): a higher layer plugs its lanes into the
-- claim.
--
-- This file is the truth; it is never run by the coordinator. Migrations are
-- deltas toward it (their SQL in sql/migrations/, never edited once run), and
-- tests/core/test_schema_drift.py holds the two equal: change a definition
-- here and in a new migration together.

-- The first claimable range at or above p_min_priority: queued, with
-- articles left (resume point at or before the end: an empty span is never
-- handed out), and not held by a live lane (seed_range_hold), in claim order.
CREATE OR REPLACE FUNCTION seed_range_first_claimable(p_ttl integer, p_min_priority integer)
RETURNS TABLE (claimable_id bigint, claimable_priority integer)
LANGUAGE plpgsql
AS $$
BEGIN
    RETURN QUERY
    SELECT r.id, r.priority FROM seed_range AS r
     WHERE r.status = 'queued'
       AND r.priority >= p_min_priority
       AND r.next_id <= r.end_id
       AND NOT EXISTS (SELECT 1 FROM seed_range_hold AS h
                        WHERE h.group_id = r.group_id
                          AND r.priority BETWEEN h.priority_min AND h.priority_max
                          AND (r.capture OR NOT h.capture_only)
                          AND h.heartbeat_at >= now() - make_interval(secs => p_ttl))
     ORDER BY r.priority, r.id
     LIMIT 1
       FOR UPDATE OF r SKIP LOCKED;
END
$$;

-- Claim one queued range for a node, in one UPDATE of the picked row.
-- `head` is the first claimable range: the claim index's first unheld range
-- (most urgent, then plan order), or, past 2,000 open ranges under live
-- holds, seed_range_pick_unheld's. When it is urgent (priority below
-- p_urgent_below), the live range leases are counted, leaving out ranges a
-- lane's `next` handed out (seed_range_window_lease): urgent ones go first
-- while 2 * urgent < live + 1 (at most half, so a tie goes to urgent);
-- otherwise the first claimable range at or above p_urgent_below, by priority
-- then plan order, goes first (or `head`, when there is none). Both modes
-- apply the mix. The common case, nothing urgent queued, reads the claim index
-- once, like a bare claim. force_generic_plan: PostgreSQL kept re-planning the
-- prepared claim on every call (0.3 ms of planning for 0.2 ms of work).
CREATE OR REPLACE FUNCTION claim_seed_range(
    p_node_id bigint, p_ttl integer, p_urgent_below integer, p_rule_version integer)
RETURNS TABLE (out_id bigint, out_group text, out_next bigint, out_end bigint,
               out_epoch integer, out_group_id bigint)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    crowded boolean;
    head_priority integer;
    urgent_live bigint;
    all_live bigint;
    picked bigint;
BEGIN
    SELECT coalesce(sum(h.open_ranges), 0) > 2000 INTO crowded
      FROM seed_range_hold AS h
     WHERE h.heartbeat_at >= now() - make_interval(secs => p_ttl);
    SELECT c.picked_id, c.picked_priority INTO picked, head_priority
      FROM seed_range_claimable(crowded, p_ttl, -2147483648) AS c;
    IF head_priority < p_urgent_below THEN
        SELECT count(*) FILTER (WHERE r.priority < p_urgent_below), count(*)
          INTO urgent_live, all_live
          FROM seed_range AS r
         WHERE r.status = 'leased'
           AND r.heartbeat_at >= now() - make_interval(secs => p_ttl)
           AND NOT EXISTS (SELECT 1 FROM seed_range_window_lease AS w
                            WHERE w.range_id = r.id AND w.epoch = r.epoch);
        IF urgent_live * 2 >= all_live + 1 THEN
            picked := coalesce((SELECT c.picked_id
                                  FROM seed_range_claimable(crowded, p_ttl, p_urgent_below) AS c),
                               picked);
        END IF;
    END IF;

    IF picked IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
    UPDATE seed_range AS r
       SET status = 'leased',
           node_id = p_node_id,
           epoch = r.epoch + 1,
           attempts = r.attempts + 1,
           leased_at = now(),
           heartbeat_at = now(),
           rule_version = p_rule_version
      FROM news_group AS g
     WHERE r.id = picked
       AND g.id = r.group_id
    RETURNING r.id, g.name::text, r.next_id, r.end_id, r.epoch, r.group_id;
END
$$;

-- The claim's candidate at or above p_min_priority, locked: the claim index's
-- first unheld range, or, when live holds cover much of the queue (crowded),
-- seed_range_pick_unheld's (which never walks past held ranges).
CREATE OR REPLACE FUNCTION seed_range_claimable(p_crowded boolean, p_ttl integer,
                                                p_min_priority integer)
RETURNS TABLE (picked_id bigint, picked_priority integer)
LANGUAGE plpgsql
AS $$
BEGIN
    IF p_crowded THEN
        RETURN QUERY SELECT u.picked_id, u.picked_priority
                       FROM seed_range_pick_unheld(p_ttl, p_min_priority) AS u;
    ELSE
        RETURN QUERY SELECT f.claimable_id, f.claimable_priority
                       FROM seed_range_first_claimable(p_ttl, p_min_priority) AS f;
    END IF;
END
$$;

-- Row-level, and only when a range becomes done with a holder on record: the
-- claim, batches and heartbeats never fire it (the WHEN clause is all they
-- cost). A range with no holder (queued read ranges the read-range sweep makes
-- done, left by versions before the checks that keep them out of the queue)
-- has no node to count on.
CREATE OR REPLACE FUNCTION seed_range_count_finished() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO header_rollup AS h (bucket, node_id, group_id, headers, batches,
                                    ranges_finished, finished_headers)
    VALUES (date_trunc('minute', now()), NEW.node_id, NEW.group_id, 0, 0, 1, NEW.headers)
    ON CONFLICT (bucket, node_id, group_id)
    DO UPDATE SET ranges_finished = h.ranges_finished + 1,
                  finished_headers = h.finished_headers + excluded.finished_headers;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER seed_range_finished_rollup
AFTER UPDATE ON seed_range
FOR EACH ROW
WHEN (NEW.status = 'done' AND OLD.status IS DISTINCT FROM 'done' AND NEW.node_id IS NOT NULL)
EXECUTE FUNCTION seed_range_count_finished();

-- Adds deltas (ranges, articles, reached, headers, files) per (group,
-- status), in key order.
CREATE OR REPLACE FUNCTION group_range_summary_apply(g bigint[], s text[], n bigint[], a bigint[],
                                          r bigint[], h bigint[], f bigint[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO group_range_summary AS t (group_id, status, ranges, articles, reached, headers, files)
    SELECT d.g, d.s, sum(d.n), sum(d.a), sum(d.r), sum(d.h), sum(d.f)
      FROM unnest(g, s, n, a, r, h, f) AS d(g, s, n, a, r, h, f)
     WHERE d.g IS NOT NULL AND d.s IS NOT NULL
       AND EXISTS (SELECT 1 FROM news_group AS ng WHERE ng.id = d.g)
     GROUP BY 1, 2
     ORDER BY 1, 2
    ON CONFLICT (group_id, status) DO UPDATE
       SET ranges = t.ranges + excluded.ranges, articles = t.articles + excluded.articles,
           reached = t.reached + excluded.reached, headers = t.headers + excluded.headers,
           files = t.files + excluded.files;
END
$$;

-- One row's share of its (group, status) summary, added with `sign`. plpgsql
-- keeps the statement's plan per session: the claim fires this on every lease.
CREATE OR REPLACE FUNCTION group_range_summary_add(r seed_range, sign integer) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO group_range_summary AS t (group_id, status, ranges, articles, reached, headers, files)
    VALUES (r.group_id, r.status, sign, sign * (r.end_id - r.start_id + 1),
            CASE WHEN r.status = 'leased' THEN 0 ELSE sign * (r.next_id - r.start_id) END,
            CASE WHEN r.status = 'leased' THEN 0 ELSE sign * r.headers END,
            CASE WHEN r.status = 'leased' THEN 0 ELSE sign * r.files END)
    ON CONFLICT (group_id, status) DO UPDATE
       SET ranges = t.ranges + excluded.ranges, articles = t.articles + excluded.articles,
           reached = t.reached + excluded.reached, headers = t.headers + excluded.headers,
           files = t.files + excluded.files;
END
$$;

-- The two rows are written in key order, as the statement triggers write theirs.
CREATE OR REPLACE FUNCTION group_range_summary_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (OLD.group_id, OLD.status::text) <= (NEW.group_id, NEW.status::text) THEN
        PERFORM group_range_summary_add(OLD, -1);
        PERFORM group_range_summary_add(NEW, 1);
    ELSE
        PERFORM group_range_summary_add(NEW, 1);
        PERFORM group_range_summary_add(OLD, -1);
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION group_range_summary_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM group_range_summary_apply(array_agg(group_id), array_agg(status), array_agg(n),
                                      array_agg(a), array_agg(r), array_agg(h), array_agg(f))
       FROM (SELECT group_id, status::text AS status, count(*) AS n,
                    sum(end_id - start_id + 1)::bigint AS a,
                    sum(CASE WHEN status = 'leased' THEN 0 ELSE next_id - start_id END)::bigint AS r,
                    sum(CASE WHEN status = 'leased' THEN 0 ELSE headers END)::bigint AS h,
                    sum(CASE WHEN status = 'leased' THEN 0 ELSE files END)::bigint AS f
               FROM new_rows GROUP BY 1, 2) AS d
      HAVING count(*) > 0;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION group_range_summary_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM group_range_summary_apply(array_agg(group_id), array_agg(status), array_agg(-n),
                                      array_agg(-a), array_agg(-r), array_agg(-h), array_agg(-f))
       FROM (SELECT group_id, status::text AS status, count(*) AS n,
                    sum(end_id - start_id + 1)::bigint AS a,
                    sum(CASE WHEN status = 'leased' THEN 0 ELSE next_id - start_id END)::bigint AS r,
                    sum(CASE WHEN status = 'leased' THEN 0 ELSE headers END)::bigint AS h,
                    sum(CASE WHEN status = 'leased' THEN 0 ELSE files END)::bigint AS f
               FROM old_rows GROUP BY 1, 2) AS d
      HAVING count(*) > 0;
    RETURN NULL;
END
$$;

-- Statement-level with transition tables for INSERT and DELETE; row-level
-- for UPDATE when a range changes status, moves, or progresses while not
-- leased. A batch only moves a leased range's resume point and counters,
-- so the batch path never fires it.
CREATE OR REPLACE TRIGGER group_range_summary_update
AFTER UPDATE ON seed_range
FOR EACH ROW
WHEN (OLD.status IS DISTINCT FROM NEW.status
      OR OLD.group_id <> NEW.group_id OR OLD.start_id <> NEW.start_id OR OLD.end_id <> NEW.end_id
      OR (NEW.status <> 'leased'
          AND (OLD.next_id <> NEW.next_id OR OLD.headers <> NEW.headers OR OLD.files <> NEW.files)))
EXECUTE FUNCTION group_range_summary_rows();

CREATE OR REPLACE TRIGGER group_range_summary_insert
AFTER INSERT ON seed_range
REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT
EXECUTE FUNCTION group_range_summary_insert();

CREATE OR REPLACE TRIGGER group_range_summary_delete
AFTER DELETE ON seed_range
REFERENCING OLD TABLE AS old_rows
FOR EACH STATEMENT
EXECUTE FUNCTION group_range_summary_delete();
