-- Releases: finding and creating a batch's releases before its files are
-- merged, recategorizing, reading their names again, counting them again,
-- listing the settled ones. The triggers that keep their totals are in
-- sql/schema.sql (docs/catalog.md, "Releases").

-- name: find_releases
-- Each key's release near the batch's dates (catalog_release_near). All
-- found: locked here in id order. A key missing: no row locked; the missing
-- keys' advisory locks are taken, in key order, for create_releases
-- (catalog/releases.py says why). Kept short: pg_stat_activity shows 1 KB.
WITH found AS (
    SELECT w.key, catalog_release_near(w.key, w.first, w.last) AS id
      FROM unnest(%(keys)s::bytea[], %(firsts)s::bigint[], %(lasts)s::bigint[])
           AS w(key, first, last)
), locked AS (
    SELECT r.id
      FROM catalog_release AS r
     WHERE r.id IN (SELECT id FROM found)
       AND NOT EXISTS (SELECT FROM found WHERE id IS NULL)
     ORDER BY r.id
       FOR UPDATE
), keyed AS (
    SELECT count(pg_advisory_xact_lock(('x' || encode(substr(s.key, 1, 8), 'hex'))::bit(64)::bigint))
           AS keys
      FROM (SELECT key FROM found WHERE id IS NULL ORDER BY key) AS s
)
SELECT key, id, (SELECT count(*) FROM locked) AS locked, (SELECT keys FROM keyed) AS keyed
  FROM found;

-- name: create_releases
-- Under the keys' advisory locks (find_releases took them), in a new
-- snapshot: a release another batch created meanwhile is found and used;
-- the others are created empty (the triggers add the files as the merge
-- writes them). Its group and dates are set here already, so the triggers'
-- update changes no indexed column and stays HOT; so are its name's fields
-- (catalog.release_fields; per-release arrays come as smallint[] literals)
-- and the category decided from them. The batch's existing releases
-- (`existing`, found before) and those found here are locked in id order in
-- the same statement, before the merge: the triggers then update them in
-- whatever order, and two batches sharing releases wait for each other
-- instead of deadlocking.
WITH wanted AS (
    SELECT * FROM unnest(%(keys)s::bytea[], %(names)s::text[], %(posters)s::text[],
                         %(files_expected)s::int[], %(firsts)s::bigint[], %(lasts)s::bigint[],
                         %(categories)s::int[], %(kinds)s::text[], %(title_keys)s::text[],
                         %(years)s::smallint[], %(seasons)s::text[], %(episodes)s::text[],
                         %(absolute_episodes)s::text[], %(air_dates)s::date[],
                         %(full_seasons)s::boolean[], %(resolutions)s::smallint[],
                         %(sources)s::text[], %(codecs)s::text[], %(release_groups)s::text[],
                         %(propers)s::boolean[], %(repacks)s::boolean[])
           AS w(key, name, poster, files_expected, first, last, category, kind, title_key, year,
                seasons, episodes, absolute_episodes, air_date, full_season, resolution, source,
                codec, release_group, proper, repack)
), found AS (
    SELECT w.*, catalog_release_near(w.key, w.first, w.last) AS id
      FROM wanted AS w
), created AS (
    INSERT INTO catalog_release (key, name, poster, posted, last_posted, size, files_expected,
                                 files_seen, segments_present, segments_expected, has_par2,
                                 has_nfo, category, category_version, groups, created_at,
                                 updated_at, kind, title_key, year, seasons, episodes,
                                 absolute_episodes, air_date, full_season, resolution, source,
                                 codec, release_group, proper, repack, fields_version, listed)
    SELECT key, name, poster, to_timestamp(first), to_timestamp(last), 0, files_expected, 0, 0,
           0, false, false, category, %(rule_version)s, ARRAY[%(group)s::text], now(), now(),
           kind, title_key, year, seasons::smallint[], episodes::smallint[],
           absolute_episodes::smallint[], air_date, full_season, resolution, source, codec,
           release_group, proper, repack, %(fields_version)s, false
      FROM found
     WHERE id IS NULL
     ORDER BY key
    RETURNING key, id
), locked AS (
    SELECT r.id
      FROM catalog_release AS r
     WHERE r.id = ANY(%(existing)s::bigint[] || ARRAY(SELECT id FROM found WHERE id IS NOT NULL))
     ORDER BY r.id
       FOR UPDATE
)
SELECT key, id, false AS created FROM found WHERE id IS NOT NULL
UNION ALL
SELECT key, id, true FROM created
UNION ALL  -- always run, so the lock is taken whatever the other rows: (no key, count locked)
SELECT NULL, count(*), NULL FROM locked;

-- name: drop_empty_releases
-- After the merge: a release this batch created that no file joined (its
-- files were all stored before with no release and the batch replayed
-- them, so the merge wrote nothing) is not kept.
DELETE FROM catalog_release WHERE id = ANY(%(ids)s::bigint[]) AND files_seen = 0;

-- name: releases_to_recategorize
-- The next releases decided under an older rule set (keyset by id).
SELECT id, name, groups
  FROM catalog_release
 WHERE category_version < %(version)s AND id > %(after)s
 ORDER BY id
 LIMIT %(limit)s;

-- name: count_releases_to_recategorize
SELECT count(*) AS releases FROM catalog_release WHERE category_version < %(version)s;

-- name: set_release_categories
-- Rows locked in id order; a row a batch holds is waited for (briefly).
WITH target AS (
    SELECT r.id, u.category
      FROM catalog_release AS r
      JOIN unnest(%(ids)s::bigint[], %(categories)s::int[]) AS u(id, category) ON u.id = r.id
     WHERE r.category_version < %(version)s
     ORDER BY r.id
       FOR UPDATE OF r
)
UPDATE catalog_release AS r
   SET category = t.category, category_version = %(version)s
  FROM target AS t
 WHERE r.id = t.id;

-- name: count_releases_to_parse
SELECT count(*) AS releases
  FROM catalog_release
 WHERE fields_version < %(version)s AND id > %(after)s;

-- name: releases_to_parse
-- The next releases whose fields were read under an older parser (keyset by
-- id: no index on fields_version, a rare pass in id order), up to id
-- %(upto)s when given (the upkeep's: the primary key's range ends there).
SELECT id, name, groups
  FROM catalog_release
 WHERE fields_version < %(version)s AND id > %(after)s
   AND (%(upto)s::bigint IS NULL OR id <= %(upto)s::bigint)
 ORDER BY id
 LIMIT %(limit)s;

-- name: set_release_fields
-- A batch of the backfill: rows locked in id order (a row a batch holds is
-- waited for, briefly), only those still read under an older parser; the
-- category decided from the fields, under rule set `rule_version`.
WITH target AS (
    SELECT r.id, r.category AS was, u.*
      FROM catalog_release AS r
      JOIN unnest(%(ids)s::bigint[], %(categories)s::int[], %(kinds)s::text[],
                  %(title_keys)s::text[], %(years)s::smallint[], %(seasons)s::text[],
                  %(episodes)s::text[], %(absolute_episodes)s::text[], %(air_dates)s::date[],
                  %(full_seasons)s::boolean[], %(resolutions)s::smallint[], %(sources)s::text[],
                  %(codecs)s::text[], %(release_groups)s::text[], %(propers)s::boolean[],
                  %(repacks)s::boolean[])
           AS u(release_id, category, kind, title_key, year, seasons, episodes,
                absolute_episodes, air_date, full_season, resolution, source, codec,
                release_group, proper, repack)
        ON u.release_id = r.id
     WHERE r.fields_version < %(fields_version)s
     ORDER BY r.id
       FOR UPDATE OF r
), changed AS (
    UPDATE catalog_release AS r
       SET kind = t.kind, title_key = t.title_key, year = t.year,
           seasons = t.seasons::smallint[], episodes = t.episodes::smallint[],
           absolute_episodes = t.absolute_episodes::smallint[], air_date = t.air_date,
           full_season = t.full_season, resolution = t.resolution, source = t.source,
           codec = t.codec, release_group = t.release_group, proper = t.proper,
           repack = t.repack, fields_version = %(fields_version)s,
           -- A newer rule set's decision (recategorize meanwhile) stays.
           category = CASE WHEN r.category_version <= %(rule_version)s THEN t.category
                           ELSE r.category END,
           category_version = greatest(r.category_version, %(rule_version)s)
      FROM target AS t
     WHERE r.id = t.id
    RETURNING t.was <> r.category AS recategorized
)
SELECT count(*) AS releases, count(*) FILTER (WHERE recategorized) AS recategorized
  FROM changed;

-- name: count_releases
SELECT count(*) AS releases FROM catalog_release;

-- name: lock_releases_to_recount
-- A batch of the recount, first statement: the next releases by id, locked
-- in id order (a batch writing one of them is waited for; batches lock
-- theirs in id order too, so neither can deadlock the other).
SELECT id
  FROM catalog_release
 WHERE id > %(after)s
 ORDER BY id
 LIMIT %(limit)s
   FOR UPDATE;

-- name: lock_uncounted_releases
-- The upkeep's recount after an upgrade: the next releases not counted
-- again since migration 0005, by its partial index, locked in id order.
SELECT id
  FROM catalog_release
 WHERE NOT counted AND id > %(after)s
 ORDER BY id
 LIMIT %(limit)s
   FOR UPDATE;

-- name: recount_releases
-- Second statement, under those locks and in a new snapshot (READ
-- COMMITTED): a batch that committed while the first waited is counted.
-- Only rows whose totals or listing change are written (and those not
-- counted since the upgrade, marked counted). A release is listed
-- when its true totals are complete; one listed before stays listed if they
-- still reach the completion floor (a release listed on a double count of a
-- cross-post does not). One left unlisted that reaches the floor is queued,
-- as of its last batch, for the upkeep to list once quiet.
WITH counted AS (
    SELECT c.*, r.files_expected, r.listed AS was_listed, r.updated_at,
           catalog_release_complete(c.files, r.files_expected, c.segments, c.expected)
           OR (r.listed AND catalog_release_settles(c.files, r.files_expected, c.segments,
                                                    c.expected, %(floor)s)) AS listed
      FROM catalog_release_counts(%(ids)s::bigint[]) AS c
      JOIN catalog_release AS r ON r.id = c.release_id
), changed AS (
    UPDATE catalog_release AS r
       SET files_seen = c.files, segments_present = c.segments, segments_expected = c.expected,
           size = c.bytes, posted = c.first, last_posted = c.last, has_par2 = c.par2,
           has_nfo = c.nfo, groups = c.groups, listed = c.listed, counted = true
      FROM counted AS c
     WHERE r.id = c.release_id
       AND (r.files_seen, r.segments_present, r.segments_expected, r.size, r.posted,
            r.last_posted, r.has_par2, r.has_nfo, r.groups, r.listed, r.counted)
           IS DISTINCT FROM (c.files, c.segments, c.expected, c.bytes, c.first, c.last, c.par2,
                             c.nfo, c.groups, c.listed, true)
    RETURNING c.was_listed, c.listed
), queued AS (
    INSERT INTO catalog_release_settling (release_id, touched_at)
    SELECT release_id, updated_at
      FROM counted
     WHERE NOT listed
       AND catalog_release_settles(files, files_expected, segments, expected, %(floor)s)
     ORDER BY release_id
    ON CONFLICT (release_id) DO NOTHING
)
SELECT count(*) AS changed,
       count(*) FILTER (WHERE listed AND NOT was_listed) AS listed,
       count(*) FILTER (WHERE was_listed AND NOT listed) AS unlisted
  FROM changed;

-- name: settle_releases
-- The upkeep: the queued releases no batch has touched for the settle time,
-- oldest first (the index on touched_at; LIMIT bounds the statement). Queue
-- rows and releases are taken with SKIP LOCKED, so a batch is never waited
-- for: a release a batch holds keeps its row (the batch moves its
-- touched_at). The ones at the completion floor are listed; the rows taken
-- are dropped, with those of releases deleted since. Every read of
-- catalog_release is by its primary key (`= ANY(ARRAY(…))`: an IN over the
-- CTE would be planned as a hash join over the whole table).
WITH due AS (
    SELECT release_id
      FROM catalog_release_settling
     WHERE touched_at <= now() - make_interval(mins => %(settle_minutes)s)
     ORDER BY touched_at
     LIMIT %(limit)s
       FOR UPDATE SKIP LOCKED
), held AS (
    SELECT r.id
      FROM catalog_release AS r
     WHERE r.id = ANY (ARRAY(SELECT release_id FROM due))
     ORDER BY r.id
       FOR UPDATE SKIP LOCKED
), listed AS (
    UPDATE catalog_release AS r
       SET listed = true
      FROM held
     WHERE r.id = held.id
       AND NOT r.listed
       AND catalog_release_settles(r.files_seen, r.files_expected, r.segments_present,
                                   r.segments_expected, %(floor)s)
    RETURNING r.id
), skipped AS (
    -- Releases that exist but a batch holds: their rows stay queued.
    SELECT r.id
      FROM catalog_release AS r
     WHERE r.id = ANY (ARRAY(SELECT release_id FROM due))
    EXCEPT
    SELECT id FROM held
), dropped AS (
    DELETE FROM catalog_release_settling AS s
     WHERE s.release_id = ANY (ARRAY(SELECT release_id FROM due
                                     EXCEPT
                                     SELECT id FROM skipped))
    RETURNING 1
)
SELECT (SELECT count(*) FROM due) AS taken, (SELECT count(*) FROM dropped) AS dropped,
       (SELECT count(*) FROM listed) AS listed;

-- name: backfill_position
-- The upkeep's backfill of the name fields, or of the counts: where it is
-- (catalog_release_backfill).
SELECT version, after, upto FROM catalog_release_backfill WHERE name = %(name)s;

-- name: take_backfill_position
-- The same, locked for this batch's transaction; nothing when another
-- process's batch holds it (that process goes on, this one stops its run).
SELECT version, after, upto
  FROM catalog_release_backfill
 WHERE name = %(name)s
   FOR UPDATE SKIP LOCKED;

-- name: create_backfill
-- A backfill's row, empty (version -1: started by the first batch).
INSERT INTO catalog_release_backfill (name, version, after, upto)
VALUES (%(name)s, -1, 0, 0)
ON CONFLICT (name) DO NOTHING;

-- name: start_backfill
-- A backfill (for parser version %(version)s) from the oldest release to the
-- newest now (the primary key's first and last entries).
UPDATE catalog_release_backfill
   SET version = %(version)s,
       after = coalesce((SELECT min(id) FROM catalog_release), 1) - 1,
       upto = coalesce((SELECT max(id) FROM catalog_release), 0)
 WHERE name = %(name)s
RETURNING version, after, upto;

-- name: any_uncounted_after
-- Whether a release past %(after)s is still not counted (one probe of the
-- partial index, no lock).
SELECT EXISTS (SELECT 1 FROM catalog_release WHERE NOT counted AND id > %(after)s) AS left;

-- name: move_backfill
UPDATE catalog_release_backfill SET after = %(after)s WHERE name = %(name)s;

-- name: uncounted_estimate
-- The releases left to count again, as the planner's statistics estimate
-- them: the partial index's entries at its last vacuum or analyze (no scan).
SELECT greatest(c.reltuples, 0)::bigint AS estimate
  FROM pg_class AS c
 WHERE c.oid = 'catalog_release_uncounted_idx'::regclass;

-- name: newest_release_id
SELECT coalesce(max(id), 0) AS id FROM catalog_release;
