"""Planning, the date search, OVER with COMPRESS DEFLATE and the relay against a real INN2.

One module-scoped load posts backdated yEnc articles over 30 days into a group
and cancels a few (holes; INN's GROUP counts ignore them).
"""

from __future__ import annotations

import gzip
import itertools
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import pytest
from django.db import connection
from django.test import override_settings

from indexer.models import Group
from indexer.newsserver import close_news_pool
from seeding.models import SeedRange
from seeding.planning import plan_ranges
from seeding.services import create_ranges
from tests.support.factories import GroupFactory
from tests.support.inn2 import InnServer
from tests.support.usenet import make_binary_posts
from usenet.nntp import NNTPClient, find_article_at_date

pytestmark = pytest.mark.inn

GROUP = "alt.binaries.planning.inn"


@dataclass
class Load:
    first: int
    last: int
    raw: dict[int, bytes]  # article number -> OVER line as INN serves it
    dates: dict[int, int]  # article number -> Unix time


@pytest.fixture(scope="module")
def load(inn_server: InnServer) -> Load:
    articles, _ = make_binary_posts(GROUP, seed=77, releases=60, days=30, max_segments=12)
    inn_server.create_group(GROUP)
    inn_server.post_articles(None, articles)
    numbers = inn_server.article_numbers(GROUP)
    by_number = sorted((n, mid) for mid, n in numbers.items())
    for _, mid in by_number[10:13] + by_number[len(by_number) // 2 : len(by_number) // 2 + 5]:
        inn_server.cancel(mid)
    with inn_server.reader() as reader:
        info = reader.group(GROUP)
        reader.command(f"OVER {info.first}-{info.last}", expect=(224,))
        raw = {int(line.split(b"\t", 1)[0]): line for line in reader.read_block()}
    dates = {
        n: int(parsedate_to_datetime(line.split(b"\t")[3].decode()).timestamp())
        for n, line in raw.items()
    }
    return Load(info.first, info.last, raw, dates)


@pytest.fixture
def inn_news(inn_server: InnServer):
    with override_settings(NEWS_SERVER_URL=f"{inn_server.url}/?timeout=10"):
        close_news_pool()
        yield inn_server
        close_news_pool()


def first_at_or_after(load: Load, when: int) -> int | None:
    return min((n for n, posted in load.dates.items() if posted >= when), default=None)


def database_now() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT extract(epoch FROM clock_timestamp())::bigint")
        return int(cursor.fetchone()[0])


@pytest.mark.django_db
def test_plan_seed_for_n_days_starts_at_the_article_posted_then(load, inn_news):
    GroupFactory(name=GROUP)
    before = database_now()
    summary = plan_ranges([GROUP], days=10, size=100)
    after = database_now()
    (plan,) = summary.groups
    allowed = {first_at_or_after(load, t - 10 * 86400) for t in range(before - 1, after + 2)}
    assert plan.low in allowed
    assert plan.high == load.last  # every article predates live indexing
    spans = sorted(SeedRange.objects.values_list("start_id", "end_id"))
    assert spans[0][0] == plan.low and spans[-1][1] == load.last
    assert all(e + 1 == s for (_, e), (s, _) in itertools.pairwise(spans))
    assert plan_ranges([GROUP], days=10, size=100).ranges == 0


@pytest.mark.django_db
def test_history_stops_where_live_indexing_began(load, inn_news):
    numbers = sorted(load.dates)
    live = numbers[len(numbers) // 3]
    group = GroupFactory(name=GROUP)
    created = datetime.fromtimestamp(load.dates[live], UTC)
    Group.objects.filter(id=group.id).update(created_at=created)
    summary = plan_ranges([GROUP])
    (plan,) = summary.groups
    assert plan.low == load.first
    assert plan.high == first_at_or_after(load, load.dates[live]) - 1


def test_the_date_search_finds_the_first_article_at_a_moment(load, inn_server):
    moments = sorted(load.dates.values())
    with NNTPClient(inn_server.host, inn_server.port, timeout=10) as client:
        for when in (moments[0] - 1, moments[len(moments) // 4], moments[-1] - 30, moments[-1]):
            found = find_article_at_date(client, GROUP, when)
            assert found.article == first_at_or_after(load, when)


def test_over_through_compress_deflate_matches_what_inn_serves(load, inn_server):
    with NNTPClient(inn_server.host, inn_server.port, timeout=10, compression=True) as client:
        assert client.compression_in_use == "deflate"
        client.group(GROUP)
        lines = list(client.over(load.first, load.last))
    assert lines == [load.raw[n] for n in sorted(load.raw)]


@pytest.mark.django_db
def test_the_relay_serves_what_inn_serves(load, inn_news, node_client):
    group = GroupFactory(name=GROUP)
    create_ranges(group, [(load.first, load.last)])
    node = node_client()
    lease = node.lease()
    response = node.get(
        f"/api/v1/ranges/{lease['id']}/overviews?epoch={lease['epoch']}"
        f"&from={load.first}&to={load.last}"
    )
    assert response.status_code == 200
    data = gzip.decompress(b"".join(response.streaming_content))
    assert data == b"".join(load.raw[n] + b"\r\n" for n in sorted(load.raw))
