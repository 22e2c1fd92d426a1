"""Nothing a client sends produces a 500: the API fuzzed from its own OpenAPI schema.

Schemathesis generates requests for every operation in /api/v1/schema/ (valid
ones and, mostly, malformed ones) and sends them through the WSGI app with a
real node token against the test database. Every answer must be a 2xx or a
4xx/503 in the contract's error shape, never a server error, and its body must
match what the schema documents for its status (the output serializers).

Chance found "²" in a number once (a 500); what chance found is not left to
chance again. Explicit examples run every time: each integer parameter and
property of every operation in the schema, the node API's numbers written as
text (a release list's category and cursor) and the newznab API's numbers, fed
"²", "³", "1" in Arabic-Indic digits and a number of 100,001 digits. Each is a
4xx (the newznab API: its error document) naming what was wrong.
"""

from __future__ import annotations

import gzip
import re
from urllib.parse import quote, urlencode

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.urls import resolve
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error, response_schema_conformance

from coordinator.wsgi import application
from newznab import services as newznab_services
from tests.support.factories import GroupFactory, NodeFactory, SeedRangeFactory
from tests.support.newznab import error_code, parse

schema = schemathesis.openapi.from_wsgi("/api/v1/schema/", application)


@schemathesis.serializer("application/gzip")
def gzip_body(ctx: object, value: object) -> bytes:
    """Snapshot uploads: any generated value, gzipped (or raw bytes as they come)."""
    raw = value if isinstance(value, bytes) else repr(value).encode()
    return gzip.compress(raw)


@pytest.fixture
def in_test_transaction():
    """Keep the test's connection across WSGI calls, as Django's test client does.

    Requests here do not go through django.test.Client, which disconnects
    close_old_connections; without that the end of each request would close
    the connection that holds the test's transaction.
    """
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def node_token(db, in_test_transaction, settings, tmp_path):
    settings.SNAPSHOT_DIR = tmp_path
    node = NodeFactory()
    # Something for the generated ids to hit now and then.
    SeedRangeFactory(group=GroupFactory(name="alt.binaries.fuzz"), start_id=1, end_id=100)
    return node.token


@pytest.mark.slow
@schema.parametrize()
@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_no_request_produces_a_server_error_and_answers_match_the_schema(case, node_token):
    response = case.call(headers={"Authorization": f"Bearer {node_token}"})
    case.validate_response(response, checks=[not_a_server_error, response_schema_conformance])
    if response.status_code >= 400:
        body = response.json()
        assert set(body) == {"error", "detail"}, body
        assert body["detail"]


# --- explicit examples, every run -------------------------------------------------

HOSTILE = {"sup2": "²", "sup3": "³", "arabic1": "\u0661", "huge": "1" + "0" * 100_000}
TEXT_NUMBERS = [("/api/v1/releases", "category"), ("/api/v1/releases", "after")]


def integer_parameters(where: str) -> list[tuple[str, str, str]]:
    """(method, path, name) of each integer parameter `where` (query or path) in the schema,
    and the node API's numbers written as text."""
    found = [
        (method.upper(), path, parameter["name"])
        for path, operations in schema.raw_schema["paths"].items()
        for method, operation in operations.items()
        for parameter in operation.get("parameters", [])
        if parameter["in"] == where and parameter["schema"].get("type") == "integer"
    ]
    return (
        found + [("GET", path, name) for path, name in TEXT_NUMBERS] if where == "query" else found
    )


def integer_properties() -> list[tuple[str, str, str]]:
    """(method, path, property) of each integer property of every JSON request body."""
    components = schema.raw_schema["components"]["schemas"]
    found = []
    for path, operations in schema.raw_schema["paths"].items():
        for method, operation in operations.items():
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if body is None:
                continue
            shape = components[body["schema"]["$ref"].rsplit("/", 1)[1]]
            for name, prop in shape.get("properties", {}).items():
                if prop.get("type") == "integer":
                    found.append((method.upper(), path, name))
    return found


QUERY, PATH, BODY = integer_parameters("query"), integer_parameters("path"), integer_properties()


def test_the_explicit_examples_cover_the_schemas_numbers():
    assert ("GET", "/api/v1/releases", "category") in QUERY
    assert {
        ("GET", "/api/v1/files", "since"),
        ("GET", "/api/v1/ranges/{range_id}/overviews", "from"),
    } <= set(QUERY)
    assert ("POST", "/api/v1/ranges/{range_id}/batch", "epoch") in BODY
    assert ("GET", "/api/v1/releases/{release_id}", "release_id") in PATH


def call_with(node_client, method: str, path: str, query: dict, body: dict | None = None):
    """The operation with every path parameter and required number filled in as 1."""
    url = re.sub(r"\{(\w+)\}", lambda m: "history" if m[1] == "lane" else "1", path)
    assert "{" not in url and "}" not in url, url
    http = node_client().http
    if method == "GET":
        return http.get(url, query)
    return getattr(http, method.lower())(url + "?" + urlencode(query), body or {}, format="json")


def own_body_cap(path: str) -> int:
    """The view's own body cap (`max_body_bytes`, core.api.parsers.body_limit), if any."""
    view = resolve(re.sub(r"\{(\w+)\}", "1", path)).func
    return getattr(getattr(view, "cls", None), "max_body_bytes", None) or 1 << 62


def other_numbers(path: str, method: str, name: str) -> dict[str, str]:
    """Every other integer query parameter of the operation, as 1 (only `name` is wrong)."""
    return {
        n: "1"
        for m, p, n in QUERY
        if (m, p) == (method, path) and n not in (name, "category", "after")
    }


@pytest.mark.django_db
@pytest.mark.parametrize("value", HOSTILE.values(), ids=HOSTILE.keys())
@pytest.mark.parametrize(("method", "path", "name"), QUERY)
def test_a_query_number_in_other_digits_is_a_400_naming_it(node_client, method, path, name, value):
    response = call_with(
        node_client, method, path, {**other_numbers(path, method, name), name: value}
    )
    assert response.status_code == 400, response.content[:300]
    body = response.json()
    assert body["error"] == "invalid"
    assert f"{name}: " in body["detail"]


@pytest.mark.django_db
@pytest.mark.parametrize("value", HOSTILE.values(), ids=HOSTILE.keys())
@pytest.mark.parametrize(("method", "path", "name"), BODY)
def test_a_json_number_in_other_digits_is_a_400_naming_it(node_client, method, path, name, value):
    response = call_with(node_client, method, path, {}, {name: value})
    if len(value) > own_body_cap(path):
        # A view with a smaller body cap of its own (inspections' release) refuses the
        # huge number before reading it: a 413 saying so is the clear answer there.
        assert response.status_code == 413, response.content[:300]
        assert response.json()["error"] == "too_large"
        return
    assert response.status_code == 400, response.content[:300]
    assert f"{name}: " in response.json()["detail"]


@pytest.mark.slow
@pytest.mark.django_db
@pytest.mark.parametrize("value", HOSTILE.values(), ids=HOSTILE.keys())
@pytest.mark.parametrize(("method", "path", "name"), PATH)
def test_a_path_number_in_other_digits_is_a_404(node_client, method, path, name, value):
    url = path.replace("{" + name + "}", quote(value))
    response = call_with(node_client, method, url, other_numbers(path, method, ""))
    assert response.status_code == 404
    assert set(response.json()) == {"error", "detail"}


# The newznab API (/api, /rss) is not in the node API's schema: its numbers, by hand.
NEWZNAB_NUMBERS = [
    ("/api", {"t": "search"}, "limit", 201),
    ("/api", {"t": "search"}, "offset", 201),
    ("/api", {"t": "search"}, "maxage", 201),
    ("/api", {"t": "search"}, "cat", 201),
    ("/api", {"t": "tvsearch"}, "season", 201),
    ("/api", {"t": "tvsearch", "season": "1"}, "ep", 201),
    ("/api", {"t": "movie"}, "imdbid", 201),
    ("/api", {"t": "movie"}, "tmdbid", 201),
    ("/api", {"t": "tvsearch"}, "tvdbid", 201),
    ("/api", {"t": "tvsearch"}, "tvmazeid", 201),
    ("/api", {"t": "tvsearch"}, "rid", 201),
    ("/api", {"t": "search"}, "incomplete", 201),
    ("/api", {"t": "tvsearch", "q": "show", "season": "2024"}, "ep", 201),
    ("/api", {"t": "details"}, "id", 300),
    ("/api", {"t": "get"}, "id", 300),
    ("/rss", {}, "t", 201),
    ("/rss", {}, "num", 201),
    ("/rss", {}, "incomplete", 201),
]


@pytest.mark.django_db
@pytest.mark.parametrize("value", HOSTILE.values(), ids=HOSTILE.keys())
@pytest.mark.parametrize(("path", "given", "name", "code"), NEWZNAB_NUMBERS)
def test_a_newznab_number_in_other_digits_is_the_specs_error(
    client, path, given, name, code, value
):
    _, key = newznab_services.issue_api_key("fuzz")
    response = client.get(path, {**given, name: value, "apikey": key})
    assert response.status_code == 200  # the spec's errors are documents, not statuses
    assert error_code(response) == code
    description = parse(response).get("description")
    assert (f"({name}:" if code == 201 else "No such item") in description
