"""NewsServerSource on a pooled connection: GROUP again only when a span passes its mark."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from seed_node.leases import Lease
from seed_node.sources import NewsServerSource
from tests.support.nntpd import Article, NNTPServer
from usenet.nntp import NewsServerConfig, NNTPPool

GROUP = "alt.binaries.sources"


@pytest.fixture
def server() -> Iterator[NNTPServer]:
    with NNTPServer() as running:
        yield running


def numbers(lines: Iterator[bytes]) -> list[int]:
    return [int(line.split(b"\t", 1)[0]) for line in lines]


def test_group_is_sent_again_only_for_a_span_past_the_last_group_reply(server):
    articles = {number: Article() for number in range(1, 101)}
    server.add_group(GROUP, articles)
    config = NewsServerConfig.from_url(f"nntp://{server.host}:{server.port}/?connections=1")
    lease = Lease(id=1, group=GROUP, start=1, end=200, epoch=1)
    with NNTPPool(config) as pool:
        source = NewsServerSource(pool)
        assert numbers(source.lines(lease, 1, 50)) == list(range(1, 51))
        # GROUP answered 1-100: a span inside that mark needs no second GROUP.
        assert numbers(source.lines(lease, 51, 100)) == list(range(51, 101))
        assert server.count("GROUP") == 1
        for number in range(101, 151):
            articles[number] = Article()
        # A span past the mark asks again, so the server counts the new posts.
        assert numbers(source.lines(lease, 101, 150)) == list(range(101, 151))
        assert server.count("GROUP") == 2
        assert numbers(source.lines(lease, 120, 150)) == list(range(120, 151))
        assert server.count("GROUP") == 2
    assert server.connections == 1
