-- The release search's storage (migration 0002). Never edit a block a
-- migration has run: a change is a new block and a new migration.
-- docs/newznab.md, "Search".

-- name: create_release_search
-- Scene names are words joined by dots, dashes and underscores
-- ("Show.Name.S01E02.720p.HDTV.x264-GRP"): they become spaces before the
-- 'simple' parser (no stemming, no stop words: "The" and "It" are titles).
-- A stored generated column, not an expression index: the date-ordered walk
-- tests it on every row it reads, and recomputing to_tsvector there would
-- cost more than the walk. Added by this app to the catalog's table (the
-- higher layer plugs itself in; the catalog never reads it).
CREATE FUNCTION newznab_words(name text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT translate(name, '._-+()[]{}', '          ')
$$;

ALTER TABLE catalog_release
  ADD COLUMN search_vector tsvector
  GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, newznab_words(name))) STORED;

CREATE INDEX catalog_release_search_idx ON catalog_release USING gin (search_vector)
  WITH (fastupdate = off);

-- How often a release was fetched through t=get (newznab:attr grabs).
CREATE TABLE newznab_release_grabs (
    release_id bigint PRIMARY KEY,
    grabs bigint NOT NULL DEFAULT 0
);

-- name: drop_release_search
DROP TABLE newznab_release_grabs;
ALTER TABLE catalog_release DROP COLUMN search_vector;
DROP FUNCTION newznab_words(text);

-- name: create_release_posted_brin
-- The newest-window search: a range of posted dates as a bitmap to AND with
-- the words' GIN bitmap. A BRIN index (a few pages for millions of rows)
-- makes that range almost free; the btree over (posted, id) would read an
-- entry per release in the window. Releases are mostly written in posting
-- order; where they are not (backfill), ranges overlap and the index only
-- narrows less.
CREATE INDEX catalog_release_posted_brin ON catalog_release USING brin (posted)
  WITH (pages_per_range = 16);

-- name: drop_release_posted_brin
DROP INDEX catalog_release_posted_brin;

-- name: create_release_season
-- A season pack (tvsearch's season without an episode: the prefix 's02':*)
-- with a word found in hundreds of thousands of releases: the GIN index
-- cannot AND a prefix (it merges every s02e… entry into a bitmap and
-- rechecks each row), and testing the prefix on every row of the word in
-- the newest window reads a heap page a row. This index gives the window's
-- rows of one season straight, by date. Its value is the season of the
-- name's lexemes that begin "s" and two digits ('s02e05' -> 's02'), '*'
-- when they name two seasons, NULL when none: a row matching 's02':* has
-- 's02' or '*', so `= ANY('{s02,*}')` loses no match (the tsvector is still
-- tested). Read from the stored tsvector, so it is the parser's words.
CREATE FUNCTION newznab_season(words tsvector) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN min(s) = max(s) THEN min(s) WHEN min(s) IS NOT NULL THEN '*' END
      FROM (SELECT left(lexeme, 3) AS s
              FROM unnest(tsvector_to_array(words)) AS lexeme
             WHERE lexeme COLLATE "C" >= 's00' AND lexeme COLLATE "C" < 's:'
               AND substr(lexeme, 3, 1) COLLATE "C" BETWEEN '0' AND '9') AS seasons
$$;

CREATE INDEX catalog_release_season_idx
    ON catalog_release (newznab_season(search_vector), posted DESC, id DESC)
 WHERE newznab_season(search_vector) IS NOT NULL;

-- name: drop_release_season
DROP INDEX catalog_release_season_idx;
DROP FUNCTION newznab_season(tsvector);
