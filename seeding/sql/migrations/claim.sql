-- The range claim as a database function, and the two hooks it leaves to a
-- higher layer. Installed by seeding's migrations (0008); a block a
-- migration has run is never edited: a change is a new block and a new
-- migration. Why a function, and the figures: docs/performance.md ("Range
-- claim") and docs/architecture.md ("Inverted dependencies").

-- name: create_range_hold_view
-- Ranges someone else holds: a live hold keeps the claim away from the
-- group's queued ranges with a priority in priority_min..priority_max (and
-- only capture ranges when capture_only), while its heartbeat is within the
-- lease TTL. open_ranges is how many open ranges the hold covers. Seeding
-- holds nothing itself: the leases app replaces this view with its lanes.
CREATE OR REPLACE VIEW seed_range_hold AS
SELECT NULL::bigint AS group_id, NULL::bigint AS priority_min, NULL::bigint AS priority_max,
       NULL::boolean AS capture_only, NULL::timestamptz AS heartbeat_at,
       NULL::bigint AS open_ranges
 WHERE false;

-- name: create_pick_unheld_function
-- The claim's way out when live holds cover much of the queue (walking the
-- claim index past them would be slow): a queued range outside every hold,
-- or NULL. With no holds the claim never calls it; the leases app replaces it.
CREATE OR REPLACE FUNCTION seed_range_pick_unheld(p_ttl integer) RETURNS bigint
LANGUAGE sql AS $$ SELECT NULL::bigint $$;

-- name: create_first_claimable_function
-- The first queued range at or above p_min_priority, in claim-index order
-- (urgency, then plan order), that no live hold covers; locked, skipping
-- rows another claim holds. Called only by claim_seed_range, whose SET
-- clause gives it the generic plan too.
CREATE OR REPLACE FUNCTION seed_range_first_claimable(p_ttl integer, p_min_priority integer)
RETURNS TABLE (claimable_id bigint, claimable_priority integer)
LANGUAGE plpgsql
AS $$
BEGIN
    RETURN QUERY
    SELECT r.id, r.priority FROM seed_range AS r
     WHERE r.status = 'queued'
       AND r.priority >= p_min_priority
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

-- name: create_unread_first_claimable_function
-- As create_first_claimable_function (migration 0008), and only ranges with
-- articles left (resume point at or before the end): an empty span is never
-- handed out. Installed by migration 0010.
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

-- name: create_claim_function
-- Claim one queued range for a node, in one UPDATE of the picked row.
-- `head` is the first claimable range (most urgent, then plan order). When
-- it is not urgent, nothing urgent is queued and it is taken: the common
-- case reads the claim index once, like a bare claim. When it is urgent,
-- urgent ranges go first only while they hold less than half of the live
-- leases; past that the first non-urgent range goes first (or `head`). Past
-- 2,000 open ranges under live holds the walk is left to
-- seed_range_pick_unheld. force_generic_plan: PostgreSQL kept re-planning the
-- prepared claim on every call (0.3 ms of planning for 0.2 ms of work).
CREATE OR REPLACE FUNCTION claim_seed_range(
    p_node_id bigint, p_ttl integer, p_urgent_below integer, p_rule_version integer)
RETURNS TABLE (out_id bigint, out_group text, out_next bigint, out_end bigint,
               out_epoch integer, out_group_id bigint)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    held_open bigint;
    head_priority integer;
    urgent_live bigint;
    all_live bigint;
    picked bigint;
BEGIN
    SELECT coalesce(sum(h.open_ranges), 0) INTO held_open
      FROM seed_range_hold AS h
     WHERE h.heartbeat_at >= now() - make_interval(secs => p_ttl);

    IF held_open > 2000 THEN
        picked := seed_range_pick_unheld(p_ttl);
    ELSE
        SELECT f.claimable_id, f.claimable_priority INTO picked, head_priority
          FROM seed_range_first_claimable(p_ttl, -2147483648) AS f;
        IF head_priority < p_urgent_below THEN
            SELECT count(*) FILTER (WHERE priority < p_urgent_below), count(*)
              INTO urgent_live, all_live
              FROM seed_range
             WHERE status = 'leased'
               AND heartbeat_at >= now() - make_interval(secs => p_ttl);
            IF urgent_live > 0 AND urgent_live * 2 >= all_live THEN
                picked := coalesce((SELECT f.claimable_id
                                      FROM seed_range_first_claimable(p_ttl, p_urgent_below) AS f),
                                   picked);
            END IF;
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

-- name: drop_claim_function
DROP FUNCTION IF EXISTS claim_seed_range(bigint, integer, integer, integer);
DROP FUNCTION IF EXISTS seed_range_first_claimable(integer, integer);
DROP FUNCTION IF EXISTS seed_range_pick_unheld(integer);
DROP VIEW IF EXISTS seed_range_hold;

-- name: drop_lane_aware_claim_function
-- The claim of migration 0006, which read the leases app's tables itself.
DROP FUNCTION IF EXISTS claim_seed_range(bigint, integer, integer, integer, integer, integer,
                                         integer, boolean);

-- name: create_window_lease_view
-- Leased ranges a higher layer handed out itself, by range and epoch (the
-- leases app: a lane's `next`). The claim's urgency mix counts range leases
-- only, so it leaves these out. Seeding hands out nothing else: empty here,
-- and the leases app replaces it with its hand-outs. Installed by migration
-- 0012.
CREATE OR REPLACE VIEW seed_range_window_lease AS
SELECT NULL::bigint AS range_id, NULL::integer AS epoch
 WHERE false;

-- name: create_pick_unheld_at_function
-- The crowded claim's way out (as create_pick_unheld_function), now asked for
-- the first queued range outside every hold at or above p_min_priority, with
-- its priority, so the claim's urgency mix applies in that mode too. With no
-- holds the claim never calls it; the leases app replaces it. Migration 0012.
CREATE OR REPLACE FUNCTION seed_range_pick_unheld(p_ttl integer, p_min_priority integer)
RETURNS TABLE (picked_id bigint, picked_priority integer)
LANGUAGE sql AS $$ SELECT NULL::bigint, NULL::integer WHERE false $$;

-- name: create_mixed_claim_function
-- Claim one queued range for a node, in one UPDATE of the picked row (as
-- create_claim_function, migration 0008, which this replaces in 0012).
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

-- name: create_claimable_function
-- The claim's candidate at or above p_min_priority, locked: the claim index's
-- first unheld range, or, when live holds cover much of the queue (crowded),
-- seed_range_pick_unheld's (which never walks past held ranges). Migration 0012.
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

-- name: drop_mixed_claim_hooks
-- Backwards from 0012 (after create_claim_function has put 0008's claim back).
DROP FUNCTION IF EXISTS seed_range_claimable(boolean, integer, integer);
DROP FUNCTION IF EXISTS seed_range_pick_unheld(integer, integer);
DROP VIEW IF EXISTS seed_range_window_lease;
