"""The range claim as a database function that always runs its generic plan.

Prepared once per connection, the claim statement was still planned again on
every call: PostgreSQL kept choosing custom plans for it (its parameters look
worth specializing on), at 0.3 ms of planning for 0.2 ms of execution, which
under concurrency cost over a third of the claim rate. PostgreSQL has no
per-statement hint, but a function's SET clause applies to the statements in
it, and PL/pgSQL keeps their plans per session: `claim_seed_range` runs the
same one-statement claim with `plan_cache_mode = force_generic_plan`.
seeding/sql/ranges.sql (`lease_range`) calls it; docs/performance.md has the
figures.
"""

from __future__ import annotations

from django.db import migrations

FORWARD = r"""
CREATE FUNCTION claim_seed_range(
    p_node_id bigint, p_ttl integer, p_urgent_below integer, p_rule_version integer,
    p_tail_max integer, p_history_min integer, p_history_max integer, p_capture_only boolean)
RETURNS TABLE (out_id bigint, out_group text, out_next bigint, out_end bigint,
               out_epoch integer, out_group_id bigint)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    RETURN QUERY
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
    UPDATE seed_range AS r
       SET status = 'leased',
           node_id = p_node_id,
           epoch = r.epoch + 1,
           attempts = r.attempts + 1,
           leased_at = now(),
           heartbeat_at = now(),
           rule_version = p_rule_version
      FROM news_group AS g
     WHERE r.id = (SELECT id FROM candidate)
       AND g.id = r.group_id
    RETURNING r.id, g.name::text, r.next_id, r.end_id, r.epoch, r.group_id;
END
$$;
"""

BACKWARD = "DROP FUNCTION IF EXISTS claim_seed_range(bigint, integer, integer, integer, integer, integer, integer, boolean);"


class Migration(migrations.Migration):
    dependencies = [("seeding", "0005_seed_range_index_cleanup"), ("leases", "0002_lane_tracking")]
    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
