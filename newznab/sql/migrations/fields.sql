-- The fields search (migration 0006). Never edit a block a migration has run:
-- a change is a new block and a new migration. docs/newznab.md, "Search".

-- name: create_title_function
-- The title a release's name gives (catalog_release.title_key: lower case,
-- letters and digits, words joined by one space) as tvsearch and movie
-- searches compare it: a leading "the" and every "and" dropped, the common
-- accented letters made plain, the spaces removed. Sonarr and Radarr search
-- by a title cleaned that way ("The Office (US)" -> "Office US", "Law &
-- Order" -> "Law and Order", "Marvel's Agents of S.H.I.E.L.D." -> "Marvels
-- Agents of SHIELD"), and names spell the same title with other separators
-- ("Marvels.Agents.of.S.H.I.E.L.D"). newznab/selectors.py (title_match_key)
-- does the same to the query, and a test holds the two equal. NULL for no title.
CREATE FUNCTION newznab_title(title_key text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT nullif(replace(translate(
               replace(' ' || CASE WHEN left(title_key, 4) = 'the ' THEN substr(title_key, 5)
                                   ELSE title_key END || ' ', ' and ', ' '),
               'àáâãäåāăąçćčďèéêëēėęěìíîïīįłñńňòóôõöøōőřśšşťùúûüūůűųýÿźžż',
               'aaaaaaaaacccdeeeeeeeeiiiiiilnnnoooooooorssstuuuuuuuuyyzzz'), ' ', ''), '')
$$;

-- name: drop_title_function
DROP FUNCTION newznab_title(text);

-- name: drop_release_title_index
-- First, so a build that failed half-way (an invalid index) is built again.
DROP INDEX CONCURRENTLY IF EXISTS catalog_release_title_idx;

-- name: create_release_title_index
-- tvsearch and movie by title: a title's releases by their first season and
-- first episode, newest first. An episode search reads its releases
-- straight (a show's one episode: a few rows however many the show has); a
-- season search its season's; a movie or a daily show the title's, each
-- tested for the year or date. Partial: names without a title are never
-- asked for.
CREATE INDEX CONCURRENTLY catalog_release_title_idx
    ON catalog_release (newznab_title(title_key), (seasons[1]), (episodes[1]), posted DESC, id DESC)
 WHERE title_key <> '';

-- name: drop_release_title_multi_index
DROP INDEX CONCURRENTLY IF EXISTS catalog_release_title_multi_idx;

-- name: create_release_title_multi_index
-- The few releases of several seasons or episodes (S01-S03, S02E04E05),
-- whose later ones the first index does not key: an episode or season search
-- reads these of its title too (a BitmapOr with the first index).
CREATE INDEX CONCURRENTLY catalog_release_title_multi_idx
    ON catalog_release (newznab_title(title_key))
 WHERE title_key <> '' AND (cardinality(seasons) > 1 OR cardinality(episodes) > 1);
