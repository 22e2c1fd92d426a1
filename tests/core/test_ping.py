"""`GET /api/v1/ping`: the authenticated no-op (docs/api.md, "Ping")."""

from __future__ import annotations

import pytest
from django.db import connection
from rest_framework.test import APIClient

from indexer.services import issue_token

pytestmark = pytest.mark.django_db


def test_a_node_gets_its_name_and_the_database_clock() -> None:
    _node, token, _ = issue_token("pinger")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    response = client.get("/api/v1/ping")
    assert response.status_code == 200
    body = response.json()
    with connection.cursor() as cursor:
        cursor.execute("SELECT extract(epoch FROM now())::bigint")
        now = cursor.fetchone()[0]
    assert body["ok"] is True and body["node"] == "pinger"
    assert abs(body["time"] - now) <= 5


def test_without_a_token_it_is_a_401() -> None:
    response = APIClient().get("/api/v1/ping")
    assert response.status_code == 401
    assert response.json()["error"] == "unauthenticated"
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'
