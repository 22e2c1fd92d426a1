-- The throughput rollup: minutes folded into hours, old minutes dropped.

-- name: prune_rollup_minutes
-- Minute rows older than the hours kept: the chart reads folded hours and
-- everything else reads the last hour, so old minutes only take space.
-- Minutes not yet folded into the per-node totals are kept (fold_node_totals
-- runs first in each round).
DELETE FROM header_rollup
 WHERE bucket < now() - make_interval(hours => %(keep_hours)s)
   AND bucket < coalesce((SELECT folded_before FROM header_fold WHERE id = 1), '-infinity');

-- name: fold_rollup_hours
-- Completed hours of the last day not folded yet (an hour is folded five
-- minutes after it ends, when no batch of it can still commit), one
-- aggregate per missing hour over the bucket index.
INSERT INTO header_rollup_hour (hour, headers, batches)
SELECT h.hour, s.headers, s.batches
  FROM generate_series(date_trunc('hour', now()) - interval '24 hours',
                       date_trunc('hour', now() - interval '5 minutes') - interval '1 hour',
                       interval '1 hour') AS h(hour)
 CROSS JOIN LATERAL (SELECT coalesce(sum(headers), 0)::bigint AS headers,
                            coalesce(sum(batches), 0)::bigint AS batches
                       FROM header_rollup
                      WHERE bucket >= h.hour AND bucket < h.hour + interval '1 hour') AS s
 WHERE NOT EXISTS (SELECT 1 FROM header_rollup_hour AS x WHERE x.hour = h.hour)
ON CONFLICT (hour) DO NOTHING;

-- name: ensure_header_fold
INSERT INTO header_fold (id, folded_before) VALUES (1, '-infinity') ON CONFLICT (id) DO NOTHING;

-- name: fold_node_totals
-- Minutes from the mark to ten minutes ago (no batch of them can still
-- commit) are added to the nodes' all-time totals, and the mark moves on,
-- in one statement: each minute is folded once. Answers the rows folded.
WITH mark AS (
    SELECT folded_before AS old, date_trunc('minute', now() - interval '10 minutes') AS new
      FROM header_fold
     WHERE id = 1
       FOR UPDATE
), sums AS (
    SELECT r.node_id, sum(r.headers)::bigint AS headers, sum(r.batches)::bigint AS batches,
           count(*) AS rows
      FROM header_rollup AS r, mark
     WHERE r.bucket >= mark.old AND r.bucket < mark.new
     GROUP BY r.node_id
), added AS (
    INSERT INTO node_header_total AS t (node_id, headers, batches)
    SELECT node_id, headers, batches FROM sums
    ON CONFLICT (node_id)
    DO UPDATE SET headers = t.headers + excluded.headers, batches = t.batches + excluded.batches
), moved AS (
    UPDATE header_fold AS f SET folded_before = mark.new FROM mark
     WHERE f.id = 1 AND mark.new > mark.old
)
SELECT coalesce(sum(rows), 0)::bigint AS folded FROM sums;
