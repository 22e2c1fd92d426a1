"""The lean path of a node's call (core/api/node_calls.py, core/api/negotiation.py):
the session middleware passes it by, and nothing else a client sees changes."""

from __future__ import annotations

from typing import Any

import pytest
from django.http import HttpRequest, HttpResponse
from django.test import Client, RequestFactory

from core.api.node_calls import AuthenticationMiddleware, SessionMiddleware, is_node_call

TOKEN = "Bearer sn_" + "a" * 40


def passed(middleware: Any, path: str, **headers: str) -> HttpRequest:
    seen: list[HttpRequest] = []

    def view(request: HttpRequest) -> HttpResponse:
        seen.append(request)
        return HttpResponse()

    middleware(view)(RequestFactory().get(path, **headers))
    return seen[0]


def test_a_node_call_is_one_under_the_api_with_a_node_tokens_form() -> None:
    factory = RequestFactory()
    assert is_node_call(factory.get("/api/v1/ping", HTTP_AUTHORIZATION=TOKEN))
    assert not is_node_call(factory.get("/api/v1/ping"))
    assert not is_node_call(factory.get("/api/v1/ping", HTTP_AUTHORIZATION="Bearer x"))
    assert not is_node_call(factory.get("/api/v1/ping", HTTP_AUTHORIZATION="Basic sn_abc"))
    assert not is_node_call(factory.get("/admin/", HTTP_AUTHORIZATION=TOKEN))


def test_the_session_and_user_are_loaded_for_everyone_but_a_node_call() -> None:
    for middleware in (SessionMiddleware, AuthenticationMiddleware):
        attribute = "session" if middleware is SessionMiddleware else "user"
        node = passed(middleware, "/api/v1/ping", HTTP_AUTHORIZATION=TOKEN)
        assert not hasattr(node, attribute)
    staff = passed(SessionMiddleware, "/api/v1/files")
    assert hasattr(staff, "session")
    admin = passed(SessionMiddleware, "/admin/", HTTP_AUTHORIZATION=TOKEN)
    assert hasattr(admin, "session")


@pytest.mark.django_db
def test_a_site_mounted_under_an_api_script_name_still_loads_the_admins_session() -> None:
    """SCRIPT_NAME is no part of the path the URLs resolve; a token on /admin/ there is no
    node call, and the admin gets its session and user (it raised AttributeError)."""
    client = Client()
    answer = client.get("/admin/", SCRIPT_NAME="/api", HTTP_AUTHORIZATION=TOKEN)
    assert answer.status_code == 302
    assert "/login/" in answer["Location"]
    assert not is_node_call(
        RequestFactory().get("/admin/", SCRIPT_NAME="/api", HTTP_AUTHORIZATION=TOKEN)
    )


@pytest.mark.django_db
def test_a_staff_session_still_reads_and_a_token_beside_it_is_still_the_token(
    admin_client: Client,
) -> None:
    assert admin_client.get("/api/v1/files").status_code == 200
    refused = admin_client.get("/api/v1/files", HTTP_AUTHORIZATION=TOKEN)
    assert refused.status_code == 401
    assert "Unknown token" in refused.json()["detail"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("accept", "status"),
    [(None, 200), ("*/*", 200), ("application/json", 200), ("application/json; indent=2", 200),
     ("text/html", 406)],
)  # fmt: skip
def test_the_answers_media_type_is_negotiated_as_before(
    node_client: Any, accept: str | None, status: int
) -> None:
    node = node_client()
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    answer = node.get("/api/v1/ping", **headers)
    assert answer.status_code == status
    assert answer["Content-Type"].startswith("application/json")
    if accept and "indent" in accept:
        assert b'\n  "ok"' in answer.content  # DRF's negotiation kept the parameter
