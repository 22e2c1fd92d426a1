"""A node agent's pooled connection to INN2 reads articles posted after its GROUP.

nnrpd fixes a group's article range when GROUP is answered: OVER on that
connection sees nothing past it until GROUP is sent again. A tail range read on a
connection that selected the group before the new posts must still get them.
"""

from __future__ import annotations

import pytest

from seed_node.leases import Lease
from seed_node.sources import NewsServerSource
from tests.support.inn2 import InnServer
from tests.support.usenet import make_binary_posts
from usenet.nntp import NewsServerConfig, NNTPPool

pytestmark = pytest.mark.inn

GROUP = "alt.binaries.source.tail"


def test_a_pooled_connection_reads_articles_posted_after_it_selected_the_group(
    inn_server: InnServer,
) -> None:
    inn_server.create_group(GROUP)
    older, _ = make_binary_posts(GROUP, seed=31, releases=2, max_segments=4, text_posts=3)
    inn_server.post_articles(None, older)
    before = set(inn_server.article_numbers(GROUP).values())
    assert before
    config = NewsServerConfig.from_url(f"{inn_server.url}/?connections=1&timeout=10")
    with NNTPPool(config) as pool:
        source = NewsServerSource(pool)
        lease = Lease(id=1, group=GROUP, start=1, end=10_000, epoch=1)
        read = {int(line.split(b"\t", 1)[0]) for line in source.lines(lease, 1, max(before))}
        assert read == before
        with pool.connection() as client:  # the one connection, its group selected
            assert client.current_group == GROUP

        newer, _ = make_binary_posts(GROUP, seed=32, releases=2, max_segments=4, text_posts=3)
        inn_server.post_articles(None, newer)
        posted = set(inn_server.article_numbers(GROUP).values()) - before
        assert len(posted) == len(newer)

        # The tail range, read through the same pooled connection.
        first, last = max(before) + 1, max(posted)
        tail = {int(line.split(b"\t", 1)[0]) for line in source.lines(lease, first, last)}
        assert tail == posted
        assert pool.open_connections == 1
