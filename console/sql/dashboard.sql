-- Reads of the operators' dashboard (seeding/selectors.py: dashboard). Every
-- query is bounded: totals come from group_range_summary (a few rows per
-- group; the catalog's from group_catalog_summary, read by
-- catalog.selectors), throughput from header_rollup by bucket,
-- coverage from index probes on one page of groups; only leased ranges (few,
-- a partial index) are read from seed_range whole.

-- name: group_page
-- One page of groups: the most headers in the last hour first, then the most
-- open (queued or leased) articles, then by name. A search keeps the groups
-- whose name contains the text. Only what orders the groups is read for all
-- of them (open articles from the summary's queued and leased rows, found by
-- key: no aggregate); the page's own totals are summed for its groups alone.
-- 10 M ranges, 10,000 groups: 49 ms against 112 ms when every group's totals
-- were summed and counted by a window (docs/performance.md). The page's totals
-- are MATERIALIZED: once inlined, a planner that believed the groups nearly
-- empty (statistics not yet analyzed) summed them again for every row of the page.
WITH recent AS (
    SELECT group_id, sum(headers)::bigint AS headers
      FROM header_rollup
     WHERE bucket >= now() - interval '1 hour'
     GROUP BY group_id
), page AS (
    SELECT g.id, g.name, g.active,
           coalesce(recent.headers, 0) AS recent_headers,
           coalesce(queued.articles, 0) + coalesce(leased.articles, 0) AS open
      FROM news_group AS g
      LEFT JOIN recent ON recent.group_id = g.id
      LEFT JOIN group_range_summary AS queued ON queued.group_id = g.id AND queued.status = 'queued'
      LEFT JOIN group_range_summary AS leased ON leased.group_id = g.id AND leased.status = 'leased'
     WHERE %(search)s = '' OR strpos(lower(g.name), lower(%(search)s)) > 0
     ORDER BY recent_headers DESC, open DESC, g.name
     LIMIT %(limit)s OFFSET %(offset)s
), work AS MATERIALIZED (
    SELECT group_id,
           sum(ranges)::bigint AS ranges,
           sum(articles)::bigint AS planned,
           sum(reached)::bigint AS reached,
           sum(headers)::bigint AS headers,
           sum(files)::bigint AS files,
           coalesce(sum(ranges) FILTER (WHERE status = 'done'), 0)::bigint AS done_ranges,
           coalesce(sum(ranges) FILTER (WHERE status = 'leased'), 0)::bigint AS leased_ranges,
           coalesce(sum(ranges) FILTER (WHERE status = 'queued'), 0)::bigint AS queued_ranges,
           coalesce(sum(ranges) FILTER (WHERE status = 'failed'), 0)::bigint AS failed_ranges
      FROM group_range_summary
     WHERE group_id IN (SELECT id FROM page)
     GROUP BY group_id
)
SELECT page.id, page.name, page.active, page.recent_headers,
       coalesce(work.ranges, 0) AS ranges, coalesce(work.planned, 0) AS planned,
       coalesce(work.reached, 0) AS reached, coalesce(work.headers, 0) AS headers,
       coalesce(work.files, 0) AS files, page.open,
       coalesce(work.done_ranges, 0) AS done_ranges,
       coalesce(work.leased_ranges, 0) AS leased_ranges,
       coalesce(work.queued_ranges, 0) AS queued_ranges,
       coalesce(work.failed_ranges, 0) AS failed_ranges,
       (SELECT count(*) FROM news_group AS m
         WHERE %(search)s = '' OR strpos(lower(m.name), lower(%(search)s)) > 0) AS matching
  FROM page
  LEFT JOIN work ON work.group_id = page.id
 ORDER BY page.recent_headers DESC, page.open DESC, page.name;

-- name: leased_in_groups
-- The ranges in work of some groups: their live progress and resume points.
SELECT group_id, id, start_id, end_id, next_id, headers, files
  FROM seed_range
 WHERE status = 'leased' AND group_id = ANY(%(group_ids)s::bigint[]);

-- name: coverage_bins
-- Per group, its article span (first range's start to last range's end) cut
-- into %(bins)s bins; each bin shows the range covering its middle article
-- (an index probe on seed_range_group_start_idx), or a gap. Bounded:
-- groups x bins probes, however many ranges a group has.
WITH span AS (
    SELECT g.id AS group_id, lo.start_id AS lo, hi.end_id AS hi
      FROM unnest(%(group_ids)s::bigint[]) AS g(id)
     CROSS JOIN LATERAL (SELECT start_id FROM seed_range
                          WHERE group_id = g.id ORDER BY start_id LIMIT 1) AS lo
     CROSS JOIN LATERAL (SELECT end_id FROM seed_range
                          WHERE group_id = g.id ORDER BY start_id DESC LIMIT 1) AS hi
), probe AS (
    SELECT span.group_id, span.lo, span.hi, b.bin,
           span.lo + ((span.hi - span.lo + 1)::numeric * (2 * b.bin + 1) / (2 * %(bins)s))::bigint AS article
      FROM span
     CROSS JOIN generate_series(0, %(bins)s - 1) AS b(bin)
)
SELECT probe.group_id, probe.lo, probe.hi, probe.bin,
       CASE WHEN r.id IS NULL OR r.end_id < probe.article THEN 'gap' ELSE r.status END AS status,
       r.start_id, r.end_id, r.next_id
  FROM probe
  LEFT JOIN LATERAL (SELECT id, status, start_id, end_id, next_id FROM seed_range
                      WHERE group_id = probe.group_id AND start_id <= probe.article
                      ORDER BY start_id DESC LIMIT 1) AS r ON true
 ORDER BY probe.group_id, probe.bin;

-- name: headers_per_hour
-- The last 24 hours. An hour folded into header_rollup_hour is read there;
-- any other (the current hour, and finished hours the periodic upkeep has
-- not folded yet: seeding/maintenance.py) is summed from its minutes over
-- the bucket index. The `f.hour IS NULL` test is a one-time filter, so a
-- folded hour costs no scan of its minutes. Reading never folds: the
-- dashboard is a GET.
SELECT hours.hour, coalesce(f.headers, live.headers)::bigint AS headers
  FROM generate_series(date_trunc('hour', now()) - interval '23 hours',
                       date_trunc('hour', now()), interval '1 hour') AS hours(hour)
  LEFT JOIN header_rollup_hour AS f ON f.hour = hours.hour
 CROSS JOIN LATERAL (SELECT coalesce(sum(m.headers), 0)::bigint AS headers
                       FROM header_rollup AS m
                      WHERE f.hour IS NULL
                        AND m.bucket >= hours.hour AND m.bucket < hours.hour + interval '1 hour') AS live
 ORDER BY hours.hour;

-- name: node_counts
SELECT count(*) FILTER (WHERE NOT disabled AND last_seen_at >= now() - make_interval(secs => %(ttl)s)) AS live,
       count(*) FILTER (WHERE NOT disabled AND (last_seen_at IS NULL OR last_seen_at < now() - make_interval(secs => %(ttl)s))) AS quiet,
       count(*) FILTER (WHERE disabled) AS disabled
  FROM seed_node;
