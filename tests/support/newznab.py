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


def read_release_fields() -> None:
    """Every release's name fields (usenet.release_names) and `listed` (complete: every
    file and segment seen), as the catalog keeps them: the newznab tests' releases,
    stored by store_files, are then served and searched as a client sees them."""
    from django.db import connection

    from catalog.models import Release
    from usenet.release_names import parse_release_name

    for release in Release.objects.all():
        parsed = parse_release_name(release.name)
        release.kind = parsed.kind
        release.title_key = parsed.title_key
        release.year = parsed.year
        release.seasons = list(parsed.seasons)
        release.episodes = list(parsed.episodes)
        release.absolute_episodes = list(parsed.absolute_episodes)
        release.air_date = parsed.air_date
        release.full_season = parsed.full_season
        release.resolution = parsed.resolution
        release.save()
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE catalog_release SET listed = files_seen >= coalesce(files_expected, 0)"
            " AND segments_present >= segments_expected"
        )
