"""Calling the newznab API in tests: a GET of /api, its XML parsed, its error code."""

from __future__ import annotations

from typing import Any

from django.test import Client
from lxml import etree

NEWZNAB_NS = "http://www.newznab.com/DTD/2010/feeds/attributes/"


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
