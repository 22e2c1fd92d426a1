"""article_at_date against the in-repo server: holes, bad dates, disorder, ends, probe count."""

from __future__ import annotations

import math
from email.utils import formatdate

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.nntpd import Article, NNTPServer
from usenet.nntp.client import NNTPClient
from usenet.nntp.search import PROBE_SIZE, article_at_date, find_article_at_date

START = 1_600_000_000


def dated(posted: int | None) -> Article:
    return Article(date=formatdate(posted) if posted is not None else "not a date at all")


@pytest.fixture(scope="module")
def news():
    with NNTPServer() as server:
        with NNTPClient(server.host, server.port, timeout=10) as client:
            yield server, client


def lowest_at_or_after(articles: dict[int, int | None], when: int) -> int | None:
    return min((n for n, t in articles.items() if t is not None and t >= when), default=None)


def put_group(server: NNTPServer, articles: dict[int, int | None], **marks: int) -> None:
    server.add_group("alt.search", {n: dated(t) for n, t in articles.items()}, **marks)


def test_exact_answer_in_a_group_in_date_order(news):
    server, client = news
    articles = {n: START + 60 * n for n in range(1, 5001)}
    put_group(server, articles)
    for when in (START + 60 * 1234, START + 60 * 1234 - 30, START + 60 * 4999):
        assert article_at_date(client, "alt.search", when) == lowest_at_or_after(articles, when)


@pytest.mark.slow
def test_holes_and_long_runs_of_missing_articles(news):
    server, client = news
    articles = {
        n: START + 60 * n
        for n in range(1, 200_001)
        if n % 3 and not 50_000 <= n < 140_000 and not 150_000 <= n < 150_400
    }
    put_group(server, articles)
    for number in (10, 49_999, 140_000, 140_001, 150_400, 160_000, 199_999):
        when = START + 60 * number
        assert article_at_date(client, "alt.search", when) == lowest_at_or_after(articles, when)
    # A moment inside the long hole: the first article after it.
    assert article_at_date(client, "alt.search", START + 60 * 100_000) == 140_000


def test_unparseable_dates_are_skipped(news):
    server, client = news
    articles: dict[int, int | None] = {
        n: (None if n % 4 == 0 or 400 <= n < 700 else START + 60 * n) for n in range(1, 3001)
    }
    put_group(server, articles)
    for number in (100, 450, 699, 2000):
        when = START + 60 * number
        assert article_at_date(client, "alt.search", when) == lowest_at_or_after(articles, when)


def test_first_and_last_article_at_the_ends(news):
    server, client = news
    articles = {n: START + 60 * n for n in range(100, 1100) if n % 5}
    put_group(server, articles)
    assert article_at_date(client, "alt.search", START) == 101
    assert article_at_date(client, "alt.search", START + 60 * 5000) == 1099


def test_empty_group_answers_without_probing(news):
    server, client = news
    server.add_group("alt.search", {}, first=10, last=9)
    assert find_article_at_date(client, "alt.search", START).probes == 0


def test_a_group_that_is_nothing_but_holes_ends(news):
    server, client = news
    server.add_group("alt.search", {}, first=1, last=1_000_000, article_at=lambda n: None)
    result = find_article_at_date(client, "alt.search", START)
    assert result.article == 1_000_000
    assert result.probes < 60


def jittered_dates(draw_list: list[tuple[int, bool, int]]) -> dict[int, int | None]:
    articles: dict[int, int | None] = {}
    posted = START
    for number, (gap, present, jitter) in enumerate(draw_list, start=1):
        posted += gap
        if present:
            articles[number] = posted + jitter
    return articles


@pytest.mark.slow
@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    steps=st.lists(
        st.tuples(st.integers(0, 120), st.booleans(), st.integers(-90, 90)),
        min_size=1,
        max_size=1500,
    ),
    fraction=st.floats(-0.1, 1.1),
    ordered=st.booleans(),
)
def test_property_lowest_article_at_or_after_with_out_of_order_tolerance(
    news, steps, fraction, ordered
):
    server, client = news
    if ordered:
        steps = [(gap, present, 0) for gap, present, _ in steps]
    articles = jittered_dates(steps)
    if not articles:
        articles = {1: START}
    put_group(server, articles, first=1, last=len(steps))
    dates = [articles[n] for n in sorted(articles)]
    when = int(min(dates) + fraction * (max(dates) - min(dates)))
    # J: how far an earlier article's date may lie after a later one's.
    disorder = max(
        (earlier - later for i, earlier in enumerate(dates) for later in dates[i + 1 :]),
        default=0,
    )
    disorder = max(disorder, 0)

    found = article_at_date(client, "alt.search", when)

    assert all(t < when + disorder or t < when for n, t in articles.items() if n < found)
    if found in articles and articles[found] >= when:
        pass  # an article at or after `when`, as promised
    else:
        assert found == len(steps)  # the last article: everything is older (within J)
        assert all(t < when + disorder or t < when for t in articles.values())
    if disorder == 0:
        expected = lowest_at_or_after(articles, when)
        assert found == (expected if expected is not None else len(steps))


def synthetic_group(server: NNTPServer, size: int) -> None:
    """`size` articles made on demand: a post a minute, every 7th missing, a long hole."""
    hole = range(size // 3, size // 3 + size // 20)

    def article_at(number: int) -> Article | None:
        if number % 7 == 0 or number in hole:
            return None
        return dated(START + 60 * number)

    server.add_group("alt.huge", first=1, last=size, article_at=article_at)


@pytest.mark.slow
def test_probes_grow_with_the_logarithm_of_the_group_size(news):
    server, client = news
    probes = {}
    for size in (1_000, 100_000, 10_000_000):
        synthetic_group(server, size)
        when = START + 60 * (size * 3 // 4 + 1)
        before = server.count("OVER")
        result = find_article_at_date(client, "alt.huge", when)
        assert result.article == size * 3 // 4 + 1 + (1 if (size * 3 // 4 + 1) % 7 == 0 else 0)
        assert server.count("OVER") - before == result.probes
        probes[size] = result.probes
        # A moment inside the long hole costs more probes, but stays far from linear.
        in_hole = find_article_at_date(client, "alt.huge", START + 60 * (size // 3 + 5))
        assert in_hole.article == size // 3 + size // 20 + (
            1 if (size // 3 + size // 20) % 7 == 0 else 0
        )
        assert in_hole.probes <= 6 * math.log2(size / PROBE_SIZE) + 5
        assert result.probes <= math.log2(size / PROBE_SIZE) + 3
    # Ten thousand times the articles costs about log2(10_000) ≈ 13 more probes.
    assert probes[10_000_000] - probes[1_000] <= 16
    assert probes[1_000] < probes[100_000] < probes[10_000_000]
