"""Each client's own requests replayed, and the answers read with that client's
rules (lxml, never a string compare). Read at their sources:

- Sonarr 49df353f, Radarr 1b9662d5: Indexers/Newznab/NewznabRequestGenerator.cs
  (the requests), NewznabCapabilitiesProvider.cs (caps), NewznabRssParser.cs and
  RssParser.cs (items), HttpIndexerBase.TestConnection and Newznab.TestCapabilities
  (the indexer's "Test"), IndexerSearch/Definitions/SearchCriteriaBase.cs (the
  cleaned title);
- Prowlarr 0ffcfccf: Indexers/Definitions/Newznab/NewznabCapabilitiesProvider.cs
  (categories mapped by name), Indexers/NewznabStandardCategory.cs;
- NZBHydra2 07f7423d: indexers/capscheck/IndexerChecker.java (checkConnection,
  the id probes of checkCaps).
"""

from __future__ import annotations

import time
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest
from lxml import etree
from nzb import Nzb

from catalog.models import Release
from catalog.services import store_files
from tests.support.factories import GroupFactory
from tests.support.reports import release_files
from usenet.numbers import ascii_digits

pytestmark = pytest.mark.django_db

NS = "{http://www.newznab.com/DTD/2010/feeds/attributes/}"
NOW = int(time.time())
TV = "Some.Show.S01E02.720p.HDTV.x264-GRP"
MOVIE = "A.Great.Movie.2019.1080p.BluRay.x264-FILM"
ALBUM = "Some.Artist-Some.Album-2024-MP3-320"
SONARR_CATEGORIES = (5030, 5040)  # NewznabSettings' defaults
RADARR_CATEGORIES = (2000, 2010, 2020, 2030, 2040, 2045, 2050, 2060)
PAGE_SIZE = 100


@pytest.fixture
def releases(db: Any) -> dict[str, Release]:
    group = GroupFactory(name="alt.binaries.clients")
    for age, name in enumerate((TV, MOVIE, ALBUM)):
        store_files(group.id, None, [], release_files(name, date=NOW - 86_400 * (age + 1)))
    # The catalog's category of each (the parser colleague's rules decide it there).
    Release.objects.filter(name=TV).update(category=5040)
    Release.objects.filter(name=MOVIE).update(category=2040)
    Release.objects.filter(name=ALBUM).update(category=3010)
    return {release.name: release for release in Release.objects.all()}


def fetch(client: Any, url: str) -> Any:
    parts = urlsplit(url)
    return client.get(f"{parts.path}?{parts.query}")


def xml(response: Any) -> Any:
    assert response.status_code == 200
    return etree.fromstring(response.content, etree.XMLParser(resolve_entities=False))


# --- Sonarr and Radarr ----------------------------------------------------------


@dataclass
class Caps:
    search: list[str] | None
    tv_search: list[str] | None
    movie_search: list[str] | None
    categories: list[tuple[int, str, list[tuple[int, str]]]]


def read_caps(root: Any) -> Caps:
    """NewznabCapabilitiesProvider.ParseCapabilities: a function is supported when
    available="yes"; its parameters are supportedParams split on commas."""
    assert root.tag == "caps"
    searching = root.find("searching")

    def params(tag: str) -> list[str] | None:
        element = searching.find(tag)
        if element is None or element.get("available") != "yes":
            return None
        return element.get("supportedParams").split(",")

    categories = [
        (
            int(c.get("id")),
            c.get("name"),
            [(int(s.get("id")), s.get("name")) for s in c.findall("subcat")],
        )
        for c in root.find("categories").findall("category")
    ]
    return Caps(params("search"), params("tv-search"), params("movie-search"), categories)


def check_error(root: Any) -> None:
    """NewznabRssParser.CheckError: an <error> anywhere is the request's failure."""
    error = next(root.iter("error"), None)
    assert error is None, f"newznab error {error.get('code')}: {error.get('description')}"


def parse_date(text: str) -> datetime:
    """XElementExtensions.ParseDate: the date as written, else without a trailing
    time-zone name; universal time."""
    try:
        return parsedate_to_datetime(text).astimezone(UTC)
    except (TypeError, ValueError):
        return parsedate_to_datetime(text.rsplit(" ", 1)[0]).replace(tzinfo=UTC)


@dataclass
class ReleaseInfo:
    guid: str
    title: str
    publish_date: datetime
    download_url: str
    info_url: str
    size: int


def attr(item: Any, name: str) -> str:
    """TryGetNewznabAttribute: the first newznab:attr of that name (any case)."""
    for element in item.findall(f"{NS}attr"):
        if element.get("name").lower() == name.lower():
            return element.get("value") or ""
    return ""


def parse_releases(response: Any) -> list[ReleaseInfo]:
    """RssParser.ParseResponse with NewznabRssParser's overrides: the guid's text, the
    title, the usenetdate attr (else pubDate, which every item must have), the
    enclosure of type application/x-nzb as the download, the comments as the info
    page, the size attr (else the enclosure's length)."""
    assert "xml" in response["Content-Type"]
    root = xml(response)
    check_error(root)
    found = []
    for item in root.find("channel").findall("item"):
        enclosures = [e for e in item.findall("enclosure") if e.get("type") == "application/x-nzb"]
        assert enclosures, "no application/x-nzb enclosure: Sonarr would skip the item"
        date = attr(item, "usenetdate") or item.findtext("pubDate")
        assert item.findtext("pubDate"), "every item must have a pubDate"
        size_text = attr(item, "size")
        size = int(size_text) if ascii_digits(size_text) else 0  # long.TryParse
        found.append(
            ReleaseInfo(
                guid=item.findtext("guid"),
                title=item.findtext("title"),
                publish_date=parse_date(date),
                download_url=enclosures[0].get("url"),
                info_url=item.findtext("comments"),
                size=size or int(enclosures[0].get("length")),
            )
        )
    return found


def paged(base: str, key: str, function: str, categories: tuple[int, ...], extra: str = "") -> str:
    """NewznabRequestGenerator.GetPagedRequests' first page."""
    cats = ",".join(str(c) for c in dict.fromkeys(categories))
    return (
        f"{base}/api?t={function}&cat={cats}&extended=1&apikey={key}"
        f"&offset=0&limit={PAGE_SIZE}{extra}"
    )


def test_sonarr_s_test_reads_a_first_rss_page_with_items(client, api_key, releases):
    caps = read_caps(xml(client.get("/api", {"t": "caps"})))
    # Newznab.TestCapabilities: q among search's parameters suffices.
    assert caps.search is not None and "q" in caps.search
    # GetRecentRequests: tvsearch when caps offer tv-search, the series categories.
    assert caps.tv_search is not None
    url = paged("http://testserver", api_key.key, "tvsearch", SONARR_CATEGORIES)
    found = parse_releases(fetch(client, url))
    assert found, "IndexerValidationNoResultsInConfiguredCategories"
    [info] = found
    release = releases[TV]
    assert info.title == TV
    assert info.size == release.size
    assert info.publish_date == release.posted  # the posting date, not when it was indexed
    assert info.guid and len({info.guid, info.download_url}) == 2
    nzb = fetch(client, info.download_url)
    assert nzb["Content-Type"] == "application/x-nzb"
    assert Nzb.from_str(b"".join(nzb.streaming_content).decode()).has_rar()
    assert xml(fetch(client, info.info_url)).find("channel/item/title").text == TV


def test_radarr_s_test_reads_a_first_movie_page(client, api_key, releases):
    caps = read_caps(xml(client.get("/api", {"t": "caps"})))
    # GetRecentRequests: t=movie when caps offer movie-search.
    assert caps.movie_search is not None
    url = paged("http://testserver", api_key.key, "movie", RADARR_CATEGORIES)
    [info] = parse_releases(fetch(client, url))
    assert info.title == MOVIE and info.size == releases[MOVIE].size


def clean_scene_title(title: str) -> str:
    """SearchCriteriaBase.GetCleanSceneTitle (Sonarr and Radarr), then NewsnabifyTitle
    ('+' as a space): no leading "The ", "&" as "and", no apostrophes or dots,
    every other non-word character a separator, no accents."""
    if title[:4].lower() == "the " or (title[:3].lower() == "the" and title[3:4].isspace()):
        title = title[4:]
    title = title.replace("&", "and")
    title = "".join(c for c in title if c not in "'.`\u00b4\u2018\u2019")
    title = "".join(c if c.isalnum() or c == "_" else "+" for c in title)
    title = "+".join(part for part in title.split("+") if part)
    title = "".join(
        c for c in unicodedata.normalize("NFD", title) if unicodedata.category(c) != "Mn"
    )
    return title.strip("+ ").replace("+", " ")


def test_the_cleaned_title_is_sonarr_s() -> None:
    assert clean_scene_title("The Office (US)") == "Office US"
    assert clean_scene_title("Marvel's Agents of S.H.I.E.L.D.") == "Marvels Agents of SHIELD"
    assert clean_scene_title("Law & Order") == "Law and Order"
    assert clean_scene_title("Pokémon") == "Pokemon"


def radarr_movie_search(
    client: Any, key: str, title: str, year: int
) -> tuple[list[list[str]], list[list[ReleaseInfo]]]:
    """NewznabRequestGenerator.GetSearchRequests(MovieSearchCriteria): tier one asks by
    TMDb or IMDb id when caps offer it; tier two, when caps' search takes q,
    t=search with the cleaned title and the year. The tiers are fetched in order
    until one finds releases (IndexerPageableRequestChain): the requests, the answers."""
    caps = read_caps(xml(client.get("/api", {"t": "caps"})))
    tiers: list[list[str]] = [[]]
    movie_params = caps.movie_search or []
    if "tmdbid" in movie_params:
        tiers[0].append(paged("http://testserver", key, "movie", RADARR_CATEGORIES, "&tmdbid=278"))
    elif "imdbid" in movie_params:
        tiers[0].append(
            paged("http://testserver", key, "movie", RADARR_CATEGORIES, "&imdbid=0111161")
        )
    if caps.search and "q" in caps.search:
        q = urlencode({"q": f"{clean_scene_title(title)} {year}"})
        tiers.append([paged("http://testserver", key, "search", RADARR_CATEGORIES, f"&{q}")])
    answers = []
    for tier in tiers:
        found = [info for url in tier for info in parse_releases(fetch(client, url))]
        answers.append(found)
        if found:
            break
    return tiers, answers


def test_radarr_s_two_tier_movie_search_finds_the_movie_by_title_and_year(
    client, api_key, releases
):
    requests, (tier_one, tier_two) = radarr_movie_search(client, api_key.key, "A Great Movie", 2019)
    assert requests[0] == [] and tier_one == []  # caps offer no id: no request that cannot match
    assert "t=search" in requests[1][0] and "q=A+Great+Movie+2019" in requests[1][0]
    assert [info.title for info in tier_two] == [MOVIE]
    _, (_, other_year) = radarr_movie_search(client, api_key.key, "A Great Movie", 2020)
    assert other_year == []


def test_an_id_asked_anyway_gives_an_empty_page_and_radarr_goes_on(client, api_key, releases):
    url = paged("http://testserver", api_key.key, "movie", RADARR_CATEGORIES, "&imdbid=0111161")
    assert parse_releases(fetch(client, url)) == []


# --- Prowlarr -------------------------------------------------------------------

# NewznabStandardCategory (Prowlarr 0ffcfccf), the parents and subcategories this
# catalog can give.
STANDARD = {
    2000: "Movies", 2010: "Movies/Foreign", 2020: "Movies/Other", 2030: "Movies/SD",
    2040: "Movies/HD", 2045: "Movies/UHD", 2050: "Movies/BluRay", 2060: "Movies/3D",
    2070: "Movies/DVD", 2080: "Movies/WEB-DL", 2090: "Movies/x265",
    3000: "Audio", 3010: "Audio/MP3", 3020: "Audio/Video", 3030: "Audio/Audiobook",
    3040: "Audio/Lossless", 3050: "Audio/Other", 3060: "Audio/Foreign",
    4000: "PC", 4010: "PC/0day", 4020: "PC/ISO", 4030: "PC/Mac", 4040: "PC/Mobile-Other",
    4050: "PC/Games", 4060: "PC/Mobile-iOS", 4070: "PC/Mobile-Android",
    5000: "TV", 5010: "TV/WEB-DL", 5020: "TV/Foreign", 5030: "TV/SD", 5040: "TV/HD",
    5045: "TV/UHD", 5050: "TV/Other", 5060: "TV/Sport", 5070: "TV/Anime",
    5080: "TV/Documentary", 5090: "TV/x265",
    7000: "Books", 7010: "Books/Mags", 7020: "Books/EBook", 7030: "Books/Comics",
    7040: "Books/Technical", 7050: "Books/Other", 7060: "Books/Foreign",
    8000: "Other", 8010: "Other/Misc", 8020: "Other/Hashed",
}  # fmt: skip
PARENTS = {cat_id: name for cat_id, name in STANDARD.items() if cat_id % 1000 == 0}


def prowlarr_mapping(caps: Caps) -> dict[int, tuple[int, str]]:
    """Each caps category -> (standard id, how it was found): a parent by its name
    (else the standard category of its id), a subcategory by "Parent/Sub" among
    the standard names (else by its id, else the parent's Other, else Other/Misc)."""
    mapping: dict[int, tuple[int, str]] = {}
    for parent_id, parent_name, subcats in caps.categories:
        parent = next((i for i, n in PARENTS.items() if n.lower() == parent_name.lower()), None)
        how = "name"
        if parent is None:
            parent, how = (parent_id if parent_id in PARENTS else 8000), "id"
        for sub_id, sub_name in subcats:
            wanted = f"{PARENTS[parent]}/{sub_name}".lower()
            by_name = next((i for i, n in STANDARD.items() if n.lower() == wanted), None)
            if by_name is not None:
                mapping[sub_id] = (by_name, "name")
            elif sub_id in STANDARD:
                mapping[sub_id] = (sub_id, "id")
            else:
                other = f"{PARENTS[parent]}/other".lower()
                found = next((i for i, n in STANDARD.items() if n.lower() == other), 8010)
                mapping[sub_id] = (found, "fallback")
        mapping[parent_id] = (parent, how)
    return mapping


def test_prowlarr_maps_every_category_by_name_to_the_same_standard_id(client, releases):
    caps = read_caps(xml(client.get("/api", {"t": "caps"})))
    mapping = prowlarr_mapping(caps)
    assert {5000, 5030, 5040, 5045, 2000, 2040} <= set(mapping)
    assert mapping == {cat_id: (cat_id, "name") for cat_id in mapping}


def test_prowlarr_s_search_by_a_mapped_category_finds_the_release(client, api_key, releases):
    caps = read_caps(xml(client.get("/api", {"t": "caps"})))
    tv_hd = next(
        sub
        for _, parent, subs in caps.categories
        for sub, name in subs
        if (parent, name) == ("TV", "HD")
    )
    url = paged("http://testserver", api_key.key, "search", (tv_hd,), "&q=show")
    assert [info.title for info in parse_releases(fetch(client, url))] == [TV]


# --- NZBHydra2 ------------------------------------------------------------------


def hydra_check_connection(client: Any, key: str) -> tuple[bool, str]:
    """IndexerChecker.checkConnection: three searches in turn; the first with items
    decides (newznab: an application/x-nzb enclosure); an error is remembered."""
    error = None
    for params in (
        {"t": "search", "q": "mp3"},
        {"t": "movie", "imdbid": "26443597"},
        {"t": "tvsearch", "tvdbid": "121361"},
    ):
        root = xml(client.get("/api", {**params, "apikey": key}))
        if root.tag == "error":
            error = "Indexer returned message: " + root.get("description")
            continue
        items = root.findall("channel/item")
        if not items:
            continue
        torznab = any(
            e.get("type") == "application/x-bittorrent" for i in items for e in i.iter("enclosure")
        )
        if torznab:
            return False, "results indicate a torznab indexer"
        return True, ""
    return False, error or "Indexer did not return any results"


def test_nzbhydra2_s_connection_check_succeeds(client, api_key, releases):
    assert hydra_check_connection(client, api_key.key) == (True, "")


def test_nzbhydra2_s_connection_check_names_a_bad_key(client, api_key, releases):
    ok, message = hydra_check_connection(client, "0" * 32)
    assert not ok and message.startswith("Indexer returned message: ")


def test_nzbhydra2_s_id_probes_find_no_id_support(client, api_key, releases):
    """checkCaps: an id is supported when 60 % of the items its search gives carry
    the expected title; every probe here gives an empty page, so none is."""
    probes = [("tvsearch", "tvdbid", "121361"), ("tvsearch", "rid", "24493"),
              ("tvsearch", "tvmazeid", "82"), ("tvsearch", "traktid", "1390"),
              ("tvsearch", "imdbid", "0944947"), ("movie", "tmdbid", "24428"),
              ("movie", "imdbid", "0848228")]  # fmt: skip
    for function, name, value in probes:
        root = xml(client.get("/api", {"t": function, name: value, "apikey": api_key.key}))
        assert root.tag == "rss" and root.findall("channel/item") == [], (function, name)
    caps = read_caps(xml(client.get("/api", {"t": "caps"})))
    assert caps.search and caps.tv_search and caps.movie_search
