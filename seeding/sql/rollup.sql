-- The throughput rollup: minutes folded into hours, old minutes dropped.

-- name: prune_rollup_minutes
-- Minute rows older than the hours kept: the chart reads folded hours and
-- everything else reads the last hour, so old minutes only take space.
DELETE FROM header_rollup WHERE bucket < now() - make_interval(hours => %(keep_hours)s);

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
