-- Releases (catalog_release) kept by statement triggers on catalog_file.
-- Run by migration 0011 (never edit a block a migration has run: a change is
-- a new block and a new migration). docs/catalog.md, "Releases".

-- name: create_catalog_release_triggers
-- The batch sets each file's release_id in its own INSERT (store_files finds
-- or creates the releases first); these triggers add what the statement
-- wrote to its releases, from the transition tables, in the same
-- transaction. A batch holds the advisory locks of the release keys it
-- created, and rows of one release are otherwise serialized by the release
-- row's lock. A delete recounts its releases from their remaining files
-- (locked in id order, so two prunes cannot deadlock) and drops the ones
-- left empty.
CREATE FUNCTION catalog_release_is_par2(name text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT name ~* '\.par2$' $$;

CREATE FUNCTION catalog_release_is_nfo(name text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT name ~* '\.nfo$' $$;

-- Deltas per release: files, segments present and expected, bytes; the
-- dates, flags and group names the new rows bring.
CREATE FUNCTION catalog_release_apply(
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

CREATE FUNCTION catalog_release_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM catalog_release_apply(array_agg(r), array_agg(f), array_agg(s), array_agg(e),
                                  array_agg(b), array_agg(lo), array_agg(hi), array_agg(p),
                                  array_agg(n), array_agg(g))
       FROM (SELECT w.release_id AS r, count(*) AS f, sum(w.segments)::bigint AS s,
                    sum(w.total)::bigint AS e, sum(w.bytes)::bigint AS b, min(w.date) AS lo,
                    max(w.date) AS hi, bool_or(catalog_release_is_par2(w.name)) AS p,
                    bool_or(catalog_release_is_nfo(w.name)) AS n,
                    string_agg(DISTINCT g.name, ' ') AS g
               FROM new_rows AS w JOIN news_group AS g ON g.id = w.group_id
              WHERE w.release_id IS NOT NULL
              GROUP BY w.release_id) AS d
      HAVING count(*) > 0;
    RETURN NULL;
END
$$;

-- An update is its old rows taken away and its new rows added.
CREATE FUNCTION catalog_release_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM catalog_release_apply(array_agg(r), array_agg(f), array_agg(s), array_agg(e),
                                  array_agg(b), array_agg(lo), array_agg(hi), array_agg(p),
                                  array_agg(n), array_agg(g))
       FROM (SELECT u.r, sum(u.f)::bigint AS f, sum(u.s)::bigint AS s, sum(u.e)::bigint AS e,
                    sum(u.b)::bigint AS b, min(u.d) AS lo, max(u.d) AS hi, bool_or(u.p) AS p,
                    bool_or(u.n) AS n, string_agg(DISTINCT u.g, ' ') AS g
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

CREATE FUNCTION catalog_release_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE FUNCTION catalog_release_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- DELETE, not TRUNCATE: a TRUNCATE of both tables at once (a test
    -- database's flush) must not truncate a table its statement is using.
    DELETE FROM catalog_release;
    RETURN NULL;
END
$$;

CREATE TRIGGER catalog_release_insert
AFTER INSERT ON catalog_file
REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION catalog_release_inserted();

CREATE TRIGGER catalog_release_update
AFTER UPDATE ON catalog_file
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION catalog_release_updated();

CREATE TRIGGER catalog_release_delete
AFTER DELETE ON catalog_file
REFERENCING OLD TABLE AS old_rows
FOR EACH STATEMENT EXECUTE FUNCTION catalog_release_deleted();

CREATE TRIGGER catalog_release_truncate
AFTER TRUNCATE ON catalog_file
FOR EACH STATEMENT EXECUTE FUNCTION catalog_release_truncated();

-- Releases are updated by most batches: room on the page keeps it HOT.
ALTER TABLE catalog_release SET (fillfactor = 70);

-- name: drop_catalog_release_triggers
DROP TRIGGER IF EXISTS catalog_release_insert ON catalog_file;
DROP TRIGGER IF EXISTS catalog_release_update ON catalog_file;
DROP TRIGGER IF EXISTS catalog_release_delete ON catalog_file;
DROP TRIGGER IF EXISTS catalog_release_truncate ON catalog_file;
DROP FUNCTION IF EXISTS catalog_release_inserted();
DROP FUNCTION IF EXISTS catalog_release_updated();
DROP FUNCTION IF EXISTS catalog_release_deleted();
DROP FUNCTION IF EXISTS catalog_release_truncated();
DROP FUNCTION IF EXISTS catalog_release_apply(bigint[], bigint[], bigint[], bigint[], bigint[],
    timestamptz[], timestamptz[], boolean[], boolean[], text[]);
DROP FUNCTION IF EXISTS catalog_release_is_par2(text);
DROP FUNCTION IF EXISTS catalog_release_is_nfo(text);

-- name: release_triggers_without_sorts
-- Run by migration 0012. The triggers' per-release aggregates without
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


-- name: create_release_near_function
-- The release of a key whose posting window, widened by a day on each side,
-- overlaps first..last (unix times); the earliest such. One definition for
-- the batch path's lookup and its create-under-lock (sql/releases.sql).
CREATE OR REPLACE FUNCTION catalog_release_near(k bytea, first_at bigint, last_at bigint)
RETURNS bigint LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT r.id FROM catalog_release AS r
     WHERE r.key = k
       AND r.posted <= to_timestamp(last_at) + interval '1 day'
       AND r.last_posted >= to_timestamp(first_at) - interval '1 day'
     ORDER BY r.posted, r.id
     LIMIT 1
$$;

-- name: drop_release_near_function
DROP FUNCTION IF EXISTS catalog_release_near(bytea, bigint, bigint);
