-- The live definition of every function, view and trigger the newznab app
-- owns: the words and season of a release name that the search's generated
-- columns and indexes are computed from.
--
-- This file is the truth; it is never run by the coordinator. Migrations are
-- deltas toward it (their SQL in sql/migrations/, never edited once run), and
-- tests/core/test_schema_drift.py holds the two equal: change a definition
-- here and in a new migration together.

-- Scene names are words joined by dots, dashes and underscores
-- ("Show.Name.S01E02.720p.HDTV.x264-GRP"): they become spaces before the
-- 'simple' parser (no stemming, no stop words: "The" and "It" are titles).
-- A stored generated column, not an expression index: the date-ordered walk
-- tests it on every row it reads, and recomputing to_tsvector there would
-- cost more than the walk. Added by this app to the catalog's table (the
-- higher layer plugs itself in; the catalog never reads it).
CREATE OR REPLACE FUNCTION newznab_words(name text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT translate(name, '._-+()[]{}', '          ')
$$;

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
CREATE OR REPLACE FUNCTION newznab_season(words tsvector) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN min(s) = max(s) THEN min(s) WHEN min(s) IS NOT NULL THEN '*' END
      FROM (SELECT left(lexeme, 3) AS s
              FROM unnest(tsvector_to_array(words)) AS lexeme
             WHERE lexeme COLLATE "C" >= 's00' AND lexeme COLLATE "C" < 's:'
               AND substr(lexeme, 3, 1) COLLATE "C" BETWEEN '0' AND '9') AS seasons
$$;

-- The title a release's name gives (catalog_release.title_key: lower case,
-- letters and digits, words joined by one space) as tvsearch and movie
-- searches compare it: a leading "the" and every "and" dropped, the common
-- accented letters made plain, the spaces removed. Sonarr and Radarr search
-- by a title cleaned that way ("The Office (US)" -> "Office US", "Law &
-- Order" -> "Law and Order", "Marvel's Agents of S.H.I.E.L.D." -> "Marvels
-- Agents of SHIELD"), and names spell the same title with other separators
-- ("Marvels.Agents.of.S.H.I.E.L.D"). newznab/selectors.py (title_match_key)
-- does the same to the query, and a test holds the two equal. NULL for no title.
CREATE OR REPLACE FUNCTION newznab_title(title_key text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT nullif(replace(translate(
               replace(' ' || CASE WHEN left(title_key, 4) = 'the ' THEN substr(title_key, 5)
                                   ELSE title_key END || ' ', ' and ', ' '),
               'àáâãäåāăąçćčďèéêëēėęěìíîïīįłñńňòóôõöøōőřśšşťùúûüūůűųýÿźžż',
               'aaaaaaaaacccdeeeeeeeeiiiiiilnnnoooooooorssstuuuuuuuuyyzzz'), ' ', ''), '')
$$;

-- The week a release was posted in (weeks since 1970-01-01, a Thursday), the
-- first column of the words' GIN index (catalog_release_words_idx, migration
-- 0010): a word search in a newest window asks the index for the window's
-- weeks (selectors.window_weeks), and the index skips the rows of every
-- other week. Immutable: an epoch is the same in every time zone.
CREATE OR REPLACE FUNCTION newznab_week(posted timestamptz) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT floor(extract(epoch FROM posted) / 604800)::integer
$$;
