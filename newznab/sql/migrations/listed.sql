-- The newest listed releases (migration 0007; migration 0011 replaced both
-- indexes with newest.sql's, which hold the passworded flag). Never edit a block a
-- migration has run: a change is a new block and a new migration. docs/newznab.md,
-- "Search".

-- name: drop_release_listed_index
-- First, so a build that failed half-way (an invalid index) is built again.
DROP INDEX CONCURRENTLY IF EXISTS catalog_release_listed_idx;

-- name: create_release_listed_index
-- The RSS feed, a search without words and the category browse: the listed
-- releases newest first, with their category, read from the index alone
-- (no heap page for a release the page skips: an offset deep in the list,
-- a category's releases among the others). Partial: the releases not yet
-- complete are never listed by default (newznab_releases' other branch).
CREATE INDEX CONCURRENTLY catalog_release_listed_idx
    ON catalog_release (posted DESC, id DESC) INCLUDE (category)
 WHERE listed;

-- name: drop_release_listed_category_index
DROP INDEX CONCURRENTLY IF EXISTS catalog_release_listed_category_idx;

-- name: create_release_listed_category_index
-- The same by category (migration 0008): a rare category's newest listed
-- releases (5080 is one release in two thousand) straight, each category's
-- page read on its own and merged (newest_in_categories), where the index
-- above would skip the releases of every other category one by one.
CREATE INDEX CONCURRENTLY catalog_release_listed_category_idx
    ON catalog_release (category, posted DESC, id DESC)
 WHERE listed;
