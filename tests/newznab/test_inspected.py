"""newznab over releases inspection renamed (issue 26): the real name is searched and
served, passworded releases are hidden unless password=1, and imdbid / tvdbid match
the ids the nfo gave, offered by caps only once some release carries one. Each test
replays the request a client sends."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.db import transaction

from catalog.inspection import apply_inspection, validate_report
from catalog.models import Release
from catalog.services import store_files
from inspection import FoundFile, InspectResult
from tests.newznab.test_clients import (
    RADARR_CATEGORIES,
    SONARR_CATEGORIES,
    fetch,
    paged,
    parse_releases,
    radarr_movie_search,
    read_caps,
    xml,
)
from tests.support.factories import GroupFactory
from tests.support.newznab import NEWZNAB_NS, call, error_code, parse
from tests.support.reports import release_files

pytestmark = pytest.mark.django_db

NOW = int(time.time())
MOVIE = "A.Great.Movie.2019.1080p.BluRay.x264-FILM"
SHOW = "Some.Show.S01E02.1080p.WEB.h264-GRP"
LOCKED = "Locked.Movie.2020.1080p.BluRay.x264-LOCK"


def nfo(*names: str, imdb: tuple[str, ...] = (), tvdb: tuple[str, ...] = ()) -> dict[str, Any]:
    result = InspectResult(role="nfo", format="nfo")
    result.release_names, result.imdb_ids, result.tvdb_ids = list(names), list(imdb), list(tvdb)
    return result.to_json()


def par2(*names: str) -> dict[str, Any]:
    result = InspectResult(role="par2", format="par2")
    for name in names:
        result.add_file(FoundFile(name=name, size=700_000))
    return result.to_json()


def archive(name: str) -> dict[str, Any]:
    result = InspectResult(role="archive", format="rar5", volume=True, passworded=True)
    result.add_file(FoundFile(name=name, size=3_000_000, encrypted=True))
    return result.to_json()


def inspect(stem: str, *results: dict[str, Any]) -> None:
    release = Release.objects.get(name=stem)
    with transaction.atomic():
        apply_inspection(release.id, validate_report({"results": list(results)}))


@pytest.fixture
def posted(db: Any) -> None:
    """Three obfuscated posts, as the batch path stores them (complete: listed)."""
    group = GroupFactory(name="alt.binaries.obfuscated")
    for age, stem in enumerate(("a8f7d6e5c4b3", "x9y8z7w6v5u4", "q1w2e3r4t5y6")):
        files = release_files(stem, date=NOW - age * 86_400, poster=f"p{age} <p@x>")
        store_files(group.id, None, [], files)


@pytest.fixture
def inspected(posted: None) -> None:
    inspect("a8f7d6e5c4b3", nfo(MOVIE, imdb=("tt0111161",)))
    inspect("x9y8z7w6v5u4", nfo(tvdb=("81189",)), par2(f"{SHOW}.mkv"))
    inspect("q1w2e3r4t5y6", archive(f"{LOCKED}.mkv"))


def titles(response: Any) -> list[str]:
    return [item.findtext("title") for item in parse(response).findall("channel/item")]


def category_of(response: Any) -> list[str]:
    return [
        a.get("value")
        for a in parse(response).iter(f"{{{NEWZNAB_NS}}}attr")
        if a.get("name") == "category"
    ]


def attrs(response: Any) -> dict[str, str]:
    return {a.get("name"): a.get("value") for a in parse(response).iter(f"{{{NEWZNAB_NS}}}attr")}


def test_search_serves_the_real_name_and_its_category(client, api_key, inspected):
    found = call(client, t="search", q="great movie", apikey=api_key.key)
    assert titles(found) == [MOVIE]
    assert category_of(found) == ["2000", "2040"]
    assert titles(call(client, t="search", q="a8f7d6e5c4b3", apikey=api_key.key)) == []
    show = call(client, t="tvsearch", q="Some Show", season=1, ep=2, apikey=api_key.key)
    assert titles(show) == [SHOW]


def test_passworded_releases_are_hidden_unless_password_1(client, api_key, inspected):
    key = api_key.key
    assert titles(call(client, t="search", q="locked movie", apikey=key)) == []
    assert titles(call(client, t="movie", q="Locked Movie", apikey=key)) == []
    assert LOCKED not in titles(call(client, t="search", apikey=key))
    assert LOCKED not in titles(client.get("/rss", {"apikey": key}))
    shown = call(client, t="search", q="locked movie", password=1, apikey=key)
    assert titles(shown) == [LOCKED]
    assert attrs(shown)["password"] == "1"
    assert "password" not in attrs(call(client, t="search", q="great movie", apikey=key))
    assert titles(call(client, t="movie", q="Locked Movie", password=1, apikey=key)) == [LOCKED]
    assert LOCKED in titles(call(client, t="search", password=1, apikey=key))
    assert LOCKED in titles(client.get("/rss", {"apikey": key, "password": 1}))
    assert error_code(call(client, t="search", q="x", password=2, apikey=key)) == 201


def test_a_reinspection_whose_archive_expired_keeps_the_release_hidden(client, api_key, inspected):
    release = Release.objects.get(name=LOCKED)
    gone = {"role": "archive", "message_id": "<r1@x>", "error": "430 no such article"}
    with transaction.atomic():
        apply_inspection(release.id, validate_report({"missing": [gone]}))
    assert titles(call(client, t="search", q="locked movie", apikey=api_key.key)) == []
    assert Release.objects.get(pk=release.pk).passworded


def test_caps_offers_an_id_only_once_a_release_carries_one(client, posted):
    before = read_caps(xml(client.get("/api", {"t": "caps"})))
    assert (before.movie_search, set(before.tv_search or [])) == (["q"], {"q", "season", "ep"})
    inspect("a8f7d6e5c4b3", nfo(MOVIE, imdb=("tt0111161",)))
    movie_only = read_caps(xml(client.get("/api", {"t": "caps"})))
    assert movie_only.movie_search == ["q", "imdbid"]
    assert "tvdbid" not in (movie_only.tv_search or [])
    inspect("x9y8z7w6v5u4", nfo(tvdb=("81189",)), par2(f"{SHOW}.mkv"))
    both = read_caps(xml(client.get("/api", {"t": "caps"})))
    assert set(both.tv_search or []) == {"q", "season", "ep", "tvdbid"}


def test_radarr_s_first_tier_finds_the_movie_by_its_imdb_id(client, api_key, inspected):
    requests, answers = radarr_movie_search(client, api_key.key, "A Great Movie", 2019)
    assert "imdbid=0111161" in requests[0][0]
    assert [info.title for info in answers[0]] == [MOVIE]  # found by id: no second tier
    assert len(answers) == 1


def test_sonarr_s_tvdbid_episode_search_matches_the_recorded_id(client, api_key, inspected):
    def episode(season: int, ep: int, tvdbid: str = "81189") -> list[str]:
        url = paged(
            "http://testserver",
            api_key.key,
            "tvsearch",
            SONARR_CATEGORIES,
            f"&tvdbid={tvdbid}&season={season}&ep={ep}",
        )
        return [info.title for info in parse_releases(fetch(client, url))]

    assert episode(1, 2) == [SHOW]
    assert episode(1, 3) == []  # the id's release, but another episode
    assert episode(1, 2, tvdbid="73244") == []  # another show


@pytest.mark.parametrize(
    "params",
    [
        {"t": "movie", "imdbid": "tt9999999"},  # an id no release carries
        {"t": "movie", "imdbid": "123456789012"},  # longer than any IMDb id
        {"t": "movie", "tmdbid": "278"},  # an id no release can carry
        {"t": "tvsearch", "tvdbid": "99999999999"},  # past the column
        {"t": "tvsearch", "tvdbid": "99999999999999999999"},  # past any bigint
        {"t": "tvsearch", "tvdbid": "0"},  # no TVDB id is 0
        {"t": "tvsearch", "tvmazeid": "526", "season": "1"},
    ],
)
def test_an_id_the_server_cannot_match_gives_an_empty_page(client, api_key, inspected, params):
    root = parse(call(client, apikey=api_key.key, **params))
    assert root.findall("channel/item") == []
    assert root.find(f"channel/{{{NEWZNAB_NS}}}response").get("total") == "0"


def test_an_imdb_id_is_read_with_or_without_tt_and_its_zeros(client, api_key, inspected):
    for imdbid in ("tt0111161", "0111161", "111161"):
        url = paged(
            "http://testserver", api_key.key, "movie", RADARR_CATEGORIES, f"&imdbid={imdbid}"
        )
        assert [info.title for info in parse_releases(fetch(client, url))] == [MOVIE], imdbid


def test_the_nzb_of_an_inspected_release_is_named_by_its_real_name(client, api_key, inspected):
    [item] = parse(call(client, t="search", q="great movie", apikey=api_key.key)).findall(
        "channel/item"
    )
    response = client.get(item.findtext("link").removeprefix("http://testserver"))
    assert response.status_code == 200
    assert f'filename="{MOVIE}.nzb"' in response["Content-Disposition"]
    assert f'<meta type="title">{MOVIE}</meta>'.encode() in b"".join(response.streaming_content)
