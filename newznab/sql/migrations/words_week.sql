-- The words of a release by week and category (migration 0010). Never edit a
-- block a migration has run: a change is a new block and a new migration.
-- docs/newznab.md, "By words".

-- name: create_btree_gin_extension
-- A GIN index of plain values (the week, the category) beside the words.
CREATE EXTENSION IF NOT EXISTS btree_gin;

-- name: create_week_function
CREATE OR REPLACE FUNCTION newznab_week(posted timestamptz) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT floor(extract(epoch FROM posted) / 604800)::integer
$$;

-- name: drop_week_function
DROP FUNCTION IF EXISTS newznab_week(timestamptz);

-- name: drop_release_words_index
-- First, so a build that failed half-way (an invalid index) is built again.
DROP INDEX CONCURRENTLY IF EXISTS catalog_release_words_idx;

-- name: create_release_words_index
-- A word search in a newest window, or in categories (search_matches): the
-- GIN index ANDs the words with the window's weeks and the categories asked,
-- skipping through each posting list to the next row all of them hold, so a
-- word in 3 % of the releases gives its matches of the window's weeks, not
-- its 330,000 rows of the whole table (at 10 M releases), and a rare word in
-- a category it is not in is ruled out without reading its rows from the
-- heap. The category as `category + 0`, which search_matches alone writes:
-- as a plain column, every other statement with a category (the fields'
-- search, the feed) took its entries for a cheap bitmap and read them all
-- (2.5 million for the movies, 0.4 s). Without the pending list, as the
-- words' index of migration 0002 it replaces (drop_release_search_index): a
-- search would scan it whole.
CREATE INDEX CONCURRENTLY catalog_release_words_idx
    ON catalog_release USING gin (newznab_week(posted), (category + 0), search_vector)
  WITH (fastupdate = off);

-- name: drop_release_search_index
-- The words' index above serves every search the words alone gave
-- (search_matches without a window or categories asks it the words alone):
-- two GIN indexes of the same words would cost every release written twice.
DROP INDEX CONCURRENTLY IF EXISTS catalog_release_search_idx;

-- name: create_release_search_index
-- Reversing migration 0010: the words alone, as migration 0002 made them.
CREATE INDEX CONCURRENTLY IF NOT EXISTS catalog_release_search_idx
    ON catalog_release USING gin (search_vector) WITH (fastupdate = off);
