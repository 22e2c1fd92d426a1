"""Every t= function over releases the batch path assembled, parsed strictly
(RSS 2.0 + the newznab namespace, the spec's examples), XML and JSON."""

from __future__ import annotations

import json
import time
from email.utils import parsedate_to_datetime
from typing import Any
from uuid import UUID

import pytest
from lxml import etree
from nzb import Nzb

from catalog.models import Release
from catalog.services import store_files
from newznab.models import ApiKeyDay
from tests.support.factories import GroupFactory
from tests.support.newznab import NEWZNAB_NS, call, error_code, parse
from tests.support.reports import release_files

pytestmark = pytest.mark.django_db

NOW = int(time.time())
NAMES = {
    "tv": "Some.Show.S01E02.1080p.WEB.h264-GRP",
    "tv_next": "Some.Show.S01E03.720p.HDTV.x264-GRP",
    "other_show": "Other_Show.S02E01.2160p.WEB-DL-TEAM",
    "movie": "A.Great.Movie.2019.1080p.BluRay.x264-FILM",
    "old_movie": "Old.Movie.1999.DVDRip.XviD-OLD",
}


@pytest.fixture
def releases() -> dict[str, Release]:
    group = GroupFactory(name="alt.binaries.teevee")
    for age, stem in enumerate(NAMES.values()):
        date = NOW - age * 3 * 86_400  # three days apart, newest first
        store_files(group.id, None, [], release_files(stem, date=date, poster=f"p{age} <p@x>"))
    return {key: Release.objects.get(name=stem) for key, stem in NAMES.items()}


def items(response: Any) -> tuple[Any, list[Any]]:
    """The channel and its items; checks the RSS 2.0 shape the spec's example has."""
    root = parse(response)
    assert root.tag == "rss" and root.get("version") == "2.0"
    assert root.nsmap.get("newznab") == NEWZNAB_NS
    [channel] = root.findall("channel")
    for tag in ("title", "description", "link"):
        assert channel.findtext(tag)
    found = channel.findall("item")
    for item in found:
        assert item.findtext("title") and item.findtext("guid") and item.findtext("link")
        parsedate_to_datetime(item.findtext("pubDate"))  # RFC 822
        enclosure = item.find("enclosure")
        assert enclosure.get("type") == "application/x-nzb"
        assert int(enclosure.get("length")) > 0
        assert enclosure.get("url") == item.findtext("link")
    return channel, found


def attrs(item: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for attr in item.findall(f"{{{NEWZNAB_NS}}}attr"):
        out.setdefault(attr.get("name"), []).append(attr.get("value"))
    return out


def response_of(channel: Any) -> tuple[int, int]:
    response = channel.find(f"{{{NEWZNAB_NS}}}response")
    return int(response.get("offset")), int(response.get("total"))


def titles(found: list[Any]) -> list[str]:
    return [item.findtext("title") for item in found]


def test_search_finds_a_word_of_a_dotted_name_newest_first(client, api_key, releases):
    channel, found = items(call(client, t="search", q="show", apikey=api_key.key))
    assert titles(found) == [NAMES["tv"], NAMES["tv_next"], NAMES["other_show"]]
    assert response_of(channel) == (0, 3)


def test_search_with_two_words_needs_both(client, api_key, releases):
    _, found = items(call(client, t="search", q="show 720p", apikey=api_key.key))
    assert titles(found) == [NAMES["tv_next"]]


def test_search_by_category_parent_and_subcategory(client, api_key, releases):
    _, movies = items(call(client, t="search", cat="2000", apikey=api_key.key))
    assert titles(movies) == [NAMES["movie"], NAMES["old_movie"]]
    _, hd = items(call(client, t="search", q="movie", cat="2040", apikey=api_key.key))
    assert titles(hd) == [NAMES["movie"]]


def test_search_by_group_and_maxage(client, api_key, releases):
    _, found = items(
        call(client, t="search", group="alt.binaries.teevee", maxage=4, apikey=api_key.key)
    )
    assert titles(found) == [NAMES["tv"], NAMES["tv_next"]]
    _, none = items(call(client, t="search", group="alt.binaries.other", apikey=api_key.key))
    assert none == []


def test_limit_and_offset_page_with_the_total(client, api_key, releases):
    channel, found = items(call(client, t="search", limit=2, offset=1, apikey=api_key.key))
    assert titles(found) == [NAMES["tv_next"], NAMES["other_show"]]
    assert response_of(channel) == (1, 5)


def test_extended_attributes(client, api_key, releases):
    _, [item] = items(call(client, t="search", q="great", extended=1, apikey=api_key.key))
    found = attrs(item)
    release = releases["movie"]
    assert found["category"] == ["2000", "2040"]
    assert found["size"] == [str(release.size)]
    assert found["files"] == ["5"]
    assert found["poster"] == [release.poster]
    assert found["group"] == ["alt.binaries.teevee"]
    assert parsedate_to_datetime(found["usenetdate"][0]) == release.posted
    assert found["grabs"] == ["0"]
    assert found["completion"] == ["100"]
    _, [plain] = items(call(client, t="search", q="great", apikey=api_key.key))
    assert set(attrs(plain)) == {"category", "size", "guid", "usenetdate", "completion"}


def test_tvsearch_by_season_and_episode(client, api_key, releases):
    _, found = items(call(client, t="tvsearch", q="some show", season=1, ep=3, apikey=api_key.key))
    assert titles(found) == [NAMES["tv_next"]]
    _, season = items(call(client, t="tvsearch", q="some show", season=1, apikey=api_key.key))
    assert titles(season) == [NAMES["tv"], NAMES["tv_next"]]
    _, tv_only = items(call(client, t="tvsearch", apikey=api_key.key))
    assert titles(tv_only) == [NAMES["tv"], NAMES["tv_next"], NAMES["other_show"]]


def test_tvsearch_needs_a_season_or_a_title_for_an_episode(client, api_key, releases):
    assert error_code(call(client, t="tvsearch", ep=2, apikey=api_key.key)) == 200
    assert (
        error_code(call(client, t="tvsearch", q="x", season=1, ep="x", apikey=api_key.key)) == 201
    )


def test_movie_search(client, api_key, releases):
    _, found = items(call(client, t="movie", q="movie", apikey=api_key.key))
    assert titles(found) == [NAMES["movie"], NAMES["old_movie"]]
    _, by_imdb = items(call(client, t="movie", imdbid="tt0111161", apikey=api_key.key))
    assert by_imdb == []
    assert error_code(call(client, t="movie", imdbid="tt01x", apikey=api_key.key)) == 201


def test_details_of_a_release_and_of_none(client, api_key, releases):
    release = releases["tv"]
    _, [item] = items(call(client, t="details", id=release.id, apikey=api_key.key))
    assert UUID(item.findtext("guid")).int & (2**62 - 1) == release.id
    assert attrs(item)["files"] == ["5"]
    assert error_code(call(client, t="details", id=release.id + 999, apikey=api_key.key)) == 300
    assert error_code(call(client, t="details", id="abc", apikey=api_key.key)) == 300
    assert error_code(call(client, t="details", apikey=api_key.key)) == 200


def test_get_streams_the_nzb_and_counts_a_grab(client, api_key, releases):
    release = releases["tv"]
    response = call(client, t="get", id=release.id, apikey=api_key.key)
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"] == "application/x-nzb"
    document = Nzb.from_str(b"".join(response.streaming_content).decode())  # a strict NZB parser
    assert document.has_rar() and document.has_par2()
    assert len(document.files) == 5
    assert sum(len(file.segments) for file in document.files) == 10
    assert ApiKeyDay.objects.get(key_id=api_key.id).grabs == 1
    _, [item] = items(call(client, t="details", id=release.id, apikey=api_key.key))
    assert attrs(item)["grabs"] == ["1"]
    assert error_code(call(client, t="get", id=release.id + 999, apikey=api_key.key)) == 300


def test_the_get_link_of_an_item_fetches_its_nzb(client, api_key, releases):
    _, [item] = items(call(client, t="search", q="great", apikey=api_key.key))
    response = client.get(item.findtext("link").removeprefix("http://testserver"))
    assert response.status_code == 200
    assert b"A.Great.Movie" in b"".join(response.streaming_content)


def test_search_as_json(client, api_key, releases):
    body = json.loads(
        call(client, t="search", q="great", o="json", extended=1, apikey=api_key.key).content
    )
    channel = body["channel"]
    assert channel["response"]["@attributes"] == {"offset": "0", "total": "1"}
    [item] = channel["item"]
    assert item["title"] == NAMES["movie"]
    assert {"name": "files", "value": "5"} in [a["@attributes"] for a in item["attr"]]


def test_the_rss_feed_lists_the_newest_by_category(client, api_key, releases):
    _, found = items(client.get("/rss", {"t": "5000", "apikey": api_key.key}))
    assert titles(found) == [NAMES["tv"], NAMES["tv_next"], NAMES["other_show"]]
    _, all_of_them = items(client.get("/rss", {"t": "0", "num": "2", "apikey": api_key.key}))
    assert len(all_of_them) == 2
    assert error_code(client.get("/rss", {"t": "5000"})) == 100


def test_a_multi_group_cross_post_is_one_file_per_posted_file_in_the_nzb(client, api_key):
    stem = "Cross.Posted.S01E01.720p.HDTV.x264-X"
    for name in ("alt.binaries.a", "alt.binaries.b"):
        store_files(GroupFactory(name=name).id, None, [], release_files(stem, date=NOW))
    release = Release.objects.get(name=stem)
    response = call(client, t="get", id=release.id, apikey=api_key.key)
    nzb = etree.fromstring(b"".join(response.streaming_content))
    ns = {"n": "http://www.newzbin.com/DTD/2003/nzb"}
    files = nzb.findall("n:file", ns)
    assert len(files) == 5
    assert [g.text for g in files[0].findall("n:groups/n:group", ns)] == [
        "alt.binaries.a",
        "alt.binaries.b",
    ]


def test_a_search_costs_a_fixed_number_of_queries(
    client, api_key, releases, django_assert_num_queries
):
    call(client, t="search", q="show", apikey=api_key.key)  # reads the word statistics once
    # The key, the call's counters, the walk, then (a short walk) the matches.
    with django_assert_num_queries(4):
        call(client, t="search", q="show", apikey=api_key.key)
