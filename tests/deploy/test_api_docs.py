"""The schema names the node token as a bearer scheme; the docs need no CDN."""

from __future__ import annotations

import re

import pytest
from django.contrib.staticfiles import finders
from django.test import Client
from openapi_schema_validator import OAS30Validator
from openapi_spec_validator import validate


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


@pytest.mark.slow
def test_a_batchs_files_are_documented_as_a_list_of_files_or_their_columns(
    client: Client,
) -> None:
    """Both forms the coordinator reads (docs/api.md, "The columnar form"), and the
    schema is a valid OpenAPI document."""
    schema = client.get("/api/v1/schema/?format=json").json()
    validate(schema)
    components = schema["components"]["schemas"]
    batch = next(
        body for name, body in components.items()
        if name.startswith("BatchIn") and "headers" in body.get("properties", {})
    )  # fmt: skip
    for key in ("files", "fragments"):
        assert batch["properties"][key] == {"$ref": "#/components/schemas/FileReports"}
    listed, columns = components["FileReports"]["oneOf"]
    assert listed == {"type": "array", "items": {"$ref": "#/components/schemas/FileReportIn"}}
    assert columns == {"$ref": "#/components/schemas/FileColumnsIn"}
    columnar = {
        "subject": ['"a.rar" yEnc (1/2)'], "poster": ["a <a@b.c>"], "date": [1700000000],
        "total": [2], "segments": [2], "part": [1, 2], "article": [10, 11],
        "message_id": ["<a@b>", "<b@b>"], "bytes": [700, 700],
    }  # fmt: skip
    OAS30Validator(components["FileColumnsIn"]).validate(columnar)
    assert sorted(components["FileColumnsIn"]["required"]) == sorted(columnar)
