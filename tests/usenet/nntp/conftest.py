"""Fixtures: a fresh in-repo NNTP server per test and clients pointed at it."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.support.nntpd import Article, NNTPServer
from usenet.nntp.client import NNTPClient


def numbered_articles(count: int, holes: int = 7) -> dict[int, Article]:
    """Articles 1..count minus every `holes`-th, some subjects starting with a dot."""
    return {
        number: Article(subject=f".dotted {number}" if number % 5 == 0 else f"post {number}")
        for number in range(1, count + 1)
        if number % holes
    }


@pytest.fixture
def server() -> Iterator[NNTPServer]:
    with NNTPServer() as running:
        yield running


@pytest.fixture
def connect(server: NNTPServer) -> Iterator[Callable[..., NNTPClient]]:
    clients: list[NNTPClient] = []

    def make(**options: object) -> NNTPClient:
        options.setdefault("timeout", 5.0)
        client = NNTPClient(server.host, server.port, **options)  # type: ignore[arg-type]
        clients.append(client)
        return client.connect()

    yield make
    for client in clients:
        client.close()
