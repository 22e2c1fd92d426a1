"""NNTPPool: a ceiling on connections, reuse of idle ones, dropping broken ones."""

from __future__ import annotations

import threading
import time

import pytest

from tests.support.nntpd import numbered_articles
from usenet.nntp.config import NewsServerConfig
from usenet.nntp.errors import NNTPConnectionError, NoSuchGroup, PoolExhausted
from usenet.nntp.pool import NNTPPool


def make_pool(server, connections=2, **kwargs):
    config = NewsServerConfig.from_url(
        f"nntp://{server.host}:{server.port}/?connections={connections}&timeout=5"
    )
    return NNTPPool(config, **kwargs)


def test_idle_connections_are_reused(server):
    server.add_group("alt.test", numbered_articles(10))
    with make_pool(server) as pool:
        for _ in range(5):
            with pool.connection() as client:
                assert client.group("alt.test").count == 9
    assert server.connections == 1


def test_no_more_than_the_maximum_are_opened_and_waiters_time_out(server):
    with make_pool(server, connections=2) as pool:
        with pool.connection(), pool.connection():
            with pytest.raises(PoolExhausted, match="all 2 connections"):
                with pool.connection(timeout=0.2):
                    pass
        assert server.connections == 2


def test_a_waiter_gets_the_connection_another_thread_returns(server):
    with make_pool(server, connections=1) as pool:
        got: list[object] = []

        def wait_for_connection():
            with pool.connection(timeout=5) as client:
                got.append(client)

        with pool.connection() as first:
            waiter = threading.Thread(target=wait_for_connection)
            waiter.start()
            # Give the connection back only once the waiter sleeps on the
            # pool's condition, so the test goes through the waiting path.
            deadline = time.monotonic() + 10
            while not pool._condition._waiters:
                assert waiter.is_alive(), "the waiter finished without waiting"
                assert time.monotonic() < deadline, "the waiter never waited"
                time.sleep(0.01)  # waiting for another thread to block, not moving time
        waiter.join(10)
        assert not waiter.is_alive()
        assert got == [first]
        assert server.connections == 1


def test_a_connection_that_broke_is_dropped_and_replaced(server):
    server.add_group("alt.test", numbered_articles(500))
    with make_pool(server, connections=1) as pool:
        server.drop_after_lines = 10
        with pytest.raises(NNTPConnectionError):
            with pool.connection() as client:
                client.group("alt.test")
                list(client.over(1, 500))
        broken = client
        assert pool.open_connections == 0
        server.drop_after_lines = None
        with pool.connection() as client:
            assert client is not broken
            client.group("alt.test")
            assert len(list(client.over(1, 10))) == 9
    assert server.connections == 2


def test_an_ordinary_error_reply_keeps_the_connection(server):
    with make_pool(server, connections=1) as pool:
        with pytest.raises(NoSuchGroup):
            with pool.connection() as client:
                client.group("alt.missing")
        with pool.connection() as again:
            assert again is client
    assert server.connections == 1


def test_an_abandoned_stream_does_not_go_back_to_the_pool(server):
    server.add_group("alt.test", numbered_articles(500))
    with make_pool(server, connections=1) as pool:
        with pool.connection() as client:
            client.group("alt.test")
            lines = client.over(1, 500)
            next(lines)
            lines.close()
        assert pool.idle_connections == 0 and pool.open_connections == 0
        with pool.connection() as fresh:
            assert fresh is not client


def test_pooled_connections_share_the_memory_of_failed_compression(server):
    server.add_group("alt.test", numbered_articles(50))
    server.offer_gzip = True
    server.corrupt_compression = True
    with make_pool(server, connections=2) as pool:
        with pool.connection() as first, pool.connection() as second:
            first.group("alt.test")
            assert len(list(first.over(1, 50))) == 43
            second.group("alt.test")
            assert second.compression_in_use == "gzip"  # negotiated before the failure
        assert pool.disabled_compressions == {"gzip"}
    with make_pool(server, connections=1) as pool:
        pool.disabled_compressions.add("gzip")
        with pool.connection() as client:
            assert client.compression_in_use is None


def test_close_quits_idle_connections(server):
    pool = make_pool(server)
    with pool.connection():
        pass
    pool.close()
    assert server.commands[-1] == "QUIT"
    with pytest.raises(PoolExhausted, match="closed"):
        with pool.connection():
            pass
