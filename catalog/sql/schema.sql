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
