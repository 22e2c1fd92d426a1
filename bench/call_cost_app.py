"""The WSGI application bench/bench_call_cost.py serves: the coordinator's own,
plus its two baselines on the same gunicorn configuration.

- `GET /bench/bare-wsgi`: a bare WSGI callable answering a fixed byte string
  (gunicorn and its worker only; Django never sees the request);
- `GET /api/v1/bench/bare-view`: a bare Django view under the API's prefix, so
  it passes the same middleware as `/api/v1/ping`, with no database, no
  authentication and no DRF.

Bench only: never served by `manage.py serve`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.urls import path

from coordinator.wsgi import application as coordinator  # sets Django up

ANSWER = b'{"ok": true}'
BARE_WSGI = "/bench/bare-wsgi"
BARE_VIEW = "api/v1/bench/bare-view"


def bare_view(request: HttpRequest) -> HttpResponse:
    return HttpResponse(ANSWER, content_type="application/json")


def add_bare_view() -> None:
    """Before the first request, so the resolver (built lazily) sees it; after
    Django's setup (the URLs import the views and their models)."""
    from coordinator import urls

    urls.urlpatterns.insert(0, path(BARE_VIEW, bare_view))


add_bare_view()


def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    if environ.get("PATH_INFO") == BARE_WSGI:
        start_response(
            "200 OK",
            [("Content-Type", "application/json"), ("Content-Length", str(len(ANSWER)))],
        )
        return [ANSWER]
    return coordinator(environ, start_response)
