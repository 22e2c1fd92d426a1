"""Review of the HTTP edge: a staff session reads "exactly as the admin does"."""

from __future__ import annotations

import pytest

from indexer.models import CatalogFile
from tests.catalog.reports import report
from tests.catalog.test_api import store
from tests.factories import GroupFactory
from tests.security.staff import staff_client

pytestmark = pytest.mark.django_db


def test_a_login_the_admin_shows_files_to_reads_them_through_the_api_too():
    store(GroupFactory(name="alt.binaries.perms"), report("perms.rar", [1], 1, index=1, count=2))
    file_id = CatalogFile.objects.get().pk
    # Django's admin shows a model's rows for its view *or* change permission.
    client = staff_client("changer", ["indexer.change_catalogfile"])
    assert client.get("/admin/indexer/catalogfile/").status_code == 200
    assert client.get(f"/admin/indexer/catalogfile/{file_id}/change/").status_code == 200
    assert client.get("/api/v1/files").status_code == 200
