"""Small edges an attacker found: each answered 500 or cost too much before."""

from __future__ import annotations

from unittest import mock

import pytest
from django.test import override_settings

pytestmark = pytest.mark.django_db


@override_settings(METRICS_TOKEN="scrape-secret", METRICS_ALLOW_IPS=[])
@pytest.mark.parametrize("token", ["ünïcödé", "scrape-secrét", "\u2603" * 300])
def test_a_non_ascii_metrics_token_is_a_401_not_a_500(client, token):
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 401
    assert b"Unknown metrics token" in response.content


@override_settings(METRICS_TOKEN="", METRICS_ALLOW_IPS=["127.0.0.1"])
def test_with_no_metrics_token_set_a_presented_one_is_refused(client):
    response = client.get("/metrics", HTTP_AUTHORIZATION="Bearer ", REMOTE_ADDR="127.0.0.1")
    assert response.status_code == 401


@pytest.mark.parametrize("page", ["99999999999999999999", "-5", "abc", "9" * 400])
def test_a_dashboard_page_past_any_number_is_shown_not_a_500(admin_client, page):
    response = admin_client.get(f"/admin/dashboard/?page={page}")
    assert response.status_code == 200


def test_the_api_docs_page_builds_the_schema_once(client):
    from drf_spectacular.generators import SchemaGenerator

    from core.api import docs

    docs.forget_docs()
    with mock.patch.object(
        SchemaGenerator, "get_schema", autospec=True, side_effect=SchemaGenerator.get_schema
    ) as built:
        for _ in range(3):
            assert client.get("/api/v1/docs/").status_code == 200
    assert built.call_count == 1


@override_settings(LOGIN_FAILURES_PER_USER=3, LOGIN_FAILURES_PER_ADDRESS=100)
def test_failed_admin_logins_are_throttled_per_username(client, django_user_model):
    django_user_model.objects.create_user("ops", password="right-password", is_staff=True)
    for _ in range(3):
        response = client.post("/admin/login/", {"username": "ops", "password": "guess"})
        assert response.status_code == 200  # the form again
    refused = client.post("/admin/login/", {"username": "OPS", "password": "right-password"})
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 900
    assert b"Too many failed logins" in refused.content
    # Another account from elsewhere is not held back.
    django_user_model.objects.create_user("other", password="pw-other", is_staff=True)
    ok = client.post(
        "/admin/login/", {"username": "other", "password": "pw-other"}, REMOTE_ADDR="10.0.0.9"
    )
    assert ok.status_code == 302


@override_settings(LOGIN_FAILURES_PER_USER=100, LOGIN_FAILURES_PER_ADDRESS=2)
def test_failed_admin_logins_are_throttled_per_address(client):
    for name in ("a", "b"):
        client.post("/admin/login/", {"username": name, "password": "x"}, REMOTE_ADDR="10.1.1.1")
    refused = client.post(
        "/admin/login/", {"username": "c", "password": "x"}, REMOTE_ADDR="10.1.1.1"
    )
    assert refused.status_code == 429
    elsewhere = client.post(
        "/admin/login/", {"username": "c", "password": "x"}, REMOTE_ADDR="10.1.1.2"
    )
    assert elsewhere.status_code == 200
