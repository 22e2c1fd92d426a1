-- The newest listed releases with whether they are passworded (migration 0011).
-- Never edit a block a migration has run: a change is a new block and a new
-- migration. docs/newznab.md, "Without words: the feed and the category browse".

-- name: drop_release_newest_index
DROP INDEX CONCURRENTLY IF EXISTS catalog_release_newest_idx;

-- name: create_release_newest_index
-- The RSS feed, a search without words and the category browse: the listed
-- releases newest first, with their category and whether they are passworded
-- (hidden by default, migration catalog 0006), read from the index alone. The
-- index of migration 0007 lacked the flag: every entry a deep offset skipped
-- was a heap page read to test it (offset 95,000 at 10 M releases: 111 ms).
CREATE INDEX CONCURRENTLY catalog_release_newest_idx
    ON catalog_release (posted DESC, id DESC) INCLUDE (category, passworded)
 WHERE listed;

-- name: drop_release_newest_category_index
DROP INDEX CONCURRENTLY IF EXISTS catalog_release_newest_category_idx;

-- name: create_release_newest_category_index
-- The same by category (a rare category's newest, newest_in_categories), and a
-- category's capped total read from the index alone (count_newest: a bitmap of
-- the category's 204,000 entries and their heap pages took 74 ms at 10 M).
CREATE INDEX CONCURRENTLY catalog_release_newest_category_idx
    ON catalog_release (category, posted DESC, id DESC) INCLUDE (passworded)
 WHERE listed;
