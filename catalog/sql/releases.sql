-- Releases: finding and creating a batch's releases before its files are
-- merged, recategorizing, reading their names again, counting them again,
-- listing the settled ones. The triggers that keep their totals are in
-- sql/schema.sql (docs/catalog.md, "Releases").

-- name: find_releases
-- The release of each wanted key whose posting window (widened by a day on
-- each side) overlaps the batch's dates for that key; the earliest such
-- (catalog_release_near, migration 0014).
SELECT w.key, catalog_release_near(w.key, w.first, w.last) AS id
  FROM unnest(%(keys)s::bytea[], %(firsts)s::bigint[], %(lasts)s::bigint[]) AS w(key, first, last);

-- name: lock_release_keys
-- Before creating releases: one transaction at a time creates a key's
-- release (held to commit; taken in key order so batches cannot deadlock).
SELECT count(pg_advisory_xact_lock(('x' || encode(substr(s.k, 1, 8), 'hex'))::bit(64)::bigint))
       AS locked
  FROM (SELECT k FROM unnest(%(keys)s::bytea[]) AS k ORDER BY k) AS s;

-- name: create_releases
-- Under the keys' locks, in a new snapshot: a release another batch created
-- meanwhile is found and used; the others are created empty (the triggers
-- add the files as the merge writes them). Its group and dates are set here
-- already, so the triggers' update changes no indexed column and stays HOT;
-- so are its name's fields (catalog.release_fields; per-release arrays come
-- as smallint[] literals) and the category decided from them.
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
)
SELECT key, id, false AS created FROM found WHERE id IS NOT NULL
UNION ALL
SELECT key, id, true FROM created;

-- name: drop_empty_releases
-- After the merge: a release this batch created that no file joined (its
-- files were all stored before with no release and the batch replayed
-- them, so the merge wrote nothing) is not kept.
DELETE FROM catalog_release WHERE id = ANY(%(ids)s::bigint[]) AND files_seen = 0;

-- name: lock_releases
-- The batch's releases, locked in id order before its files are merged: the
-- triggers then update them in whatever order, and two batches sharing
-- releases wait for each other instead of deadlocking (the advisory locks
-- of new keys come before, and no batch holds a release row while waiting
-- for one).
SELECT count(*) AS locked
  FROM (SELECT id FROM catalog_release WHERE id = ANY(%(ids)s::bigint[]) ORDER BY id FOR UPDATE)
       AS l;

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
SELECT count(*) AS releases FROM catalog_release WHERE fields_version < %(version)s;

-- name: releases_to_parse
-- The next releases whose fields were read under an older parser (keyset by
-- id: no index on fields_version, a rare pass in id order).
SELECT id, name, groups
  FROM catalog_release
 WHERE fields_version < %(version)s AND id > %(after)s
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
