-- The triggers on catalog_file that keep group_catalog_summary exact, their
-- functions and the fill from the files already stored: run by migration
-- indexer 0007 only. docs/catalog.md ("Totals") explains the slots and locks.

-- name: create_group_catalog_summary_triggers
-- Run by migration 0007 (never edit: a change is a new block and a migration).
--
-- Every statement that writes catalog_file (the batch merge, pruning, the
-- admin's deletion, anything else) adds its deltas in the same transaction,
-- from the transition tables: exact whatever the statement did. A
-- transaction adds to one of SUMMARY_SLOTS (8) rows per group, picked by its
-- transaction id, so batches of one group committing together do not queue
-- on one row.
--
-- The newest post date is a maximum, which a delete, or a merge that moves a
-- file's date earlier, can lower. Such a statement takes the group's
-- advisory lock exclusively (every other writer takes it shared, so none is
-- between its trigger and its commit) and, when what left was the group's
-- newest date, recounts it from the table. Statements lock groups in id
-- order; within a merge the UPDATE trigger runs before the INSERT trigger,
-- so a transaction never asks for the exclusive lock while holding the
-- shared one.
ALTER TABLE group_catalog_summary
  ADD CONSTRAINT group_catalog_summary_group_fk FOREIGN KEY (group_id)
  REFERENCES news_group (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED;

-- The slots are small rows updated by every batch: room on the page keeps
-- the updates HOT.
ALTER TABLE group_catalog_summary SET (fillfactor = 50);

CREATE FUNCTION group_catalog_summary_lock(g bigint, exclusive boolean)
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
CREATE FUNCTION group_catalog_summary_apply(
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

CREATE FUNCTION group_catalog_summary_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE FUNCTION group_catalog_summary_updated() RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE FUNCTION group_catalog_summary_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE FUNCTION group_catalog_summary_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM group_catalog_summary;
    RETURN NULL;
END
$$;

CREATE TRIGGER group_catalog_summary_insert
AFTER INSERT ON catalog_file
REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION group_catalog_summary_inserted();

CREATE TRIGGER group_catalog_summary_update
AFTER UPDATE ON catalog_file
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION group_catalog_summary_updated();

CREATE TRIGGER group_catalog_summary_delete
AFTER DELETE ON catalog_file
REFERENCING OLD TABLE AS old_rows
FOR EACH STATEMENT EXECUTE FUNCTION group_catalog_summary_deleted();

CREATE TRIGGER group_catalog_summary_truncate
AFTER TRUNCATE ON catalog_file
FOR EACH STATEMENT EXECUTE FUNCTION group_catalog_summary_truncated();

-- The files already there (the migration's lock on catalog_file keeps
-- batches out until it commits).
INSERT INTO group_catalog_summary (group_id, slot, files, complete, segments, bytes, conflicts, newest)
SELECT group_id, 0, count(*), count(*) FILTER (WHERE complete), sum(segments), sum(bytes),
       sum(conflicts), max(date)
  FROM catalog_file
 GROUP BY group_id;

-- name: drop_group_catalog_summary_triggers
DROP TRIGGER IF EXISTS group_catalog_summary_insert ON catalog_file;
DROP TRIGGER IF EXISTS group_catalog_summary_update ON catalog_file;
DROP TRIGGER IF EXISTS group_catalog_summary_delete ON catalog_file;
DROP TRIGGER IF EXISTS group_catalog_summary_truncate ON catalog_file;
DROP FUNCTION IF EXISTS group_catalog_summary_inserted();
DROP FUNCTION IF EXISTS group_catalog_summary_updated();
DROP FUNCTION IF EXISTS group_catalog_summary_deleted();
DROP FUNCTION IF EXISTS group_catalog_summary_truncated();
DROP FUNCTION IF EXISTS group_catalog_summary_apply(bigint[], bigint[], bigint[], bigint[],
                                                     bigint[], bigint[], timestamptz[],
                                                     timestamptz[]);
DROP FUNCTION IF EXISTS group_catalog_summary_lock(bigint, boolean);
DELETE FROM group_catalog_summary;
ALTER TABLE group_catalog_summary RESET (fillfactor);
ALTER TABLE group_catalog_summary DROP CONSTRAINT IF EXISTS group_catalog_summary_group_fk;
