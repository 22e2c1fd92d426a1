"""An API client that speaks for one node."""

from __future__ import annotations

from typing import Any

from rest_framework.test import APIClient


class NodeClient:
    """An HTTP client that speaks for one node (real Django request handling)."""

    def __init__(self, node: Any) -> None:
        self.node = node
        self.http = APIClient()
        self.http.credentials(HTTP_AUTHORIZATION=f"Bearer {node.token}")

    def post(self, path: str, body: Any = None, **extra: Any) -> Any:
        return self.http.post(path, body if body is not None else {}, format="json", **extra)

    def get(self, path: str, **extra: Any) -> Any:
        return self.http.get(path, **extra)

    def lease(self) -> dict[str, Any] | None:
        response = self.post("/api/v1/ranges/lease")
        assert response.status_code == 200, response.content
        return response.json()["lease"]
