"""The coordinator's pages and schema answer, and the admin needs a staff login."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_the_openapi_schema_documents_the_range_protocol(client):
    response = client.get("/api/v1/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    text = response.content.decode()
    for path in ("/api/v1/ranges/lease", "/api/v1/ranges/{range_id}/batch", "/api/v1/status"):
        assert path in text


def test_the_docs_page_renders_every_operation(client):
    response = client.get("/api/v1/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "/api/v1/ranges/{range_id}/release" in html
    assert "uncounted" in html


def test_the_admin_needs_a_staff_login(client, django_user_model):
    assert client.get("/admin/seeding/seedrange/").status_code == 302
    user = django_user_model.objects.create_user("plain", password="pw-123456")
    client.force_login(user)
    assert client.get("/admin/seeding/seedrange/").status_code == 302


def test_status_needs_a_node_token_or_a_staff_session(client, admin_client):
    assert client.get("/api/v1/status").status_code == 401
    response = admin_client.get("/api/v1/status")
    assert response.status_code == 200
    assert set(response.json()) >= {"ranges", "nodes", "headers_last_hour", "paused"}
