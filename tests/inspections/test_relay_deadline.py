"""The relay's deadline: a news server that trickles a body cannot hold a coordinator worker."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from django.test import override_settings

from indexer.newsserver import close_news_pool
from tests.support.nntpd import NNTPServer

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def test_a_body_still_arriving_at_inspect_relay_seconds_is_a_503(planned, node_client):
    planned()
    node = node_client()
    leased = node.post("/api/v1/inspections/lease").json()["lease"]
    message_id = leased["articles"][0]["message_ids"][0]
    with NNTPServer() as news:
        # 400 lines, one each 25 ms: ten seconds in all, each line well within the
        # socket timeout, so only the deadline stops it.
        news.bodies[message_id] = b"".join(b"line %d\r\n" % n for n in range(400))
        news.line_delay = 0.025
        url = f"nntp://{news.host}:{news.port}/?connections=1&timeout=10"
        with override_settings(NEWS_SERVER_URL=url, INSPECT_RELAY_SECONDS=1):
            close_news_pool()
            try:
                query = urlencode({"epoch": leased["epoch"], "message_id": message_id})
                response = node.get(f"/api/v1/inspections/{leased['id']}/body?{query}")
            finally:
                close_news_pool()
    assert response.status_code == 503, response.content
    body = response.json()
    assert body["error"] == "unavailable"
    assert "still arriving at its deadline" in body["detail"]
