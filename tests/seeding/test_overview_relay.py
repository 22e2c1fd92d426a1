"""GET /api/v1/ranges/{id}/overviews: the relay against the in-repo news server."""

from __future__ import annotations

import gzip
import threading
import zlib

import pytest
from django.test import override_settings
from django.utils import timezone

from indexer.newsserver import close_news_pool, news_pool
from seeding.models import SeedRange
from seeding.relay import OVERVIEW_SPAN_LIMIT
from seeding.services import create_ranges
from tests.support.news import overviews_url, synthetic

pytestmark = pytest.mark.django_db


@pytest.fixture
def leased(news_group, node_client):
    """A node holding the lease of range 1,001..9,000 of a group with holes."""
    group = news_group("alt.binaries.relay", 1, 200_000, holes=lambda n: n % 7 == 0)
    create_ranges(group, [(1_001, 9_000)])
    node = node_client()
    lease = node.lease()
    return node, lease


def expected(first, last):
    return b"".join(synthetic(n).overview(n) + b"\r\n" for n in range(first, last + 1) if n % 7)


def body(response):
    return b"".join(response.streaming_content)


def test_the_relay_streams_gzipped_overview_lines_of_the_span(leased):
    node, lease = leased
    response = node.get(overviews_url(lease, **{"from": 2_000, "to": 2_100}))
    assert response.status_code == 200
    assert response["Content-Type"] == "application/gzip"
    assert (response["X-Overview-First"], response["X-Overview-Last"]) == ("2000", "2100")
    data = gzip.decompress(body(response))
    assert data == expected(2_000, 2_100)
    assert not data.endswith(b".\r\n")


@pytest.mark.slow
def test_the_span_is_clamped_to_the_range(leased):
    node, lease = leased
    response = node.get(overviews_url(lease, **{"from": 1, "to": 100_000}))
    assert (response["X-Overview-First"], response["X-Overview-Last"]) == ("1001", "9000")
    assert gzip.decompress(body(response)) == expected(1_001, 9_000)


@pytest.mark.slow
def test_one_call_relays_at_most_the_span_limit(news_group, node_client):
    group = news_group("alt.binaries.big", 1, 200_000)
    create_ranges(group, [(1, 120_000)])
    node = node_client()
    lease = node.lease()
    response = node.get(overviews_url(lease, **{"from": 10}))
    last = 10 + OVERVIEW_SPAN_LIMIT - 1
    assert response["X-Overview-Last"] == str(last)
    lines = gzip.decompress(body(response)).split(b"\r\n")[:-1]
    assert len(lines) == OVERVIEW_SPAN_LIMIT
    assert lines[-1].startswith(f"{last}\t".encode())


@pytest.mark.slow
def test_the_relay_keeps_the_lease_alive(leased, backdate):
    node, lease = leased
    backdate(lease["id"], 600)
    response = node.get(overviews_url(lease))
    assert response.status_code == 200
    body(response)
    r = SeedRange.objects.get(id=lease["id"])
    assert (timezone.now() - r.heartbeat_at).total_seconds() < 60


def test_a_span_with_no_articles_is_an_empty_gzip(leased):
    node, lease = leased
    response = node.get(overviews_url(lease, **{"from": 7_000, "to": 7_000}))
    assert response.status_code == 200
    assert gzip.decompress(body(response)) == b""


@pytest.mark.parametrize(
    ("query", "word"),
    [
        ({"from": 5_000, "to": 4_000}, "after"),
        ({"from": 10, "to": 900}, "outside"),
        ({"from": 9_001, "to": 10_000}, "outside"),
        ({"from": None}, "from"),
        ({"to": "ten"}, "to"),
        ({"epoch": None}, "epoch"),
        ({"from": -1}, "from"),
    ],
)
def test_bad_spans_and_parameters_are_400(leased, query, word):
    node, lease = leased
    response = node.get(overviews_url(lease, **query))
    assert response.status_code == 400
    assert response.json()["error"] == "invalid"
    assert word in response.json()["detail"]


def test_a_stale_epoch_is_409_and_an_unknown_range_404(leased, node_client):
    node, lease = leased
    assert node.get(overviews_url(lease, epoch=lease["epoch"] + 1)).status_code == 409
    assert node_client().get(overviews_url(lease)).status_code == 409
    assert node.get(overviews_url({**lease, "id": 999_999})).status_code == 404
    assert node.get(overviews_url({**lease, "id": 2**70})).status_code == 404


def test_a_group_the_news_server_lacks_is_a_clear_404(news, news_group, leased):
    node, lease = leased
    del news.groups["alt.binaries.relay"]
    response = node.get(overviews_url(lease))
    assert response.status_code == 404
    assert "not on the coordinator's news server" in response.json()["detail"]


def test_an_unreachable_news_server_is_503_without_the_password(leased, news):
    node, lease = leased
    port = news.port
    news.stop()
    with override_settings(NEWS_SERVER_URL=f"nntp://me:s3cret-pw@127.0.0.1:{port}/?timeout=2"):
        close_news_pool()
        response = node.get(overviews_url(lease))
    close_news_pool()
    assert response.status_code == 503
    assert response.json()["error"] == "unavailable"
    assert "s3cret-pw" not in response.content.decode()
    assert "news server" in response.json()["detail"]


def test_no_news_server_configured_is_a_clear_503(leased):
    node, lease = leased
    with override_settings(NEWS_SERVER_URL=""):
        close_news_pool()
        response = node.get(overviews_url(lease))
    assert response.status_code == 503
    assert "NEWS_SERVER_URL" in response.json()["detail"]


@pytest.mark.slow
def test_a_connection_dropped_mid_stream_truncates_the_gzip(leased, news):
    node, lease = leased
    news.drop_after_lines = 1_000
    response = node.get(overviews_url(lease))
    assert response.status_code == 200
    data = body(response)
    with pytest.raises(EOFError):
        gzip.decompress(data)
    partial = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data)
    assert expected(1_001, 9_000).startswith(partial)
    news.drop_after_lines = None
    pool = news_pool()
    assert pool.open_connections == 0  # the broken connection was dropped, not pooled
    assert gzip.decompress(body(node.get(overviews_url(lease)))) == expected(1_001, 9_000)


@pytest.mark.slow
def test_lines_are_sent_on_as_they_arrive(leased, news):
    node, lease = leased
    news.hold_after_lines = 3_000
    safety = threading.Timer(5, news.release.set)  # never hang the suite
    safety.start()
    response = node.get(overviews_url(lease))
    chunks = iter(response.streaming_content)
    received, unpacker, plain = [], zlib.decompressobj(16 + zlib.MAX_WBITS), b""
    while not plain:
        received.append(next(chunks))
        plain += unpacker.decompress(received[-1])
    # Lines reached the node while the server still held the rest back.
    assert not news.release.is_set()
    assert expected(1_001, 9_000).startswith(plain)
    news.release.set()
    safety.cancel()
    data = b"".join(received) + b"".join(chunks)
    assert gzip.decompress(data) == expected(1_001, 9_000)


@pytest.mark.slow
def test_a_slow_server_times_out_into_a_truncated_stream(leased, news):
    node, lease = leased
    with override_settings(NEWS_SERVER_URL=f"nntp://127.0.0.1:{news.port}/?timeout=0.5"):
        close_news_pool()
        news.hold_after_lines = 10
        response = node.get(overviews_url(lease))
        assert response.status_code == 200
        with pytest.raises(EOFError):
            gzip.decompress(body(response))
        news.release.set()
    close_news_pool()


@pytest.mark.slow
@pytest.mark.parametrize("offer", ["offer_deflate", "offer_gzip", "offer_xzver"])
def test_compressed_transfers_relay_the_same_lines(leased, news, offer):
    node, lease = leased
    setattr(news, offer, True)
    close_news_pool()
    response = node.get(overviews_url(lease, **{"from": 3_000, "to": 6_000}))
    assert gzip.decompress(body(response)) == expected(3_000, 6_000)
    with news_pool().connection() as client:
        assert client.compression_in_use is not None
