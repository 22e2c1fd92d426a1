"""The node protocol's short dispatch (core/api/node_view.py): a node's call answers
exactly as through DRF's dispatch, and DRF's dispatch still serves everyone else."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient
from rest_framework.views import APIView

from core.api.node_view import NodeView
from tests.support.factories import NodeFactory

pytestmark = pytest.mark.django_db

UNKNOWN = "sn_" + "z" * 40


def answer(client: APIClient, method: str, path: str, **extra: Any) -> tuple[int, bytes, dict]:
    response = getattr(client, method)(path, **extra)
    body = response.content
    if path.endswith("/ping") and response.status_code == 200:
        body = body.split(b'"time":')[0]  # the clock moves between the two calls
    return response.status_code, body, dict(response.items())


CALLS: list[tuple[str, str, str | None, dict[str, Any]]] = [
    # (method, path, token: "node", "disabled", UNKNOWN or None, extra)
    ("get", "/api/v1/ping", "node", {}),
    ("head", "/api/v1/ping", "node", {}),
    ("get", "/api/v1/ping", "disabled", {}),
    ("get", "/api/v1/ping", UNKNOWN, {}),
    ("post", "/api/v1/ranges/lease", "node", {}),
    ("post", "/api/v1/ranges/7/heartbeat", "node", {"data": {"epoch": 1}, "format": "json"}),
    ("post", "/api/v1/ranges/7/heartbeat", "node", {"data": {"epoch": "x"}, "format": "json"}),
    ("post", "/api/v1/ranges/7/heartbeat", "node",
     {"data": b"{not json", "content_type": "application/json"}),
    ("post", "/api/v1/ranges/7/heartbeat", "node",
     {"data": b"epoch=1", "content_type": "text/plain"}),
    ("post", "/api/v1/ranges/7/batch", "node",
     {"data": {"epoch": 1, "next": 5, "headers": 1, "files": [], "fragments": []},
      "format": "json"}),
    ("post", "/api/v1/ranges/7/batch", "node", {"data": {"epoch": 1}, "format": "json"}),
    ("post", "/api/v1/ranges/0/finish", "node", {"data": {"epoch": 1}, "format": "json"}),
    ("post", "/api/v1/groups/lease", "node", {"data": {}, "format": "json"}),
]  # fmt: skip


@pytest.mark.parametrize(("method", "path", "token", "extra"), CALLS)
def test_a_node_call_answers_as_drfs_dispatch_would(
    monkeypatch: pytest.MonkeyPatch, method: str, path: str, token: str, extra: dict
) -> None:
    node = NodeFactory()
    disabled = NodeFactory(disabled=True)
    client = APIClient()
    presented = {"node": node.token, "disabled": disabled.token}.get(token, token)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {presented}")
    short = answer(client, method, path, **extra)
    monkeypatch.setattr(NodeView, "_node_handler", lambda self, request, kwargs: None)
    through_drf = answer(client, method, path, **extra)
    assert short == through_drf


def test_a_node_call_skips_drfs_dispatch_and_others_keep_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    node = NodeFactory()
    taken: list[str] = []
    initial = APIView.initial

    def counted(self: APIView, request: Any, *args: Any, **kwargs: Any) -> None:
        taken.append(type(self).__name__)
        initial(self, request, *args, **kwargs)

    monkeypatch.setattr(APIView, "initial", counted)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {node.token}")
    assert client.get("/api/v1/ping").status_code == 200
    assert taken == []
    # Another Accept, an OPTIONS and a call without a token take DRF's dispatch.
    assert client.get("/api/v1/ping", HTTP_ACCEPT="application/json; indent=2").status_code == 200
    assert client.options("/api/v1/ping").status_code == 200
    assert APIClient().get("/api/v1/ping").status_code == 401
    assert taken == ["PingView"] * 3
