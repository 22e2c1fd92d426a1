"""End to end: a rar set with par2 volumes and an nfo posted to INN2, indexed by a
seed-node agent, found through the newznab API (t=search) and fetched as an NZB
(t=get) that names every posted segment of every file."""

from __future__ import annotations

import urllib.request
from pathlib import Path
from urllib.parse import urlencode
from xml.etree import ElementTree

import pytest
from nzb import Nzb

from tests.e2e.test_fleet import wait_until_all_done
from tests.support.fixtures import inn_server  # noqa: F401
from tests.support.fleet import Fleet, fresh_database
from tests.support.inn2 import InnServer
from tests.support.usenet import make_binary_posts

pytestmark = pytest.mark.e2e

GROUP = "alt.binaries.e2e.newznab"
NEWZNAB = "{http://www.newznab.com/DTD/2010/feeds/attributes/}"


def newznab(fleet: Fleet, **params: str) -> bytes:
    with urllib.request.urlopen(f"{fleet.url}/api?{urlencode(params)}", timeout=30) as response:
        return response.read()


def issue_api_key(fleet: Fleet) -> str:
    return fleet.python(
        "from newznab.services import issue_api_key\nprint(issue_api_key('e2e')[1])\n"
    ).strip()


def test_a_posted_rar_set_is_found_and_its_nzb_names_every_segment(
    inn_server: InnServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    inn_server.create_group(GROUP)
    articles, manifest = make_binary_posts(
        GROUP, seed=16, releases=6, days=3, incomplete_share=0.0, text_posts=10
    )
    result = inn_server.post_articles(None, articles)
    assert not result.refused
    # The release under test: one with par2 volumes and an nfo.
    names = sorted({f.release for f in manifest.files.values()})
    release = next(
        name for name in names if any(f.filename == f"{name}.nfo" for f in manifest.files.values())
    )
    posted = {f.filename: f for f in manifest.files.values() if f.release == release}
    assert any(".vol" in name for name in posted) and f"{release}.par2" in posted

    with fresh_database() as (url, conninfo):
        fleet = Fleet(url, conninfo, tmp_path, news_server_url=inn_server.url)
        try:
            fleet.start()
            fleet.plan([GROUP], 4, 500)
            fleet.start_agent("indexer", "--mode", "ranges", "--news-server", inn_server.url)
            wait_until_all_done(fleet, timeout=120)
            key = issue_api_key(fleet)

            words = release.split(".")
            feed = ElementTree.fromstring(newznab(fleet, t="search", q=" ".join(words), apikey=key))
            items = feed.findall("channel/item")
            assert [item.findtext("title") for item in items] == [release]
            release_id = items[0].findtext("guid")

            # The NZB read by a spec-compliant NZB parser (the `nzb` package).
            document = Nzb.from_str(newznab(fleet, t="get", id=release_id, apikey=key).decode())
            assert document.has_rar() and document.has_par2()
            assert sorted(document.filenames) == sorted(posted)
            for file in document.files:
                posted_file = posted[file.name]
                assert file.groups == (GROUP,)
                assert {(s.number, f"<{s.message_id}>") for s in file.segments} == {
                    (s.part, s.message_id) for s in posted_file.segments
                }

            details = ElementTree.fromstring(newznab(fleet, t="details", id=release_id, apikey=key))
            attrs = {a.get("name"): a.get("value") for a in details.iter(f"{NEWZNAB}attr")}
            assert attrs["grabs"] == "1" and attrs["files"] == str(len(posted))
            assert attrs["completion"] == "100"
        finally:
            fleet.stop()
