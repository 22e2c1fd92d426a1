"""A staff session reads through the node API only what its permissions show it in
the admin: the view permission on files for /files (and their NZBs), on releases
for /releases, on ranges, nodes, lanes and files for the status (and those and
groups for the dashboard), each held as view or as change, since the admin shows
a model's rows for either. Node tokens read all of it (test_auth_matrix.py)."""

from __future__ import annotations

import pytest

from catalog.models import CatalogFile, Release
from console.permissions import DASHBOARD_PERMISSIONS, STATUS_PERMISSIONS
from tests.support.factories import GroupFactory
from tests.support.reports import report, store
from tests.support.staff import staff_client

pytestmark = pytest.mark.django_db

FILES = ["catalog.view_catalogfile"]
RELEASES = ["catalog.view_release"]

# (path, the permissions a staff session needs for it)
READS = [
    ("/api/v1/files", FILES),
    ("/api/v1/files/{file}", FILES),
    ("/api/v1/files/{file}/nzb", FILES),
    ("/api/v1/files/{file}/release/nzb", FILES),
    ("/api/v1/releases", RELEASES),
    ("/api/v1/releases/{release}", RELEASES),
    ("/api/v1/releases/{release}/nzb", RELEASES),
    ("/api/v1/status", list(STATUS_PERMISSIONS)),
    ("/admin/dashboard/", list(DASHBOARD_PERMISSIONS)),
]


@pytest.fixture
def catalog() -> dict[str, int]:
    store(GroupFactory(name="alt.binaries.perms"), report("perms.rar", [1], 1, index=1, count=2))
    return {"file": CatalogFile.objects.get().pk, "release": Release.objects.get().pk}


@pytest.mark.parametrize(("path", "needed"), READS)
def test_a_staff_session_without_the_view_permission_is_refused(catalog, path, needed):
    # Every permission the coordinator's reads need, except this read's own.
    others = {p for _path, perms in READS for p in perms} - set(needed)
    response = staff_client("bare", sorted(others)).get(path.format(**catalog))
    assert response.status_code == 403
    if path.startswith("/api/"):
        body = response.json()
        assert body["error"] == "forbidden"
        assert all(p in body["detail"] for p in needed), body["detail"]


@pytest.mark.parametrize(("path", "needed"), READS)
def test_a_staff_session_with_the_view_permission_reads(catalog, path, needed):
    assert staff_client("viewer", needed).get(path.format(**catalog)).status_code == 200


def as_change(permissions: list[str]) -> list[str]:
    return [permission.replace(".view_", ".change_") for permission in permissions]


@pytest.mark.parametrize(("path", "needed"), READS)
def test_a_staff_session_with_the_change_permission_reads_as_the_admin_shows(catalog, path, needed):
    assert staff_client("changer", as_change(needed)).get(path.format(**catalog)).status_code == 200


def test_a_login_the_admin_shows_files_to_reads_them_through_the_api_too(catalog):
    # Django's admin shows a model's rows for its view *or* change permission.
    client = staff_client("changer", ["catalog.change_catalogfile"])
    assert client.get("/admin/catalog/catalogfile/").status_code == 200
    assert client.get(f"/admin/catalog/catalogfile/{catalog['file']}/change/").status_code == 200
    assert client.get("/api/v1/files").status_code == 200


def test_the_dashboard_link_shows_for_change_permissions_too(catalog):
    changer = staff_client("changer", as_change(list(DASHBOARD_PERMISSIONS)))
    assert 'id="dashboard-link"' in changer.get("/admin/").content.decode()


def test_a_staff_session_with_no_permission_sees_no_catalog_and_no_dashboard_link(catalog):
    bare = staff_client("bare", [])
    for path, _needed in READS:
        assert bare.get(path.format(**catalog)).status_code == 403, path
    assert 'id="dashboard-link"' not in bare.get("/admin/").content.decode()
    viewer = staff_client("viewer", list(DASHBOARD_PERMISSIONS))
    assert 'id="dashboard-link"' in viewer.get("/admin/").content.decode()


def test_a_login_that_is_not_staff_reads_nothing_whatever_it_holds(catalog, django_user_model):
    client = staff_client("clerk", FILES)
    django_user_model.objects.filter(username="clerk").update(is_staff=False)
    response = client.get("/api/v1/files")
    assert response.status_code == 403
    assert response.json()["detail"] == "This call needs a node token or a staff login."


@pytest.mark.parametrize(
    ("held", "status"),
    [([], 403), (list(STATUS_PERMISSIONS), 200), (as_change(list(STATUS_PERMISSIONS)), 200)],
)
def test_metrics_in_a_session_need_the_status_permissions(settings, held, status):
    settings.METRICS_ALLOW_IPS = []  # judged by the session alone
    response = staff_client("scraper", held).get("/metrics", REMOTE_ADDR="203.0.113.9")
    assert response.status_code == status
