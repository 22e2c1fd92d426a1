-- The catalog app's own migrations' SQL. Never edit a block a migration has
-- run: a change is a new block and a new migration (sql/schema.sql holds the
-- live definitions; tests/core/test_schema_drift.py holds them equal).

-- name: count_release_files_once
-- Migration 0004: a file counted once per release across the groups that
-- hold it; `listed` set by the batch that completes a release; the settling
-- queue fed by the triggers (docs/catalog.md, "Releases").

-- The queue's rows move their touched_at with each batch (a new index entry
-- each time) and the upkeep reads from the oldest: vacuum it early and
-- unthrottled, never skipping index cleanup (as seed_range's claim index).
ALTER TABLE catalog_release_settling SET (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 5000,
    autovacuum_vacuum_cost_delay = 0,
    autovacuum_analyze_scale_factor = 0.02,
    vacuum_index_cleanup = on
);

-- The batch sets each file's release_id in its own INSERT (store_files finds
-- or creates the releases first); these triggers add what the statement
-- wrote to its releases, from the transition tables, in the same
-- transaction. A batch holds the advisory locks of the release keys it
-- created, and rows of one release are otherwise serialized by the release
-- row's lock. A delete recounts its releases from their remaining files
-- (locked in id order, so two prunes cannot deadlock) and drops the ones
-- left empty.
--
-- A file is counted once per release however many groups hold it: a
-- cross-posted file is a catalog_file row in each group (its key names the
-- group), with the same name in the same release. A release's totals are
-- over its distinct file names, each counted as its fullest copy (the most
-- segments, the largest total and bytes any copy has), so a release posted
-- to two groups reports its articles' bytes once.
CREATE OR REPLACE FUNCTION catalog_release_is_par2(name text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT name ~* '\.par2$' $$;

CREATE OR REPLACE FUNCTION catalog_release_is_nfo(name text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT name ~* '\.nfo$' $$;

-- Complete: every file its counter names has been seen, with every segment.
-- A release without a counter (files_expected NULL) is never complete by
-- count: only settling lists it.
CREATE OR REPLACE FUNCTION catalog_release_complete(
    files_seen integer, files_expected integer, present bigint, expected bigint)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(files_expected > 0 AND files_seen >= files_expected
                    AND expected > 0 AND present >= expected, false)
$$;

-- Enough to list once quiet: at least `floor` percent of the segments of the
-- files seen, and of the files its counter names.
CREATE OR REPLACE FUNCTION catalog_release_settles(
    files_seen integer, files_expected integer, present bigint, expected bigint, floor integer)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(expected > 0 AND present * 100 >= expected * floor
                    AND (files_expected IS NULL
                         OR files_seen::bigint * 100 >= files_expected::bigint * floor),
                    false)
$$;

-- Deltas per release: files, segments present and expected, bytes; the
-- dates, flags and group names the new rows bring. A release the deltas
-- complete is listed here, in the batch's transaction; one still unlisted
-- is queued (catalog_release_settling) for the upkeep to list once quiet.
CREATE OR REPLACE FUNCTION catalog_release_apply(
    d_release bigint[], d_files bigint[], d_segments bigint[], d_expected bigint[],
    d_bytes bigint[], d_first timestamptz[], d_last timestamptz[], d_par2 boolean[],
    d_nfo boolean[], d_groups text[])
RETURNS void LANGUAGE sql AS $$
    WITH changed AS (
        UPDATE catalog_release AS r
           SET files_seen = r.files_seen + d.files,
               segments_present = r.segments_present + d.segments,
               segments_expected = r.segments_expected + d.expected,
               size = r.size + d.bytes,
               posted = least(r.posted, d.first),
               last_posted = greatest(r.last_posted, d.last),
               has_par2 = r.has_par2 OR coalesce(d.par2, false),
               has_nfo = r.has_nfo OR coalesce(d.nfo, false),
               groups = CASE WHEN string_to_array(d.groups, ' ') <@ r.groups THEN r.groups
                             ELSE ARRAY(SELECT DISTINCT x
                                          FROM unnest(r.groups || string_to_array(d.groups, ' '))
                                               AS x
                                         ORDER BY x) END,
               listed = r.listed OR catalog_release_complete(
                            r.files_seen + d.files::integer, r.files_expected,
                            r.segments_present + d.segments, r.segments_expected + d.expected),
               updated_at = now()
          FROM unnest(d_release, d_files, d_segments, d_expected, d_bytes, d_first, d_last,
                      d_par2, d_nfo, d_groups)
               AS d(release_id, files, segments, expected, bytes, first, last, par2, nfo, groups)
         WHERE r.id = d.release_id
        RETURNING r.id, r.listed
    )
    INSERT INTO catalog_release_settling AS s (release_id, touched_at)
    SELECT id, now() FROM changed WHERE NOT listed ORDER BY id
    ON CONFLICT (release_id) DO UPDATE SET touched_at = excluded.touched_at
$$;

-- The rows a statement took away (o_*: the old rows of an update) and wrote
-- (n_*), to their releases' deltas. Per (release, file name): before, the
-- fullest copy among the old rows and the copies the statement did not
-- touch (read through catalog_file_release_name_idx); after, among the new
-- rows and those copies. The deltas are after minus before, so a copy in a
-- second group adds only what it has beyond the first.
CREATE OR REPLACE FUNCTION catalog_release_files_written(
    o_release bigint[], o_name text[], o_segments integer[], o_total integer[], o_bytes bigint[],
    n_id bigint[], n_release bigint[], n_name text[], n_segments integer[], n_total integer[],
    n_bytes bigint[], n_date timestamptz[], n_group text[])
RETURNS void LANGUAGE sql AS $$
    WITH written AS (
        SELECT w.r, w.name, max(w.s) AS s, max(w.e) AS e, max(w.b) AS b, min(w.d) AS lo,
               max(w.d) AS hi, string_agg(w.g, ' ') AS g
          FROM unnest(n_release, n_name, n_segments, n_total, n_bytes, n_date, n_group)
               AS w(r, name, s, e, b, d, g)
         GROUP BY w.r, w.name
    ), taken AS (
        SELECT o.r, o.name, max(o.s) AS s, max(o.e) AS e, max(o.b) AS b
          FROM unnest(o_release, o_name, o_segments, o_total, o_bytes) AS o(r, name, s, e, b)
         GROUP BY o.r, o.name
    ), copies AS (
        SELECT r, name FROM written UNION SELECT r, name FROM taken
    ), others AS (
        SELECT c.r, c.name, max(f.segments) AS s, max(f.total) AS e, max(f.bytes) AS b
          FROM copies AS c
          JOIN catalog_file AS f
            ON f.release_id = c.r AND hashtext(f.name) = hashtext(c.name) AND f.name = c.name
         WHERE f.id NOT IN (SELECT x.id FROM unnest(n_id) AS x(id))  -- a hashed subplan
         GROUP BY c.r, c.name
    ), deltas AS (
        SELECT c.r,
               (w.r IS NOT NULL OR t.r IS NOT NULL)::int
                 - (o.r IS NOT NULL OR t.r IS NOT NULL)::int AS files,
               coalesce(greatest(w.s, t.s), 0) - coalesce(greatest(o.s, t.s), 0) AS s,
               coalesce(greatest(w.e, t.e), 0) - coalesce(greatest(o.e, t.e), 0) AS e,
               coalesce(greatest(w.b, t.b), 0) - coalesce(greatest(o.b, t.b), 0) AS b,
               w.lo, w.hi, catalog_release_is_par2(w.name) AS p,
               catalog_release_is_nfo(w.name) AS n, w.g
          FROM copies AS c
          LEFT JOIN written AS w ON w.r = c.r AND w.name = c.name
          LEFT JOIN taken AS o ON o.r = c.r AND o.name = c.name
          LEFT JOIN others AS t ON t.r = c.r AND t.name = c.name
    )
    SELECT catalog_release_apply(array_agg(d.r), array_agg(d.files), array_agg(d.s),
                                 array_agg(d.e), array_agg(d.b), array_agg(d.lo),
                                 array_agg(d.hi), array_agg(d.p), array_agg(d.n),
                                 array_agg(d.g))
      FROM (SELECT r, sum(files)::bigint AS files, sum(s)::bigint AS s, sum(e)::bigint AS e,
                   sum(b)::bigint AS b, min(lo) AS lo, max(hi) AS hi, bool_or(p) AS p,
                   bool_or(n) AS n, string_agg(g, ' ') AS g
              FROM deltas
             GROUP BY r) AS d
    HAVING count(*) > 0
$$;

CREATE OR REPLACE FUNCTION catalog_release_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM catalog_release_files_written(
                NULL, NULL, NULL, NULL, NULL,
                array_agg(w.id), array_agg(w.release_id), array_agg(w.name),
                array_agg(w.segments), array_agg(w.total), array_agg(w.bytes), array_agg(w.date),
                array_agg(g.name))
       FROM new_rows AS w JOIN news_group AS g ON g.id = w.group_id
      WHERE w.release_id IS NOT NULL
     HAVING count(*) > 0;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION catalog_release_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM catalog_release_files_written(o.r, o.name, o.s, o.e, o.b,
                                          n.id, n.r, n.name, n.s, n.e, n.b, n.d, n.g)
       FROM (SELECT array_agg(release_id) AS r, array_agg(name) AS name,
                    array_agg(segments) AS s, array_agg(total) AS e, array_agg(bytes) AS b
               FROM old_rows
              WHERE release_id IS NOT NULL) AS o,
            (SELECT array_agg(w.id) AS id, array_agg(w.release_id) AS r, array_agg(w.name) AS name,
                    array_agg(w.segments) AS s, array_agg(w.total) AS e,
                    array_agg(w.bytes) AS b, array_agg(w.date) AS d, array_agg(g.name) AS g
               FROM new_rows AS w JOIN news_group AS g ON g.id = w.group_id
              WHERE w.release_id IS NOT NULL) AS n
      WHERE o.r IS NOT NULL OR n.r IS NOT NULL;
    RETURN NULL;
END
$$;

-- The totals of releases counted from their files (each file name once, as
-- its fullest copy); a release with no file left is not in the result. The
-- delete trigger and `manage.py recount_releases` (sql/releases.sql).
CREATE OR REPLACE FUNCTION catalog_release_counts(ids bigint[])
RETURNS TABLE (release_id bigint, files integer, segments bigint, expected bigint, bytes bigint,
               first timestamptz, last timestamptz, par2 boolean, nfo boolean, groups text[])
LANGUAGE sql STABLE AS $$
    SELECT c.release_id, count(*)::integer, sum(c.segments)::bigint, sum(c.total)::bigint,
           sum(c.bytes)::bigint, min(c.first), max(c.last),
           bool_or(catalog_release_is_par2(c.name)), bool_or(catalog_release_is_nfo(c.name)),
           ARRAY(SELECT DISTINCT g.name
                   FROM catalog_file AS f JOIN news_group AS g ON g.id = f.group_id
                  WHERE f.release_id = c.release_id
                  ORDER BY g.name)
      FROM (SELECT f.release_id, f.name, max(f.segments) AS segments, max(f.total) AS total,
                   max(f.bytes) AS bytes, min(f.date) AS first, max(f.date) AS last
              FROM catalog_file AS f
             WHERE f.release_id = ANY(ids)
             GROUP BY f.release_id, f.name) AS c
     GROUP BY c.release_id
$$;

-- A prune takes files away: the releases are counted again (`listed` is
-- kept: a release once served is not withdrawn from the feeds).
CREATE OR REPLACE FUNCTION catalog_release_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM catalog_release
      WHERE id IN (SELECT release_id FROM old_rows)
      ORDER BY id
        FOR UPDATE;
    UPDATE catalog_release AS r
       SET (files_seen, segments_present, segments_expected, size, posted, last_posted,
            has_par2, has_nfo, groups) = (
            c.files, c.segments, c.expected, c.bytes, c.first, c.last, c.par2, c.nfo, c.groups),
           updated_at = now()
      FROM catalog_release_counts(ARRAY(SELECT DISTINCT release_id FROM old_rows
                                         WHERE release_id IS NOT NULL)) AS c
     WHERE r.id = c.release_id;
    DELETE FROM catalog_release AS r
     WHERE r.id IN (SELECT release_id FROM old_rows)
       AND NOT EXISTS (SELECT 1 FROM catalog_file AS f WHERE f.release_id = r.id);
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION catalog_release_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- DELETE, not TRUNCATE: a TRUNCATE of both tables at once (a test
    -- database's flush) must not truncate a table its statement is using.
    DELETE FROM catalog_release;
    DELETE FROM catalog_release_settling;
    RETURN NULL;
END
$$;

-- name: count_release_files_per_row
-- Back to 0003: the triggers as the indexer's migrations left them.
-- The batch sets each file's release_id in its own INSERT (store_files finds
-- or creates the releases first); these triggers add what the statement
-- wrote to its releases, from the transition tables, in the same
-- transaction. A batch holds the advisory locks of the release keys it
-- created, and rows of one release are otherwise serialized by the release
-- row's lock. A delete recounts its releases from their remaining files
-- (locked in id order, so two prunes cannot deadlock) and drops the ones
-- left empty.
CREATE OR REPLACE FUNCTION catalog_release_is_par2(name text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT name ~* '\.par2$' $$;

CREATE OR REPLACE FUNCTION catalog_release_is_nfo(name text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT name ~* '\.nfo$' $$;

-- Deltas per release: files, segments present and expected, bytes; the
-- dates, flags and group names the new rows bring.
CREATE OR REPLACE FUNCTION catalog_release_apply(
    d_release bigint[], d_files bigint[], d_segments bigint[], d_expected bigint[],
    d_bytes bigint[], d_first timestamptz[], d_last timestamptz[], d_par2 boolean[],
    d_nfo boolean[], d_groups text[])
RETURNS void LANGUAGE sql AS $$
    UPDATE catalog_release AS r
       SET files_seen = r.files_seen + d.files,
           segments_present = r.segments_present + d.segments,
           segments_expected = r.segments_expected + d.expected,
           size = r.size + d.bytes,
           posted = least(r.posted, d.first),
           last_posted = greatest(r.last_posted, d.last),
           has_par2 = r.has_par2 OR coalesce(d.par2, false),
           has_nfo = r.has_nfo OR coalesce(d.nfo, false),
           groups = CASE WHEN string_to_array(d.groups, ' ') <@ r.groups THEN r.groups
                         ELSE ARRAY(SELECT DISTINCT x
                                      FROM unnest(r.groups || string_to_array(d.groups, ' ')) AS x
                                     ORDER BY x) END,
           updated_at = now()
      FROM unnest(d_release, d_files, d_segments, d_expected, d_bytes, d_first, d_last, d_par2,
                  d_nfo, d_groups)
           AS d(release_id, files, segments, expected, bytes, first, last, par2, nfo, groups)
     WHERE r.id = d.release_id
$$;

-- The triggers' per-release aggregates without
-- DISTINCT (a DISTINCT aggregate sorts once per release: ~1,000 small sorts
-- in a batch of new releases); the group names are deduplicated in the
-- apply function, only when a name is new to the release.
CREATE OR REPLACE FUNCTION catalog_release_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM catalog_release_apply(array_agg(r), array_agg(f), array_agg(s), array_agg(e),
                                  array_agg(b), array_agg(lo), array_agg(hi), array_agg(p),
                                  array_agg(n), array_agg(g))
       FROM (SELECT w.release_id AS r, count(*) AS f, sum(w.segments)::bigint AS s,
                    sum(w.total)::bigint AS e, sum(w.bytes)::bigint AS b, min(w.date) AS lo,
                    max(w.date) AS hi, bool_or(catalog_release_is_par2(w.name)) AS p,
                    bool_or(catalog_release_is_nfo(w.name)) AS n,
                    string_agg(g.name, ' ') AS g
               FROM new_rows AS w JOIN news_group AS g ON g.id = w.group_id
              WHERE w.release_id IS NOT NULL
              GROUP BY w.release_id) AS d
      HAVING count(*) > 0;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION catalog_release_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM catalog_release_apply(array_agg(r), array_agg(f), array_agg(s), array_agg(e),
                                  array_agg(b), array_agg(lo), array_agg(hi), array_agg(p),
                                  array_agg(n), array_agg(g))
       FROM (SELECT u.r, sum(u.f)::bigint AS f, sum(u.s)::bigint AS s, sum(u.e)::bigint AS e,
                    sum(u.b)::bigint AS b, min(u.d) AS lo, max(u.d) AS hi, bool_or(u.p) AS p,
                    bool_or(u.n) AS n, string_agg(u.g, ' ') AS g
               FROM (SELECT o.release_id AS r, -1 AS f, -o.segments::bigint AS s,
                            -o.total::bigint AS e, -o.bytes AS b, NULL::timestamptz AS d,
                            NULL::boolean AS p, NULL::boolean AS n, NULL::text AS g
                       FROM old_rows AS o
                      WHERE o.release_id IS NOT NULL
                     UNION ALL
                     SELECT w.release_id, 1, w.segments, w.total, w.bytes, w.date,
                            catalog_release_is_par2(w.name), catalog_release_is_nfo(w.name),
                            g.name
                       FROM new_rows AS w JOIN news_group AS g ON g.id = w.group_id
                      WHERE w.release_id IS NOT NULL) AS u
              GROUP BY u.r) AS d
      HAVING count(*) > 0;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION catalog_release_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM catalog_release
      WHERE id IN (SELECT release_id FROM old_rows)
      ORDER BY id
        FOR UPDATE;
    UPDATE catalog_release AS r
       SET (files_seen, segments_present, segments_expected, size, posted, last_posted,
            has_par2, has_nfo) = (
            SELECT count(*), coalesce(sum(f.segments), 0), coalesce(sum(f.total), 0),
                   coalesce(sum(f.bytes), 0), coalesce(min(f.date), r.posted),
                   coalesce(max(f.date), r.last_posted),
                   coalesce(bool_or(catalog_release_is_par2(f.name)), false),
                   coalesce(bool_or(catalog_release_is_nfo(f.name)), false)
              FROM catalog_file AS f WHERE f.release_id = r.id),
           groups = ARRAY(SELECT DISTINCT g.name
                            FROM catalog_file AS f JOIN news_group AS g ON g.id = f.group_id
                           WHERE f.release_id = r.id
                           ORDER BY g.name),
           updated_at = now()
     WHERE r.id IN (SELECT release_id FROM old_rows);
    DELETE FROM catalog_release
     WHERE id IN (SELECT release_id FROM old_rows) AND files_seen = 0;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION catalog_release_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- DELETE, not TRUNCATE: a TRUNCATE of both tables at once (a test
    -- database's flush) must not truncate a table its statement is using.
    DELETE FROM catalog_release;
    RETURN NULL;
END
$$;

DROP FUNCTION catalog_release_files_written(bigint[], text[], integer[], integer[], bigint[],
                                            bigint[], bigint[], text[], integer[], integer[],
                                            bigint[], timestamptz[], text[]);
DROP FUNCTION catalog_release_counts(bigint[]);
DROP FUNCTION catalog_release_settles(integer, integer, bigint, bigint, integer);
DROP FUNCTION catalog_release_complete(integer, integer, bigint, bigint);

-- name: release_served
-- Migration 0005: what search and RSS serve by default. A listed release;
-- and one stored before the upgrade that the upkeep has not counted again
-- yet (`counted` false) when its stored totals say it is complete, as the
-- search served it before the upgrade (docs/catalog.md, "After an upgrade").
CREATE OR REPLACE FUNCTION catalog_release_served(
    listed boolean, counted boolean, files_seen integer, files_expected integer,
    present bigint, expected bigint)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT listed OR (NOT counted
                      AND catalog_release_complete(files_seen, files_expected, present, expected))
$$;
