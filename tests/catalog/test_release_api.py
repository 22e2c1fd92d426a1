"""The releases API: list with keyset pages and filters, one release with its files, its NZB."""

from __future__ import annotations

from dataclasses import replace

import pytest
from lxml import etree

from catalog.models import Release
from tests.support.factories import GroupFactory
from tests.support.releases import ALBUM, MOVIE, TV, store_fragments
from tests.support.reports import DTD, release_files

pytestmark = pytest.mark.django_db

NS = {"n": "http://www.newzbin.com/DTD/2003/nzb"}


def names(body):
    return [r["name"] for r in body["results"]]


class TestList:
    def test_releases_come_newest_posted_first_with_their_summary(self, node_client, releases):
        body = node_client().get("/api/v1/releases").json()
        assert names(body) == [ALBUM, MOVIE, TV]
        assert body["next"] is None
        tv = body["results"][2]
        assert tv["groups"] == ["alt.binaries.misc", "alt.binaries.teevee"]
        # Cross-posted to two groups: its five files count once.
        assert (tv["files_expected"], tv["files_seen"], tv["completion"]) == (5, 5, 100.0)
        assert (tv["category"], tv["category_name"]) == (5040, "TV/HD")
        assert tv["has_par2"] and tv["has_nfo"]
        assert tv["nzb"].endswith(f"/api/v1/releases/{tv['id']}/nzb")
        movie = body["results"][1]
        assert (movie["files_seen"], movie["segments_present"]) == (4, 8)
        assert movie["completion"] == 100.0  # of the files seen; files_seen < files_expected

    @pytest.mark.parametrize(
        ("query", "expected"),
        [
            ("q=movie", [MOVIE]),
            ("category=5000", [TV]),
            ("category=2045,3040", [ALBUM, MOVIE]),
            ("group=alt.binaries.teevee", [TV]),
            ("since=1700100000", [ALBUM, MOVIE]),
            ("min_completion=100", [ALBUM, MOVIE, TV]),
            ("q=&group=", [ALBUM, MOVIE, TV]),
        ],
    )
    def test_filters(self, node_client, releases, query, expected):
        assert names(node_client().get(f"/api/v1/releases?{query}").json()) == expected

    def test_completion_filter_uses_segments_present_over_expected(self, node_client):
        group = GroupFactory()
        files = release_files(count=4)
        store_fragments(
            group, [files[0], *[replace(f, segments=f.segments[:1]) for f in files[1:]]]
        )
        assert names(node_client().get("/api/v1/releases?min_completion=60").json()) == [TV]
        assert names(node_client().get("/api/v1/releases?min_completion=70").json()) == []

    def test_pages_follow_next_by_keyset(self, node_client):
        group = GroupFactory()
        for i in range(7):
            store_fragments(
                group, release_files(f"Release.{i}.x264", date=1_700_000_000 + (i % 3) * 10_000)
            )
        client, seen, url = node_client(), [], "/api/v1/releases?limit=3"
        while url:
            body = client.get(url).json()
            seen += [r["id"] for r in body["results"]]
            url = body["next"]
        expected = list(Release.objects.order_by("-posted", "-id").values_list("id", flat=True))
        assert seen == expected and len(seen) == 7

    @pytest.mark.parametrize(
        ("query", "param"),
        [
            ("category=movies", "category"),
            ("after=12", "after"),
            ("min_completion=101", "min_completion"),
            # float() reads each of these as a number: 10, 10, 10 and infinity.
            ("min_completion=\u0661\u0660", "min_completion"),
            ("min_completion=1_0", "min_completion"),
            ("min_completion=1e1", "min_completion"),
            ("min_completion=inf", "min_completion"),
            ("limit=0", "limit"),
            ("page=2", "page"),
        ],
    )
    def test_a_bad_parameter_is_a_400_naming_it(self, node_client, query, param):
        response = node_client().get(f"/api/v1/releases?{query}")
        assert response.status_code == 400
        assert param in response.json()["detail"]

    def test_the_list_needs_a_node_token_or_a_staff_session(self, client, admin_client):
        assert client.get("/api/v1/releases").status_code == 401
        assert admin_client.get("/api/v1/releases").status_code == 200

    def test_the_list_runs_a_fixed_number_of_queries(
        self, node_client, releases, django_assert_num_queries
    ):
        client = node_client()
        client.get("/api/v1/releases")  # the token kept from here (TOKEN_CACHE_SECONDS)
        with django_assert_num_queries(1):  # the page
            client.get("/api/v1/releases?category=2000")


class TestDetail:
    def test_one_release_with_its_files_and_their_completion(self, node_client, releases):
        release = Release.objects.get(name=MOVIE)
        body = node_client().get(f"/api/v1/releases/{release.id}").json()
        assert body["name"] == MOVIE
        assert [f["file_index"] for f in body["files"]] == [1, 3, 4, 5]
        assert all(f["complete"] and f["segments"] == 2 for f in body["files"])

    @pytest.mark.parametrize("release_id", [999_999, 2**63])
    def test_an_unknown_release_is_a_404(self, node_client, release_id):
        assert node_client().get(f"/api/v1/releases/{release_id}").status_code == 404
        assert node_client().get(f"/api/v1/releases/{release_id}/nzb").status_code == 404


class TestNzb:
    def test_a_cross_posted_release_is_one_valid_nzb_naming_both_groups(
        self, node_client, releases
    ):
        release = Release.objects.get(name=TV)
        response = node_client().get(f"/api/v1/releases/{release.id}/nzb")
        assert response.status_code == 200
        assert response["Content-Type"] == "application/x-nzb"
        assert f'filename="{TV}.nzb"' in response["Content-Disposition"]
        doc = etree.fromstring(b"".join(response.streaming_content))
        assert DTD.validate(doc), DTD.error_log.filter_from_errors()
        files = doc.findall("n:file", NS)
        assert len(files) == 5
        for item in files:
            groups = [g.text for g in item.findall("n:groups/n:group", NS)]
            assert groups == ["alt.binaries.misc", "alt.binaries.teevee"]
            assert [s.get("number") for s in item.findall("n:segments/n:segment", NS)] == [
                "1",
                "2",
            ]
        assert doc.find("n:head/n:meta", NS).text == TV
