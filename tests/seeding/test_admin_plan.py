"""The admin's "Plan ranges" page: a staff login, a dry-run preview, then the commit."""

from __future__ import annotations

import pytest

from seeding.models import SeedRange
from seeding.services import create_ranges

pytestmark = pytest.mark.django_db

PLAN_URL = "/admin/indexer/group/plan/"


def test_the_plan_page_needs_a_staff_login(client):
    response = client.get(PLAN_URL)
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def test_the_group_list_links_to_the_plan_page(admin_client):
    response = admin_client.get("/admin/indexer/group/")
    assert PLAN_URL in response.content.decode()


def test_the_action_opens_the_page_with_the_selected_groups(admin_client, news_group):
    group = news_group("alt.binaries.adm0", 1, 100)
    response = admin_client.post(
        "/admin/indexer/group/", {"action": "plan_selected", "_selected_action": [group.id]}
    )
    assert response.status_code == 302
    page = admin_client.get(response["Location"])
    assert f'value="{group.id}" selected' in page.content.decode()


def test_preview_then_commit(admin_client, news_group):
    a = news_group("alt.binaries.adm1", 1, 10_000, live_from=8_001)
    b = news_group("alt.binaries.adm2", 1, 3_000)
    form = {"groups": [a.id, b.id], "days": "", "size": "2000", "priority": "50"}
    preview = admin_client.post(PLAN_URL, form)
    assert preview.status_code == 200
    html = preview.content.decode()
    assert "Preview" in html and "Plan these ranges" in html
    assert preview.context["summary"].ranges == 6
    assert SeedRange.objects.count() == 0  # a dry run
    # Meanwhile another planner covers part of the first group.
    create_ranges(a, [(6_001, 8_000)])
    done = admin_client.post(PLAN_URL, {**form, "confirmed": "yes"})
    assert done.status_code == 302
    assert SeedRange.objects.count() == 1 + 5
    assert SeedRange.objects.filter(priority=50).count() == 5
    spans = sorted(SeedRange.objects.values_list("group__name", "start_id", "end_id"))
    assert ("alt.binaries.adm1", 6_001, 8_000) in spans


def test_an_invalid_form_plans_nothing(admin_client, news_group):
    a = news_group("alt.binaries.adm3", 1, 100)
    response = admin_client.post(PLAN_URL, {"groups": [a.id], "size": "0", "priority": "1"})
    assert response.status_code == 200
    assert response.context["form"].errors
    assert SeedRange.objects.count() == 0
