-- Range totals by status, from the trigger-kept summary (cheap at any size).

-- name: totals_by_status
SELECT status, sum(ranges)::bigint AS ranges, sum(articles)::bigint AS articles,
       sum(reached)::bigint AS reached, sum(headers)::bigint AS headers,
       sum(files)::bigint AS files
  FROM group_range_summary
 GROUP BY status;

-- name: leased_progress
-- Progress of the ranges in work, which the summary does not follow batch by batch.
SELECT count(*) AS ranges, coalesce(sum(next_id - start_id), 0)::bigint AS reached,
       coalesce(sum(headers), 0)::bigint AS headers, coalesce(sum(files), 0)::bigint AS files
  FROM seed_range
 WHERE status = 'leased';
