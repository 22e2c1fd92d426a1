-- Searching releases for the newznab API (newznab/selectors.py).
-- docs/newznab.md, "Search": why two strategies and how one is chosen.

-- name: search_walk
-- Common terms: walk the newest releases down the posted index (the
-- category index when categories are given: the query is planned for its
-- values each time, so a NULL %(categories)s folds the test away) and test
-- each row's stored tsvector, reading at most %(budget)s rows. The outer
-- LIMIT stops the walk as soon as the page (plus one row, to know there is
-- more) is found, so a term in every tenth release reads a thousand rows.
SELECT w.id, w.name, w.poster, w.posted, w.size, w.files_seen, w.files_expected, w.category,
       w.groups, w.segments_present, w.segments_expected, w.passworded,
       coalesce(g.grabs, 0) AS grabs
  FROM (SELECT id, name, poster, posted, size, files_seen, files_expected, category, groups,
               segments_present, segments_expected, passworded, search_vector
          FROM catalog_release
         WHERE posted >= %(since)s
           AND (%(categories)s::int[] IS NULL OR category = ANY(%(categories)s::int[]))
           AND (%(incomplete)s
                OR catalog_release_served(listed, counted, files_seen,
                                          files_expected, segments_present,
                                          segments_expected))
           AND (%(passworded)s OR NOT passworded)
         ORDER BY posted DESC, id DESC
         LIMIT %(budget)s) AS w
  LEFT JOIN newznab_release_grabs AS g ON g.release_id = w.id
 WHERE w.search_vector @@ to_tsquery('simple', %(tsquery)s)
   AND w.groups @> %(groups)s::text[]
 ORDER BY w.posted DESC, w.id DESC
 LIMIT %(limit)s OFFSET %(offset)s;

-- name: search_season_walk
-- A season pack of common words: walk that season's releases newest first
-- down the season index (migration 0004), with the names of two seasons
-- ('*') merged in by date, testing each row's stored tsvector and reading at
-- most %(budget)s rows.
SELECT w.id, w.name, w.poster, w.posted, w.size, w.files_seen, w.files_expected, w.category,
       w.groups, w.segments_present, w.segments_expected, w.passworded,
       coalesce(g.grabs, 0) AS grabs
  FROM (SELECT s.* FROM ((SELECT id, name, poster, posted, size, files_seen, files_expected,
                                 category, groups, segments_present, segments_expected,
                                 passworded, search_vector
                            FROM catalog_release
                           WHERE newznab_season(search_vector) = %(season)s::text
                             AND posted >= %(since)s
                             AND (%(incomplete)s
                                  OR catalog_release_served(listed, counted, files_seen,
                                                            files_expected, segments_present,
                                                            segments_expected))
                             AND (%(passworded)s OR NOT passworded)
                           ORDER BY posted DESC, id DESC)
                         UNION ALL
                         (SELECT id, name, poster, posted, size, files_seen, files_expected,
                                 category, groups, segments_present, segments_expected,
                                 passworded, search_vector
                            FROM catalog_release
                           WHERE newznab_season(search_vector) = '*'
                             AND posted >= %(since)s
                             AND (%(incomplete)s
                                  OR catalog_release_served(listed, counted, files_seen,
                                                            files_expected, segments_present,
                                                            segments_expected))
                             AND (%(passworded)s OR NOT passworded)
                           ORDER BY posted DESC, id DESC)) AS s
          ORDER BY s.posted DESC, s.id DESC
          LIMIT %(budget)s) AS w
  LEFT JOIN newznab_release_grabs AS g ON g.release_id = w.id
 WHERE w.search_vector @@ to_tsquery('simple', %(tsquery)s)
   AND (%(categories)s::int[] IS NULL OR w.category = ANY(%(categories)s::int[]))
   AND w.groups @> %(groups)s::text[]
 ORDER BY w.posted DESC, w.id DESC
 LIMIT %(limit)s OFFSET %(offset)s;

-- name: search_matches
-- Rare terms (or a page the walk could not fill): every match from the GIN
-- index (a bitmap), then the page by date. MATERIALIZED keeps the planner
-- from walking the posted index for a term it thinks common. The total is
-- exact here and capped at %(total_cap)s. The index is asked the uncommon
-- terms, and the common ones while many candidates are left (index_tsquery,
-- index_terms); the whole query is tested on each
-- candidate's stored tsvector (the `|| ''` keeps it out of the index scan).
-- The words' index (migration 0010) is asked %(index_categories)s with them
-- when they rule out enough candidates to pay for it (selectors.index_categories;
-- `category + 0`, its column: never the btree category indexes, whose
-- bitmap of half the table would cost more than it saves; %(categories)s are
-- tested on each candidate, as `category - 0`, which no index has) and, for a newest
-- window, its weeks (%(weeks)s, selectors.window_weeks; NULL: every week):
-- it skips through the words' posting lists to the rows of those weeks and
-- categories. A season pack gives %(season)s ('s02'): the season index
-- (newznab_season, migration 0004) then gives the window's rows of that
-- season, ANDed with the words' bitmap (NULL: the clause is folded away),
-- or alone when the words are common (index_tsquery '': folded away too).
-- The index's tsquery is an InitPlan's value, so the planner estimates it at
-- its default share (one row in 200), not from the words' statistics: the words of a
-- title as independent gave one row in ten million, and the planner then
-- tested the window's dates on every match read from the heap instead of
-- ANDing the BRIN range (11,836 heap pages for 3,001 matches in the window at
-- 10 M releases; 58 to 325 with it).
-- A page past the end still gives one row: no release (id NULL), the total.
WITH hits AS MATERIALIZED (
    SELECT id, posted
      FROM catalog_release
     WHERE (%(index_tsquery)s = ''
            OR search_vector @@ (SELECT to_tsquery('simple', %(index_tsquery)s)))
       AND (search_vector || ''::tsvector) @@ to_tsquery('simple', %(tsquery)s)
       AND posted >= %(since)s
       AND (%(incomplete)s
            OR catalog_release_served(listed, counted, files_seen,
                                      files_expected, segments_present,
                                      segments_expected))
       AND (%(passworded)s OR NOT passworded)
       AND (%(index_categories)s::int[] IS NULL
            OR category + 0 = ANY(%(index_categories)s::int[]))
       AND (%(categories)s::int[] IS NULL OR category - 0 = ANY(%(categories)s::int[]))
       AND (%(weeks)s::int[] IS NULL OR newznab_week(posted) = ANY(%(weeks)s::int[]))
       AND groups @> %(groups)s::text[]
       AND (%(season)s::text IS NULL
            OR newznab_season(search_vector) = ANY(ARRAY[%(season)s::text, '*']))
), page AS (
    SELECT id, posted FROM hits ORDER BY posted DESC, id DESC LIMIT %(limit)s OFFSET %(offset)s
)
SELECT r.id, r.name, r.poster, r.posted, r.size, r.files_seen, r.files_expected, r.category,
       r.groups, r.segments_present, r.segments_expected, r.passworded,
       coalesce(g.grabs, 0) AS grabs, t.total
  FROM (SELECT count(*) AS total FROM (SELECT 1 FROM hits LIMIT %(total_cap)s) AS c) AS t
  LEFT JOIN (page
             JOIN catalog_release AS r ON r.id = page.id
             LEFT JOIN newznab_release_grabs AS g ON g.release_id = r.id) ON true
 ORDER BY page.posted DESC, page.id DESC;


-- name: newest_posted
-- The newest posting date (the date index's first entry): a newest window's
-- last week (selectors.window_weeks).
SELECT max(posted) AS posted FROM catalog_release;

-- name: title_bound
-- A word search whose words are a title (selectors.title_bound): the posted
-- date of the title's %(wanted)s-th newest listed release in the categories
-- (none: fewer), from the listed titles' index alone (migration 0009). A
-- newest window from that date holds at least the page's rows. Ordered by
-- the index's keys (the title is one value), so the plan reads %(wanted)s
-- entries down it: ordered by date alone, the planner once walked the date
-- index for a title it thought common (38 s at 10 M releases).
SELECT posted
  FROM catalog_release
 WHERE listed AND title_key <> ''
   AND newznab_title(title_key) = %(title)s
   AND posted >= %(since)s
   AND (%(categories)s::int[] IS NULL OR category = ANY(%(categories)s::int[]))
 ORDER BY newznab_title(title_key), posted DESC, id DESC
 OFFSET %(wanted)s - 1
 LIMIT 1;

-- name: search_fields
-- tvsearch and movie by title (docs/newznab.md, "Search"): the title's
-- releases from the title indexes (migration 0006), each tested for the
-- season, episode, absolute episode, air date and year asked (a NULL
-- parameter folds its test away: planned for its values each time); with
-- %(season_or_aired)s, the season or an air date in the range (a year as
-- season). The season's clause is the indexes': a release's first season
-- and episode (the first index's keys), or its several (the second's). It
-- tests a release of one season and episode by the first alone: a
-- containment test beside it would make the planner count the season twice
-- and read every release of the title instead. The season comes with the
-- episode (search_params.py: an ep without one is an absolute number).
-- %(titles)s are newznab_title() keys, any of which matches; or, with
-- %(by_id)s, the releases of an IMDb or TVDB id inspection recorded
-- (catalog_release_imdb_idx, catalog_release_tvdb_idx) in place of the title.
SELECT r.id, r.name, r.poster, r.posted, r.size, r.files_seen, r.files_expected, r.category,
       r.groups, r.segments_present, r.segments_expected, r.passworded,
       coalesce(g.grabs, 0) AS grabs
  FROM catalog_release AS r
  LEFT JOIN newznab_release_grabs AS g ON g.release_id = r.id
 WHERE (%(by_id)s OR (newznab_title(r.title_key) = ANY(%(titles)s::text[])
                      AND r.title_key <> ''))
   AND (%(imdb_id)s::text IS NULL OR r.imdb_id = %(imdb_id)s::text)
   AND (%(tvdb_id)s::int IS NULL OR r.tvdb_id = %(tvdb_id)s::int)
   AND (%(year)s::int IS NULL OR r.year = %(year)s::int)
   AND (%(season)s::int IS NULL
        OR (r.seasons[1] = %(season)s::int
            AND (%(episode)s::int IS NULL OR r.episodes[1] = %(episode)s::int))
        OR ((cardinality(r.seasons) > 1 OR cardinality(r.episodes) > 1)
            AND r.seasons @> ARRAY[%(season)s::smallint]
            AND (%(episode)s::int IS NULL OR r.episodes @> ARRAY[%(episode)s::smallint]))
        OR (%(season_or_aired)s AND r.air_date >= %(aired_from)s::date
            AND r.air_date < %(aired_until)s::date))
   AND (%(absolute)s::int IS NULL OR r.absolute_episodes @> ARRAY[%(absolute)s::smallint])
   AND (%(season_or_aired)s OR %(aired_from)s::date IS NULL
        OR r.air_date >= %(aired_from)s::date)
   AND (%(season_or_aired)s OR %(aired_until)s::date IS NULL
        OR r.air_date < %(aired_until)s::date)
   AND (%(incomplete)s
        OR catalog_release_served(r.listed, r.counted, r.files_seen,
                                  r.files_expected, r.segments_present,
                                  r.segments_expected))
   AND (%(passworded)s OR NOT r.passworded)
   AND r.posted >= %(since)s
   AND (%(categories)s::int[] IS NULL OR r.category = ANY(%(categories)s::int[]))
   AND r.groups @> %(groups)s::text[]
 ORDER BY r.posted DESC, r.id DESC
 LIMIT %(limit)s OFFSET %(offset)s;

-- name: count_fields
SELECT count(*) AS total
  FROM (SELECT 1
          FROM catalog_release AS r
         WHERE (%(by_id)s OR (newznab_title(r.title_key) = ANY(%(titles)s::text[])
                              AND r.title_key <> ''))
           AND (%(imdb_id)s::text IS NULL OR r.imdb_id = %(imdb_id)s::text)
           AND (%(tvdb_id)s::int IS NULL OR r.tvdb_id = %(tvdb_id)s::int)
           AND (%(year)s::int IS NULL OR r.year = %(year)s::int)
           AND (%(season)s::int IS NULL
                OR (r.seasons[1] = %(season)s::int
                    AND (%(episode)s::int IS NULL OR r.episodes[1] = %(episode)s::int))
                OR ((cardinality(r.seasons) > 1 OR cardinality(r.episodes) > 1)
                    AND r.seasons @> ARRAY[%(season)s::smallint]
                    AND (%(episode)s::int IS NULL OR r.episodes @> ARRAY[%(episode)s::smallint]))
                OR (%(season_or_aired)s AND r.air_date >= %(aired_from)s::date
                    AND r.air_date < %(aired_until)s::date))
           AND (%(absolute)s::int IS NULL
                OR r.absolute_episodes @> ARRAY[%(absolute)s::smallint])
           AND (%(season_or_aired)s OR %(aired_from)s::date IS NULL
                OR r.air_date >= %(aired_from)s::date)
           AND (%(season_or_aired)s OR %(aired_until)s::date IS NULL
                OR r.air_date < %(aired_until)s::date)
           AND (%(incomplete)s
                OR catalog_release_served(r.listed, r.counted, r.files_seen,
                                          r.files_expected, r.segments_present,
                                          r.segments_expected))
           AND (%(passworded)s OR NOT r.passworded)
           AND r.posted >= %(since)s
           AND (%(categories)s::int[] IS NULL OR r.category = ANY(%(categories)s::int[]))
           AND r.groups @> %(groups)s::text[]
         LIMIT %(total_cap)s) AS c;

-- name: newest_releases
-- No words: the newest releases (t=search without q, the RSS feed, the
-- category browse). The page's ids come first, from the listed releases'
-- index (migration 0011: date, id, category and passworded) read alone, so an offset
-- deep in the list or a category among the others skips index entries, not
-- heap pages; then the page's rows. Served releases are the listed ones and
-- those not counted again yet whose stored totals are complete
-- (catalog_release_served): two disjoint branches merged by date, the
-- second found through the uncounted index (empty once the upkeep counted
-- them); each branch ordered and cut at the page's end, so the first is a
-- walk down the index, not every listed release sorted. Planned for its values every time: `%(incomplete)s OR listed`
-- folds to `listed`, which the partial index needs, and no categories or
-- groups fold their tests away; a prepared generic plan kept none of that
-- (it scanned every release for a category).
WITH page AS MATERIALIZED (
    (SELECT id, posted
       FROM catalog_release
      WHERE (%(incomplete)s OR listed)
        AND posted >= %(since)s
        AND (%(passworded)s OR NOT passworded)
        AND (%(categories)s::int[] IS NULL OR category = ANY(%(categories)s::int[]))
        AND (cardinality(%(groups)s::text[]) = 0 OR groups @> %(groups)s::text[])
      ORDER BY posted DESC, id DESC
      LIMIT %(limit)s + %(offset)s)
    UNION ALL
    (SELECT id, posted
       FROM catalog_release
      WHERE NOT %(incomplete)s AND NOT listed AND NOT counted
        AND catalog_release_served(listed, counted, files_seen, files_expected,
                                   segments_present, segments_expected)
        AND posted >= %(since)s
        AND (%(passworded)s OR NOT passworded)
        AND (%(categories)s::int[] IS NULL OR category = ANY(%(categories)s::int[]))
        AND (cardinality(%(groups)s::text[]) = 0 OR groups @> %(groups)s::text[])
      ORDER BY posted DESC, id DESC
      LIMIT %(limit)s + %(offset)s)
    ORDER BY posted DESC, id DESC
    LIMIT %(limit)s OFFSET %(offset)s
)
SELECT r.id, r.name, r.poster, r.posted, r.size, r.files_seen, r.files_expected, r.category,
       r.groups, r.segments_present, r.segments_expected, r.passworded,
       coalesce(g.grabs, 0) AS grabs
  FROM page
  JOIN catalog_release AS r ON r.id = page.id
  LEFT JOIN newznab_release_grabs AS g ON g.release_id = r.id
 ORDER BY page.posted DESC, page.id DESC;

-- name: newest_in_categories
-- newest_releases for categories that are rare together (selectors.newest
-- decides by their share): each category's newest listed releases from the
-- listed releases' category index (migration 0011), up to the page's end,
-- merged by date with the served releases not counted again yet. Walking
-- the date index for a category in one release of two thousand read every
-- other category's entries (0.4 s at 10 M releases for a page at offset 500).
WITH page AS MATERIALIZED (
    (SELECT c.id, c.posted
       FROM unnest(%(categories)s::int[]) AS wanted(category)
      CROSS JOIN LATERAL (
            SELECT id, posted
              FROM catalog_release
             WHERE (%(incomplete)s OR listed)
               AND category = wanted.category
               AND posted >= %(since)s
               AND (%(passworded)s OR NOT passworded)
               AND (cardinality(%(groups)s::text[]) = 0 OR groups @> %(groups)s::text[])
             ORDER BY posted DESC, id DESC
             LIMIT %(limit)s + %(offset)s) AS c)
    UNION ALL
    (SELECT id, posted
       FROM catalog_release
      WHERE NOT %(incomplete)s AND NOT listed AND NOT counted
        AND catalog_release_served(listed, counted, files_seen, files_expected,
                                   segments_present, segments_expected)
        AND posted >= %(since)s
        AND (%(passworded)s OR NOT passworded)
        AND category = ANY(%(categories)s::int[])
        AND (cardinality(%(groups)s::text[]) = 0 OR groups @> %(groups)s::text[])
      ORDER BY posted DESC, id DESC
      LIMIT %(limit)s + %(offset)s)
    ORDER BY posted DESC, id DESC
    LIMIT %(limit)s OFFSET %(offset)s
)
SELECT r.id, r.name, r.poster, r.posted, r.size, r.files_seen, r.files_expected, r.category,
       r.groups, r.segments_present, r.segments_expected, r.passworded,
       coalesce(g.grabs, 0) AS grabs
  FROM page
  JOIN catalog_release AS r ON r.id = page.id
  LEFT JOIN newznab_release_grabs AS g ON g.release_id = r.id
 ORDER BY page.posted DESC, page.id DESC;

-- name: count_newest
-- newest_releases' total, up to %(total_cap)s: the same two branches.
SELECT count(*) AS total
  FROM ((SELECT 1
           FROM catalog_release
          WHERE (%(incomplete)s OR listed)
            AND posted >= %(since)s
            AND (%(passworded)s OR NOT passworded)
            AND (%(categories)s::int[] IS NULL OR category = ANY(%(categories)s::int[]))
            AND (cardinality(%(groups)s::text[]) = 0 OR groups @> %(groups)s::text[]))
         UNION ALL
         (SELECT 1
            FROM catalog_release
           WHERE NOT %(incomplete)s AND NOT listed AND NOT counted
             AND catalog_release_served(listed, counted, files_seen, files_expected,
                                        segments_present, segments_expected)
             AND posted >= %(since)s
             AND (%(passworded)s OR NOT passworded)
             AND (%(categories)s::int[] IS NULL OR category = ANY(%(categories)s::int[]))
             AND (cardinality(%(groups)s::text[]) = 0 OR groups @> %(groups)s::text[]))
         LIMIT %(total_cap)s) AS c;

-- name: release_by_id
SELECT r.id, r.name, r.poster, r.posted, r.size, r.files_seen, r.files_expected, r.category,
       r.groups, r.segments_present, r.segments_expected, r.has_par2, r.has_nfo, r.passworded,
       coalesce(g.grabs, 0) AS grabs
  FROM catalog_release AS r
  LEFT JOIN newznab_release_grabs AS g ON g.release_id = r.id
 WHERE r.id = %(id)s;

-- name: count_release_grab
INSERT INTO newznab_release_grabs AS g (release_id, grabs)
VALUES (%(release_id)s, 1)
ON CONFLICT (release_id) DO UPDATE SET grabs = g.grabs + 1;

-- name: search_term_stats
-- How common each word of release names is: ANALYZE's most common elements
-- of the tsvector column (the last three frequencies are their minimum,
-- maximum and the null fraction), and the table's row estimate. A word not
-- listed is rarer than the minimum. The posted dates' histogram (equal
-- shares of the releases between bounds) gives the date after which a given
-- share of the newest releases was posted.
SELECT s.most_common_elems::text::text[] AS terms,
       s.most_common_elem_freqs AS freqs,
       h.histogram_bounds::text::timestamptz[] AS posted_bounds,
       k.most_common_vals::text::int[] AS categories,
       k.most_common_freqs AS category_shares,
       greatest(c.reltuples, 0)::bigint AS releases
  FROM pg_class AS c
  LEFT JOIN pg_stats AS s
    ON s.schemaname = current_schema() AND s.tablename = 'catalog_release'
   AND s.attname = 'search_vector'
  LEFT JOIN pg_stats AS h
    ON h.schemaname = current_schema() AND h.tablename = 'catalog_release'
   AND h.attname = 'posted'
  LEFT JOIN pg_stats AS k
    ON k.schemaname = current_schema() AND k.tablename = 'catalog_release'
   AND k.attname = 'category'
 WHERE c.oid = 'catalog_release'::regclass;

-- name: ids_carried
-- Whether any release carries an IMDb or a TVDB id (caps offers imdbid and
-- tvdbid only then): one probe of each partial index.
SELECT EXISTS (SELECT 1 FROM catalog_release WHERE imdb_id IS NOT NULL) AS imdb,
       EXISTS (SELECT 1 FROM catalog_release WHERE tvdb_id IS NOT NULL) AS tvdb;

-- name: installation_identity
-- This installation's identity (migration 0005), which release guids carry.
SELECT identity FROM newznab_installation;
