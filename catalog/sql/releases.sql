-- Releases: finding and creating a batch's releases before its files are
-- merged, recategorizing. The triggers that keep their totals are in
-- sql/migrations/releases.sql (docs/catalog.md, "Releases").

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
-- already, so the triggers' update changes no indexed column and stays HOT.
WITH wanted AS (
    SELECT * FROM unnest(%(keys)s::bytea[], %(names)s::text[], %(posters)s::text[],
                         %(files_expected)s::int[], %(firsts)s::bigint[], %(lasts)s::bigint[],
                         %(categories)s::int[])
           AS w(key, name, poster, files_expected, first, last, category)
), found AS (
    SELECT w.*, catalog_release_near(w.key, w.first, w.last) AS id
      FROM wanted AS w
), created AS (
    INSERT INTO catalog_release (key, name, poster, posted, last_posted, size, files_expected,
                                 files_seen, segments_present, segments_expected, has_par2,
                                 has_nfo, category, category_version, groups, created_at,
                                 updated_at)
    SELECT key, name, poster, to_timestamp(first), to_timestamp(last), 0, files_expected, 0, 0,
           0, false, false, category, %(rule_version)s, ARRAY[%(group)s::text], now(), now()
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
