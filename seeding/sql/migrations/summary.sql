-- group_range_summary, kept current as seed ranges change
-- (docs/console.md, "The range summary"). Installed by seeding's migration 0004.
-- A block a migration has run is never edited: a change is a new block and
-- a new migration (docs/architecture.md, "SQL").

-- name: add_summary_group_fk
-- A group's rows go with the group, checked at commit.
ALTER TABLE group_range_summary
  ADD CONSTRAINT group_range_summary_group_fk FOREIGN KEY (group_id)
  REFERENCES news_group (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED;

-- name: create_summary_apply_function
-- Adds deltas (ranges, articles, reached, headers, files) per (group,
-- status), in key order.
CREATE FUNCTION group_range_summary_apply(g bigint[], s text[], n bigint[], a bigint[],
                                          r bigint[], h bigint[], f bigint[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO group_range_summary AS t (group_id, status, ranges, articles, reached, headers, files)
    SELECT d.g, d.s, sum(d.n), sum(d.a), sum(d.r), sum(d.h), sum(d.f)
      FROM unnest(g, s, n, a, r, h, f) AS d(g, s, n, a, r, h, f)
     WHERE d.g IS NOT NULL AND d.s IS NOT NULL
       AND EXISTS (SELECT 1 FROM news_group AS ng WHERE ng.id = d.g)
     GROUP BY 1, 2
     ORDER BY 1, 2
    ON CONFLICT (group_id, status) DO UPDATE
       SET ranges = t.ranges + excluded.ranges, articles = t.articles + excluded.articles,
           reached = t.reached + excluded.reached, headers = t.headers + excluded.headers,
           files = t.files + excluded.files;
END
$$;

-- name: create_summary_row_functions
-- One row's share of its (group, status) summary, added with `sign`. plpgsql
-- keeps the statement's plan per session: the claim fires this on every lease.
CREATE FUNCTION group_range_summary_add(r seed_range, sign integer) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO group_range_summary AS t (group_id, status, ranges, articles, reached, headers, files)
    VALUES (r.group_id, r.status, sign, sign * (r.end_id - r.start_id + 1),
            CASE WHEN r.status = 'leased' THEN 0 ELSE sign * (r.next_id - r.start_id) END,
            CASE WHEN r.status = 'leased' THEN 0 ELSE sign * r.headers END,
            CASE WHEN r.status = 'leased' THEN 0 ELSE sign * r.files END)
    ON CONFLICT (group_id, status) DO UPDATE
       SET ranges = t.ranges + excluded.ranges, articles = t.articles + excluded.articles,
           reached = t.reached + excluded.reached, headers = t.headers + excluded.headers,
           files = t.files + excluded.files;
END
$$;

-- The two rows are written in key order, as the statement triggers write theirs.
CREATE FUNCTION group_range_summary_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (OLD.group_id, OLD.status::text) <= (NEW.group_id, NEW.status::text) THEN
        PERFORM group_range_summary_add(OLD, -1);
        PERFORM group_range_summary_add(NEW, 1);
    ELSE
        PERFORM group_range_summary_add(NEW, 1);
        PERFORM group_range_summary_add(OLD, -1);
    END IF;
    RETURN NULL;
END
$$;

-- name: create_summary_statement_functions
CREATE FUNCTION group_range_summary_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM group_range_summary_apply(array_agg(group_id), array_agg(status), array_agg(n),
                                      array_agg(a), array_agg(r), array_agg(h), array_agg(f))
       FROM (SELECT group_id, status::text AS status, count(*) AS n,
                    sum(end_id - start_id + 1)::bigint AS a,
                    sum(CASE WHEN status = 'leased' THEN 0 ELSE next_id - start_id END)::bigint AS r,
                    sum(CASE WHEN status = 'leased' THEN 0 ELSE headers END)::bigint AS h,
                    sum(CASE WHEN status = 'leased' THEN 0 ELSE files END)::bigint AS f
               FROM new_rows GROUP BY 1, 2) AS d
      HAVING count(*) > 0;
    RETURN NULL;
END
$$;

CREATE FUNCTION group_range_summary_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM group_range_summary_apply(array_agg(group_id), array_agg(status), array_agg(-n),
                                      array_agg(-a), array_agg(-r), array_agg(-h), array_agg(-f))
       FROM (SELECT group_id, status::text AS status, count(*) AS n,
                    sum(end_id - start_id + 1)::bigint AS a,
                    sum(CASE WHEN status = 'leased' THEN 0 ELSE next_id - start_id END)::bigint AS r,
                    sum(CASE WHEN status = 'leased' THEN 0 ELSE headers END)::bigint AS h,
                    sum(CASE WHEN status = 'leased' THEN 0 ELSE files END)::bigint AS f
               FROM old_rows GROUP BY 1, 2) AS d
      HAVING count(*) > 0;
    RETURN NULL;
END
$$;

-- name: create_summary_triggers
-- Statement-level with transition tables for INSERT and DELETE; row-level
-- for UPDATE when a range changes status, moves, or progresses while not
-- leased. A batch only moves a leased range's resume point and counters,
-- so the batch path never fires it.
CREATE TRIGGER group_range_summary_update
AFTER UPDATE ON seed_range
FOR EACH ROW
WHEN (OLD.status IS DISTINCT FROM NEW.status
      OR OLD.group_id <> NEW.group_id OR OLD.start_id <> NEW.start_id OR OLD.end_id <> NEW.end_id
      OR (NEW.status <> 'leased'
          AND (OLD.next_id <> NEW.next_id OR OLD.headers <> NEW.headers OR OLD.files <> NEW.files)))
EXECUTE FUNCTION group_range_summary_rows();

CREATE TRIGGER group_range_summary_insert
AFTER INSERT ON seed_range
REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT
EXECUTE FUNCTION group_range_summary_insert();

CREATE TRIGGER group_range_summary_delete
AFTER DELETE ON seed_range
REFERENCING OLD TABLE AS old_rows
FOR EACH STATEMENT
EXECUTE FUNCTION group_range_summary_delete();

-- name: fill_summary
-- The summary of the ranges already there.
INSERT INTO group_range_summary (group_id, status, ranges, articles, reached, headers, files)
SELECT group_id, status, count(*), sum(end_id - start_id + 1),
       sum(CASE WHEN status = 'leased' THEN 0 ELSE next_id - start_id END),
       sum(CASE WHEN status = 'leased' THEN 0 ELSE headers END),
       sum(CASE WHEN status = 'leased' THEN 0 ELSE files END)
  FROM seed_range
 GROUP BY 1, 2;

-- name: drop_summary
DROP TRIGGER IF EXISTS group_range_summary_update ON seed_range;
DROP TRIGGER IF EXISTS group_range_summary_insert ON seed_range;
DROP TRIGGER IF EXISTS group_range_summary_delete ON seed_range;
DROP FUNCTION IF EXISTS group_range_summary_rows();
DROP FUNCTION IF EXISTS group_range_summary_insert();
DROP FUNCTION IF EXISTS group_range_summary_delete();
DROP FUNCTION IF EXISTS group_range_summary_add(seed_range, integer);
DROP FUNCTION IF EXISTS group_range_summary_apply(bigint[], text[], bigint[], bigint[], bigint[], bigint[], bigint[]);
DELETE FROM group_range_summary;
ALTER TABLE group_range_summary DROP CONSTRAINT IF EXISTS group_range_summary_group_fk;
