"""The catalog API: lists, filters, pages, one file, NZB documents."""

from __future__ import annotations

import pytest
from lxml import etree

from catalog.models import CatalogFile
from catalog.validation import FileReport
from tests.support.factories import GroupFactory
from tests.support.reports import DTD, POSTER, msgid, report, store

pytestmark = pytest.mark.django_db

NS = {"n": "http://www.newzbin.com/DTD/2003/nzb"}


def parse_nzb(response):
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/x-nzb"
    assert response.streaming  # never built whole in memory
    content = b"".join(response.streaming_content)
    doc = etree.fromstring(content, etree.XMLParser(resolve_entities=False))
    assert DTD.validate(doc), DTD.error_log.filter_from_errors()
    return doc


@pytest.fixture
def catalog():
    movies, music = GroupFactory(name="alt.binaries.movies"), GroupFactory(name="alt.binaries.mp3")
    store(movies, report("old.movie.rar", [1, 2], 2, date=1_600_000_000))
    store(movies, report("new.movie.rar", [1], 3, date=1_700_000_000))
    store(music, report("song.mp3", [1, 2, 3], 3, date=1_700_000_500))
    return movies, music


class TestList:
    def test_files_come_newest_first_with_their_summary(self, node_client, catalog):
        body = node_client().get("/api/v1/files").json()
        assert body["count"] == 3
        assert body["next"] is None
        assert [f["name"] for f in body["results"]] == [
            "song.mp3",
            "new.movie.rar",
            "old.movie.rar",
        ]
        song = body["results"][0]
        assert song == {
            "id": song["id"],
            "group": "alt.binaries.mp3",
            "name": "song.mp3",
            "subject": '[01/12] - "song.mp3" yEnc (1/3)',
            "poster": POSTER,
            "date": 1_700_000_500,
            "total": 3,
            "segments": 3,
            "bytes": 3 * 700_000 + 6,
            "complete": True,
        }

    @pytest.mark.parametrize(
        ("query", "names"),
        [
            ("group=alt.binaries.movies", ["new.movie.rar", "old.movie.rar"]),
            ("complete=true", ["song.mp3", "old.movie.rar"]),
            ("complete=false", ["new.movie.rar"]),
            ("q=MOVIE", ["new.movie.rar", "old.movie.rar"]),
            ("q=%25", []),  # a literal %, not a wildcard
            ("q=&group=", ["song.mp3", "new.movie.rar", "old.movie.rar"]),  # empty boxes
            ("since=1650000000", ["song.mp3", "new.movie.rar"]),
            ("group=alt.binaries.movies&complete=true&since=1", ["old.movie.rar"]),
            (f"message_id={msgid('song.mp3', 2)}", ["song.mp3"]),
        ],
    )
    def test_filters(self, node_client, catalog, query, names):
        response = node_client().get(f"/api/v1/files?{query}")
        assert response.status_code == 200, response.content
        assert [f["name"] for f in response.json()["results"]] == names

    def test_pages_follow_next_in_a_stable_order(self, node_client, settings):
        settings.CATALOG_PAGE_SIZE = 2
        group = GroupFactory()
        for i in range(5):
            store(group, report(f"f{i}.rar", [1], 1))
        client = node_client()
        url, seen = "/api/v1/files", []
        while url:
            body = client.get(url).json()
            assert body["count"] == 5
            seen += [f["name"] for f in body["results"]]
            url = body["next"]
        assert seen == [f"f{i}.rar" for i in reversed(range(5))]

    def test_a_keyset_walk_by_after_gives_each_file_once(self, node_client, settings):
        settings.CATALOG_PAGE_SIZE = 2
        group = GroupFactory()
        for i in range(5):
            store(group, report(f"f{i}.rar", [1], 1))
        client = node_client()
        first = client.get("/api/v1/files").json()["results"]
        url, seen = f"/api/v1/files?after={first[-1]['id']}", [f["name"] for f in first]
        while url:
            body = client.get(url).json()
            assert "page=" not in (body["next"] or "")  # the walk stays a keyset walk
            seen += [f["name"] for f in body["results"]]
            url = body["next"]
        assert seen == [f"f{i}.rar" for i in reversed(range(5))]

    @pytest.mark.parametrize(
        ("query", "param"),
        [
            ("after=0", "after"),
            ("after=x", "after"),
            ("complete=maybe", "complete"),
            ("since=-1", "since"),
            ("since=soon", "since"),
            ("page=0", "page"),
            ("page=99999999", "page"),
            ("q=" + "x" * 300, "q"),
            ("message_id=nonsense", "message_id"),
            ("colour=blue", "colour"),
        ],
    )
    def test_a_bad_parameter_is_a_400_naming_it(self, node_client, query, param):
        response = node_client().get(f"/api/v1/files?{query}")
        assert response.status_code == 400
        body = response.json()
        assert body["error"] == "invalid"
        assert param in body["detail"]

    def test_an_unknown_group_is_a_404(self, node_client):
        response = node_client().get("/api/v1/files?group=alt.nothing")
        assert response.status_code == 404
        assert response.json()["error"] == "not_found"

    def test_the_list_needs_a_node_token_or_a_staff_session(self, client, admin_client):
        assert client.get("/api/v1/files").status_code == 401
        assert admin_client.get("/api/v1/files").status_code == 200

    def test_the_list_runs_a_fixed_number_of_queries(
        self, node_client, catalog, django_assert_num_queries
    ):
        client = node_client()
        client.get("/api/v1/files")  # last-seen written, the token kept (TOKEN_CACHE_SECONDS)
        # group, count, page
        with django_assert_num_queries(3):
            assert client.get("/api/v1/files?group=alt.binaries.movies").status_code == 200


class TestDetail:
    def test_one_file(self, node_client, catalog):
        file = CatalogFile.objects.get(name="new.movie.rar")
        body = node_client().get(f"/api/v1/files/{file.id}").json()
        assert body["name"] == "new.movie.rar"
        assert (body["segments"], body["total"], body["complete"]) == (1, 3, False)
        assert body["conflicts"] == 0
        assert body["rule_version"] == 1

    @pytest.mark.parametrize("file_id", [987654, 2**70])
    def test_an_unknown_file_is_a_404(self, node_client, file_id):
        for suffix in ("", "/nzb", "/release/nzb"):
            response = node_client().get(f"/api/v1/files/{file_id}{suffix}")
            assert response.status_code == 404
            assert response.json()["error"] == "not_found"


class TestNzb:
    def test_a_file_is_a_valid_nzb_with_its_segments_in_order(self, node_client):
        group = GroupFactory(name="alt.binaries.nzb")
        store(group, report("x.rar", [3, 1], 3, date=1_700_000_000))
        store(group, report("x.rar", [2], 3, date=1_700_000_000))
        file = CatalogFile.objects.get()
        response = node_client().get(f"/api/v1/files/{file.id}/nzb")
        doc = parse_nzb(response)
        assert 'filename="x.rar.nzb"' in response["Content-Disposition"]
        (node,) = doc.findall("n:file", NS)
        assert node.get("poster") == POSTER
        assert node.get("date") == "1700000000"
        assert node.get("subject") == file.subject
        assert [g.text for g in node.findall("n:groups/n:group", NS)] == ["alt.binaries.nzb"]
        segments = node.findall("n:segments/n:segment", NS)
        assert [s.get("number") for s in segments] == ["1", "2", "3"]
        assert [s.text for s in segments] == [msgid("x.rar", p)[1:-1] for p in (1, 2, 3)]
        assert [s.get("bytes") for s in segments] == [str(700_000 + p) for p in (1, 2, 3)]

    def test_markup_and_control_characters_are_escaped(self, node_client, admin_client):
        group = GroupFactory()
        nasty = '<b>&"x\x01</b> "evil\r\n.rar" yEnc (1/1)'
        store(group, FileReport(nasty, 'a&b <c@d>"', 1_700_000_000, 1, [(1, 1, "<a&b@h>", 5)]))
        file = CatalogFile.objects.get()
        response = admin_client.get(f"/api/v1/files/{file.id}/nzb")
        doc = parse_nzb(response)
        node = doc.find("n:file", NS)
        assert node.get("subject") == nasty.replace("\x01", "\ufffd")
        assert node.get("poster") == 'a&b <c@d>"'
        assert doc.find(".//n:segment", NS).text == "a&b@h"
        disposition = response["Content-Disposition"]
        assert disposition.startswith('attachment; filename="')
        assert "\r" not in disposition and "<" not in disposition.split("filename*=")[0]

    def test_a_release_of_several_files_is_one_nzb(self, node_client):
        group = GroupFactory()
        names = ["rel.part01.rar", "rel.part02.rar", "rel.par2", "rel.vol00+01.par2"]
        for index, name in enumerate(names, start=1):
            store(group, report(name, [1, 2], 2, index=index, count=4))
        store(group, report("other.part01.rar", [1], 1, index=1, count=4))
        store(group, report("rel.part01.rar", [1], 1, index=1, count=4, poster="x <y@z>"))
        anchor = CatalogFile.objects.get(name="rel.par2")
        response = node_client().get(f"/api/v1/files/{anchor.id}/release/nzb")
        doc = parse_nzb(response)
        assert 'filename="rel.nzb"' in response["Content-Disposition"]
        assert doc.find("n:head/n:meta[@type='title']", NS).text == "rel"
        subjects = [f.get("subject") for f in doc.findall("n:file", NS)]
        assert [s.split('"')[1] for s in subjects] == names

    @pytest.mark.slow
    def test_a_large_release_streams_file_by_file_in_bounded_slices(
        self, node_client, django_assert_max_num_queries
    ):
        from catalog.selectors import NZB_SLICE

        group = GroupFactory()
        count = 2 * NZB_SLICE + 3
        for index in range(1, count + 1):
            store(group, report(f"big.part{index:03d}.rar", [1], 1, index=index, count=count))
        anchor = CatalogFile.objects.get(name="big.part001.rar")
        response = node_client().get(f"/api/v1/files/{anchor.id}/release/nzb")
        assert response.streaming
        with django_assert_max_num_queries(3):  # one per slice of NZB_SLICE files
            chunks = list(response.streaming_content)
        assert len(chunks) == count + 2  # the head, one per file, the end
        doc = etree.fromstring(b"".join(chunks))
        assert len(doc.findall("n:file", NS)) == count

    def test_a_file_without_a_file_counter_is_its_own_release(self, node_client):
        group = GroupFactory()
        store(group, FileReport("lonely.bin (1/1)", POSTER, 1, 1, [(1, 1, "<l@h>", 5)]))
        file = CatalogFile.objects.get()
        doc = parse_nzb(node_client().get(f"/api/v1/files/{file.id}/release/nzb"))
        assert len(doc.findall("n:file", NS)) == 1

    def test_an_nzb_needs_a_node_token_or_a_staff_session(self, client):
        assert client.get("/api/v1/files/1/nzb").status_code == 401


def test_the_openapi_schema_documents_the_catalog(client):
    text = client.get("/api/v1/schema/", HTTP_ACCEPT="application/json").content.decode()
    for path in (
        "/api/v1/files",
        "/api/v1/files/{file_id}",
        "/api/v1/files/{file_id}/nzb",
        "/api/v1/files/{file_id}/release/nzb",
    ):
        assert path in text
