"""Releases in the operator console: list, filters, a release's files, its NZB."""

from __future__ import annotations

import json

import pytest
from lxml import etree

from catalog.models import Release, RuleSetVersion
from catalog.retired_categories import RETIRED_DEFAULT_CATEGORY_RULES
from catalog.services import publish_rules
from tests.support.releases import ALBUM, MOVIE, TV
from usenet.rules import RuleSet

pytestmark = pytest.mark.django_db


def shown(response):
    assert response.status_code == 200
    html = response.content.decode()
    return {name for name in (TV, MOVIE, ALBUM) if name in html}


@pytest.mark.usefixtures("releases")
class TestReleaseAdmin:
    def test_the_list_shows_category_files_and_completion(self, admin_client):
        response = admin_client.get("/admin/catalog/release/")
        assert shown(response) == {TV, MOVIE, ALBUM}
        html = response.content.decode()
        # The cross-posted episode counts its five files once.
        assert "5040 TV/HD" in html and "5/5" in html and "4/5" in html
        assert "100.0 %" in html

    @pytest.mark.parametrize(
        ("query", "expected"),
        [
            ("q=show", {TV}),
            ("category=2000", {MOVIE}),
            ("category=3040", {ALBUM}),
            ("group_name=alt.binaries.teevee", {TV}),
            ("completion=100", {TV, MOVIE, ALBUM}),
            ("completion=partial", set()),
            ("posted__gte=2023-11-15T00:00:00%2B00:00", {ALBUM, MOVIE}),
        ],
    )
    def test_filters(self, admin_client, query, expected):
        assert shown(admin_client.get(f"/admin/catalog/release/?{query}")) == expected

    def test_a_release_page_lists_its_files_with_their_completion(self, admin_client):
        release = Release.objects.get(name=MOVIE)
        response = admin_client.get(f"/admin/catalog/release/{release.id}/change/")
        assert response.status_code == 200
        html = response.content.decode()
        assert f"{MOVIE}.part01.rar" in html and f"{MOVIE}.nfo" in html
        assert f"{MOVIE}.part02.rar" not in html
        assert "2/2" in html
        assert f"/admin/catalog/release/{release.id}/nzb/" in html

    def test_the_nzb_link_streams_the_release(self, admin_client):
        release = Release.objects.get(name=TV)
        response = admin_client.get(f"/admin/catalog/release/{release.id}/nzb/")
        assert response.status_code == 200
        doc = etree.fromstring(b"".join(response.streaming_content))
        assert len(doc.findall("{http://www.newzbin.com/DTD/2003/nzb}file")) == 5

    def test_an_unknown_release_nzb_is_a_404(self, admin_client):
        assert admin_client.get("/admin/catalog/release/999999/nzb/").status_code == 404

    def test_releases_cannot_be_added_or_changed(self, admin_client):
        assert admin_client.get("/admin/catalog/release/add/").status_code == 403


class TestCategoryRulesInTheRuleSetForm:
    def rules(self):
        rules = RuleSet.default().to_dict()
        rules.pop("version")
        return json.dumps(rules)

    def test_the_form_starts_from_the_overrides_in_force_without_the_retired_defaults(
        self, admin_client
    ):
        own = {"category": 7020, "name": ["(?i)my-ebooks"]}
        publish_rules(json.loads(self.rules()), categories=[*RETIRED_DEFAULT_CATEGORY_RULES, own])
        html = admin_client.get("/admin/catalog/rulesetversion/add/").content.decode()
        assert "my-ebooks" in html and "categories" in html
        assert "5045" not in html  # the old defaults are not offered to be stored again

    def test_saving_publishes_category_rules_with_the_version(self, admin_client):
        custom = [{"category": 7020, "name": ["(?i)epub"]}]
        response = admin_client.post(
            "/admin/catalog/rulesetversion/add/",
            {"rules": self.rules(), "categories": json.dumps(custom), "note": "books"},
        )
        assert response.status_code == 302
        assert RuleSetVersion.objects.get(version=2).categories == custom

    def test_a_pattern_outside_re2_is_explained_in_the_form(self, admin_client):
        bad = [{"category": 7020, "name": ["(?<=x)epub"]}]
        response = admin_client.post(
            "/admin/catalog/rulesetversion/add/",
            {"rules": self.rules(), "categories": json.dumps(bad), "note": ""},
        )
        assert response.status_code == 200
        assert "RE2" in response.content.decode()
        assert RuleSetVersion.objects.count() == 1
