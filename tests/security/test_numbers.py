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
from core.api.fields import DecimalNumberField, WholeNumberField
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
    floats = [
        f"{s.__module__}.{s.__name__}.{name}"
        for s in ours
        for name, field in s().fields.items()
        if isinstance(field, serializers.FloatField) and not isinstance(field, DecimalNumberField)
    ]
    assert floats == [], "input serializers take DecimalNumberField (core/api/fields.py)"


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


# --- numbers into PostgreSQL integer columns -------------------------------------

INT4 = (-(2**31), 2**31 - 1)
COLUMN_RANGES = {
    "IntegerField": INT4,
    "PositiveIntegerField": (0, INT4[1]),
    "SmallIntegerField": (-(2**15), 2**15 - 1),
    "BigIntegerField": (-(2**63), 2**63 - 1),
}


def test_every_model_integer_field_bounds_its_form_field_by_its_column():
    # Django's model IntegerField knows its column's range, but its form field had
    # no max_value: 99999999999 reached an int4 column, and psycopg's binary dumper
    # wrapped it (or the column's CHECK refused it: a 500). core/columns.py.
    from django.apps import apps
    from django.db import models

    checked = []
    for model in apps.get_models():
        if model._meta.app_label not in APPS:
            continue
        for field in model._meta.get_fields():
            if not isinstance(field, models.IntegerField) or field.auto_created:
                continue
            low, high = COLUMN_RANGES[field.get_internal_type()]
            form_field = field.formfield()
            where = f"{model._meta.label}.{field.name}"
            assert form_field.max_value is not None and form_field.max_value <= high, where
            assert form_field.min_value is not None and form_field.min_value >= low, where
            checked.append(where)
    assert "newznab.ApiKey.rate_limit" in checked and "indexer.Group.priority" in checked


@pytest.mark.django_db
@pytest.mark.parametrize("value", ["99999999999", "2147483648"])
def test_a_rate_limit_past_its_column_is_a_form_error(admin_client, value):
    from newznab.models import ApiKey

    admin_client.raise_request_exception = False
    response = admin_client.post("/admin/newznab/apikey/issue/", {"name": "x", "rate_limit": value})
    assert response.status_code == 200, f"{response.status_code} for rate_limit={value}"
    assert "less than or equal to 2147483647" in response.content.decode()
    assert not ApiKey.objects.exists()  # none issued (99999999999 was stored as 1215752191)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("field", "value"),
    [("size", "9223372036854775808"), ("days", "1e300"), ("priority", "2147483648")],
)
def test_the_plan_page_refuses_a_number_past_its_bound(admin_client, field, value):
    from seeding.models import SeedRange

    admin_client.raise_request_exception = False
    group = GroupFactory()
    form = {"groups": [group.id], "days": "", "size": "1000", "priority": "5", field: value}
    response = admin_client.post("/admin/indexer/group/plan/", form)
    assert response.status_code == 200
    assert field in response.context["form"].errors
    assert not SeedRange.objects.exists()


@pytest.mark.django_db
def test_a_group_priority_past_its_column_is_a_form_error(admin_client):
    group = GroupFactory(priority=7)
    admin_client.raise_request_exception = False
    response = admin_client.post(
        f"/admin/indexer/group/{group.id}/change/",
        {"name": group.name, "priority": "2147483648", "active": "on"},
    )
    assert response.status_code == 200
    assert "priority" in response.context["adminform"].form.errors
    group.refresh_from_db()
    assert group.priority == 7


def test_a_rule_sets_max_total_is_at_most_the_parts_a_file_may_have():
    from usenet.limits import MAX_TOTAL
    from usenet.rules import RuleSet

    rules = {**RuleSet.default().to_dict(), "version": 2}
    with pytest.raises(ValueError, match=f"at most {MAX_TOTAL}"):
        RuleSet.from_dict({**rules, "max_total": 10**30})
    assert RuleSet.from_dict({**rules, "max_total": MAX_TOTAL}).max_total == MAX_TOTAL
