"""newznab search latency over N releases (default 10 million) of scene-like names.

Typical queries (one word, common, middling and rare; two words; a season
and episode; each with and without a category) through the selector the API
calls (newznab.selectors.search), p50 and p99, beside a bare indexed lookup
(one release by primary key) in the same run; and the fields' searches
(tvsearch by title with a season and episode, a season, a daily date; a movie
by title and year), whose titles are drawn from the loaded releases (a title
in many releases as often as it is in them). Method and figures:
docs/performance.md.

Run: .venv/bin/python bench/bench_search.py [--releases 10000000] [--queries 200] [--no-load] [--only KIND]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from collections.abc import Callable
from datetime import date, timedelta

os.environ.setdefault("LOG_LEVEL", "WARNING")

from django_setup import setup

setup("bench_search")

from django.db import connection  # noqa: E402

from newznab.categories import expand  # noqa: E402
from newznab.selectors import (  # noqa: E402
    Episode,
    Fields,
    SearchQuery,
    search,
    title_match_key,
)

WORDS = 5_000  # title vocabulary; word rank r is picked with probability ~ r^(-2/3)
SKEW = 3.0  # rank = floor(random()^SKEW * WORDS)
RESOLUTIONS = ["720p", "1080p", "2160p", "480p"]
SOURCES = ["WEB", "WEB-DL", "HDTV", "BluRay", "WEBRip", "DVDRip"]
CODECS = ["x264", "x265", "H264", "HEVC", "XviD"]
TEAMS = [f"GRP{i}" for i in range(400)]
GROUPS = [f"alt.binaries.bench.{i}" for i in range(40)]


def vocabulary(seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "ran", "te", "vor", "su", "dan", "el", "quin", "bar", "zo",
                 "pe", "tis", "mon", "ga", "rul", "fe", "ne", "shi"]  # fmt: skip
    words: set[str] = set()
    while len(words) < WORDS:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 3))))
    ordered = sorted(words)  # a set's order changes from one process to the next
    rng.shuffle(ordered)
    return ordered


PICK = "(%(words)s::text[])[1 + floor(pow(random(), %(skew)s) * %(nwords)s)::int]"
ONE = "(%(arr)s::text[])[1 + floor(random() * cardinality(%(arr)s::text[]))::int]"


def _one(name: str) -> str:
    return ONE.replace("arr", name)


# Names: half TV (1-3 title words, SxxEyy), 35% movies (2-4 words and a year),
# 15% other (music, books, software). Posted one every 3 s, id order = date order.
# The fields the catalog reads from each name: its title, season and episode
# (TV) or year (movies); one in fifty is not listed (incomplete).
LOAD_SQL = f"""
INSERT INTO catalog_release (key, name, poster, posted, last_posted, size, files_expected,
                             files_seen, segments_present, segments_expected, has_par2, has_nfo,
                             category, category_version, groups, created_at, updated_at,
                             kind, title_key, year, seasons, episodes, listed)
SELECT decode(md5(n::text), 'hex'), name, 'poster' || (n %% 5000) || '@bench', posted, posted,
       size, 20, 20, 2000, 2000, true, true, category, 1, ARRAY[grp], now(), now(),
       CASE category WHEN 5040 THEN 'tv' WHEN 2040 THEN 'movie' ELSE 'other' END,
       CASE category
            WHEN 5040 THEN lower(replace(substring(name from '^(.*)[.]S[0-9]{{2}}E'), '.', ' '))
            WHEN 2040 THEN lower(replace(substring(name from '^(.*)[.][0-9]{{4}}[.]'), '.', ' '))
            ELSE '' END,
       CASE WHEN category = 2040 THEN 1950 + n %% 75 END,
       CASE WHEN category = 5040 THEN ARRAY[1 + n %% 12] ELSE '{{}}' END::smallint[],
       CASE WHEN category = 5040 THEN ARRAY[1 + (n / 12) %% 24] ELSE '{{}}' END::smallint[],
       n %% 50 <> 0
  FROM (SELECT n, now() - make_interval(secs => (%(count)s - n) * 3) AS posted,
               (100000000 + (n * 7919) %% 4000000000)::bigint AS size, {_one("groups")} AS grp,
               CASE WHEN kind < 50 THEN
                        initcap({PICK}) || CASE WHEN n %% 3 > 0 THEN '.' || initcap({PICK}) ELSE '' END
                        || CASE WHEN n %% 3 = 2 THEN '.' || initcap({PICK}) ELSE '' END
                        || '.S' || lpad((1 + n %% 12)::text, 2, '0')
                        || 'E' || lpad((1 + (n / 12) %% 24)::text, 2, '0')
                        || '.' || {_one("res")} || '.' || {_one("src")} || '.' || {_one("codec")}
                        || '-' || {_one("teams")}
                    WHEN kind < 85 THEN
                        initcap({PICK}) || '.' || initcap({PICK})
                        || CASE WHEN n %% 2 = 0 THEN '.' || initcap({PICK}) ELSE '' END
                        || '.' || (1950 + n %% 75) || '.' || {_one("res")} || '.' || {_one("src")}
                        || '.' || {_one("codec")} || '-' || {_one("teams")}
                    WHEN kind < 92 THEN
                        initcap({PICK}) || '-' || initcap({PICK}) || '-' || (1970 + n %% 55)
                        || '-FLAC-' || {_one("teams")}
                    ELSE initcap({PICK}) || '.' || initcap({PICK}) || '.v' || (n %% 20)
                        || '.x64-' || {_one("teams")} END AS name,
               CASE WHEN kind < 50 THEN 5040 WHEN kind < 85 THEN 2040 WHEN kind < 92 THEN 3040
                    ELSE 4000 END AS category
          FROM (SELECT n, (n * 37) %% 100 AS kind
                  FROM generate_series(%(start)s::bigint, %(stop)s::bigint) AS n) AS numbered) AS made
"""


def load(count: int, words: list[str]) -> None:
    params = {"words": words, "skew": SKEW, "nwords": WORDS, "count": count, "groups": GROUPS,
              "res": RESOLUTIONS, "src": SOURCES, "codec": CODECS, "teams": TEAMS}  # fmt: skip
    connection.ensure_connection()
    connection.connection.autocommit = True
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE catalog_release, newznab_release_grabs RESTART IDENTITY")
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
            cursor.execute(
                LOAD_SQL, {**params, "start": start, "stop": min(count, start + step - 1)}
            )
            print(
                f"  {min(count, start + step - 1):>11,} releases  {time.perf_counter() - started:6.0f}s"
            )
        cursor.execute("SET maintenance_work_mem = '1GB'")
        for name, definition in indexes:
            began = time.perf_counter()
            cursor.execute(definition)
            print(f"  index {name}: {time.perf_counter() - began:.0f}s")
        cursor.execute("VACUUM ANALYZE catalog_release")


def percentiles(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def timed(make: Callable[[random.Random], SearchQuery], count: int) -> tuple[list[float], dict]:
    rng = random.Random(11)
    times, plans, hits = [], {}, 0
    for _ in range(count):
        query = make(rng)
        started = time.perf_counter()
        page = search(query)
        times.append((time.perf_counter() - started) * 1000)
        plans[page.plan] = plans.get(page.plan, 0) + 1
        hits += len(page.releases)
    return times, {"plans": plans, "hits": hits / count}


def cases(words: list[str]) -> dict[str, Callable[[random.Random], SearchQuery]]:
    common, middling, rare = words[:10], words[50:500], words[1500:5000]
    tv = expand([5000])

    def w(pool: list[str]) -> Callable[[random.Random], str]:
        return lambda rng: rng.choice(pool)

    c, m, r = w(common), w(middling), w(rare)
    return {
        "one common word": lambda g: SearchQuery(words=c(g)),
        "one common word, cat 5000": lambda g: SearchQuery(words=c(g), categories=tv),
        "one middling word": lambda g: SearchQuery(words=m(g)),
        "one middling word, cat 5000": lambda g: SearchQuery(words=m(g), categories=tv),
        "one rare word": lambda g: SearchQuery(words=r(g)),
        "one rare word, cat 2040": lambda g: SearchQuery(words=r(g), categories=[2040]),
        "a tag (1080p)": lambda g: SearchQuery(words="1080p"),
        "two words (common + middling)": lambda g: SearchQuery(words=f"{c(g)} {m(g)}"),
        "two words (middling + 720p), cat 5000": lambda g: SearchQuery(
            words=f"{m(g)} 720p", categories=tv
        ),
        "two words (middling + rare)": lambda g: SearchQuery(words=f"{m(g)} {r(g)}"),
        "season/episode (middling word S03E07)": lambda g: SearchQuery(
            words=m(g), episode=Episode(3, "7")
        ),
        "season/episode, cat 5000": lambda g: SearchQuery(
            words=m(g), episode=Episode(3, "7"), categories=tv
        ),
        "season pack (common word, S02)": lambda g: SearchQuery(
            words=c(g), episode=Episode(2), categories=tv
        ),
    }


def field_cases() -> dict[str, Callable[[random.Random], SearchQuery]]:
    """tvsearch and movie as Sonarr and Radarr send them, titles drawn from the releases."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT title_key, seasons[1], episodes[1], year, kind"
            " FROM catalog_release TABLESAMPLE SYSTEM (1) WHERE title_key <> '' LIMIT 20000"
        )
        sample = cursor.fetchall()
    shows = [row for row in sample if row[4] == "tv"]
    movies = [row for row in sample if row[4] == "movie"]
    tv, film = expand([5000]), expand([2000])

    def tvsearch(title: str, fields: Fields) -> SearchQuery:
        return SearchQuery(words=title, categories=tv, fields=fields)

    def episode(g: random.Random) -> SearchQuery:
        title, season, number, _, _ = g.choice(shows)
        return tvsearch(title, Fields((title_match_key(title),), season=season, episode=number))

    def season_of(g: random.Random) -> SearchQuery:
        title, season, _, _, _ = g.choice(shows)
        return tvsearch(title, Fields((title_match_key(title),), season=season))

    def daily(g: random.Random) -> SearchQuery:
        title = g.choice(shows)[0]
        day = date(2024, 1, 15)
        return tvsearch(
            title, Fields((title_match_key(title),), aired_from=day, aired_until=day + timedelta(1))
        )

    def movie(g: random.Random) -> SearchQuery:
        title, _, _, year, _ = g.choice(movies)
        fields = Fields((title_match_key(title),), year=year)
        return SearchQuery(words=f"{title} {year}", categories=film, fields=fields)

    return {
        "fields: tvsearch title S/E, cat 5000": episode,
        "fields: tvsearch title, season": season_of,
        "fields: tvsearch title, daily (no match)": daily,
        "fields: movie title and year, cat 2000": movie,
    }


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", type=int, default=10_000_000)
    parser.add_argument("--queries", type=int, default=200, help="per kind of query")
    parser.add_argument("--no-load", action="store_true", help="reuse the loaded releases")
    parser.add_argument("--load-only", action="store_true", help="load, then stop")
    parser.add_argument(
        "--only", action="append", default=[], help="run the kinds whose name contains this"
    )
    args = parser.parse_args()
    words = vocabulary()
    if not args.no_load:
        print(f"loading {args.releases:,} releases ...")
        load(args.releases, words)
    if args.load_only:
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM catalog_release")
        (releases,) = cursor.fetchone()
    print(f"{releases:,} releases; {args.queries} queries of each kind (warm-up: 20)")
    kinds = {
        name: make
        for name, make in {**cases(words), **field_cases()}.items()
        if not args.only or any(part in name for part in args.only)
    }
    for make in kinds.values():  # warm the caches and the prepared plans
        timed(make, 20)
    base = percentiles(bare_lookup(args.queries * 5, releases))
    print(f"{'baseline: one release by id':<40} p50 {base[0]:7.2f} ms   p99 {base[1]:7.2f} ms")
    for name, make in kinds.items():
        times, info = timed(make, args.queries)
        p50, p99 = percentiles(times)
        plans = ", ".join(f"{k} {v}" for k, v in sorted(info["plans"].items()))
        print(
            f"{name:<40} p50 {p50:7.2f} ms   p99 {p99:7.2f} ms   "
            f"({info['hits']:.0f} hits/page; {plans})"
        )


if __name__ == "__main__":
    main()
