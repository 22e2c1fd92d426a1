-- A title's listed releases by date (migration 0009). Never edit a block a
-- migration has run: a change is a new block and a new migration.
-- docs/newznab.md, "By words".

-- name: drop_release_listed_title_index
-- First, so a build that failed half-way (an invalid index) is built again.
DROP INDEX CONCURRENTLY IF EXISTS catalog_release_listed_title_idx;

-- name: create_release_listed_title_index
-- A word search whose words are a title (q=the office): the posted date of
-- the title's wanted-th newest listed release, read from this index alone
-- (title_bound), bounds the newest window that holds the page, however
-- common each word is. The statistics cannot tell a title's words from
-- unrelated ones; without it such a window was the whole table, every match
-- read from the heap. With the category, so a search in categories counts
-- only theirs, and the title key, without which PostgreSQL reads the heap for
-- each entry (it does not read an indexed expression's value back from the
-- index): index-only, a category the title is not in skips its entries, not
-- heap pages (at 10 M releases, 900 entries: 75 ms with the heap). Partial:
-- names without a title, and releases not listed.
CREATE INDEX CONCURRENTLY catalog_release_listed_title_idx
    ON catalog_release (newznab_title(title_key), posted DESC, id DESC)
       INCLUDE (category, title_key)
 WHERE listed AND title_key <> '';
