"""End to end: a release posted to INN2 in two halves. While its last file is
missing, t=search and /rss leave it out (incomplete=1 shows it, with its
completion); once the last file arrives and is indexed, they list it once, with
the size of its articles as the news server counts them (OVER's bytes)."""

from __future__ import annotations

import urllib.request
from pathlib import Path
from urllib.parse import urlencode
from xml.etree import ElementTree

import pytest

from tests.e2e.test_fleet import wait_until_all_done
from tests.support.fixtures import inn_server  # noqa: F401
from tests.support.fleet import Fleet, fresh_database
from tests.support.inn2 import InnServer
from tests.support.usenet import make_binary_posts

pytestmark = [pytest.mark.e2e, pytest.mark.inn, pytest.mark.slow]

GROUP = "alt.binaries.e2e.listing"
NEWZNAB = "{http://www.newznab.com/DTD/2010/feeds/attributes/}"


def get(fleet: Fleet, path: str, **params: str) -> ElementTree.Element:
    with urllib.request.urlopen(f"{fleet.url}{path}?{urlencode(params)}", timeout=30) as answer:
        return ElementTree.fromstring(answer.read())


def items(root: ElementTree.Element) -> list[tuple[str, dict[str, str]]]:
    return [
        (
            item.findtext("title") or "",
            {a.get("name", ""): a.get("value", "") for a in item.iter(f"{NEWZNAB}attr")},
        )
        for item in root.findall("channel/item")
    ]


def test_an_incomplete_release_is_served_once_its_last_file_arrives(
    inn_server: InnServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    inn_server.create_group(GROUP)
    articles, manifest = make_binary_posts(
        GROUP, seed=25, releases=1, days=1, incomplete_share=0.0, text_posts=0
    )
    [release] = {f.release for f in manifest.files.values()}
    last = max(manifest.files.values(), key=lambda f: f.file_index)
    held = {s.message_id for s in last.segments}
    assert not inn_server.post_articles(
        None, [a for a in articles if a.message_id not in held]
    ).refused

    with fresh_database() as (url, conninfo):
        fleet = Fleet(url, conninfo, tmp_path, news_server_url=inn_server.url)
        try:
            fleet.start()
            fleet.plan([GROUP], 2, 500)
            fleet.start_agent("indexer", "--mode", "ranges", "--news-server", inn_server.url)
            wait_until_all_done(fleet, timeout=120)
            key = fleet.python(
                "from newznab.services import issue_api_key\nprint(issue_api_key('e2e')[1])\n"
            ).strip()
            q = " ".join(release.split("."))

            assert items(get(fleet, "/api", t="search", q=q, apikey=key)) == []
            assert items(get(fleet, "/rss", t="0", apikey=key)) == []
            [(title, attrs)] = items(
                get(fleet, "/api", t="search", q=q, incomplete="1", apikey=key)
            )
            assert title == release and int(attrs["completion"]) < 100

            assert not inn_server.post_articles(
                None, [a for a in articles if a.message_id in held]
            ).refused
            fleet.plan([GROUP], 2, 500)
            wait_until_all_done(fleet, timeout=120)

            with inn_server.reader() as reader:
                reader.group(GROUP)
                over = reader.over(1)
            article_bytes = sum(line.bytes for line in over)
            assert len(over) == len(articles)
            for path, params in (("/api", {"t": "search", "q": q}), ("/rss", {"t": "0"})):
                [(title, attrs)] = items(get(fleet, path, apikey=key, **params))
                assert title == release
                assert int(attrs["size"]) == article_bytes
                assert attrs["completion"] == "100"
        finally:
            fleet.stop()
