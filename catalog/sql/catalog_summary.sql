-- The reads of the catalog's totals per group (group_catalog_summary) and its
-- recount. The triggers that keep it exact: sql/migrations/catalog_summary.sql.
-- docs/catalog.md ("Totals") explains the slots and the locks.

-- name: catalog_totals
-- The whole catalog: a sum over at most 8 small rows per group.
SELECT coalesce(sum(files), 0)::bigint AS files, coalesce(sum(complete), 0)::bigint AS complete,
       coalesce(sum(segments), 0)::bigint AS segments, coalesce(sum(bytes), 0)::bigint AS bytes,
       coalesce(sum(conflicts), 0)::bigint AS conflicts, max(newest) AS newest
  FROM group_catalog_summary;

-- name: catalog_totals_by_group
SELECT group_id, sum(files)::bigint AS files, sum(complete)::bigint AS complete,
       sum(segments)::bigint AS segments, sum(bytes)::bigint AS bytes,
       sum(conflicts)::bigint AS conflicts, max(newest) AS newest
  FROM group_catalog_summary
 WHERE group_id = ANY(%(group_ids)s::bigint[])
 GROUP BY group_id;

-- name: summary_group_ids
-- Every group, in id order, from %(after)s on (the rebuild's cursor).
SELECT id, name FROM news_group WHERE id > %(after)s ORDER BY id LIMIT %(limit)s;

-- name: lock_group_catalog_summary
-- Exclusive: waits until no writer of the group is between its trigger and
-- its commit, and keeps new ones waiting until this transaction ends.
SELECT group_catalog_summary_lock(%(group_id)s, true);

-- name: rebuild_group_catalog_summary
-- Under lock_group_catalog_summary: the group's totals as kept and as
-- counted from the table, and the kept ones replaced by the count (one slot).
-- A batch still inside its merge adds its own deltas after this commits.
WITH counted AS (
    SELECT count(*)::bigint AS files, count(*) FILTER (WHERE complete)::bigint AS complete,
           coalesce(sum(segments), 0)::bigint AS segments, coalesce(sum(bytes), 0)::bigint AS bytes,
           coalesce(sum(conflicts), 0)::bigint AS conflicts, max(date) AS newest
      FROM catalog_file
     WHERE group_id = %(group_id)s
), kept AS (
    SELECT coalesce(sum(files), 0)::bigint AS files, coalesce(sum(complete), 0)::bigint AS complete,
           coalesce(sum(segments), 0)::bigint AS segments, coalesce(sum(bytes), 0)::bigint AS bytes,
           coalesce(sum(conflicts), 0)::bigint AS conflicts, max(newest) AS newest,
           count(*) AS slots
      FROM group_catalog_summary
     WHERE group_id = %(group_id)s
), cleared AS (
    DELETE FROM group_catalog_summary
     WHERE group_id = %(group_id)s AND (slot <> 0 OR (SELECT files FROM counted) = 0)
), put AS (
    INSERT INTO group_catalog_summary AS t
           (group_id, slot, files, complete, segments, bytes, conflicts, newest)
    SELECT %(group_id)s, 0, files, complete, segments, bytes, conflicts, newest
      FROM counted
     WHERE files > 0
    ON CONFLICT (group_id, slot) DO UPDATE
       SET files = excluded.files, complete = excluded.complete, segments = excluded.segments,
           bytes = excluded.bytes, conflicts = excluded.conflicts, newest = excluded.newest
)
SELECT kept.files AS kept_files, kept.complete AS kept_complete, kept.segments AS kept_segments,
       kept.bytes AS kept_bytes, kept.conflicts AS kept_conflicts, kept.newest AS kept_newest,
       kept.slots,
       counted.files, counted.complete, counted.segments, counted.bytes, counted.conflicts,
       counted.newest
  FROM kept, counted;
