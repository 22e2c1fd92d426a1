"""Bodies are read only where a route takes one and the caller may send it (core/api/bodies.py).

Each request here carries a body the coordinator must not read; its WSGI
input counts reads, so "refused before the body is read" is what is checked,
not only the status. The worker's main loop applies the same rules before a
thread is taken (tests/deploy/test_held_bodies.py drives a real `serve`).
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client, override_settings

from core.api.bodies import Head, head_from_bytes, refusal
from tests.support.factories import SeedRangeFactory
from tests.support.nodes import NodeClient

pytestmark = pytest.mark.django_db

FORM = "application/x-www-form-urlencoded"
EIGHT_MIB = 8 << 20
TOKEN = "sn_" + "A" * 32  # a node token's form, issued to nobody


class CountingInput:
    """A WSGI input that yields `size` bytes and counts the reads."""

    def __init__(self, size: int, fill: bytes = b"a", fail: Exception | None = None) -> None:
        self.left = size
        self.fill = fill
        self.fail = fail
        self.reads = 0

    def read(self, size: int = -1) -> bytes:
        self.reads += 1
        if self.fail is not None:
            raise self.fail
        size = self.left if size is None or size < 0 else min(size, self.left)
        self.left -= size
        return self.fill * size

    def readline(self, size: int = -1) -> bytes:
        return self.read(size)


def send(client: Client, method: str, path: str, body: CountingInput, size: int, **extra: Any):
    return client.generic(
        method,
        path,
        CONTENT_LENGTH=str(size),
        CONTENT_TYPE=extra.pop("content_type", FORM),
        **{"wsgi.input": body},
        **extra,
    )


def test_an_unauthenticated_login_form_of_8_mib_is_refused_before_a_byte_is_read(client):
    client.cookies["csrftoken"] = "x" * 32  # forged: before, CSRF's check read the form
    body = CountingInput(EIGHT_MIB)
    response = send(client, "POST", "/admin/login/", body, EIGHT_MIB)
    assert response.status_code == 413
    assert b"without a login session may send at most 8192 bytes" in response.content
    assert body.reads == 0


def test_a_forged_session_cookie_does_not_get_a_large_form_read(client):
    client.cookies["csrftoken"] = "x" * 32
    client.cookies["sessionid"] = "abcdefgh" * 4  # a session key's form, no such session
    body = CountingInput(64 * 1024)
    response = send(client, "POST", "/admin/indexer/group/add/", body, 64 * 1024)
    assert response.status_code == 413
    assert b"Log in first" in response.content
    assert body.reads == 0


def test_the_login_form_itself_fits_the_unauthenticated_limit(client, django_user_model):
    django_user_model.objects.create_user("ops", password="right-password", is_staff=True)
    response = client.post("/admin/login/", {"username": "ops", "password": "right-password"})
    assert response.status_code == 302


def test_a_logged_in_session_may_send_a_large_form(admin_client):
    body = CountingInput(64 * 1024)
    response = send(admin_client, "POST", "/admin/indexer/group/add/", body, 64 * 1024)
    assert response.status_code == 200  # the form again: a field of 64 KiB of junk
    assert body.reads > 0


@pytest.mark.parametrize("path", ["/healthz", "/api/v1/ping", "/admin/login/", "/api"])
def test_a_body_on_a_get_is_refused_unread(client, path):
    body = CountingInput(100 << 20)
    response = send(client, "GET", path, body, 100 << 20, HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    if path == "/healthz":  # answered before anything else, and nothing reads it
        assert response.status_code == 200
    else:
        assert response.status_code == 413
        assert b"takes no body" in response.content
    assert body.reads == 0


def test_an_api_call_without_a_token_may_not_send_a_large_batch(client):
    body = CountingInput(2 << 20)
    response = send(
        client, "POST", "/api/v1/ranges/1/batch", body, 2 << 20, content_type="application/json"
    )
    assert response.status_code == 413
    assert response.json()["error"] == "too_large"
    assert "node token" in response.json()["detail"]
    assert body.reads == 0


def test_a_forged_token_gets_its_401_before_its_batch_is_read(client):
    body = CountingInput(2 << 20)
    response = send(
        client,
        "POST",
        "/api/v1/ranges/1/batch",
        body,
        2 << 20,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {TOKEN}",
    )
    assert response.status_code == 401
    assert body.reads == 0


def test_a_forged_token_gets_its_401_before_its_snapshot_is_read(client):
    body = CountingInput(100 << 20)
    response = send(
        client,
        "PUT",
        "/api/v1/groups/1/lanes/history/snapshot?epoch=1&next=5",
        body,
        100 << 20,
        content_type="application/gzip",
        HTTP_AUTHORIZATION=f"Bearer {TOKEN}",
    )
    assert response.status_code == 401
    assert body.reads == 0


def test_a_batch_that_stops_arriving_is_a_400_not_a_500(node_client):
    node: NodeClient = node_client()
    SeedRangeFactory(start_id=1000, end_id=5999)
    lease = node.lease()
    assert lease is not None
    body = CountingInput(5000, fail=TimeoutError("no byte arrived for 60 s"))
    response = node.http.generic(
        "POST",
        f"/api/v1/ranges/{lease['id']}/batch",
        content_type="application/json",
        CONTENT_LENGTH="5000",
        **{"wsgi.input": body},
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid"
    assert "no byte arrived for 60 s" in response.json()["detail"]


def test_a_chunked_body_without_credentials_must_say_its_length(client):
    response = client.generic("POST", "/admin/login/", HTTP_TRANSFER_ENCODING="chunked")
    assert response.status_code == 411


@override_settings(UNAUTHENTICATED_MAX_BODY_BYTES=2048)
def test_the_unauthenticated_limit_is_the_setting(client):
    body = CountingInput(4096)
    response = send(client, "POST", "/admin/login/", body, 4096)
    assert response.status_code == 413
    assert b"at most 2048 bytes" in response.content


@pytest.mark.parametrize(
    ("head", "status"),
    [
        (b"POST /admin/login/ HTTP/1.1\r\nContent-Length: 9000", 413),
        (b"POST /admin/login/ HTTP/1.1\r\nContent-Length: 8000", None),
        (b"POST /admin/login/ HTTP/1.1\r\nCookie: sessionid=abcdefgh12345678\r\n"
         b"Content-Length: 9000", None),  # a session's form: the gate checks it
        (b"POST /admin/login/ HTTP/1.1\r\nCookie: sessionid=../../x\r\nContent-Length: 9000",
         413),  # not a session key
        (b"POST /api/v1/ranges/1/batch HTTP/1.1\r\nAuthorization: Bearer " + TOKEN.encode()
         + b"\r\nContent-Length: 30000000", None),
        (b"POST /admin/login/ HTTP/1.1\r\nAuthorization: Bearer " + TOKEN.encode()
         + b"\r\nContent-Length: 9000", 413),  # a token opens the API, not the admin
        (b"POST /api/v1/ranges/1/batch HTTP/1.1\r\nAuthorization: Bearer nope\r\n"
         b"Content-Length: 9000", 413),  # not a node token's form
        (b"POST /api/v1/ranges/1/batch HTTP/1.1\r\nAuthorization: Bearer " + TOKEN.encode()
         + b"\r\nContent-Length: 70000000", None),  # over API_MAX_BODY_BYTES: the view's 413
        (b"PUT /api/v1/groups/1/lanes/tail/snapshot HTTP/1.1\r\nAuthorization: Bearer "
         + TOKEN.encode() + b"\r\nContent-Length: 70000000", None),  # SNAPSHOT_MAX_BYTES
        (b"PUT /api/v1/groups/1/lanes/tail/snapshot HTTP/1.1\r\nAuthorization: Bearer "
         + TOKEN.encode() + b"\r\nTransfer-Encoding: chunked", None),
        (b"POST /admin/login/ HTTP/1.1\r\nTransfer-Encoding: chunked", 411),
        (b"GET /healthz HTTP/1.1\r\nContent-Length: 1", 413),
        (b"GET http://x/api/v1/ping?a=b HTTP/1.1\r\nTransfer-Encoding: chunked", 413),
        (b"GET /healthz HTTP/1.1\r\nContent-Length: 0", None),
        (b"POST / HTTP/1.1\r\nContent-Length: " + b"9" * 5000, 400),  # int() would raise
        (b"POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6", 400),
        (b"POST / HTTP/1.1\r\nContent-Length: -5", 400),
    ],
)  # fmt: skip
def test_the_rules_read_from_a_head(head: bytes, status: int | None) -> None:
    parsed = head_from_bytes(head)
    assert isinstance(parsed, Head)
    refused = refusal(parsed)
    assert (refused.status if refused else None) == status


@pytest.mark.parametrize("head", [b"GET /", b"GET / HTTP/1.1\r\nno colon here"])
def test_what_is_not_a_request_head_is_left_to_gunicorn(head: bytes) -> None:
    assert head_from_bytes(head) is None
