-- The live definition of every function, view and trigger the catalog app
-- owns: the catalog's message-id hashes, its per-group totals (the triggers on
-- catalog_file that keep group_catalog_summary) and its releases (the triggers
-- that keep catalog_release current, and the release search by key).
--
-- This file is the truth; it is never run by the coordinator. Migrations are
-- deltas toward it (their SQL in sql/migrations/, never edited once run; what
-- is here was made by the indexer's, indexer/sql/migrations/), and
-- tests/core/test_schema_drift.py holds the two equal: change a definition
-- here and in a new migration together.

-- The message-id lookup: a GIN index over the 32-bit hashes of a file's
-- message-ids; new entries gather in a 64 MB pending list (docs/catalog.md).
CREATE OR REPLACE FUNCTION catalog_message_id_hashes(ids text[]) RETURNS int[]
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT array_agg(hashtext(m)) FROM unnest(ids) AS m $$;

CREATE OR REPLACE FUNCTION group_catalog_summary_lock(g bigint, exclusive boolean)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF exclusive THEN
        PERFORM pg_advisory_xact_lock(hashtext('group_catalog_summary'), (g % 2147483647)::int);
    ELSE
        PERFORM pg_advisory_xact_lock_shared(hashtext('group_catalog_summary'),
                                             (g % 2147483647)::int);
    END IF;
END
$$;

-- Deltas per group: files, complete, segments, bytes, conflicts; the newest
-- date written; `dropped`, the newest date that left the group (a deleted
-- row, or a row whose date moved earlier), NULL when none did.
CREATE OR REPLACE FUNCTION group_catalog_summary_apply(
    d_group bigint[], d_files bigint[], d_complete bigint[], d_segments bigint[],
    d_bytes bigint[], d_conflicts bigint[], d_newest timestamptz[], d_dropped timestamptz[])
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    own smallint := (pg_current_xact_id()::text::bigint % 8)::smallint;
    g bigint;
    dropped timestamptz;
BEGIN
    FOR g, dropped IN SELECT u.g, u.d FROM unnest(d_group, d_dropped) AS u(g, d) ORDER BY u.g LOOP
        PERFORM group_catalog_summary_lock(g, dropped IS NOT NULL);
    END LOOP;
    INSERT INTO group_catalog_summary AS t
           (group_id, slot, files, complete, segments, bytes, conflicts, newest)
    SELECT u.g, own, u.f, u.c, u.s, u.b, u.k, u.n
      FROM unnest(d_group, d_files, d_complete, d_segments, d_bytes, d_conflicts, d_newest)
           AS u(g, f, c, s, b, k, n)
     ORDER BY u.g
    ON CONFLICT (group_id, slot) DO UPDATE
       SET files = t.files + excluded.files, complete = t.complete + excluded.complete,
           segments = t.segments + excluded.segments, bytes = t.bytes + excluded.bytes,
           conflicts = t.conflicts + excluded.conflicts,
           newest = greatest(t.newest, excluded.newest);
    IF NOT EXISTS (SELECT 1 FROM unnest(d_dropped) AS d WHERE d IS NOT NULL) THEN
        RETURN;
    END IF;
    -- Under the exclusive lock: the group's newest as kept now (this
    -- statement's own dates included) is still exact unless what left
    -- reached it. Then recount, and keep the result in this transaction's
    -- slot alone.
    UPDATE group_catalog_summary AS t
       SET newest = CASE WHEN t.slot = own THEN r.newest END
      FROM (SELECT u.g, (SELECT max(f.date) FROM catalog_file AS f WHERE f.group_id = u.g) AS newest
              FROM unnest(d_group, d_dropped) AS u(g, d)
             WHERE u.d IS NOT NULL
               AND u.d >= coalesce((SELECT max(s.newest) FROM group_catalog_summary AS s
                                     WHERE s.group_id = u.g), '-infinity')) AS r
     WHERE t.group_id = r.g;
END
$$;

CREATE OR REPLACE FUNCTION group_catalog_summary_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM group_catalog_summary_apply(array_agg(g), array_agg(f), array_agg(c), array_agg(s),
                                        array_agg(b), array_agg(k), array_agg(n),
                                        array_agg(NULL::timestamptz))
       FROM (SELECT group_id AS g, count(*) AS f, count(*) FILTER (WHERE complete) AS c,
                    sum(segments)::bigint AS s, sum(bytes)::bigint AS b,
                    sum(conflicts)::bigint AS k, max(date) AS n
               FROM new_rows GROUP BY group_id) AS d
      HAVING count(*) > 0;
    RETURN NULL;
END
$$;

-- An update is its old rows taken away and its new rows added; a row whose
-- date moved earlier (or that left its group) drops its old date.
CREATE OR REPLACE FUNCTION group_catalog_summary_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM group_catalog_summary_apply(array_agg(g), array_agg(f), array_agg(c), array_agg(s),
                                        array_agg(b), array_agg(k), array_agg(n), array_agg(d))
       FROM (SELECT g, sum(f)::bigint AS f, sum(c)::bigint AS c, sum(s)::bigint AS s,
                    sum(b)::bigint AS b, sum(k)::bigint AS k, max(n) AS n, max(d) AS d
               FROM (SELECT o.group_id AS g, -1 AS f, -o.complete::int AS c,
                            -o.segments::bigint AS s, -o.bytes AS b, -o.conflicts::bigint AS k,
                            NULL::timestamptz AS n,
                            CASE WHEN w.group_id <> o.group_id OR w.date < o.date
                                 THEN o.date END AS d
                       FROM old_rows AS o JOIN new_rows AS w ON w.id = o.id
                     UNION ALL
                     SELECT group_id, 1, complete::int, segments, bytes, conflicts, date, NULL
                       FROM new_rows) AS u
              GROUP BY g) AS d
      HAVING count(*) > 0;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION group_catalog_summary_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM group_catalog_summary_apply(array_agg(g), array_agg(-f), array_agg(-c), array_agg(-s),
                                        array_agg(-b), array_agg(-k),
                                        array_agg(NULL::timestamptz), array_agg(n))
       FROM (SELECT group_id AS g, count(*) AS f, count(*) FILTER (WHERE complete) AS c,
                    sum(segments)::bigint AS s, sum(bytes)::bigint AS b,
                    sum(conflicts)::bigint AS k, max(date) AS n
               FROM old_rows GROUP BY group_id) AS d
      HAVING count(*) > 0;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION group_catalog_summary_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM group_catalog_summary;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER group_catalog_summary_insert
AFTER INSERT ON catalog_file
REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION group_catalog_summary_inserted();

CREATE OR REPLACE TRIGGER group_catalog_summary_update
AFTER UPDATE ON catalog_file
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION group_catalog_summary_updated();

CREATE OR REPLACE TRIGGER group_catalog_summary_delete
AFTER DELETE ON catalog_file
REFERENCING OLD TABLE AS old_rows
FOR EACH STATEMENT EXECUTE FUNCTION group_catalog_summary_deleted();

CREATE OR REPLACE TRIGGER group_catalog_summary_truncate
AFTER TRUNCATE ON catalog_file
FOR EACH STATEMENT EXECUTE FUNCTION group_catalog_summary_truncated();

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

-- What search and RSS serve by default: a listed release; and one stored
-- before the upgrade that added `counted` (migration 0005) and not counted
-- again yet by the upkeep, when its stored totals say it is complete, as the
-- search served it before (docs/catalog.md, "After an upgrade").
CREATE OR REPLACE FUNCTION catalog_release_served(
    listed boolean, counted boolean, files_seen integer, files_expected integer,
    present bigint, expected bigint)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT listed OR (NOT counted
                      AND catalog_release_complete(files_seen, files_expected, present, expected))
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

CREATE OR REPLACE TRIGGER catalog_release_insert
AFTER INSERT ON catalog_file
REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION catalog_release_inserted();

CREATE OR REPLACE TRIGGER catalog_release_update
AFTER UPDATE ON catalog_file
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION catalog_release_updated();

CREATE OR REPLACE TRIGGER catalog_release_delete
AFTER DELETE ON catalog_file
REFERENCING OLD TABLE AS old_rows
FOR EACH STATEMENT EXECUTE FUNCTION catalog_release_deleted();

CREATE OR REPLACE TRIGGER catalog_release_truncate
AFTER TRUNCATE ON catalog_file
FOR EACH STATEMENT EXECUTE FUNCTION catalog_release_truncated();

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
