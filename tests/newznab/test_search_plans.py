"""The search's plans (walk, newest window, bitmap) give the same pages as a plain
sort of every match, whatever the words' frequencies say."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from django.db import connection

from catalog.models import Release
from newznab import selectors
from newznab.selectors import Episode, SearchQuery, search
from newznab.sql import queries

pytestmark = pytest.mark.django_db

WORDS = ["alpha", "beta", "gamma", "delta", "omega"]


def insert_releases(rows: str) -> None:
    """Listed, complete releases from `rows`: a SELECT of (key, name, posted,
    category)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO catalog_release (key, name, poster, posted, last_posted, size,
                files_seen, segments_present, segments_expected, has_par2, has_nfo, category,
                category_version, groups, listed)
            SELECT key, name, 'p', posted, posted, 1, 1, 1, 1, true, false, category, 1,
                   ARRAY['alt.binaries.x'], true
              FROM ({rows}) AS r (key, name, posted, category)
            """
        )


@pytest.fixture
def releases() -> None:
    # 2,000 releases, one a minute; "alpha" in half, "omega" in one in a hundred;
    # the title "Gamma Delta" in one in twenty (each word common, the two always
    # together); "zeta" in one in sixty, all in 2040.
    insert_releases(
        """
        SELECT decode(md5(n::text), 'hex'),
               concat_ws('.', CASE WHEN n % 2 = 0 THEN 'Alpha' END,
                         CASE WHEN n % 5 = 0 THEN 'Beta' END,
                         CASE WHEN n % 100 = 7 THEN 'Omega' END,
                         CASE WHEN n % 20 = 3 THEN 'Gamma.Delta' END,
                         CASE WHEN n % 60 = 1 THEN 'Zeta' END,
                         'Show', 'S0' || (1 + n % 3) || 'E0' || (1 + n % 9), '720p-GRP'),
               now() - make_interval(mins => 2000 - n),
               CASE WHEN n % 3 = 0 THEN 5040 ELSE 2040 END
          FROM generate_series(1, 2000) AS n
        """
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE catalog_release")


def expected(query: SearchQuery) -> list[int]:
    clauses = ["search_vector @@ to_tsquery('simple', %s)", "posted >= %s"]
    params: list[Any] = [query.tsquery(), query.since]
    if query.categories:
        clauses.append("category = ANY(%s)")
        params.append(list(query.categories))
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id FROM catalog_release WHERE {' AND '.join(clauses)}"
            " ORDER BY posted DESC, id DESC LIMIT %s OFFSET %s",
            [*params, query.limit, query.offset],
        )
        return [row[0] for row in cursor.fetchall()]


QUERIES = [
    SearchQuery(words="alpha", limit=50),
    SearchQuery(words="alpha beta", limit=50, offset=20),
    SearchQuery(words="omega", limit=10),
    SearchQuery(words="omega alpha", limit=100),
    SearchQuery(words="show", categories=[5040], limit=30, offset=40),
    SearchQuery(words="show", episode=Episode(2, "5"), limit=20),
    SearchQuery(words="alpha", episode=Episode(3), limit=40),
    SearchQuery(words="nothing", limit=10),
    # A maxage: the window, or the whole table, begins no earlier.
    SearchQuery(words="zeta", since=datetime.now(UTC) - timedelta(minutes=1200), limit=5),
    SearchQuery(words="alpha beta", since=datetime.now(UTC) - timedelta(minutes=900), limit=20),
    # An uncommon word with common ones: the index is asked the uncommon one (the
    # common one too while many candidates are left), the season's prefix is
    # tested on the candidates.
    SearchQuery(words="omega show", episode=Episode(2), limit=10),
    SearchQuery(words="omega 720p", categories=[5040], limit=5, offset=1),
    SearchQuery(words="beta alpha", episode=Episode(1), categories=[5040], limit=25),
    SearchQuery(words="gamma delta", limit=2),
    SearchQuery(words="delta gamma show", limit=30, offset=50),
    SearchQuery(words="zeta", categories=[5040], limit=1),
    SearchQuery(words="alpha", limit=20, offset=500),
]


# What the newest window asks of the words' index: as chosen (the constants), the
# most (every term, the categories, never the whole table for a window), the least
# (the uncommon terms, no categories, the whole table at once).
ASKED = {
    "as chosen": {},
    "the most": {"INDEX_TERM_ROWS": 0, "HEAP_ROW_ENTRIES": 10**9, "BRIN_ROWS_PER_HEAP_ROW": 10**12},
    "the least": {"INDEX_TERM_ROWS": 10**9, "HEAP_ROW_ENTRIES": 0, "BRIN_ROWS_PER_HEAP_ROW": 0},
}


@pytest.mark.slow
@pytest.mark.parametrize("query", QUERIES, ids=[q.tsquery() for q in QUERIES])
@pytest.mark.parametrize(
    ("walk_max_rows", "season_walk_max_rows", "asked"),
    [
        (0, 0, "as chosen"),
        (0, 0, "the most"),
        (0, 0, "the least"),
        (0, 30_000, "as chosen"),
        (30_000, 30_000, "as chosen"),
    ],
)
def test_every_plan_gives_the_page_a_full_sort_gives(
    releases: None,
    query: SearchQuery,
    walk_max_rows: int,
    season_walk_max_rows: int,
    asked: str,
    monkeypatch: Any,
) -> None:
    monkeypatch.setattr(selectors, "WALK_MAX_ROWS", walk_max_rows)
    monkeypatch.setattr(selectors, "SEASON_WALK_MAX_ROWS", season_walk_max_rows)
    for name, value in ASKED[asked].items():
        monkeypatch.setattr(selectors, name, value)
    page = search(query)
    assert [row.id for row in page.releases] == expected(query), page.plan


@pytest.mark.slow
def test_common_words_walk_and_rare_ones_use_the_index(releases: None) -> None:
    assert search(SearchQuery(words="alpha", limit=20)).plan == "walk"
    assert search(SearchQuery(words="omega", limit=20)).plan.startswith("bitmap")


@pytest.mark.slow
def test_the_index_is_asked_the_uncommon_terms_and_common_ones_while_many_candidates_are_left(
    releases: None, monkeypatch: Any
) -> None:
    stats = selectors.term_stats()
    ask = selectors.index_tsquery
    # "omega" (in one release in a hundred) leaves 20 candidates of 2,000: "alpha"
    # (in half) would be read at each of them in the index for little; the
    # season's prefix is never asked (the season index stands in for it).
    assert ask(SearchQuery(words="omega alpha", episode=Episode(2)), stats) == "'omega'"
    # Every uncommon term is asked, however few candidates the rarest leaves: the
    # words of a title are rare together only when all are asked.
    assert ask(SearchQuery(words="omega zeta"), stats) == "'omega' & 'zeta'"
    # For a season pack of common words, none (the season index alone).
    assert ask(SearchQuery(words="alpha", episode=Episode(2)), stats) == ""
    # Where candidates are many (INDEX_TERM_ROWS, made small for 2,000 releases),
    # the common terms too, the most selective first, while they are.
    monkeypatch.setattr(selectors, "INDEX_TERM_ROWS", 5)
    assert ask(SearchQuery(words="omega alpha", episode=Episode(2)), stats) == "'omega' & 'alpha'"
    assert ask(SearchQuery(words="alpha beta"), stats) == "'beta' & 'alpha'"
    # ...in the window asked: a window of 1 % leaves "omega" no candidates to spare.
    assert ask(SearchQuery(words="omega alpha"), stats, 0.01) == "'omega'"
    monkeypatch.setattr(selectors, "INDEX_TERM_ROWS", 500)
    assert ask(SearchQuery(words="alpha beta"), stats) == "'beta'"


def test_the_categories_are_asked_of_the_index_where_the_rows_they_rule_out_pay_for_it() -> None:
    # 10 M releases, TV in half, movies in a fifth.
    shares = {5030: 0.1, 5040: 0.3, 5045: 0.1, 2040: 0.2}
    stats = selectors.TermStats({}, 0.0, 10_000_000, [], shares, 0.0)
    tv = SearchQuery(words="murderbot 720p", categories=[5030, 5040, 5045])
    movies = SearchQuery(words="rare", categories=[2040])
    # A window of 7 %: each category asked reads the words' candidates of the
    # whole table again, to rule out those of the window's 3.5 % outside TV;
    # one category asked to rule out the window's 5.6 % outside the movies pays.
    assert selectors.index_categories(tv, stats, 0.07) is None
    assert selectors.index_categories(movies, stats, 0.07) == [2040]
    assert selectors.index_categories(movies, stats, 0.02) is None
    # The whole table: a rare word's candidates outside the movies are 80 % of it.
    assert selectors.index_categories(movies, stats, 1.0) == [2040]
    assert selectors.index_categories(tv, stats, 1.0) == [5030, 5040, 5045]
    assert selectors.index_categories(SearchQuery(words="rare"), stats, 1.0) is None
    # No statistics yet: asked, as before there were any.
    assert selectors.index_categories(tv, None, 0.07) == [5030, 5040, 5045]


def test_a_window_is_searched_as_the_whole_table_where_its_range_costs_more_than_it_spares() -> (
    None
):
    stats = selectors.TermStats({}, 0.0, 10_000_000, [], {}, 0.0)
    # 17,000 candidates: a window of 93 % (a range of 9.3 M releases) spares at
    # most 1,200 of them; one of 32 % up to 11,500, for 3.2 M releases.
    assert selectors.whole_table_pays(stats, 0.93, 17_000)
    assert not selectors.whole_table_pays(stats, 0.32, 17_000)
    # 1,000 candidates, expected: even a window of 32 % spares too few.
    assert selectors.whole_table_pays(stats, 0.32, 1_000)
    # None known (a season pack asks the words' index nothing): every row.
    assert not selectors.whole_table_pays(stats, 0.93, 0.0)


@pytest.mark.slow
def test_a_window_searched_as_the_whole_table_gives_the_same_page_and_its_total(
    releases: None, monkeypatch: Any
) -> None:
    # "zeta" (one release in sixty) for a page of five: a window of about 58 % of
    # the releases holds the page, or the whole table does (its range made dear).
    monkeypatch.setattr(selectors, "WALK_MAX_ROWS", 0)
    query = SearchQuery(words="zeta", limit=5)
    stats = selectors.term_stats()
    assert stats is not None
    share = selectors.window_rows(query) / stats.frequency(["zeta"]) / stats.releases
    assert 0.5 < share < 1.0
    matches = len(expected(SearchQuery(words="zeta", limit=10_000)))
    monkeypatch.setattr(selectors, "BRIN_ROWS_PER_HEAP_ROW", 10**12)
    page = search(query)
    assert (page.plan, [row.id for row in page.releases]) == ("window x1", expected(query))
    assert page.total == selectors.TOTAL_CAP  # more may be older than the window
    monkeypatch.setattr(selectors, "BRIN_ROWS_PER_HEAP_ROW", 0)
    page = search(query)
    assert (page.plan, [row.id for row in page.releases]) == ("bitmap x1", expected(query))
    assert page.total == matches


def index_condition(query: SearchQuery) -> str:
    """The GIN index's condition in search_matches' plan for this query, with the
    tsquery it is given (an InitPlan's output: search_matches hides its value
    from the planner)."""
    stats = selectors.term_stats()
    params: dict[str, Any] = {
        **selectors._params(query, query.tsquery()),
        "index_tsquery": selectors.index_tsquery(query, stats),
        "index_categories": query.categories,
    }
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # a large table's plan
        cursor.execute("EXPLAIN (VERBOSE) " + queries["search_matches"], params)
        lines = [row[0] for row in cursor.fetchall()]
    scan = next(i for i, line in enumerate(lines) if "catalog_release_words_idx" in line)
    condition = lines[scan + 1]
    plan = next(p.group(1) for p in [re.search(r"\((InitPlan \d+)\)", condition)] if p)
    given = lines[next(i for i, line in enumerate(lines) if line.strip() == plan) + 2]
    return f"{condition} {given}"


@pytest.mark.slow
def test_a_title_of_common_words_is_found_by_the_index_for_every_word(
    releases: None, monkeypatch: Any
) -> None:
    # "gamma" and "delta" are each in one release in twenty: asked the rarer
    # alone, the index gave every row of it, each read to be tested for the
    # other (380,000 rows for "a movie name" at 10 M releases; INDEX_TERM_ROWS
    # made as small for 2,000 releases).
    monkeypatch.setattr(selectors, "INDEX_TERM_ROWS", 1)
    condition = index_condition(SearchQuery(words="gamma delta show", limit=10))
    assert "Index Cond" in condition
    assert all(f"'{word}'" in condition for word in ("gamma", "delta", "show"))


@pytest.mark.slow
def test_a_title_of_common_words_is_searched_in_a_window_not_the_whole_table(
    releases: None, monkeypatch: Any
) -> None:
    # As independent words, "gamma" and "delta" would be in one release in 400
    # and the window for a page the whole table; they are together in one in
    # twenty, and the newest window holds the page.
    monkeypatch.setattr(selectors, "WALK_MAX_ROWS", 0)
    stats = selectors.term_stats()
    assert stats is not None
    words = SearchQuery(words="gamma delta").word_terms()
    assert stats.together(words, []) > 4 * stats.estimate(words)
    query = SearchQuery(words="gamma delta", limit=2)
    page = search(query)
    assert page.plan == "window x1"
    assert [row.id for row in page.releases] == expected(query)


@pytest.mark.slow
def test_words_that_are_a_title_are_searched_from_the_titles_own_newest_releases(
    releases: None, monkeypatch: Any
) -> None:
    # "gamma delta" for a page of ten: the words' shares size the window as the
    # whole table (every match read from the heap: 12,000 for a popular title at
    # 10 M releases); the title's own newest listed releases (migration 0009)
    # bound a window that holds the page.
    monkeypatch.setattr(selectors, "WALK_MAX_ROWS", 0)
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE catalog_release SET title_key = 'gamma delta' WHERE name LIKE '%Gamma.Delta%'"
        )
    for query in (
        SearchQuery(words="gamma delta", limit=10, offset=5),
        SearchQuery(words="Gamma Delta", categories=[5040], limit=10),
    ):
        page = search(query)
        assert page.plan == "window x1"
        assert [row.id for row in page.releases] == expected(query)
    # The title's releases lack a word asked ("the"): the window holds none of
    # them and grows, as any window does, to the page a full sort gives.
    lacking = SearchQuery(words="the gamma delta", limit=10)
    assert selectors.title_bound(lacking) is not None
    page = search(lacking)
    assert (page.plan, page.releases) == ("bitmap x2", expected(lacking))


@pytest.mark.slow
def test_a_window_with_no_match_grows_to_the_whole_table_at_once(releases: None) -> None:
    # "zeta" is in 2040 alone: in 5040 no window holds a match. Grown tenfold,
    # a window of 2 releases took four steps to reach the whole table (three at
    # 10 M releases, a GIN scan and the window's matches read at each).
    query = SearchQuery(words="zeta", categories=[5040], limit=10)
    params = {
        **selectors._params(query, query.tsquery()),
        "index_tsquery": "'zeta'",
        "index_categories": query.categories,
    }
    page = selectors._newest_window(query, params, selectors.term_stats(), 0.001, "default")
    assert (page.plan, page.total, page.releases) == ("bitmap x2", 0, [])


@pytest.mark.slow
def test_a_walk_shorter_than_the_index_entries_is_chosen_past_its_row_budget(
    releases: None, monkeypatch: Any
) -> None:
    # "alpha" is in 1,000 of the 2,000 releases: a window reads all 1,000 index
    # entries, and a walk to offset 300 reads about 640 rows (a row costs about
    # one entry here). "omega" (20 entries) is found in a window.
    monkeypatch.setattr(selectors, "WALK_MAX_ROWS", 0)
    monkeypatch.setattr(selectors, "WALK_ROW_ENTRIES", 1)
    deep = SearchQuery(words="alpha", limit=20, offset=300)
    page = search(deep)
    assert page.plan == "walk"
    assert [row.id for row in page.releases] == expected(deep)
    assert search(SearchQuery(words="omega", limit=10)).plan.startswith("bitmap")


def test_a_window_begins_between_the_bounds_of_the_histogram() -> None:
    # Rounded down to a bound, a window held one more bucket of releases: 1 % of
    # the table at least (100,000 releases at 10 M), 10 % for a share of 9.1 %.
    start = datetime(2026, 1, 1, tzinfo=UTC)
    bounds = [start + timedelta(minutes=m) for m in range(101)]
    stats = selectors.TermStats({}, 0.0, 1_000_000, bounds, {}, 0.0)
    assert stats.posted_after(0.005) == bounds[99] + timedelta(seconds=30)
    assert stats.posted_after(0.091) == bounds[90] + timedelta(seconds=54)
    assert stats.posted_after(0.5) == bounds[50]
    assert stats.posted_after(1.0) is None


def test_the_share_after_a_date_is_the_inverse_of_the_date_after_a_share() -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    bounds = [start + timedelta(minutes=m) for m in range(101)]
    stats = selectors.TermStats({}, 0.0, 1_000_000, bounds, {}, 0.0)
    for share in (0.005, 0.091, 0.5, 0.99):
        when = stats.posted_after(share)
        assert when is not None
        assert stats.share_after(when) == pytest.approx(share)
    assert stats.share_after(start - timedelta(days=1)) == 1.0
    assert stats.share_after(bounds[-1] + timedelta(days=1)) == 0.0


def test_a_deep_page_window_is_sized_close_to_the_rows_it_needs() -> None:
    # Three pages of matches for a first page; for a page at offset 3,000 the
    # rows wanted and two pages (its expected matches vary by far less than
    # their number): three times as many read 9,000 rows where 3,100 are needed.
    assert selectors.window_rows(SearchQuery(limit=100)) >= 3 * 101
    deep = SearchQuery(limit=100, offset=3_000)
    assert 3_101 < selectors.window_rows(deep) < 1.5 * 3_101


@pytest.mark.parametrize(
    ("name", "season"),
    [
        ("Show.S02E05.720p-GRP", "s02"),
        ("Show.S02.1080p.WEB-GRP", "s02"),
        ("Show.s020.Special", "s02"),
        ("Show.S01E01.S02E02", "*"),
        ("Show.S02E01.S02E02", "s02"),
        ("Movie.2020.1080p-GRP", None),
        ("Show.1x02.Sx1.S1", None),
    ],
)
def test_the_season_index_holds_every_season_a_prefix_matches(
    name: str, season: str | None
) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT newznab_season(to_tsvector('simple', newznab_words(%s)))", [name])
        assert cursor.fetchone()[0] == season


@pytest.mark.slow
@pytest.mark.parametrize("season_walk_max_rows", [0, 30_000])
def test_a_season_pack_finds_a_name_of_two_seasons(
    releases: None, season_walk_max_rows: int, monkeypatch: Any
) -> None:
    insert_releases("VALUES ('\\x01'::bytea, 'Omega.S01E09.S02E01.720p-GRP', now(), 5040)")
    monkeypatch.setattr(selectors, "WALK_MAX_ROWS", 0)
    monkeypatch.setattr(selectors, "SEASON_WALK_MAX_ROWS", season_walk_max_rows)
    query = SearchQuery(words="omega", episode=Episode(2), limit=5)
    page = search(query)
    assert page.plan.startswith("season walk") == bool(season_walk_max_rows)
    assert page.releases[0].name == "Omega.S01E09.S02E01.720p-GRP"
    assert [row.id for row in page.releases] == expected(query)


@pytest.mark.parametrize(
    "when",
    [
        datetime(1970, 1, 1, tzinfo=UTC),
        datetime(1969, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
        datetime(2026, 12, 3, tzinfo=UTC),  # a Thursday: a week begins
        datetime(2026, 12, 2, 23, 59, 59, 999_999, tzinfo=UTC),
        datetime(2026, 12, 7, 19, 40, tzinfo=UTC),
        datetime(2026, 12, 3, 1, 30, tzinfo=timezone(timedelta(hours=5))),
    ],
)
def test_the_week_of_a_date_is_the_databases(when: datetime) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT newznab_week(%s)", [when])
        assert cursor.fetchone()[0] == selectors.week_of(when)


@pytest.fixture
def weeks_of_releases() -> None:
    # 600 releases, one every six hours (21 weeks) up to now, and one dated 60
    # weeks ahead; "alpha" in half, "omega" in one in forty, "gamma delta" in one
    # in ten; 2040 or 5040.
    insert_releases(
        """
        SELECT decode(md5('w' || n), 'hex'),
               concat_ws('.', CASE WHEN n % 2 = 0 THEN 'Alpha' END,
                         CASE WHEN n % 40 = 7 THEN 'Omega' END,
                         CASE WHEN n % 10 = 3 THEN 'Gamma.Delta' END,
                         'Show', '720p-GRP'),
               CASE WHEN n = 601 THEN now() + interval '60 weeks'
                    ELSE now() - make_interval(hours => 6 * (600 - n))
               END,
               CASE WHEN n % 3 = 0 THEN 5040 ELSE 2040 END
          FROM generate_series(1, 601) AS n
        """
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE catalog_release")


WEEK_QUERIES = [
    SearchQuery(words="alpha", limit=10),
    SearchQuery(words="alpha show", limit=20, offset=150),
    SearchQuery(words="gamma delta", limit=5, offset=3),
    SearchQuery(words="omega", limit=10),
    SearchQuery(words="alpha", categories=[5040], limit=10, offset=40),
    SearchQuery(words="omega", categories=[5040], limit=10),
    SearchQuery(words="nothing", limit=10),
]


@pytest.mark.slow
@pytest.mark.parametrize("query", WEEK_QUERIES, ids=[q.tsquery() for q in WEEK_QUERIES])
def test_a_window_asked_by_its_weeks_holds_the_matches_it_holds_without_them(
    weeks_of_releases: None, query: SearchQuery
) -> None:
    # The words' index asked the window's weeks (the fast path) or not: the same
    # matches, every one of the window, for windows of a day to the whole table
    # but the release dated ahead (WINDOW_WEEKS_MAX weeks), which the fast path
    # holds too.
    stats = selectors.term_stats()
    params = {**selectors._params(query, query.tsquery()),
              "index_tsquery": selectors.index_tsquery(query, stats),
              "index_categories": query.categories,
              "limit": 1_000, "offset": 0}  # fmt: skip
    now = datetime.now(UTC)
    for days in (1, 6, 7, 13, 50, 140, 148):
        since = now - timedelta(days=days, hours=days)
        weeks = list(range(selectors.week_of(since), selectors.week_of(now) + 62))
        fast = queries.fetchall("search_matches", {**params, "since": since, "weeks": weeks})
        slow = queries.fetchall("search_matches", {**params, "since": since, "weeks": None})
        assert [(r.id, r.total) for r in fast] == [(r.id, r.total) for r in slow]
        assert slow[0].total == len([r for r in slow if r.id is not None])
    # The search itself, with every window asked its weeks: the full sort's page.
    for weeks_max in (0, 1_000):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(selectors, "WALK_MAX_ROWS", 0)
            patch.setattr(selectors, "WEEKS_ENTRY_SHARE", 0.0)
            patch.setattr(selectors, "WINDOW_WEEKS_MAX", weeks_max)
            assert [row.id for row in search(query).releases] == expected(query)


@pytest.mark.slow
def test_a_windows_weeks_run_from_its_first_to_the_week_after_the_newest(
    weeks_of_releases: None,
) -> None:
    since = datetime.now(UTC) - timedelta(days=20)
    # A release dated 60 weeks ahead: a window to it is more than WINDOW_WEEKS_MAX
    # weeks, asked without them (every week), never without that release.
    assert selectors.window_weeks(since) is None
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM catalog_release WHERE posted > now()")
    # The week after this one too: a release posted while the search runs.
    now = datetime.now(UTC)
    assert selectors.window_weeks(since) == list(
        range(selectors.week_of(since), selectors.week_of(now) + 2)
    )
    assert selectors.window_weeks(selectors.BEGINNING) is None  # the whole table


@pytest.mark.slow
def test_a_release_dated_ahead_that_comes_in_after_the_weeks_are_looked_up_is_found(
    weeks_of_releases: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The weeks end at the newest release's week (or this one's) and the next: a
    # release dated 30 weeks ahead, committed between that lookup and the search,
    # is seen by the search and was left out by the weeks.
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM catalog_release WHERE posted > now()")
    looked_up = selectors.window_weeks

    def then_one_dated_ahead(since: datetime, using: str = "default") -> list[int] | None:
        weeks = looked_up(since, using)
        insert_releases(
            """
            SELECT decode(md5('ahead'), 'hex'), 'Alpha.Show.720p-GRP',
                   now() + interval '30 weeks', 2040
             WHERE NOT EXISTS (SELECT FROM catalog_release WHERE key = decode(md5('ahead'), 'hex'))
            """
        )
        return weeks

    monkeypatch.setattr(selectors, "window_weeks", then_one_dated_ahead)
    monkeypatch.setattr(selectors, "WALK_MAX_ROWS", 0)
    monkeypatch.setattr(selectors, "WALK_ROW_ENTRIES", 1e12)  # no walk: a newest window
    monkeypatch.setattr(selectors, "WEEKS_ENTRY_SHARE", 0.0)
    query = SearchQuery(words="alpha", limit=10)
    page = search(query)
    assert page.plan == "window x1"  # asked its weeks
    found = [row.id for row in page.releases]
    assert found == expected(query)
    assert Release.objects.get(id=found[0]).name == "Alpha.Show.720p-GRP"
