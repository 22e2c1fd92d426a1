"""A NUL in what a client sends is a 4xx that says so, never a 500.

PostgreSQL's text cannot hold a NUL (psycopg refuses it with a DataError), so
every place where a client's text reaches a query refuses one first: the
admin login's user name (tests/security/test_login_limits.py), the newznab
API's text parameters, the node API's query parameters, every admin page's
parameters (searches, list filters, the dashboard), the session cookie; and
the request log, which writes a client's path and address to a log line,
escapes it.
"""

from __future__ import annotations

import logging

import pytest
from django.db import DataError
from django.test import Client

from core.api.errors import exception_handler
from indexer.models import Group
from newznab import services as newznab_services
from tests.support.factories import GroupFactory, NodeFactory
from tests.support.newznab import error_code
from tests.support.staff import staff_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def api_key() -> str:
    return newznab_services.issue_api_key("nul-test")[1]


@pytest.mark.parametrize(
    "params",
    [
        {"t": "search", "q": "a\x00b"},
        {"t": "search", "group": "alt.binaries\x00"},
        {"t": "tvsearch", "q": "show\x00", "season": "1", "ep": "\x00"},
        {"t": "movie", "q": "\x00"},
    ],
)
def test_a_nul_in_a_newznab_text_parameter_is_error_201(api_key, params):
    response = Client(raise_request_exception=False).get("/api", {**params, "apikey": api_key})
    assert response.status_code == 200  # newznab's errors are documents
    assert error_code(response) == 201
    assert b"NUL character" in response.content


@pytest.mark.parametrize(
    "query",
    [
        "files?group=alt.x%00",
        "files?q=%00",
        "files?message_id=%00",
        "files?%00=1",
        "releases?q=a%00b",
        "releases?group=%00",
        "releases?category=%00",
        "releases?after=%00",
    ],
)
def test_a_nul_in_a_node_api_query_parameter_is_a_400_naming_it(query):
    node = NodeFactory()
    client = Client(raise_request_exception=False, HTTP_AUTHORIZATION=f"Bearer {node.token}")
    response = client.get(f"/api/v1/{query}")
    assert response.status_code == 400
    assert response.json()["error"] == "invalid"


def test_a_nul_the_database_meets_in_the_api_is_a_400_that_says_so():
    refused = DataError("PostgreSQL text fields cannot contain NUL (0x00) bytes")
    response = exception_handler(refused, {})
    assert response is not None and response.status_code == 400
    assert b"NUL character" in response.content


@pytest.mark.parametrize(
    "path",
    [
        "/admin/indexer/group/?name=a%00b",  # a list filter on a field
        "/admin/indexer/auditentry/?action=%00",  # a list filter's choice
        "/admin/indexer/group/?q=%00",  # the search box
        "/admin/auth/user/?username=%00",  # Django's own pages too
        "/admin/dashboard/?q=%00",
        "/admin/indexer/group/?a%00b=1",
    ],
)
def test_a_nul_in_an_admin_page_parameter_is_a_400_page(path):
    GroupFactory(name="alt.binaries.nul")
    client = staff_client("root", [], superuser=True)
    client.raise_request_exception = False
    response = client.get(path)
    assert response.status_code == 400
    assert "holds a NUL character (%00)" in response.content.decode()


def test_a_nul_in_an_admin_form_post_is_a_400_page():
    group = GroupFactory(name="alt.binaries.nul")
    client = staff_client("root", [], superuser=True)
    client.raise_request_exception = False
    response = client.post(
        "/admin/indexer/group/", {"action": "delete_selected", "_selected_action": ["\x00"]}
    )
    assert response.status_code == 400
    assert Group.objects.filter(pk=group.pk).exists()


@pytest.mark.parametrize("cookie", ['sessionid="abcdefghij\\000"', "sessionid=abcdefgh\x00"])
def test_a_session_cookie_with_a_nul_is_no_session(cookie):
    client = Client(raise_request_exception=False, HTTP_COOKIE=cookie)
    response = client.get("/admin/")
    assert response.status_code == 302  # to the login page, as any unknown session
    assert response["Location"].startswith("/admin/login/")


def test_a_nul_in_a_path_or_an_address_is_escaped_in_the_request_log(caplog):
    node = NodeFactory()
    client = Client(raise_request_exception=False, HTTP_AUTHORIZATION=f"Bearer {node.token}")
    with caplog.at_level(logging.INFO, logger="indexer.requests"):
        client.get(
            "/api/v1/files%00x", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="10.0.0.1\x00"
        )
    (line,) = [r.getMessage() for r in caplog.records if r.name == "indexer.requests"]
    assert "\x00" not in line and 'path="/api/v1/files\\x00x"' in line
    assert "status=404" in line and "client=127.0.0.1" in line
