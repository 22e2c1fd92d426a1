"""tvsearch, movie and t=search on the fields of a release's name (title, seasons,
episodes, absolute episodes, air date, year), in the forms Sonarr and Radarr send
(their NewznabRequestGenerator), and the serving rule: only listed releases unless
`incomplete=1`."""

from __future__ import annotations

import datetime
import time
from typing import Any

import pytest
from django.db import connection

from catalog.models import Release
from catalog.services import store_files
from newznab.selectors import title_match_key
from tests.support.factories import GroupFactory
from tests.support.newznab import NEWZNAB_NS, call, error_code, parse
from tests.support.reports import release_files
from usenet.release_names import title_key

pytestmark = pytest.mark.django_db

NOW = int(time.time())
# name -> the fields the catalog read from it (set here, so the search is tested
# whatever the parser makes of the name).
RELEASES: dict[str, dict[str, Any]] = {
    "The.Office.US.S02E03.720p.HDTV-G": dict(title_key="office", seasons=[2], episodes=[3]),
    "The.Office.US.S02E04E05.720p.HDTV-G": dict(title_key="office", seasons=[2], episodes=[4, 5]),
    "The.Office.US.S02.1080p.WEB-G": dict(title_key="office", seasons=[2], full_season=True),
    "The.Office.US.S03E03.720p.HDTV-G": dict(title_key="office", seasons=[3], episodes=[3]),
    "Office.Hours.S02E03.720p-G": dict(title_key="office hours", seasons=[2], episodes=[3]),
    "Late.Talk.2024.01.15.720p-G": dict(title_key="late talk", air_date=datetime.date(2024, 1, 15)),
    "Late.Talk.2024.01.16.720p-G": dict(title_key="late talk", air_date=datetime.date(2024, 1, 16)),
    "[Fansub] Anime Title - 13 [1080p].mkv": dict(
        title_key="anime title", absolute_episodes=[13], category=5070
    ),
    "Law.and.Order.S01E01.720p-G": dict(title_key="law and order", seasons=[1], episodes=[1]),
    "Marvels.Agents.of.S.H.I.E.L.D.S01E01-G": dict(
        title_key="marvels agents of s h i e l d", seasons=[1], episodes=[1]
    ),
    "Long.Soap.S41E10478.720p-G": dict(title_key="long soap", seasons=[41], episodes=[10478]),
    "My.Series.S2014.720p.HDTV-G": dict(title_key="my series", seasons=[2014], full_season=True),
    "A.Great.Movie.2019.1080p.BluRay-F": dict(title_key="a great movie", year=2019, category=2040),
    "A.Great.Movie.1999.DVDRip-F": dict(title_key="a great movie", year=1999, category=2030),
}


@pytest.fixture
def releases() -> dict[str, int]:
    group = GroupFactory(name="alt.binaries.fields")
    for age, name in enumerate(RELEASES):
        store_files(group.id, None, [], release_files(name, date=NOW - age * 3600))
    for name, fields in RELEASES.items():
        Release.objects.filter(name=name).update(
            **{"category": 5040, **fields, "listed": True, "kind": "tv"}
        )
    return dict(Release.objects.values_list("name", "id"))


def titles(response: Any) -> list[str]:
    root = parse(response)
    assert root.tag == "rss", response.content
    return [item.findtext("title") for item in root.findall("channel/item")]


def tv(client: Any, key: str, **params: Any) -> list[str]:
    return titles(call(client, t="tvsearch", cat="5030,5040,5045,5070", apikey=key, **params))


def test_an_episode_is_matched_by_number_and_multi_episode_releases_by_each(
    client, api_key, releases
):
    key = api_key.key
    assert tv(client, key, q="Office US", season=2, ep=3) == ["The.Office.US.S02E03.720p.HDTV-G"]
    for ep in (4, 5):
        assert tv(client, key, q="Office US", season="02", ep=f"0{ep}") == [
            "The.Office.US.S02E04E05.720p.HDTV-G"
        ]
    assert tv(client, key, q="Office US", season=2, ep=6) == []


def test_a_season_matches_its_pack_and_its_episodes(client, api_key, releases):
    assert tv(client, api_key.key, q="Office US", season=2) == [
        "The.Office.US.S02E03.720p.HDTV-G",
        "The.Office.US.S02E04E05.720p.HDTV-G",
        "The.Office.US.S02.1080p.WEB-G",
    ]


def test_the_title_is_matched_as_sonarr_cleans_it(client, api_key, releases):
    key = api_key.key
    # "Law & Order" -> "Law and Order"; "Marvel's Agents of S.H.I.E.L.D." -> "Marvels Agents of SHIELD"
    assert tv(client, key, q="Law and Order", season=1, ep=1) == ["Law.and.Order.S01E01.720p-G"]
    assert tv(client, key, q="Marvels Agents of SHIELD", season=1, ep=1) == [
        "Marvels.Agents.of.S.H.I.E.L.D.S01E01-G"
    ]
    # A title is not a word: "Office" is neither "The Office US" nor "Office Hours".
    assert "Office.Hours.S02E03.720p-G" not in tv(client, key, q="Office US", season=2, ep=3)


@pytest.mark.parametrize(
    "params",
    [{"season": "2024", "ep": "01/15"}, {"season": "2024", "ep": "01-15"},
     {"ep": "2024-01-15"}, {"ep": "2024.01.15"}, {"season": "2024", "ep": "2024/01/15"}],
)  # fmt: skip
def test_a_daily_episode_in_every_form(client, api_key, releases, params):
    assert tv(client, api_key.key, q="Late Talk", **params) == ["Late.Talk.2024.01.15.720p-G"]


def test_a_season_named_by_its_year_and_an_episode_past_ten_thousand(client, api_key, releases):
    assert tv(client, api_key.key, q="My Series", season=2014) == ["My.Series.S2014.720p.HDTV-G"]
    assert tv(client, api_key.key, q="Long Soap", season=41, ep=10478) == [
        "Long.Soap.S41E10478.720p-G"
    ]


def test_a_daily_show_s_year(client, api_key, releases):
    assert tv(client, api_key.key, q="Late Talk", season=2024) == [
        "Late.Talk.2024.01.15.720p-G",
        "Late.Talk.2024.01.16.720p-G",
    ]


@pytest.mark.parametrize(
    "params",
    [{"season": "2024", "ep": "13/45"}, {"season": "2023", "ep": "2024-01-15"},
     {"season": "1", "ep": "01/15"}, {"ep": "2024-1x-15"}, {"season": "9999"},
     {"season": "1", "ep": "99999"}, {"ep": "123456"}, {"ep": "9999-12-31"},
     {"season": "9999", "ep": "12/31"}, {"ep": "0001-01-01"}],
)  # fmt: skip
def test_a_date_that_is_none_is_error_201(client, api_key, releases, params):
    assert (
        error_code(call(client, t="tvsearch", q="Late Talk", apikey=api_key.key, **params)) == 201
    )


def test_anime_by_absolute_number_as_sonarr_asks(client, api_key, releases):
    found = titles(call(client, t="search", cat="5070", q="Anime Title 13", apikey=api_key.key))
    assert found == ["[Fansub] Anime Title - 13 [1080p].mkv"]
    assert tv(client, api_key.key, q="Anime Title", ep=13) == found
    assert tv(client, api_key.key, q="Anime Title", ep=14) == []


def test_a_series_title_ending_in_its_season_meets_a_name_that_states_it_apart(
    client, api_key, releases
):
    # Sonarr names the series "Anime Title S2"; the name says "Anime Title S02 - 13".
    found = titles(call(client, t="search", cat="5070", q="Anime Title S2 13", apikey=api_key.key))
    assert found == ["[Fansub] Anime Title - 13 [1080p].mkv"]
    assert tv(client, api_key.key, q="Office US S2", season=2, ep=3) == [
        "The.Office.US.S02E03.720p.HDTV-G"
    ]
    assert titles(call(client, t="search", q="Anime Title S 13", apikey=api_key.key)) == []


def test_a_movie_by_title_and_year(client, api_key, releases):
    key = api_key.key
    # Radarr's second tier: t=search with the title and the year.
    assert titles(call(client, t="search", cat="2000", q="A Great Movie 2019", apikey=key)) == [
        "A.Great.Movie.2019.1080p.BluRay-F"
    ]
    assert titles(call(client, t="movie", q="A Great Movie 1999", apikey=key)) == [
        "A.Great.Movie.1999.DVDRip-F"
    ]
    assert titles(call(client, t="movie", q="A Great Movie", apikey=key)) == [
        "A.Great.Movie.2019.1080p.BluRay-F",
        "A.Great.Movie.1999.DVDRip-F",
    ]


def test_words_that_are_no_title_fall_back_to_the_word_search(client, api_key, releases):
    assert tv(client, api_key.key, q="office 1080p", season=2) == ["The.Office.US.S02.1080p.WEB-G"]


@pytest.mark.parametrize(
    "params",
    [{"t": "tvsearch", "tvdbid": "73244"}, {"t": "tvsearch", "q": "Office US", "rid": "6061"},
     {"t": "movie", "imdbid": "tt0111161", "q": "A Great Movie"}, {"t": "movie", "tmdbid": "278"},
     {"t": "tvsearch", "tvmazeid": "526", "season": "2"}],
)  # fmt: skip
def test_an_id_the_server_cannot_match_gives_an_empty_page(client, api_key, releases, params):
    root = parse(call(client, apikey=api_key.key, **params))
    assert root.findall("channel/item") == []
    assert root.find(f"channel/{{{NEWZNAB_NS}}}response").get("total") == "0"
    assert error_code(call(client, t="tvsearch", tvdbid="x1", apikey=api_key.key)) == 201


def test_only_listed_releases_are_served_unless_incomplete_is_asked(client, api_key, releases):
    Release.objects.filter(name="The.Office.US.S02E03.720p.HDTV-G").update(listed=False)
    key = api_key.key
    assert tv(client, key, q="Office US", season=2, ep=3) == []
    assert tv(client, key, q="Office US", season=2, ep=3, incomplete=1) == [
        "The.Office.US.S02E03.720p.HDTV-G"
    ]
    newest = titles(client.get("/rss", {"t": "0", "apikey": key}))
    assert "The.Office.US.S02E03.720p.HDTV-G" not in newest and len(newest) == len(RELEASES) - 1
    everything = titles(client.get("/rss", {"t": "0", "apikey": key, "incomplete": "1"}))
    assert "The.Office.US.S02E03.720p.HDTV-G" in everything
    assert "The.Office.US.S02E03.720p.HDTV-G" not in titles(
        call(client, t="search", q="office", apikey=key)
    )


TITLES = ["The Office (US)", "law and order", "Marvel's Agents of S.H.I.E.L.D.", "the", "and",
          "Pokémon", "the and the", "a and and b", "Łódź Story", "", "the theory",
          "Doctor Who (2005)", "Shark Tank AU 2015", "1917", "This Is Us"]  # fmt: skip


def test_the_query_s_title_key_is_the_database_s() -> None:
    # A release stores title_key(its title); the database compares newznab_title() of it.
    stored = [title_key(t) for t in TITLES]
    with connection.cursor() as cursor:
        cursor.execute("SELECT k, newznab_title(k) FROM unnest(%s::text[]) AS k", [stored])
        in_database = dict(cursor.fetchall())
    assert {k: title_match_key(t) or None for t, k in zip(TITLES, stored, strict=True)} == (
        in_database
    )
    assert title_match_key("The Office (US)") == title_match_key("office us") == "office"
    assert title_match_key("Doctor Who 2005") == title_match_key("Doctor.Who") == "doctorwho"


def test_a_full_page_counts_the_total(client, api_key, releases):
    answer = parse(
        call(client, t="tvsearch", q="Office US", season=2, limit=1, offset=1, apikey=api_key.key)
    )
    assert [item.findtext("title") for item in answer.findall("channel/item")] == [
        "The.Office.US.S02E04E05.720p.HDTV-G"
    ]
    assert answer.find(f"channel/{{{NEWZNAB_NS}}}response").get("total") == "3"
