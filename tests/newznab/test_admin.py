"""The API keys' admin: issue shows the key once; actions need the change permission."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client

from indexer.models import AuditEntry
from newznab.keys import hash_api_key
from newznab.models import ApiKey

pytestmark = pytest.mark.django_db


def test_issuing_shows_the_key_once_and_stores_its_digest(admin_client: Client) -> None:
    response = admin_client.post("/admin/newznab/apikey/issue/", {"name": "prowlarr"})
    assert response.status_code == 200
    key = response.content.decode().split('class="issued-key">')[1].split("<")[0]
    assert ApiKey.objects.get(name="prowlarr").key_hash == hash_api_key(key)
    assert "no-store" in response["Cache-Control"]
    assert key not in str(list(AuditEntry.objects.values("detail")))


def _act(client: Client, action: str, ids: list[int]) -> Any:
    return client.post(
        "/admin/newznab/apikey/",
        {"action": action, "_selected_action": ids, "confirmed": "yes"},
    )


def test_rotating_from_the_list_replaces_the_digest(admin_client: Client, api_key: Any) -> None:
    response = _act(admin_client, "rotate_keys", [api_key.id])
    assert response.status_code == 200
    assert ApiKey.objects.get(pk=api_key.id).key_hash != hash_api_key(api_key.key)


def test_disabling_needs_the_change_permission(client: Client, api_key: Any) -> None:
    viewer = User.objects.create_user("viewer", password="x", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_apikey"))
    client.force_login(viewer)
    response = _act(client, "disable_keys", [api_key.id])
    assert not ApiKey.objects.get(pk=api_key.id).disabled
    assert response.status_code in (200, 302, 403)


def test_disabling_from_the_list_is_audited(admin_client: Client, api_key: Any) -> None:
    _act(admin_client, "disable_keys", [api_key.id])
    assert ApiKey.objects.get(pk=api_key.id).disabled
    assert AuditEntry.objects.filter(action="api keys disabled", count=1).exists()


def test_the_list_shows_todays_counts(admin_client: Client, api_key: Any) -> None:
    admin_client.get("/api", {"t": "search", "q": "x", "apikey": api_key.key})
    response = admin_client.get("/admin/newznab/apikey/")
    assert response.status_code == 200
    assert b'<td class="field-requests_today">1</td>' in response.content
