"""Numbers from clients are ASCII digits 0-9, bounded: "²", "³", "1" in
Arabic-Indic digits ("\u0661") and a number of 100,001 digits are refused with
a sentence at every edge that reads one, never a 500 and never read as a number
(docs/security.md, "Numbers from clients"). `str.isdigit()` is true for the
first three; `int()` refuses the first two (the 500s) and reads the third as 1.
Every query parameter of both APIs meets these in tests/test_api_fuzz.py; here
the admin's pages, JSON bodies, Content-Length and what else needs a setting.
"""

from __future__ import annotations

import pytest

from catalog.models import Release
from catalog.services import store_files
from core.api.fields import WholeNumberField
from newznab import services as newznab_services
from tests.support.factories import GroupFactory, SeedRangeFactory
from tests.support.newznab import error_code
from tests.support.reports import release_files

APPS = ("console", "newznab", "leases", "seeding", "catalog", "indexer", "core")
HUGE = "1" + "0" * 100_000  # 10**100000, which int() would build (or refuse: a 500)
ARABIC_ONE = "\u0661"  # isdigit(), and int() reads it as 1
HOSTILE = ["²", "³", ARABIC_ONE, HUGE]
ARABIC_INDIC = {ord("0") + d: 0x0660 + d for d in range(10)}  # str.translate table


# --- the newznab API: a release id -------------------------------------------------


@pytest.fixture
def api_key(db):
    return newznab_services.issue_api_key("digits")[1]


@pytest.fixture
def release(db) -> Release:
    store_files(GroupFactory().id, None, [], release_files("Some.Show.S01E02.720p-GRP"))
    return Release.objects.get()


@pytest.mark.django_db
@pytest.mark.parametrize("function", ["details", "get"])
def test_a_release_id_in_arabic_indic_digits_names_no_release(client, api_key, release, function):
    written = str(release.id).translate(ARABIC_INDIC)
    response = client.get("/api", {"t": function, "id": written, "apikey": api_key})
    assert error_code(response) == 300
    assert (
        client.get("/api", {"t": function, "id": release.id, "apikey": api_key}).status_code == 200
    )


# --- the admin: the plan page, the release list -----------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    "value", [*HOSTILE, "3,²"], ids=["sup2", "sup3", "arabic1", "huge", "list"]
)
def test_plan_page_ids_in_other_digits_are_a_400_with_a_sentence(admin_client, value):
    response = admin_client.get("/admin/indexer/group/plan/", {"ids": value})
    assert response.status_code == 400
    assert "group ids" in response.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("value", HOSTILE, ids=["sup2", "sup3", "arabic1", "huge"])
def test_a_release_list_category_in_other_digits_is_a_400_with_a_sentence(
    admin_client, release, value
):
    response = admin_client.get("/admin/catalog/release/", {"category": value})
    assert response.status_code == 400
    html = response.content.decode()
    assert "category" in html and "ASCII digits" in html
    assert release.name not in html  # not the whole list, as if unfiltered


@pytest.mark.django_db
@pytest.mark.parametrize("epoch", ["\u0661", "²", "1.0", "+1", HUGE, True, 1.0])
def test_a_json_number_in_other_digits_is_a_400_naming_the_field(node_client, epoch):
    """DRF's IntegerField reads the string "\u0661" and 1.0 as 1; the lease's epoch is 1."""
    node = node_client()
    SeedRangeFactory(start_id=1, end_id=10)
    lease = node.lease()
    assert lease["epoch"] == 1
    response = node.post(f"/api/v1/ranges/{lease['id']}/release", {"epoch": epoch})
    assert response.status_code == 400
    assert response.json()["detail"].startswith("epoch: ")


def test_every_input_serializer_reads_numbers_as_ascii_digits():
    from rest_framework import serializers

    from coordinator.urls import urlpatterns  # every serializer's module is loaded

    assert urlpatterns

    def subclasses(cls: type) -> list[type]:
        return [cls, *(s for sub in cls.__subclasses__() for s in subclasses(sub))]

    ours = [
        s for s in subclasses(serializers.Serializer)
        if s.__module__.split(".")[0] in APPS and not s.__name__.endswith("Out")
    ]  # fmt: skip
    assert {"BatchIn", "EpochIn", "FileListIn", "ReleaseListIn", "OverviewsQuery"} <= {
        s.__name__ for s in ours
    }
    plain = [
        f"{s.__module__}.{s.__name__}.{name}"
        for s in ours
        for name, field in s().fields.items()
        if isinstance(field, serializers.IntegerField) and not isinstance(field, WholeNumberField)
    ]
    assert plain == [], "input serializers take WholeNumberField (core/api/fields.py)"


@pytest.mark.django_db
@pytest.mark.parametrize(("length", "status"), [("9" * 5000, 400), ("²", 400), ("\u0661", 400)])
def test_a_content_length_in_other_digits_or_past_any_number_is_refused(
    node_client, length, status
):
    """The snapshot upload reads Content-Length itself (DRF's parsers read a bad one as 0)."""
    snapshot = "/api/v1/groups/1/lanes/history/snapshot?epoch=1&next=1"
    response = node_client().http.put(
        snapshot, b"x", content_type="application/gzip", CONTENT_LENGTH=length
    )
    assert response.status_code == status
    assert response.json()["detail"].startswith(("Content-Length", "The body"))


@pytest.mark.django_db
def test_a_dashboard_page_in_other_digits_is_the_first_page(admin_client):
    response = admin_client.get("/admin/dashboard/", {"page": "\u0662"})  # Arabic-Indic 2
    assert response.status_code == 200
    assert response.context["data"].page == 1
