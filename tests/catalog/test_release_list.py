"""The admin's release list as an operator works from it: its columns, each column's
sort (down an index, or among the newest releases only), the kind and resolution
filters, read by a staff user who may only view releases."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission, User
from django.db import connection
from django.template.defaultfilters import filesizeformat
from django.test import Client, RequestFactory
from django.test.utils import CaptureQueriesContext
from lxml import html as lxml_html

from catalog.models import CatalogFile, Release
from catalog.release_admin import ReleaseAdmin, episode_label, index_ordering
from core.counts import COUNT_CAP
from tests.support.releases import ALBUM, MOVIE, TV

pytestmark = pytest.mark.django_db

LIST = "/admin/catalog/release/"


@pytest.fixture
def viewer() -> User:
    user = User.objects.create_user("viewer", password="x", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_release"))
    return user


@pytest.fixture
def viewer_client(client: Client, viewer: User) -> Client:
    client.force_login(viewer)
    return client


@pytest.fixture
def named(releases: Any) -> dict[str, Release]:
    """The three releases with their names' fields, and totals that differ column by column."""
    values = {
        TV: dict(kind="tv", seasons=[1], episodes=[2], resolution=1080, size=3_410_391,
                 files_seen=10, files_expected=5, segments_present=100, segments_expected=100,
                 groups=["alt.binaries.misc", "alt.binaries.teevee"]),
        MOVIE: dict(kind="movie", year=2019, resolution=2160, size=5_000_000_000,
                    files_seen=2, files_expected=3, segments_present=50, segments_expected=100,
                    groups=["alt.binaries.misc"]),
        ALBUM: dict(kind="audio", resolution=None, size=700_000_000,
                    files_seen=6, files_expected=6, segments_present=80, segments_expected=100,
                    groups=["alt.binaries.sounds"]),
    }  # fmt: skip
    for name, fields in values.items():
        Release.objects.filter(name=name).update(**fields)
    return {release.name: release for release in Release.objects.all()}


def page(response: Any) -> Any:
    assert response.status_code == 200, response.content[:500]
    return lxml_html.fromstring(response.content.decode())


def names(doc: Any) -> list[str]:
    """The releases the list shows, in its order."""
    return [cell.text_content() for cell in doc.xpath("//table[@id='result_list']//th")
            if "field-name" in cell.get("class", "")]  # fmt: skip


def cell(doc: Any, name: str, column: str) -> str:
    row = doc.xpath(f"//table[@id='result_list']//tr[th[contains(., '{name}')]]")[0]
    return row.xpath(f".//td[contains(@class, 'field-{column}')]")[0].text_content()


def sort_link(doc: Any, column: str) -> str:
    """The header link that sorts by a column (ascending first), as the operator clicks it."""
    [link] = doc.xpath(f"//thead//th[contains(@class, 'column-{column}')]//div[@class='text']/a")
    return link.get("href")


class TestColumns:
    def test_each_column_shows_its_value(self, viewer_client: Client, named: Any) -> None:
        doc = page(viewer_client.get(LIST))
        assert cell(doc, TV, "category_label") == "5040 TV/HD"
        assert cell(doc, TV, "episode") == "S01E02"
        assert cell(doc, MOVIE, "episode") == "2019"
        assert cell(doc, ALBUM, "episode") == "2024"  # an album names its year
        assert cell(doc, TV, "size_label") == filesizeformat(3_410_391) == "3.3\xa0MB"
        assert cell(doc, MOVIE, "size_label") == "4.7\xa0GB"
        assert cell(doc, TV, "files_label") == "10/5"
        assert cell(doc, MOVIE, "completion_label") == "50.0 %"
        assert cell(doc, TV, "groups_label") == "alt.binaries.misc, alt.binaries.teevee"
        assert cell(doc, ALBUM, "posted").startswith("Nov. 17, 2023")
        assert "3,410,391 bytes" in viewer_client.get(LIST).content.decode()  # the tooltip

    def test_the_fields_the_batch_path_stored_are_shown_and_filtered(
        self, viewer_client: Client, releases: Any
    ) -> None:
        doc = page(viewer_client.get(LIST))
        assert (cell(doc, TV, "episode"), cell(doc, MOVIE, "episode")) == ("S01E02", "2019")
        assert names(page(viewer_client.get(f"{LIST}?kind=tv&resolution=1080"))) == [TV]
        assert names(page(viewer_client.get(f"{LIST}?resolution=2160"))) == [MOVIE]

    def test_many_groups_show_the_first_three_and_a_count(self, viewer_client, named) -> None:
        groups = [f"alt.binaries.g{i}" for i in range(5)]
        Release.objects.filter(name=TV).update(groups=groups)
        shown = cell(page(viewer_client.get(LIST)), TV, "groups_label")
        assert shown == "alt.binaries.g0, alt.binaries.g1, alt.binaries.g2 (+2)"

    def test_a_release_page_shows_its_size_readable_and_its_names_fields(
        self, viewer_client: Client, named: Any
    ) -> None:
        response = viewer_client.get(f"{LIST}{named[TV].id}/change/")
        text = page(response).text_content()
        assert "3.3\xa0MB" in text and "3410391" not in text
        assert "S01E02" in text and "1080p" in text


def test_the_files_list_shows_sizes_the_same_way(admin_client: Client, releases: Any) -> None:
    catalog_file = CatalogFile.objects.order_by("-id").first()
    assert catalog_file is not None
    CatalogFile.objects.filter(pk=catalog_file.pk).update(bytes=3_410_391)
    response = admin_client.get("/admin/catalog/catalogfile/")
    doc = page(response)
    [row] = doc.xpath(
        f"//table[@id='result_list']//tr[.//a[@href='/admin/catalog/catalogfile/{catalog_file.pk}/change/']]"
    )
    assert row.xpath(".//td[contains(@class, 'field-size')]")[0].text_content() == "3.3\xa0MB"


@pytest.mark.parametrize(
    ("fields", "label"),
    [
        (dict(seasons=[1], episodes=[2]), "S01E02"),
        (dict(seasons=[1], episodes=[3, 2]), "S01E02-E03"),
        (dict(seasons=[7], episodes=[22, 23, 24]), "S07E22-E24"),
        (dict(seasons=[1], episodes=[2, 5]), "S01E02E05"),
        (dict(seasons=[1], episodes=[1, 3, 5, 7, 9]), "S01E01E03E05E07…"),
        (dict(seasons=[1], full_season=True), "S01 pack"),
        (dict(seasons=[3, 1, 2], full_season=True), "S01-S03 pack"),
        (dict(seasons=[4]), "S04"),
        (dict(absolute_episodes=[13]), "absolute 13"),
        (dict(absolute_episodes=[14, 13]), "absolute 13-14"),
        (dict(air_date=datetime.date(2011, 4, 12), year=2011), "daily 2011-04-12"),
        (dict(seasons=[2], episodes=[5], year=2016), "S02E05"),
        (dict(year=2016), "2016"),
        ({}, "-"),
    ],
)
def test_the_episode_column_says_what_the_name_numbers(fields: dict, label: str) -> None:
    assert episode_label(Release(**fields)) == label


# Each sortable column and the order its ascending sort gives the three releases.
ASCENDING = [
    ("name", [MOVIE, ALBUM, TV]),
    ("category_label", [MOVIE, ALBUM, TV]),  # 2045, 3040, 5040
    ("episode", [MOVIE, ALBUM, TV]),  # year 2019, nothing, S01E02
    ("size_label", [TV, ALBUM, MOVIE]),
    ("files_label", [MOVIE, ALBUM, TV]),
    ("completion_label", [MOVIE, ALBUM, TV]),
    ("groups_label", [MOVIE, TV, ALBUM]),
    ("posted", [TV, MOVIE, ALBUM]),
]
NEWEST_FIRST = [ALBUM, MOVIE, TV]


class TestSorting:
    @pytest.mark.parametrize(("column", "ascending"), ASCENDING, ids=[c for c, _ in ASCENDING])
    def test_a_click_on_a_header_sorts_by_it_and_a_second_reverses(
        self, viewer_client: Client, named: Any, column: str, ascending: list[str]
    ) -> None:
        doc = page(viewer_client.get(LIST))
        assert names(doc) == NEWEST_FIRST
        link = sort_link(doc, column)
        doc = page(viewer_client.get(LIST + link))
        assert names(doc) == ascending
        doc = page(viewer_client.get(LIST + sort_link(doc, column)))
        assert names(doc) == ascending[::-1]

    @pytest.mark.parametrize(("column", "windowed"), [("posted", False), ("category_label", True),
                                                      ("size_label", True), ("episode", True)])  # fmt: skip
    def test_a_sort_no_index_serves_says_it_orders_the_newest_only(
        self, viewer_client: Client, named: Any, column: str, windowed: bool
    ) -> None:
        doc = page(viewer_client.get(LIST))
        title = page(viewer_client.get(LIST + sort_link(doc, column))).xpath("//h1")[0]
        said = f"the newest {COUNT_CAP:,} that match, sorted" in title.text_content()
        assert said is windowed

    def test_a_windowed_sort_takes_the_newest_releases_that_match(
        self, viewer_client: Client, named: Any, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(ReleaseAdmin, "sort_window", 2)
        link = sort_link(page(viewer_client.get(LIST)), "size_label")
        assert names(page(viewer_client.get(LIST + link))) == [ALBUM, MOVIE]  # TV is the oldest
        filtered = page(viewer_client.get(LIST + link + "&category=5000"))
        assert names(filtered) == [TV]  # the window is of the releases that match


@pytest.mark.parametrize(
    ("ordering", "indexed"),
    [
        (["-posted", "-id"], ("-posted", "-id")),
        (["posted", "-pk"], ("posted", "id")),
        (["-pk"], ("-id",)),
        (["category", "-pk"], None),
        (["size", "-pk"], None),
        (["-posted", "size", "-pk"], None),
        (["name", "-pk"], None),
    ],
)
def test_only_an_ordering_an_index_reads_whole_is_read_down_it(ordering, indexed) -> None:
    assert index_ordering(ordering) == indexed


class TestFilters:
    @pytest.mark.parametrize(
        ("query", "shown"),
        [
            ("kind=tv", [TV]),
            ("kind=movie", [MOVIE]),
            ("kind=book", []),
            ("resolution=1080", [TV]),
            ("resolution=2160", [MOVIE]),
            ("resolution=unknown", [ALBUM]),
            ("resolution=720", []),
            ("category=5000", [TV]),
            ("kind=movie&resolution=2160", [MOVIE]),
            ("kind=movie&resolution=1080", []),
        ],
    )
    def test_kind_resolution_and_category(self, viewer_client, named, query, shown) -> None:
        assert names(page(viewer_client.get(f"{LIST}?{query}"))) == shown

    def test_a_filter_keeps_the_sort(self, viewer_client: Client, named: Any) -> None:
        link = sort_link(page(viewer_client.get(LIST)), "size_label")
        doc = page(viewer_client.get(f"{LIST}{link}&resolution=unknown&kind=audio"))
        assert names(doc) == [ALBUM]

    def test_the_filters_offer_every_kind_and_the_resolutions(self, viewer_client) -> None:
        text = page(viewer_client.get(LIST)).text_content()
        assert all(kind in text for kind in ("tv", "movie", "anime", "software"))
        assert "2160p" in text and "480p" in text

    @pytest.mark.parametrize(
        ("query", "sentence"),
        [
            ("kind=films", "The kind filter (?kind=) takes one of tv, movie"),
            ("resolution=1080p", "The resolution filter (?resolution=) takes a number"),
            ("resolution=99999", "up to 32767"),
            ("resolution=%D9%A1%D9%A2", "ASCII digits"),
        ],
    )
    def test_a_value_the_filter_cannot_read_is_a_400_that_says_why(
        self, viewer_client: Client, query: str, sentence: str
    ) -> None:
        response = viewer_client.get(f"{LIST}?{query}")
        assert response.status_code == 400
        assert sentence in response.content.decode()


class TestPermissions:
    def test_a_viewer_gets_no_actions_and_no_change_form(self, viewer_client, named) -> None:
        response = viewer_client.get(LIST)
        assert b'name="action"' not in response.content
        release = named[TV]
        assert viewer_client.get(f"{LIST}{release.id}/nzb/").status_code == 200
        assert viewer_client.post(f"{LIST}{release.id}/change/", {}).status_code == 403
        assert viewer_client.get(f"{LIST}{release.id}/delete/").status_code == 403

    def test_a_staff_user_without_the_view_permission_sees_nothing(self, client, named) -> None:
        client.force_login(User.objects.create_user("nobody", password="x", is_staff=True))
        assert client.get(LIST).status_code == 403
        assert client.get(f"{LIST}{named[TV].id}/nzb/").status_code == 403


def test_facets_are_never_counted(viewer_client: Client, named: Any) -> None:
    """`?_facets=1` would count each filter's choices over the whole table."""
    viewer_client.get(LIST)  # the session and permissions, read once alike
    with CaptureQueriesContext(connection) as plain:
        viewer_client.get(LIST)
    with CaptureQueriesContext(connection) as faceted:
        response = viewer_client.get(LIST + "?_facets=1")
    assert response.status_code == 200
    assert len(faceted) == len(plain)


# --- the sort does not scan ------------------------------------------------------


def many_releases(count: int) -> None:
    """`count` releases, posted one a minute (newest last, as batches add them), with
    sizes, totals, groups and names' fields that vary."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO catalog_release (key, name, poster, posted, last_posted, size,
                files_expected, files_seen, segments_present, segments_expected, has_par2,
                has_nfo, category, category_version, groups, kind, seasons, episodes, year,
                resolution)
            SELECT decode(md5(i::text), 'hex')::bytea, 'Release.' || i, 'p <p@p>',
                   ts, ts, (i * 7919) %% 100000000, 5, i %% 6, i %% 100, 100, i %% 2 = 0,
                   i %% 3 = 0, (ARRAY[2040, 5040, 3040, 5070])[i %% 4 + 1], 1,
                   ARRAY['alt.binaries.g' || (i %% 50)], (ARRAY['tv', 'movie'])[i %% 2 + 1],
                   ARRAY[(i %% 9)::smallint], ARRAY[(i %% 20)::smallint],
                   (1990 + i %% 30)::smallint, (ARRAY[720, 1080, 2160])[i %% 3 + 1]::smallint
              FROM generate_series(1, %s) AS i,
                   LATERAL (SELECT timestamptz '2024-01-01' + make_interval(mins => i)) AS t(ts)
            """,
            [count],
        )
        cursor.execute("ANALYZE catalog_release")
        # Plan as for ten million releases (the statistics the planner reads, rolled back
        # with the test): a table this small is cheaper to read whole than down an index,
        # and the planner would rightly join the window to it by reading it all.
        cursor.execute("UPDATE pg_class SET reltuples = 1e7 WHERE relname = 'catalog_release'")


def release_rows_read(plan: dict[str, Any]) -> int:
    """Rows of catalog_release that the statement's scans returned or filtered out."""
    read = 0
    if plan.get("Relation Name") == "catalog_release":
        loops = plan["Actual Loops"]
        read += (plan["Actual Rows"] + plan.get("Rows Removed by Filter", 0)) * loops
    return read + sum(release_rows_read(child) for child in plan.get("Plans", []))


def explained(queryset: Any) -> dict[str, Any]:
    return json.loads(queryset.explain(format="json", analyze=True))[0]["Plan"]


SORTED_COLUMNS = [column for column, _ in ASCENDING] + ["poster", "has_par2", "has_nfo"]
INDEXED_COLUMNS = ("posted",)
FILTERS = ["", "kind=movie", "resolution=1080", "category=5000", "kind=tv&resolution=720"]


def changelist(viewer: User, query: str) -> Any:
    request = RequestFactory().get(LIST, QUERY_STRING=query)
    request.user = viewer
    return admin.site._registry[Release].get_changelist_instance(request)


@pytest.mark.slow
def test_no_sort_reads_more_than_its_window_of_a_big_table(
    viewer: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every column, either way, under each filter: a page reads the rows it takes to find
    the window's newest matches down the posted index, and the window again by id; never
    the table, which is twenty times the window. A sort an index serves reads the rows it
    takes to find a page. (Planned as for ten million releases: many_releases.)"""
    table, window, page_size = 20_000, 1_000, ReleaseAdmin.list_per_page
    many_releases(table)
    monkeypatch.setattr(ReleaseAdmin, "sort_window", window)
    columns = list(ReleaseAdmin.list_display)
    over: dict[str, tuple[int, int]] = {}
    for filters in FILTERS:
        share = changelist(viewer, filters).queryset.count() / table
        assert share > 0.1, filters
        for column in SORTED_COLUMNS:
            found = (page_size if column in INDEXED_COLUMNS else window) / share
            bound = int(found) + (0 if column in INDEXED_COLUMNS else window) + page_size
            for direction in ("", "-"):
                query = f"o={direction}{columns.index(column)}&{filters}"
                rows = release_rows_read(explained(changelist(viewer, query).result_list))
                if rows > bound:
                    over[query] = (rows, bound)
    assert not over, over
