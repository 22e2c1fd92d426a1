"""seed_node.articles: what a failing news server's error says (it is stored and shown)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from seed_node.articles import NewsServerArticles
from seed_node.sources import NewsServerFailure
from usenet.nntp import NewsServerConfig, NNTPPool


def test_a_failing_news_server_is_named_by_host_and_port_only(tmp_path):
    ca_file = str(tmp_path / "private-ca.pem")
    config = NewsServerConfig(
        host="127.0.0.1", port=1, username="secret-user", password="pw", ca_file=ca_file,
        timeout=2,
    )  # fmt: skip
    pool = NNTPPool(config, acquire_timeout=2)
    try:
        with pytest.raises(NewsServerFailure) as failed:
            NewsServerArticles(pool, fetch_seconds=5).body(
                SimpleNamespace(id=1, epoch=1), "<a1@x>", 1024
            )
    finally:
        pool.close()
    said = str(failed.value)
    assert said.startswith("news server 127.0.0.1:1: ")
    assert "secret-user" not in said and ca_file not in said
