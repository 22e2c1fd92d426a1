"""The newest releases (the RSS feed, t=search without q, the category browse):
the pages a plain sort of the served releases gives, read from the listed
releases' index (migration 0011), planned for each request's values."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from newznab import selectors
from newznab.selectors import SearchQuery, _params, newest
from newznab.sql import queries

pytestmark = pytest.mark.django_db


@pytest.fixture
def releases() -> None:
    # 600 releases, one a minute, newest last: one in ten not complete (unlisted),
    # one in thirty not counted again yet but with complete totals (served), one
    # in thirty in category 7020; every fourth cross-posted to a second group.
    with connection.cursor() as cursor:
        # Emptied first (rolled back with the test): the rows earlier tests inserted
        # and rolled back leave thousands of dead pages, and the plans below are
        # chosen by the table's size.
        cursor.execute("TRUNCATE catalog_release CASCADE")
        cursor.execute(
            """
            INSERT INTO catalog_release (key, name, poster, posted, last_posted, size,
                files_expected, files_seen, segments_present, segments_expected, has_par2,
                has_nfo, category, category_version, groups, listed, counted)
            SELECT decode(md5(n::text), 'hex'), 'Show.S01E0' || (n % 9) || '-GRP', 'p',
                   now() - make_interval(mins => 600 - n), now(), n, 4,
                   CASE WHEN n % 10 = 3 THEN 2 ELSE 4 END,
                   CASE WHEN n % 10 = 3 THEN 50 ELSE 100 END, 100, true, false,
                   CASE WHEN n % 30 = 0 THEN 7020 ELSE 5040 END, 1,
                   CASE WHEN n % 4 = 0 THEN ARRAY['a.b.one', 'a.b.two'] ELSE ARRAY['a.b.one'] END,
                   n % 10 <> 3 AND n % 30 <> 7, n % 30 <> 7
              FROM generate_series(1, 600) AS n
            """
        )
        cursor.execute("ANALYZE catalog_release")


def expected(query: SearchQuery) -> tuple[list[int], int]:
    """The page and total of a plain sort of the served releases."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT id FROM catalog_release
             WHERE (%(incomplete)s OR catalog_release_served(listed, counted, files_seen,
                        files_expected, segments_present, segments_expected))
               AND (%(categories)s::int[] IS NULL OR category = ANY(%(categories)s::int[]))
               AND groups @> %(groups)s::text[]
             ORDER BY posted DESC, id DESC
            """,
            _params(query),
        )
        ids = [row[0] for row in cursor.fetchall()]
    return ids[query.offset : query.offset + query.limit], len(ids)


QUERIES = [
    SearchQuery(limit=50),
    SearchQuery(limit=50, offset=480),
    SearchQuery(limit=100, offset=10_000),
    SearchQuery(limit=20, incomplete=True),
    SearchQuery(limit=30, offset=550, incomplete=True),
    SearchQuery(categories=[7020], limit=25),
    SearchQuery(categories=[7020, 5040], limit=40, offset=100),
    SearchQuery(categories=[7020], groups=["a.b.two"], limit=100),
    SearchQuery(groups=["a.b.two"], limit=10, offset=30, incomplete=True),
]


@pytest.mark.parametrize("query", QUERIES, ids=str)
@pytest.mark.parametrize("rare_share", [0.0, 1.0], ids=["by date", "by category"])
def test_newest_gives_the_page_a_plain_sort_of_the_served_releases_gives(
    releases: None, query: SearchQuery, rare_share: float, monkeypatch: Any
) -> None:
    monkeypatch.setattr(selectors, "RARE_CATEGORIES_SHARE", rare_share)
    page = newest(query)
    ids, total = expected(query)
    assert [row.id for row in page.releases] == ids
    assert page.total == min(total, 1_000)


def plan(name: str, query: SearchQuery) -> str:
    with connection.cursor() as cursor:
        # A table this small would be read whole: the plans a large one gets.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        # As if vacuumed (rolled back with the test): an index-only scan reads no
        # heap page for an all-visible one, which is what makes it the cheaper plan
        # on a large table; never vacuumed, the planner saw no gain in it, and the
        # choice between indexes was a near-tie that other tests' rows decided.
        cursor.execute(
            "UPDATE pg_class SET relallvisible = relpages WHERE oid = 'catalog_release'::regclass"
        )
        cursor.execute("EXPLAIN " + queries[name], _params(query))
        return "\n".join(row[0] for row in cursor.fetchall())


@pytest.mark.parametrize(
    ("name", "query"),
    [
        ("newest_releases", SearchQuery(limit=100, offset=300)),
        ("count_newest", SearchQuery(limit=100, offset=300)),
        ("newest_releases", SearchQuery(categories=[5040, 5030], limit=100, offset=200)),
        ("newest_in_categories", SearchQuery(categories=[7020, 2060], limit=10, offset=5)),
    ],
    ids=["deep offset", "its total", "common categories", "rare categories"],
)
def test_the_listed_releases_are_read_from_their_index(
    releases: None, name: str, query: SearchQuery
) -> None:
    # An offset deep in the list skips entries of the index of listed releases
    # (with their category), not heap pages; a rare category's are read from
    # the index by category.
    # (A total, in no order, may count either index of listed releases.) From
    # the index alone: each entry holds whether its release is passworded, which
    # every statement tests (migration 0007's index lacked it: a heap page an
    # entry, 111 ms for offset 95,000 at 10 M releases).
    index = {"newest_in_categories": "newest_category_idx", "count_newest": "newest_"}
    assert f"Index Only Scan using catalog_release_{index.get(name, 'newest_idx')}" in plan(
        name, query
    )


def test_rare_categories_are_listed_category_by_category(releases: None) -> None:
    # 7020 is one release in thirty: its newest are read from the category
    # index, not found among the others' entries down the date index.
    assert newest(SearchQuery(categories=[7020], limit=10)).plan == "newest by category"
    assert newest(SearchQuery(categories=[5040], limit=10)).plan == "newest"


def test_newest_is_planned_for_its_values_every_time(releases: None, settings: Any) -> None:
    # A prepared statement's generic plan keeps the category test it cannot fold
    # away, and (at 200,000 releases) scanned every release for a category.
    for _ in range(8):
        newest(SearchQuery(categories=[7020], limit=10, offset=5))
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s",
            ["%newest%"],
        )
        assert cursor.fetchone()[0] == 0
