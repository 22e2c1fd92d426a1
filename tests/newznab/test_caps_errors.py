"""t=caps and the spec's error elements, read strictly (newznab API spec v0.4)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from tests.support.newznab import call, error_code, parse

pytestmark = pytest.mark.django_db


def test_caps_follows_the_spec_example(client: Client) -> None:
    root = parse(call(client, t="caps"))
    assert root.tag == "caps"
    assert root.find("server").get("title")
    limits = root.find("limits")
    assert int(limits.get("default")) <= int(limits.get("max"))
    searching = {child.tag: child.attrib for child in root.find("searching")}
    assert searching["search"]["available"] == "yes"
    assert set(searching["tv-search"]["supportedParams"].split(",")) == {"q", "season", "ep"}
    assert searching["movie-search"]["supportedParams"] == "q,imdbid"
    categories = {c.get("id"): c for c in root.find("categories")}
    assert {"2000", "3000", "4000", "5000", "7000", "8000"} <= set(categories)
    tv = {s.get("id"): s.get("name") for s in categories["5000"]}
    assert tv == {
        "5030": "SD", "5040": "HD", "5045": "UHD", "5050": "Other", "5070": "Anime",
        "5080": "Documentary",
    }  # fmt: skip
    movies = {s.get("id"): s.get("name") for s in categories["2000"]}
    assert movies == {
        "2020": "Other", "2030": "SD", "2040": "HD", "2045": "UHD", "2050": "BluRay",
        "2060": "3D",
    }  # fmt: skip


def test_caps_as_json(client: Client) -> None:
    body = json.loads(call(client, t="caps", o="json").content)
    assert body["limits"]["@attributes"]["max"]
    assert body["categories"]["category"][0]["@attributes"]["id"] == "2000"


def test_a_missing_function_is_error_200(client: Client) -> None:
    assert error_code(call(client)) == 200


def test_an_unknown_function_is_error_202(client: Client) -> None:
    assert error_code(call(client, t="frobnicate")) == 202


@pytest.mark.parametrize("function", ["music", "book", "register"])
def test_an_optional_function_not_offered_is_error_203(client: Client, function: str) -> None:
    assert error_code(call(client, t=function)) == 203


def test_errors_as_json(client: Client) -> None:
    body = json.loads(call(client, t="search", o="json").content)
    assert body["error"]["@attributes"]["code"] == "100"


@pytest.mark.parametrize(
    "params",
    [{"limit": "ten"}, {"limit": "-1"}, {"offset": "x"}, {"cat": "50a0"}, {"maxage": "1.5"},
     {"extended": "2"}],
)  # fmt: skip
def test_a_bad_parameter_is_error_201(client: Client, api_key: Any, params: dict) -> None:
    assert error_code(call(client, t="search", q="x", apikey=api_key.key, **params)) == 201


def test_only_get_is_answered(client: Client) -> None:
    assert client.post("/api?t=caps").status_code == 405
