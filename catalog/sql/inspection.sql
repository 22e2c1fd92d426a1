-- Applying what inspection found to a release (catalog/inspection.py,
-- docs/inspection.md "What the coordinator applies").

-- name: lock_release_for_inspection
-- The release row, locked for the rest of the caller's transaction: a batch
-- merge or a second report of the same release waits for it.
SELECT id, name, posted_name, groups, category, imdb_id, tvdb_id
  FROM catalog_release
 WHERE id = %(id)s
   FOR UPDATE;

-- name: release_files_for_inspection
-- The release's files, a cross-posted file once (its copies share the name),
-- in posting order, at most %(limit)s of them.
SELECT DISTINCT ON (file_index, name) name, file_index, bytes, segments
  FROM catalog_file
 WHERE release_id = %(id)s
 ORDER BY file_index NULLS LAST, name
 LIMIT %(limit)s;

-- name: apply_inspection
-- The new name and its fields, the category under rule set %(rule_version)s,
-- the flags and ids; posted_name keeps the first name the poster gave (a
-- re-inspection never replaces it). An id not found this time keeps the one
-- found before, and so do the flags when no archive was read (null).
UPDATE catalog_release
   SET name = %(name)s,
       posted_name = CASE WHEN %(renamed)s THEN coalesce(posted_name, name) ELSE posted_name END,
       kind = %(kind)s, title_key = %(title_key)s, year = %(year)s,
       seasons = %(seasons)s::smallint[], episodes = %(episodes)s::smallint[],
       absolute_episodes = %(absolute_episodes)s::smallint[], air_date = %(air_date)s,
       full_season = %(full_season)s, resolution = %(resolution)s, source = %(source)s,
       codec = %(codec)s, release_group = %(release_group)s, proper = %(proper)s,
       repack = %(repack)s, fields_version = %(fields_version)s,
       category = %(category)s, category_version = %(rule_version)s,
       passworded = coalesce(%(passworded)s, passworded),
       encrypted = coalesce(%(encrypted)s, encrypted),
       imdb_id = coalesce(%(imdb_id)s, imdb_id), tvdb_id = coalesce(%(tvdb_id)s::int, tvdb_id),
       inspected_at = now(), inspection = %(inspection)s::jsonb,
       real_names = coalesce(%(real_names)s::jsonb, real_names)
 WHERE id = %(id)s
RETURNING id, name, category, passworded, encrypted;

-- name: releases_by_ids
SELECT id FROM catalog_release WHERE id = ANY(%(ids)s::bigint[]);
