"""Fixtures of the newznab tests: an API key and a strict reader of the answers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client
from lxml import etree

from newznab import services

NEWZNAB_NS = "http://www.newznab.com/DTD/2010/feeds/attributes/"


@dataclass
class Issued:
    id: int
    key: str


@pytest.fixture
def api_key(db: Any) -> Issued:
    api_key, key = services.issue_api_key("sonarr")
    return Issued(api_key.pk, key)


def parse(response: Any) -> Any:
    """The answer's XML, parsed by lxml without recovery (a malformed document fails)."""
    assert response["Content-Type"].split(";")[0] in ("application/xml", "application/rss+xml")
    return etree.fromstring(
        response.content, etree.XMLParser(recover=False, resolve_entities=False)
    )


def error_code(response: Any) -> int:
    root = parse(response)
    assert root.tag == "error", response.content
    assert root.get("description")
    return int(root.get("code"))


def call(client: Client, **params: Any) -> Any:
    return client.get("/api", params)


@pytest.fixture(autouse=True)
def _fresh_term_stats() -> Any:
    """Word frequencies are cached per process; each test reads its own."""
    from newznab.selectors import forget_term_stats

    forget_term_stats()
    yield
    forget_term_stats()
