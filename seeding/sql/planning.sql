-- Planning: which articles the ranges of a group already cover, and the bulk
-- insert of new ranges. Planners serialize on one advisory lock held for
-- the transaction, so reading coverage and inserting cannot interleave with
-- another plan.

-- name: planning_lock
-- One key for every planner (seed plans, the tail planner, the admin page).
SELECT pg_advisory_xact_lock(hashtext('seeding.plan_ranges')::bigint) AS locked;

-- name: database_now
SELECT now() AS now, extract(epoch FROM now())::bigint AS epoch;

-- name: covered_spans
-- Every range of these groups in any state: done, failed and leased ranges
-- are covered too (a failed range is requeued by an operator, not replanned).
SELECT group_id, start_id, end_id
  FROM seed_range
 WHERE group_id = ANY(%(group_ids)s::bigint[])
 ORDER BY group_id, start_id;

-- name: highest_planned
SELECT group_id, max(end_id) AS highest
  FROM seed_range
 WHERE group_id = ANY(%(group_ids)s::bigint[])
 GROUP BY group_id;

-- name: backfill_points
-- The backfill's resume point per group, locked so a running backfill cannot
-- move it between this read and the hand-off below.
SELECT id, backfill_next_id, backfill_until_id
  FROM news_group
 WHERE id = ANY(%(group_ids)s::bigint[])
   AND backfill_next_id IS NOT NULL
 FOR UPDATE;

-- name: hand_off_backfill
-- The plan takes over the rest of a running backfill: it stops where it is.
UPDATE news_group
   SET backfill_until_id = backfill_next_id
 WHERE id = ANY(%(group_ids)s::bigint[])
   AND backfill_next_id IS NOT NULL
   AND backfill_until_id IS NOT NULL
   AND backfill_next_id > backfill_until_id;

-- name: copy_ranges
-- Rows in claim order: ids (and so the order within a priority) follow it.
COPY seed_range (group_id, start_id, end_id, next_id, status, priority, capture,
                 epoch, attempts, headers, files, fragments, error, created_at)
FROM STDIN
