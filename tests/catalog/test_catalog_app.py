"""The catalog became its own app: grants, admin pages and old bookmarks follow it."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group as StaffGroup
from django.contrib.auth.models import Permission
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from catalog.models import CatalogFile, Release, RuleSetVersion
from tests.support.staff import staff_client

pytestmark = pytest.mark.django_db

# Each admin page of the catalog's models: where it is now, where it was.
PAGES = [
    ("/admin/catalog/catalogfile/", "/admin/indexer/catalogfile/"),
    ("/admin/catalog/release/", "/admin/indexer/release/"),
    ("/admin/catalog/rulesetversion/", "/admin/indexer/rulesetversion/"),
    ("/admin/catalog/rulesetversion/add/", "/admin/indexer/rulesetversion/add/"),
]


@pytest.mark.django_db(transaction=True)
def test_a_grant_on_the_indexer_s_catalog_files_follows_them_to_the_catalog_app():
    executor = MigrationExecutor(connection)
    executor.migrate([("catalog", None)])  # as before the move (indexer 0015 undone too)
    user = get_user_model().objects.create_user("auditor", password="x", is_staff=True)
    old = Permission.objects.get(content_type__app_label="indexer", codename="view_catalogfile")
    user.user_permissions.add(old)
    readers = StaffGroup.objects.create(name="readers")
    readers.permissions.add(
        Permission.objects.get(content_type__app_label="indexer", codename="delete_release")
    )
    user.groups.add(readers)
    assert get_user_model().objects.get(pk=user.pk).has_perm("indexer.view_catalogfile")

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    user = get_user_model().objects.get(pk=user.pk)
    assert user.has_perm("catalog.view_catalogfile")
    assert user.has_perm("catalog.delete_release")
    assert not user.has_perm("indexer.view_catalogfile")
    assert not Permission.objects.filter(
        content_type__app_label="indexer",
        codename__in=[
            "view_catalogfile",
            "delete_release",
            "add_rulesetversion",
            "view_groupcatalogsummary",
        ],
    ).exists()


def test_the_models_are_the_catalog_app_s_on_the_same_tables():
    assert [m._meta.app_label for m in (CatalogFile, Release, RuleSetVersion)] == ["catalog"] * 3
    assert [m._meta.db_table for m in (CatalogFile, Release, RuleSetVersion)] == [
        "catalog_file",
        "catalog_release",
        "rule_set_version",
    ]


@pytest.mark.parametrize(("page", "old"), PAGES)
def test_each_catalog_admin_page_opens_at_its_new_address(admin_client, page, old):
    assert admin_client.get(page).status_code == 200


@pytest.mark.parametrize(("page", "old"), PAGES)
def test_an_old_bookmark_is_sent_on_to_the_catalog_app(admin_client, page, old):
    response = admin_client.get(old + "?q=x")
    assert response.status_code == 301
    assert response["Location"] == page + "?q=x"


def test_the_catalog_permission_codenames_open_the_catalog_pages():
    viewer = staff_client("viewer", ["catalog.view_catalogfile", "catalog.view_release"])
    assert viewer.get("/admin/catalog/catalogfile/").status_code == 200
    assert viewer.get("/admin/catalog/release/").status_code == 200
    assert viewer.get("/admin/catalog/rulesetversion/").status_code == 403


def test_the_indexer_s_own_pages_stay_where_they_were(admin_client):
    for page in ("/admin/indexer/group/", "/admin/indexer/node/", "/admin/indexer/auditentry/"):
        assert admin_client.get(page).status_code == 200
