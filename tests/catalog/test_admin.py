"""The catalog and rule sets in the operator console."""

from __future__ import annotations

import json
from importlib import import_module

import pytest
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from lxml import etree

from catalog.models import CatalogFile, RuleSetVersion
from catalog.rulesets import current_rules
from indexer.models import Group
from tests.support.factories import GroupFactory, RuleSetVersionFactory
from tests.support.reports import DTD, report, store
from usenet.rules import RuleSet

pytestmark = pytest.mark.django_db


@pytest.fixture
def files():
    group = GroupFactory(name="alt.binaries.admin")
    store(group, report("alpha.part01.rar", [1, 2], 2, index=1, count=2))
    store(group, report("alpha.par2", [1], 3, index=2, count=2))
    store(group, report("beta.mkv", [1], 1, index=1, count=1))
    return group


class TestCatalogAdmin:
    @pytest.mark.slow
    def test_the_list_shows_segment_counts_and_links(self, admin_client, files):
        response = admin_client.get("/admin/catalog/catalogfile/")
        assert response.status_code == 200
        html = response.content.decode()
        assert "alpha.part01.rar" in html and "beta.mkv" in html
        assert "2/2" in html and "1/3" in html
        assert "release NZB" in html

    @pytest.mark.parametrize(
        ("query", "shown", "hidden"),
        [
            ("q=ALPHA", ["alpha.par2", "alpha.part01.rar"], ["beta.mkv"]),
            ("complete__exact=0", ["alpha.par2"], ["beta.mkv", "alpha.part01.rar"]),
            ("date__gte=2000-01-01+00:00:00%2B00:00", ["beta.mkv"], []),
        ],
    )
    def test_search_and_filters(self, admin_client, files, query, shown, hidden):
        html = admin_client.get(f"/admin/catalog/catalogfile/?{query}").content.decode()
        for name in shown:
            assert name in html
        for name in hidden:
            assert name not in html

    def test_the_group_filter(self, admin_client, files):
        other = GroupFactory(name="alt.binaries.other")
        store(other, report("gamma.rar", [1], 1))
        html = admin_client.get(
            f"/admin/catalog/catalogfile/?group__id__exact={other.id}"
        ).content.decode()
        assert "gamma.rar" in html and "beta.mkv" not in html

    def test_the_list_reads_no_segment_arrays(self, admin_client, files):
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as queries:
            assert admin_client.get("/admin/catalog/catalogfile/").status_code == 200
        listing = [q["sql"] for q in queries if 'FROM "catalog_file"' in q["sql"]]
        assert listing and all('"message_ids"' not in sql for sql in listing)

    def test_a_file_page_shows_its_segments(self, admin_client, files):
        file = CatalogFile.objects.get(name="alpha.part01.rar")
        html = admin_client.get(f"/admin/catalog/catalogfile/{file.id}/change/").content.decode()
        assert "&lt;alpha.part01.rar.2@host&gt;" in html

    def test_the_nzb_links_return_valid_documents(self, admin_client, files):
        file = CatalogFile.objects.get(name="alpha.par2")
        for url in (
            f"/admin/catalog/catalogfile/{file.id}/nzb/",
            f"/admin/catalog/catalogfile/{file.id}/release-nzb/",
        ):
            response = admin_client.get(url)
            assert response.status_code == 200
            assert response["Content-Type"] == "application/x-nzb"
            assert response.streaming
            assert DTD.validate(etree.fromstring(b"".join(response.streaming_content)))
        release = etree.fromstring(b"".join(admin_client.get(url).streaming_content))
        assert len(release.findall("{http://www.newzbin.com/DTD/2003/nzb}file")) == 2

    def test_an_nzb_of_a_file_that_is_gone_is_a_404(self, admin_client, files):
        file_id = CatalogFile.objects.get(name="alpha.par2").id
        CatalogFile.objects.filter(id=file_id).delete()
        for url in (
            f"/admin/catalog/catalogfile/{file_id}/nzb/",
            f"/admin/catalog/catalogfile/{file_id}/release-nzb/",
        ):
            assert admin_client.get(url).status_code == 404
        response = admin_client.post(
            "/admin/catalog/catalogfile/",
            {"action": "export_nzb", "_selected_action": [file_id], "confirmed": "yes"},
            follow=True,
        )
        assert response.status_code == 200
        assert "does not exist." in response.content.decode()

    def test_selected_files_download_as_one_nzb_after_a_confirmation(self, admin_client, files):
        ids = list(CatalogFile.objects.values_list("id", flat=True))
        asked = admin_client.post(
            "/admin/catalog/catalogfile/",
            {"action": "export_nzb", "_selected_action": ids},
        )
        assert b"Download these files as one NZB?" in asked.content
        response = admin_client.post(
            "/admin/catalog/catalogfile/",
            {"action": "export_nzb", "_selected_action": ids, "confirmed": "yes"},
        )
        assert response["Content-Type"] == "application/x-nzb"
        doc = etree.fromstring(b"".join(response.streaming_content))
        assert DTD.validate(doc)
        assert len(doc.findall("{http://www.newzbin.com/DTD/2003/nzb}file")) == 3

    def test_deleting_files_asks_first(self, admin_client, files):
        file = CatalogFile.objects.get(name="beta.mkv")
        body = {"action": "delete_files", "_selected_action": [file.id]}
        response = admin_client.post("/admin/catalog/catalogfile/", body)
        assert response.status_code == 200 and CatalogFile.objects.filter(id=file.id).exists()
        admin_client.post("/admin/catalog/catalogfile/", {**body, "confirmed": "yes"})
        assert not CatalogFile.objects.filter(id=file.id).exists()


class TestRuleSetAdmin:
    def test_saving_publishes_a_new_version_and_leaves_the_old_one(self, admin_client):
        rules = RuleSet.default().to_dict()
        rules.pop("version")
        rules["poster_exclude"] = ["spammer@"]
        response = admin_client.post(
            "/admin/catalog/rulesetversion/add/",
            {"rules": json.dumps(rules), "note": "drop the spammer"},
        )
        assert response.status_code == 302, response.content.decode()[:2000]
        newest = RuleSetVersion.objects.get(version=2)
        assert newest.rules["poster_exclude"] == ["spammer@"]
        assert newest.created_by == "admin"
        assert RuleSetVersion.objects.get(version=1).rules["poster_exclude"] == []
        assert current_rules().version == 2
        assert current_rules().excludes_poster("x spammer@y")

    @pytest.mark.parametrize(
        ("rules", "message"),
        [
            ({"min_total": 1}, "lacks the fields"),
            ({**RuleSet.default().to_dict(), "segment_counter": "("}, "cannot be used"),
            (
                {**RuleSet.default().to_dict(), "poster_exclude": [r"(?<!x)bot"]},
                "lookahead and lookbehind are not supported",
            ),
            ({**RuleSet.default().to_dict(), "colour": "blue"}, "does not know: colour"),
        ],
    )
    def test_invalid_rules_are_explained_in_the_form(self, admin_client, rules, message):
        response = admin_client.post(
            "/admin/catalog/rulesetversion/add/", {"rules": json.dumps(rules), "note": ""}
        )
        assert response.status_code == 200
        assert message in response.content.decode()
        assert RuleSetVersion.objects.count() == 1

    def test_the_add_form_starts_from_the_rules_in_force(self, admin_client):
        html = admin_client.get("/admin/catalog/rulesetversion/add/").content.decode()
        assert "segment_counter" in html

    def test_an_old_version_cannot_be_edited(self, admin_client):
        version = RuleSetVersion.objects.get(version=1)
        url = f"/admin/catalog/rulesetversion/{version.id}/change/"
        view = admin_client.get(url)
        assert view.status_code == 200 and 'name="_save"' not in view.content.decode()
        rules = RuleSet.default().to_dict()
        rules.pop("version")
        rules["poster_exclude"] = ["changed@"]
        response = admin_client.post(url, {"rules": json.dumps(rules), "note": "changed"})
        assert response.status_code == 403
        assert RuleSetVersion.objects.count() == 1
        assert RuleSetVersion.objects.get(version=1).rules["poster_exclude"] == []


class TestRulesInLinearTime:
    """Migration 0008: a database written before RE2 keeps reading subjects."""

    migration = import_module("indexer.migrations.0009_rules_in_linear_time")

    @property
    def apps(self):
        """The models as that migration saw them (the rule sets were the indexer's then)."""
        loader = MigrationLoader(connection)
        return loader.project_state(("indexer", "0009_rules_in_linear_time")).apps

    def test_the_old_default_patterns_are_republished_for_re2(self):
        old = RuleSet.default().to_dict()
        old.pop("version")
        old["strip"] = [*old["strip"][:-2], self.migration.OLD_STRIP_SEPARATORS]
        old["filename"] = [old["filename"][0], self.migration.OLD_FILENAME_TOKEN]
        old["poster_exclude"] = ["spammer@"]
        RuleSetVersionFactory(version=2, rules=old)
        self.migration.republish_defaults(self.apps, None)
        assert current_rules().version == 3
        assert current_rules() == RuleSet(version=3, poster_exclude=("spammer@",))

    def test_rules_that_already_run_under_re2_are_left_alone(self):
        self.migration.republish_defaults(self.apps, None)
        assert RuleSetVersion.objects.count() == 1


class TestGroupNames:
    def test_the_admin_refuses_a_group_name_with_a_line_break(self, admin_client):
        response = admin_client.post(
            "/admin/indexer/group/add/",
            {"name": "alt.binaries.x\r\nQUIT", "active": "on", "priority": "100"},
        )
        assert response.status_code == 200
        assert "RFC 3977 allows neither" in response.content.decode()
        assert not Group.objects.exists()

    def test_the_files_api_refuses_a_group_name_outside_rfc_3977(self, client):
        from tests.support.factories import NodeFactory

        node = NodeFactory()
        response = client.get(
            "/api/v1/files", {"group": "alt.x*"}, HTTP_AUTHORIZATION=f"Bearer {node.token}"
        )
        assert response.status_code == 400
        assert "RFC 3977 keeps" in response.json()["detail"]
