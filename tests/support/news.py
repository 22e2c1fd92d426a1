"""Fixtures: the in-repo news server as the coordinator's NEWS_SERVER_URL, and INN2."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from email.utils import formatdate

import pytest
from django.test import override_settings

from indexer.models import Group
from indexer.newsserver import close_news_pool
from tests.support.factories import GroupFactory
from tests.support.nntpd import Article, NNTPServer

# Article n of a synthetic group is posted at START + n * STEP: 288,000
# articles over the last 200 days.
STEP = 60
START = int(time.time()) // STEP * STEP - 200 * 86400


def posted_at(number: int) -> int:
    return START + number * STEP


def synthetic(number: int) -> Article:
    return Article(subject=f"post {number}", date=formatdate(posted_at(number), usegmt=True))


@pytest.fixture
def news() -> Iterator[NNTPServer]:
    """An in-repo NNTP server that the coordinator's pool talks to."""
    with NNTPServer() as server:
        url = f"nntp://127.0.0.1:{server.port}/?timeout=5&connections=4"
        with override_settings(NEWS_SERVER_URL=url):
            close_news_pool()
            yield server
            close_news_pool()


@pytest.fixture
def news_group(news: NNTPServer) -> Callable[..., Group]:
    """A group on the server (articles first..last, dated by number) and in the Group table.

    `live_from` is the article at which live indexing began (created_at is set to its date).
    """

    def make(
        name: str,
        first: int,
        last: int,
        live_from: int | None = None,
        holes: Callable[[int], bool] | None = None,
        **fields: object,
    ) -> Group:
        news.add_group(
            name,
            first=first,
            last=last,
            article_at=lambda n: None if holes is not None and holes(n) else synthetic(n),
        )
        group = GroupFactory(name=name, **fields)
        live = last + 1 if live_from is None else live_from
        created = datetime.fromtimestamp(posted_at(live), UTC)
        Group.objects.filter(id=group.id).update(created_at=created)
        group.refresh_from_db()
        return group

    return make


def overviews_url(lease, **query):
    params = {"epoch": lease["epoch"], "from": lease["start"], "to": lease["end"], **query}
    text = "&".join(f"{k}={v}" for k, v in params.items() if v is not None)
    return f"/api/v1/ranges/{lease['id']}/overviews?{text}"
