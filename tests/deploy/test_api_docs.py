"""The schema names the node token as a bearer scheme; the docs need no CDN."""

from __future__ import annotations

import re

import pytest
from django.contrib.staticfiles import finders
from django.test import Client


@pytest.mark.slow
def test_the_schema_declares_the_node_token_as_a_bearer_scheme(client: Client) -> None:
    schema = client.get("/api/v1/schema/?format=json").json()
    assert schema["components"]["securitySchemes"]["nodeToken"]["type"] == "http"
    assert schema["components"]["securitySchemes"]["nodeToken"]["scheme"] == "bearer"
    lease = schema["paths"]["/api/v1/ranges/lease"]["post"]
    assert {"nodeToken": []} in lease["security"]


def test_swagger_ui_is_served_from_the_coordinators_own_static_files(client: Client) -> None:
    response = client.get("/api/v1/docs/swagger/")
    assert response.status_code == 200
    page = response.content.decode()
    assets = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert any("swagger-ui-bundle.js" in asset for asset in assets), assets
    for asset in assets:
        assert not re.match(r"^(https?:)?//", asset), f"{asset} leaves the coordinator"
        assert asset.startswith("/static/"), asset
        assert finders.find(asset.removeprefix("/static/")), f"{asset} is not packaged"
    assert "cdn" not in page.lower()
