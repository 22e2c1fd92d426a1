"""The range claim as a database function: generic plan, bounded past held lanes.

Generic plan. Prepared once per connection, the claim statement was still
planned again on every call: PostgreSQL kept choosing custom plans for it, at
0.3 ms of planning for 0.2 ms of execution, which under concurrency cost over
a third of the claim rate. PostgreSQL has no per-statement hint, but a
function's SET clause applies to the statements in it, and PL/pgSQL keeps
their plans per session: `claim_seed_range` runs with
`plan_cache_mode = force_generic_plan`.

Held lanes. The claim skips ranges whose lane a live group lease holds, one
probe each, walking the claim index in priority and plan order. Planning
interleaves groups, so that is a step or two, except when one big group's
held lane owns most of the queue: then every range lease walked all of it
(138 ms at 200,000 held ranges, bench/bench_held_lane.py). So the function
first counts the open ranges of live-held lanes (held lanes are few:
group_lane_node_idx finds them, group_lane_work counts them). Up to
HELD_WALK_LIMIT it picks from the claim index; past it, it asks the free
lanes in urgency order (most urgent, then most planned work) for their newest
queued range, and the urgency mix is not applied.

Either way the picked range is locked (FOR UPDATE SKIP LOCKED) and claimed by
one UPDATE. seeding/sql/ranges.sql (`lease_range`) calls the function;
docs/performance.md has the figures.
"""

from __future__ import annotations

from django.db import migrations

HELD_WALK_LIMIT = 2000

FORWARD = r"""
CREATE FUNCTION claim_seed_range(
    p_node_id bigint, p_ttl integer, p_urgent_below integer, p_rule_version integer,
    p_tail_max integer, p_history_min integer, p_history_max integer, p_capture_only boolean)
RETURNS TABLE (out_id bigint, out_group text, out_next bigint, out_end bigint,
               out_epoch integer, out_group_id bigint)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    held_open bigint;
    lane_row record;
    picked bigint;
BEGIN
    SELECT coalesce(sum(w.ranges), 0) INTO held_open
      FROM group_lane AS gl
      JOIN group_lane_work AS w ON w.group_id = gl.group_id AND w.lane = gl.lane
     WHERE gl.node_id IS NOT NULL
       AND gl.heartbeat_at >= now() - make_interval(secs => p_ttl);

    IF held_open <= HELD_WALK_LIMIT THEN
        -- `head` is the first claimable entry of the claim index. When it is
        -- not urgent, nothing urgent is queued and it is taken (one read of
        -- the index, like a bare claim). When it is urgent, urgent ranges go
        -- first only while they hold less than half of the live leases; past
        -- that the first non-urgent range goes first (or `head`). The CASE
        -- runs the live count and `normal` only when it needs them.
        WITH head AS MATERIALIZED (
            SELECT id, priority FROM seed_range
             WHERE status = 'queued'
               AND NOT EXISTS (SELECT 1 FROM group_lane AS gl
                                WHERE gl.group_id = seed_range.group_id
                                  AND gl.lane = group_lane_of(seed_range.priority, seed_range.capture,
                                                              p_tail_max, p_history_min,
                                                              p_history_max, p_capture_only)
                                  AND gl.node_id IS NOT NULL
                                  AND gl.heartbeat_at >= now() - make_interval(secs => p_ttl))
             ORDER BY priority, id
             LIMIT 1
             FOR UPDATE SKIP LOCKED
        ), normal AS MATERIALIZED (
            SELECT id FROM seed_range
             WHERE status = 'queued'
               AND priority >= p_urgent_below
               AND NOT EXISTS (SELECT 1 FROM group_lane AS gl
                                WHERE gl.group_id = seed_range.group_id
                                  AND gl.lane = group_lane_of(seed_range.priority, seed_range.capture,
                                                              p_tail_max, p_history_min,
                                                              p_history_max, p_capture_only)
                                  AND gl.node_id IS NOT NULL
                                  AND gl.heartbeat_at >= now() - make_interval(secs => p_ttl))
             ORDER BY priority, id
             LIMIT 1
             FOR UPDATE SKIP LOCKED
        ), candidate AS MATERIALIZED (
            SELECT CASE
                     WHEN head.priority >= p_urgent_below THEN head.id
                     WHEN (SELECT count(*) FILTER (WHERE priority < p_urgent_below) = 0
                                  OR count(*) FILTER (WHERE priority < p_urgent_below) * 2 < count(*)
                             FROM seed_range
                            WHERE status = 'leased'
                              AND heartbeat_at >= now() - make_interval(secs => p_ttl))
                     THEN head.id
                     ELSE coalesce((SELECT id FROM normal), head.id)
                   END AS id
              FROM head
        )
        SELECT candidate.id INTO picked FROM candidate;
    ELSE
        -- Held lanes own much of the queue: ask the free lanes instead.
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
               AND group_lane_of(s.priority, s.capture, p_tail_max, p_history_min,
                                 p_history_max, p_capture_only) = lane_row.lane
             ORDER BY s.start_id DESC
             LIMIT 1
               FOR UPDATE SKIP LOCKED;
            EXIT WHEN picked IS NOT NULL;
        END LOOP;
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
""".replace("HELD_WALK_LIMIT", str(HELD_WALK_LIMIT))

BACKWARD = (
    "DROP FUNCTION IF EXISTS claim_seed_range("
    "bigint, integer, integer, integer, integer, integer, integer, boolean);"
)


class Migration(migrations.Migration):
    dependencies = [("seeding", "0005_seed_range_index_cleanup"), ("leases", "0002_lane_tracking")]
    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
