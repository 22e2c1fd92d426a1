"""The body relay against INN2: only the lease's message-ids, the posted bytes, its bounds."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlencode

import pytest
from django.test import override_settings

from indexer.newsserver import close_news_pool
from tests.support.inn2 import InnServer
from tests.support.nodes import NodeClient
from tests.support.reports import msgid
from tests.support.usenet import Article

pytestmark = [pytest.mark.django_db, pytest.mark.inn]

GROUP = "alt.binaries.inspect.relay"
STEM = "r7t6y5u4i3o2"

# A body line starting with a dot: stuffed on the wire, relayed unstuffed.
PAR2_BODY = b"=ybegin part=1 line=128 size=4 name=x.par2\r\n..PAR2\r\nmore\r\n"


@dataclass(frozen=True)
class Relayed:
    node: NodeClient
    lease: dict
    par2: str  # message-ids: INN keeps the session's articles, so each test has its own
    archive: str


def _post(server: InnServer, par2: str, archive: str) -> None:
    headers = (("From", "p <p@example.invalid>"), ("Subject", f"{STEM} [1/6] yEnc (1/1)"))
    big = b"x" * 100 + b"\r\n"
    articles = [
        Article(par2, datetime.now(UTC), (GROUP,), headers, PAR2_BODY),
        Article(archive, datetime.now(UTC), (GROUP,), headers, big * 100),
    ]
    result = server.post_articles(None, articles)
    assert result.accepted == 2, result.refused


@pytest.fixture
def relayed(inn_server: InnServer, planned, node_client):
    host = f"relay-{uuid.uuid4().hex[:12]}"
    par2, archive = msgid(f"{STEM}.par2", 1, host), msgid(f"{STEM}.part01.rar", 1, host)
    inn_server.create_group(GROUP)
    _post(inn_server, par2, archive)
    planned(STEM, host=host)
    node = node_client()
    leased = node.post("/api/v1/inspections/lease").json()["lease"]
    with override_settings(NEWS_SERVER_URL=f"{inn_server.url}/?connections=1&timeout=10"):
        close_news_pool()
        yield Relayed(node, leased, par2, archive)
    close_news_pool()


def body_url(leased, message_id, epoch=None):
    query = urlencode(
        {"epoch": leased["epoch"] if epoch is None else epoch, "message_id": message_id}
    )
    return f"/api/v1/inspections/{leased['id']}/body?{query}"


def test_the_relay_answers_the_posted_body_of_a_named_article(relayed):
    node, leased = relayed.node, relayed.lease
    response = node.get(body_url(leased, relayed.par2))
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/octet-stream"
    assert response.content == PAR2_BODY


def test_only_the_leases_message_ids_and_only_for_its_holder(relayed, node_client):
    node, leased = relayed.node, relayed.lease
    other = node.get(body_url(leased, "<somebody.else@host>"))
    assert other.status_code == 404
    assert "is not an article of inspection" in other.json()["detail"]
    assert node.get(body_url(leased, relayed.par2, epoch=9)).status_code == 409
    assert node_client().get(body_url(leased, relayed.par2)).status_code == 409
    bad = node.get(f"/api/v1/inspections/{leased['id']}/body?epoch=x&message_id={relayed.par2}")
    assert bad.status_code == 400 and "whole number" in bad.json()["detail"]


def test_a_body_over_the_bound_is_413_and_a_missing_one_404(relayed, inn_server):
    node, leased = relayed.node, relayed.lease
    with override_settings(INSPECT_RELAY_MAX_BYTES=1024):
        too_large = node.get(body_url(leased, relayed.archive))
    assert too_large.status_code == 413
    assert "INSPECT_RELAY_MAX_BYTES" in too_large.json()["detail"]
    inn_server.cancel(relayed.par2)
    missing = node.get(body_url(leased, relayed.par2))
    assert missing.status_code == 404, missing.content
    assert missing.json()["error"] == "no_such_article"


def test_no_news_server_is_503(relayed):
    node, leased = relayed.node, relayed.lease
    with override_settings(NEWS_SERVER_URL=""):
        close_news_pool()
        response = node.get(body_url(leased, relayed.par2))
    assert response.status_code == 503
    assert "NEWS_SERVER_URL" in response.json()["detail"]
