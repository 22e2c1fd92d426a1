"""newznab search latency over N releases (default 10 million) spliced from real names.

The releases (bench/search_catalog.py) are the corpora's real TV, anime and
movie names with other titles and numbers, and scene-shaped music, books and
software, with the fields a name gives, distributed like a catalog's: half
TV, most releases listed, the newest often not yet. They are loaded in SQL
into a database of their own (`bench_search_10m` for 10 M) and kept there: a
later run with the same size reuses them (`--rebuild` loads them again).

Every kind of request the newznab API serves, as Sonarr, Radarr, Prowlarr and
a person send it (t=search with words, a title and a year, an anime episode;
tvsearch by episode, season, daily date, absolute number, id; movie by title
and year, id; the RSS feed, the category browse, deep offsets), read into a
query by the API's own parameter code and run through the selector the API
calls (newznab.selectors.search / newest), p50, p95 and p99 per kind, beside
a bare indexed lookup (one release by primary key) in the same run, with the
load average; then EXPLAIN (ANALYZE, BUFFERS) of the slowest query of the
slowest kinds. Method and figures: docs/performance.md.

Run: .venv/bin/python bench/bench_search.py [--releases 10000000] [--queries 200]
     [--database NAME] [--rebuild | --no-load] [--load-only] [--only KIND] [--explain N]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any

os.environ.setdefault("LOG_LEVEL", "WARNING")


def _options() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", type=int, default=10_000_000)
    parser.add_argument("--queries", type=int, default=200, help="per kind of query")
    parser.add_argument(
        "--database", help="the kept dataset's database (default bench_search_<size>, e.g. _10m)"
    )
    parser.add_argument("--rebuild", action="store_true", help="load again even if kept")
    parser.add_argument(
        "--no-load", action="store_true", help="use the database's releases as they are"
    )
    parser.add_argument("--load-only", action="store_true", help="load, then stop")
    parser.add_argument(
        "--only", action="append", default=[], help="run the kinds whose name contains this"
    )
    parser.add_argument("--explain", type=int, default=3, help="EXPLAIN the N slowest kinds")
    return parser.parse_args()


def _size_label(count: int) -> str:
    if count % 1_000_000 == 0:
        return f"{count // 1_000_000}m"
    return f"{count // 1000}k" if count % 1000 == 0 else str(count)


OPTIONS = _options() if __name__ == "__main__" else None

from django_setup import setup  # noqa: E402

setup(
    (OPTIONS.database or f"bench_search_{_size_label(OPTIONS.releases)}")
    if OPTIONS
    else "bench_search"
)

import search_catalog  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import RequestFactory  # noqa: E402

from newznab.api import MOVIES, TV, asked_ids  # noqa: E402
from newznab.categories import expand  # noqa: E402
from newznab.search_params import movie_query, search_query, titled, tv_query  # noqa: E402
from newznab.selectors import Fields, SearchPage, SearchQuery, newest, search  # noqa: E402
from usenet.release_names import FIELDS_VERSION  # noqa: E402

TITLE_SKEW = 2.0  # a title of rank r is drawn with probability ~ r^(-1/2)
TITLES = 200_000  # distinct titles: the corpora's, then each with a made-up word added
DATASET_VERSION = 2  # bump when the releases made change (a kept dataset is then rebuilt)


# One release per n: a template of its kind (bench/search_catalog.py), a title,
# new numbers, the fields the template's parse gave with them. The random
# draws are made once per row (OFFSET 0 keeps them from being pulled up).
# Titles: TV and anime draw rank r with probability ~ r^(-1/2) (a long show
# is in ~0.2 % of the releases), movies from the other end with less skew
# (a popular movie has a few hundred releases). Music, books and software
# are titled by two words of the vocabulary.
LOAD_SQL = """
INSERT INTO catalog_release (key, name, poster, posted, last_posted, size, files_expected,
                             files_seen, segments_present, segments_expected, has_par2, has_nfo,
                             category, category_version, groups, created_at, updated_at,
                             kind, title_key, year, seasons, episodes, absolute_episodes,
                             air_date, full_season, resolution, source, codec, release_group,
                             fields_version, listed)
SELECT decode(md5(d.n::text), 'hex'),
       t.prefix || replace(initcap(d.title), ' ', t.separator)
           || replace(replace(replace(replace(replace(replace(replace(replace(t.rest,
                  '{SE}', 'S' || lpad(d.season::text, 2, '0') || 'E'
                              || lpad(d.episode::text, 2, '0')),
                  '{Y}', d.year::text),
                  '{D}', to_char(d.air_date, 'YYYY.MM.DD')),
                  '{D-}', to_char(d.air_date, 'YYYY-MM-DD')),
                  '{D_}', to_char(d.air_date, 'YYYY MM DD')),
                  '{A}', lpad(d.absolute::text, 3, '0')),
                  '{T2}', initcap(d.word) || '.' || initcap(d.word2)),
                  '{V}', (d.n %% 20) || '.' || (d.n %% 7)),
       'poster' || (d.n %% 5000) || '@bench', d.posted, d.posted + interval '20 minutes',
       d.size, 40, CASE WHEN d.listed THEN 40 ELSE 39 - (d.n %% 20)::int END,
       CASE WHEN d.listed THEN 4000 ELSE 3900 - (d.n %% 2000) END, 4000, true, true,
       t.category, 1,
       CASE WHEN d.cross THEN ARRAY[t.groups[1 + d.n %% cardinality(t.groups)],
                                    t.groups[1 + (d.n + 1) %% cardinality(t.groups)]]
            ELSE ARRAY[t.groups[1 + d.n %% cardinality(t.groups)]] END,
       now(), now(), t.kind, d.title,
       CASE WHEN t.rest LIKE '%%{Y}%%' THEN d.year
            WHEN t.rest LIKE '%%{D%%' AND t.year IS NOT NULL
            THEN extract(year FROM d.air_date)::int ELSE t.year END,
       CASE WHEN t.rest LIKE '%%{SE}%%' THEN ARRAY[d.season] ELSE t.seasons END::smallint[],
       CASE WHEN t.rest LIKE '%%{SE}%%' THEN ARRAY[d.episode] ELSE t.episodes END::smallint[],
       CASE WHEN t.rest LIKE '%%{A}%%' THEN ARRAY[d.absolute] ELSE t.absolute END::smallint[],
       CASE WHEN t.rest LIKE '%%{D%%' THEN d.air_date ELSE t.air_date END,
       t.full_season, t.resolution, t.source, t.codec, t.grp, %(fields_version)s, d.listed
  FROM (SELECT r.n, r.kind_no, r.posted, r.listed, r.cross,
               1 + floor(pow(r.u1, 2) * 20)::int AS season, 1 + floor(r.u2 * 22)::int AS episode,
               1930 + floor(pow(r.u2, 0.35) * 96)::int AS year,
               date '2008-01-01' + floor(r.u3 * 6500)::int AS air_date,
               1 + floor(pow(r.u3, 1.5) * 900)::int AS absolute,
               (r.u4 * r.u4 * r.u4 * 30000000000)::bigint + 20000000 AS size,
               floor(r.u5 * (%(templates_of)s::int[])[r.kind_no])::int AS template,
               CASE WHEN r.kind_no <= 3 THEN ti.title
                    ELSE (%(words)s::text[])[1 + floor(r.u1 * %(nwords)s)::int] END AS title,
               (%(words)s::text[])[1 + floor(r.u2 * %(nwords)s)::int] AS word,
               (%(words)s::text[])[1 + floor(r.u3 * %(nwords)s)::int] AS word2
          FROM (SELECT n, random() AS u1, random() AS u2, random() AS u3, random() AS u4,
                       random() AS u5,
                       CASE WHEN k < %(tv)s THEN 1 WHEN k < %(movie)s THEN 2
                            WHEN k < %(anime)s THEN 3 WHEN k < %(audio)s THEN 4
                            WHEN k < %(book)s THEN 5 ELSE 6 END AS kind_no,
                       CASE WHEN k >= %(tv)s AND k < %(movie)s
                            THEN %(titles)s - 1 - floor(pow(random(), 1.3) * %(titles)s)::int
                            ELSE floor(pow(random(), %(skew)s) * %(titles)s)::int END AS title_rank,
                       now() - make_interval(secs => (%(count)s - n) * 3 + random() * 21600)
                           AS posted,
                       -- still arriving: the newest are often not complete yet
                       random() >= CASE WHEN %(count)s - n < %(count)s / 200 THEN 0.3
                                        ELSE 0.02 END AS listed,
                       random() < 0.12 AS cross
                  FROM (SELECT n, random() AS k
                          FROM generate_series(%(start)s::bigint, %(stop)s::bigint) AS n
                        OFFSET 0) AS drawn
                OFFSET 0) AS r
          JOIN bench_title AS ti ON ti.rank = r.title_rank) AS d
  JOIN bench_template AS t ON t.kind_no = d.kind_no AND t.number = d.template
"""
KIND_ORDER = ("tv", "movie", "anime", "audio", "book", "software")


def _store_templates(cursor, words: list[str]) -> dict[str, object]:
    """The templates and titles in tables of the bench's database; the load's parameters."""
    templates = search_catalog.templates()
    cursor.execute("DROP TABLE IF EXISTS bench_template, bench_title")
    cursor.execute(
        "CREATE TABLE bench_template (kind_no int, number int, kind text, prefix text,"
        " separator text, rest text, category int, year int, seasons smallint[],"
        " episodes smallint[], absolute smallint[], air_date date, full_season boolean,"
        " resolution smallint, source text, codec text, grp text, groups text[],"
        " PRIMARY KEY (kind_no, number))"
    )
    counts = []
    for kind_no, kind in enumerate(KIND_ORDER, start=1):
        mine = [t for t in templates if t.kind == kind]
        counts.append(len(mine))
        for number, t in enumerate(mine):
            cursor.execute(
                "INSERT INTO bench_template VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,"
                " %s, %s, %s, %s, %s, %s, %s)",
                [kind_no, number, kind, t.prefix, t.separator, t.rest, t.category, t.year,
                 t.seasons, t.episodes, t.absolute, t.air_date, t.full_season, t.resolution,
                 t.source, t.codec, t.group, search_catalog.GROUPS[kind]],
            )  # fmt: skip
    print("  templates: " + ", ".join(f"{k} {c}" for k, c in zip(KIND_ORDER, counts, strict=True)))
    base = search_catalog.base_titles()
    titles = [
        base[rank % len(base)] + ("" if rank < len(base) else " " + words[rank // len(base) - 1])
        for rank in range(TITLES)
    ]
    cursor.execute("CREATE TABLE bench_title (rank int PRIMARY KEY, title text)")
    with cursor.copy("COPY bench_title (rank, title) FROM STDIN") as copy:
        for rank, title in enumerate(titles):
            copy.write_row((rank, title))
    print(f"  titles: {len(base)} from the corpora, {TITLES:,} in all")
    edges, total = {}, 0.0
    for kind in KIND_ORDER:
        total += search_catalog.KIND_SHARES[kind]
        edges[kind] = total
    return {**edges, "templates_of": counts, "words": words, "nwords": len(words),
            "skew": TITLE_SKEW, "titles": TITLES, "fields_version": FIELDS_VERSION}  # fmt: skip


def load(count: int, words: list[str]) -> None:
    connection.ensure_connection()
    connection.connection.autocommit = True
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS bench_search_dataset")
        cursor.execute("TRUNCATE catalog_release, newznab_release_grabs RESTART IDENTITY CASCADE")
        params = _store_templates(cursor.cursor, words)
        # Indexes are dropped for the load and built after it, from definitions
        # kept in a table of the bench's database (so an interrupted load loses none).
        cursor.execute(
            "CREATE TABLE IF NOT EXISTS bench_release_indexes (name text PRIMARY KEY, definition text)"
        )
        cursor.execute(
            "INSERT INTO bench_release_indexes SELECT indexname, indexdef FROM pg_indexes"
            " WHERE tablename = 'catalog_release' AND indexname <> 'catalog_release_pkey'"
            " ON CONFLICT DO NOTHING"
        )
        cursor.execute("SELECT name, definition FROM bench_release_indexes ORDER BY name")
        indexes = cursor.fetchall()
        for name, _ in indexes:
            cursor.execute(f'DROP INDEX IF EXISTS "{name}"')
        started = time.perf_counter()
        step = 1_000_000
        for start in range(1, count + 1, step):
            stop = min(count, start + step - 1)
            cursor.execute(LOAD_SQL, {**params, "count": count, "start": start, "stop": stop})
            print(f"  {stop:>11,} releases  {time.perf_counter() - started:6.0f}s", flush=True)
        loaded = time.perf_counter() - started
        cursor.execute("SET maintenance_work_mem = '1GB'")
        for name, definition in indexes:
            began = time.perf_counter()
            cursor.execute(definition)
            print(f"  index {name}: {time.perf_counter() - began:.0f}s", flush=True)
        cursor.execute("VACUUM ANALYZE catalog_release")
        built = time.perf_counter() - started
        cursor.execute(
            "CREATE TABLE bench_search_dataset AS SELECT %s::int AS version, %s::bigint AS releases,"
            " %s::float AS load_seconds, %s::float AS build_seconds, now() AS built_at",
            [DATASET_VERSION, count, loaded, built],
        )
        print(f"  loaded in {loaded:.0f}s, with indexes and VACUUM ANALYZE {built:.0f}s")


def dataset() -> tuple[int, int] | None:
    """The kept dataset's (version, releases), None when none was completed."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass('bench_search_dataset') IS NOT NULL")
        if not cursor.fetchone()[0]:
            return None
        cursor.execute("SELECT version, releases FROM bench_search_dataset")
        return cursor.fetchone()


def percentiles(times: list[float]) -> tuple[float, float, float]:
    ordered = sorted(times)

    def at(share: float) -> float:
        return ordered[min(len(ordered) - 1, int(len(ordered) * share))]

    return statistics.median(ordered), at(0.95), at(0.99)


# --- the requests -----------------------------------------------------------------

Request = dict[str, str]
SONARR_TV = "5030,5040,5045,5070"  # what Sonarr asks with its defaults and anime added
RADARR_MOVIES = "2000,2030,2040,2045,2050"
REQUESTS = RequestFactory()


def page_of(kind: str, request: Request) -> SearchPage:
    """What /api (kind "api") or /rss (kind "rss") reads for these parameters, through
    the API's own parameter code and the selector it calls (newznab/api.py)."""
    http = REQUESTS.get("/" + kind, request)
    if kind == "rss":
        categories = [int(c) for c in request.get("t", "0").split(",") if int(c)]
        query = SearchQuery(categories=expand(categories) or None, limit=100,
                            incomplete=request.get("incomplete") == "1")  # fmt: skip
        return newest(query)
    function = request["t"]
    if function == "search":
        query = titled(search_query(http))
    elif function == "tvsearch":
        query = tv_query(http, search_query(http, default_categories=[TV]))
    else:
        query = movie_query(search_query(http, default_categories=[MOVIES]))
    ids = asked_ids(http)
    if not ids.named:
        return search(query)
    # newznab/api.py by_id: the id's releases, or an empty page for one no release can carry.
    if ids.imdb_id is None and ids.tvdb_id is None:
        return SearchPage(query.offset, 0, plan="id: empty page")
    asked = query.fields if function == "tvsearch" else None
    fields = replace(asked or Fields(()), titles=(), imdb_id=ids.imdb_id, tvdb_id=ids.tvdb_id)
    return search(replace(query, fields=fields))


class Sample:
    """Listed releases drawn from the table (TABLESAMPLE, a fixed seed): what clients
    ask for is what the catalog holds, a long show as often as it is there."""

    def __init__(self, releases: int) -> None:
        # 0.5 % of the pages at 10 M releases (about 50,000 rows); all of a small table.
        percent = min(100.0, 0.5 * 10_000_000 / max(releases, 1))
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT kind, title_key, seasons, episodes, year, air_date, absolute_episodes,"
                " name FROM catalog_release TABLESAMPLE SYSTEM (%s) REPEATABLE (7)"
                " WHERE listed AND title_key <> '' LIMIT 40000",
                [percent],
            )
            rows = cursor.fetchall()
        self.episodes = [r for r in rows if r[0] == "tv" and len(r[2]) == 1 and len(r[3]) == 1]
        self.seasons = [r for r in rows if r[0] == "tv" and len(r[2]) >= 1]
        self.dailies = [r for r in rows if r[0] == "tv" and r[5] is not None]
        self.animes = [r for r in rows if r[0] == "anime" and r[6]]
        self.movies = [r for r in rows if r[0] == "movie" and r[4] is not None]
        self.titles = [r[1] for r in rows if r[0] in ("tv", "movie", "anime")]
        words = Counter(w for r in rows for w in set(r[1].split()))
        ranked = [w for w, _ in words.most_common() if len(w) > 2]
        self.common = ranked[:20]  # in ≈ 1 % of the releases or more
        self.middling = ranked[100:1000]
        self.rare = [w for w, n in words.items() if n == 1 and len(w) > 3]
        print(f"sample: {len(rows):,} releases ({len(self.episodes):,} episodes, "
              f"{len(self.dailies):,} dailies, {len(self.animes):,} anime, "
              f"{len(self.movies):,} movies)")  # fmt: skip


def kinds(sample: Sample) -> dict[str, Callable[[random.Random], tuple[str, Request]]]:
    s = sample

    def api(**request: str) -> tuple[str, Request]:
        return "api", request

    def episode(g: random.Random) -> tuple[str, Request]:
        _, title, seasons, episodes, *_ = g.choice(s.episodes)
        return api(t="tvsearch", q=title, season=str(seasons[0]), ep=str(episodes[0]),
                   cat=SONARR_TV)  # fmt: skip

    def missing_episode(g: random.Random) -> tuple[str, Request]:
        _, title, seasons, *_ = g.choice(s.episodes)
        return api(t="tvsearch", q=title, season=str(seasons[0]), ep="99", cat=SONARR_TV)

    def season(g: random.Random) -> tuple[str, Request]:
        _, title, seasons, *_ = g.choice(s.seasons)
        return api(t="tvsearch", q=title, season=str(seasons[0]), cat=SONARR_TV)

    def daily(g: random.Random) -> tuple[str, Request]:
        _, title, _, _, _, day, *_ = g.choice(s.dailies)
        return api(t="tvsearch", q=title, season=str(day.year), ep=day.strftime("%m/%d"),
                   cat=SONARR_TV)  # fmt: skip

    def daily_year(g: random.Random) -> tuple[str, Request]:
        _, title, _, _, _, day, *_ = g.choice(s.dailies)
        return api(t="tvsearch", q=title, season=str(day.year), cat=SONARR_TV)

    def anime_search(g: random.Random) -> tuple[str, Request]:
        _, title, *_, absolute, _ = g.choice(s.animes)
        return api(t="search", q=f"{title} {absolute[0]:02d}", cat="5070")

    def anime_tvsearch(g: random.Random) -> tuple[str, Request]:
        _, title, *_, absolute, _ = g.choice(s.animes)
        return api(t="tvsearch", q=title, ep=str(absolute[0]), cat="5070")

    def movie(g: random.Random) -> tuple[str, Request]:
        _, title, _, _, year, *_ = g.choice(s.movies)
        return api(t="movie", q=f"{title} {year}", cat=RADARR_MOVIES)

    def movie_search(g: random.Random) -> tuple[str, Request]:  # Radarr's second tier
        _, title, _, _, year, *_ = g.choice(s.movies)
        return api(t="search", q=f"{title} {year}", cat=RADARR_MOVIES)

    def words(pool: list[str], **extra: str) -> Callable[[random.Random], tuple[str, Request]]:
        return lambda g: api(t="search", q=g.choice(pool), **extra)

    def title_words(g: random.Random) -> tuple[str, Request]:
        return api(t="search", q=g.choice(s.titles))

    def title_episode_words(g: random.Random) -> tuple[str, Request]:
        _, title, seasons, episodes, *_ = g.choice(s.episodes)
        return api(t="search", q=f"{title} S{seasons[0]:02d}E{episodes[0]:02d}")

    def fixed(kind: str, **request: str) -> Callable[[random.Random], tuple[str, Request]]:
        return lambda g: (kind, request)

    def deep(kind: str, low: int, high: int, **request: str) -> Callable[..., tuple[str, Request]]:
        return lambda g: (kind, {**request, "offset": str(g.randint(low, high))})

    return {
        "tvsearch q S/E (Sonarr)": episode,
        "tvsearch q S/E not there": missing_episode,
        "tvsearch q season (pack)": season,
        "tvsearch q daily date": daily,
        "tvsearch q daily year": daily_year,
        "tvsearch q ep (absolute)": anime_tvsearch,
        "tvsearch tvdbid": fixed(
            "api", t="tvsearch", tvdbid="81189", season="1", ep="1", cat=SONARR_TV
        ),
        "tvsearch no q (Sonarr RSS)": fixed("api", t="tvsearch", cat=SONARR_TV),
        "search q title absolute (anime)": anime_search,
        "movie q title year (Radarr)": movie,
        "search q title year (Radarr)": movie_search,
        "movie imdbid": fixed("api", t="movie", imdbid="tt0111161", cat=RADARR_MOVIES),
        "movie no q (Radarr RSS)": fixed("api", t="movie", cat=RADARR_MOVIES),
        "search q title": title_words,
        "search q title SxxEyy": title_episode_words,
        "search q common word": words(s.common),
        "search q common word, cat 5000": words(s.common, cat="5000"),
        "search q middling word": words(s.middling),
        "search q rare word": words(s.rare),
        "search q rare word, cat 2000": words(s.rare, cat="2000"),
        "search q 1080p": fixed("api", t="search", q="1080p"),
        "search q middling 720p, cat 5000": lambda g: api(
            t="search", q=f"{g.choice(s.middling)} 720p", cat="5000"
        ),
        "rss newest": fixed("rss", t="0"),
        "rss newest, cat 5070": fixed("rss", t="5070"),
        "rss newest, cat 7000": fixed("rss", t="7000"),
        "rss newest incomplete=1": fixed("rss", t="0", incomplete="1"),
        "search no q (newest)": fixed("api", t="search"),
        "browse cat 2045": fixed("api", t="search", cat="2045"),
        "browse cat 5080 (rare)": fixed("api", t="search", cat="5080"),
        "browse cat 5000, offset 1k-10k": deep("api", 1_000, 10_000, t="search", cat="5000"),
        "browse cat 5080, offset 100-900": deep("api", 100, 900, t="search", cat="5080"),
        "newest, offset 10k-100k": deep("api", 10_000, 100_000, t="search"),
        "search q common word, offset 1k-5k": lambda g: api(
            t="search", q=g.choice(s.common), offset=str(g.randint(1_000, 5_000))
        ),
    }


def timed(
    make: Callable[[random.Random], tuple[str, Request]], count: int, seed: int = 11
) -> tuple[list[float], dict[str, Any]]:
    rng = random.Random(seed)
    times, plans, hits, slowest = [], Counter(), 0, (0.0, ("", {}))
    for _ in range(count):
        kind, request = make(rng)
        started = time.perf_counter()
        page = page_of(kind, request)
        took = (time.perf_counter() - started) * 1000
        times.append(took)
        slowest = max(slowest, (took, (kind, request)), key=lambda pair: pair[0])
        plans[page.plan] += 1
        hits += len(page.releases)
    return times, {"plans": plans, "hits": hits / count, "slowest": slowest[1]}


def explain(kind: str, request: Request) -> None:
    """EXPLAIN (ANALYZE, BUFFERS) of every statement this request runs."""
    statements: list[tuple[str, Any]] = []

    def capture(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        statements.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(capture):
        page_of(kind, request)
    for sql, params in statements:
        code = "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--"))
        if not code.lstrip().upper().startswith(("SELECT", "WITH")):
            continue
        with connection.cursor() as cursor:
            cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params)
            print("\n".join("    " + row[0] for row in cursor.fetchall()))


def bare_lookup(count: int, releases: int) -> list[float]:
    rng = random.Random(5)
    times = []
    with connection.cursor() as cursor:
        for _ in range(count):
            started = time.perf_counter()
            cursor.execute(
                "SELECT id, name, size FROM catalog_release WHERE id = %s",
                [rng.randint(1, releases)],
            )
            cursor.fetchall()
            times.append((time.perf_counter() - started) * 1000)
    return times


def load_average() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def main(args: argparse.Namespace) -> None:
    kept = dataset()
    if args.no_load:
        pass
    elif args.rebuild or kept != (DATASET_VERSION, args.releases):
        print(f"loading {args.releases:,} releases (load average {load_average()}) ...")
        load(args.releases, search_catalog.vocabulary())
    else:
        print(f"reusing the kept dataset ({args.releases:,} releases; --rebuild loads again)")
    if args.load_only:
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*), pg_size_pretty(pg_database_size(current_database()))"
                       " FROM catalog_release")  # fmt: skip
        releases, size = cursor.fetchone()
        cursor.execute("SELECT current_database()")
        print(f"{releases:,} releases in {cursor.fetchone()[0]} ({size} on disk); "
              f"{args.queries} queries of each kind (warm-up: 20)")  # fmt: skip
    print(f"load average at the start: {load_average()}")
    made = {
        name: make
        for name, make in kinds(Sample(releases)).items()
        if not args.only or any(part in name for part in args.only)
    }
    for make in made.values():  # warm the caches
        timed(make, 20, seed=3)
    base = percentiles(bare_lookup(args.queries * 5, releases))
    print(f"{'baseline: one release by id':<36} p50 {base[0]:7.2f}   p95 {base[1]:7.2f}"
          f"   p99 {base[2]:7.2f} ms")  # fmt: skip
    results = {}
    for name, make in made.items():
        times, info = timed(make, args.queries)
        p50, p95, p99 = percentiles(times)
        results[name] = (p99, info["slowest"])
        plans = ", ".join(f"{k} {v}" for k, v in sorted(info["plans"].items()))
        print(f"{name:<36} p50 {p50:7.2f}   p95 {p95:7.2f}   p99 {p99:7.2f} ms   "
              f"({info['hits']:.0f} hits/page; {plans})", flush=True)  # fmt: skip
    print(f"load average at the end: {load_average()}")
    worst = sorted(results.items(), key=lambda item: -item[1][0])[: args.explain]
    for name, (p99, (kind, request)) in worst:
        print(f"\nEXPLAIN of the slowest '{name}' (p99 {p99:.1f} ms): /{kind}?{request}")
        explain(kind, request)


if __name__ == "__main__":
    main(OPTIONS)
