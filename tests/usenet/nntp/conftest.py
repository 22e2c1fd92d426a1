"""Fixtures: a fresh in-repo NNTP server per test and clients pointed at it."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.support.nntpd import NNTPServer
from usenet.nntp.client import NNTPClient


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
