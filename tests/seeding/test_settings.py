"""NEWS_SERVER_URL: a system check for a malformed URL, a lazy pool, no password shown."""

from __future__ import annotations

import pytest
from django.core.checks import run_checks
from django.test import override_settings

from indexer import newsserver
from indexer.newsserver import NewsServerNotConfigured, close_news_pool, news_pool


def check_ids() -> set[str]:
    return {message.id for message in run_checks()}


@pytest.mark.parametrize(
    "url", ["http://news.example.com", "nntp://me:pw-9x@:563", "nntps://h/?x=1"]
)
def test_a_malformed_news_server_url_fails_a_system_check(url):
    with override_settings(NEWS_SERVER_URL=url):
        messages = [m for m in run_checks() if m.id == "indexer.E020"]
    assert messages
    assert "pw-9x" not in messages[0].msg


def test_a_good_or_missing_url_passes():
    for url in ("", "nntps://user:secret@news.example.com:563/?connections=8"):
        with override_settings(NEWS_SERVER_URL=url):
            assert "indexer.E020" not in check_ids()


def test_the_pool_is_made_on_first_use_and_never_shows_the_password():
    close_news_pool()
    assert newsserver._pool is None
    url = "nntps://user:secret-pw@news.example.com:563/?connections=3"
    with override_settings(NEWS_SERVER_URL=url, NEWS_COMPRESSION=False):
        pool = news_pool()
        assert pool is news_pool()
        assert pool.max_connections == 3
        assert pool.config.compression is False
        assert "secret-pw" not in repr(pool) and "secret-pw" not in str(pool.config)
    close_news_pool()


def test_no_url_is_a_clear_error():
    with override_settings(NEWS_SERVER_URL=""):
        close_news_pool()
        with pytest.raises(NewsServerNotConfigured, match="NEWS_SERVER_URL"):
            news_pool()


@pytest.mark.django_db
def test_the_schema_documents_the_overview_relay(client):
    response = client.get("/api/v1/schema/", HTTP_ACCEPT="application/json")
    schema = response.json()
    operation = schema["paths"]["/api/v1/ranges/{range_id}/overviews"]["get"]
    assert {p["name"] for p in operation["parameters"]} >= {"epoch", "from", "to", "range_id"}
    assert "application/gzip" in operation["responses"]["200"]["content"]
