"""A safety net under the API: every error answer is the contract's JSON.

It rewrites what Django answers by itself before a view runs (a bad Host, an
unknown URL under /api/, a failing inner middleware), so a node never gets an
HTML page (docs/architecture.md, "Mechanisms").
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.signals import got_request_exception
from django.http import HttpRequest, HttpResponse

from core import queue_wait
from core.api.errors import error_response, exception_handler, response_for_unhandled

API_PREFIX = "/api/"

# What an error response Django made itself says, by status.
_BY_STATUS = {
    400: ("invalid", "The request was refused as malformed (check the Host header and URL)."),
    403: ("forbidden", "The request was refused."),
    413: ("too_large", "The body is over the configured limit; send smaller batches."),
    500: ("internal", "The coordinator failed; the error is logged."),
}


def _remember_exception(sender: Any, request: HttpRequest | None = None, **kwargs: Any) -> None:
    # Sent by Django while it handles the exception, so sys.exc_info() holds it.
    if request is not None and request.path.startswith(API_PREFIX):
        request._api_exception = sys.exc_info()[1]  # type: ignore[attr-defined]


got_request_exception.connect(_remember_exception, dispatch_uid="core.api.exception")


class ApiMiddleware:
    """A middleware that acts on API requests only (`api_call`); others pass through."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith(API_PREFIX):
            return self.get_response(request)
        return self.api_call(request)

    def api_call(self, request: HttpRequest) -> HttpResponse:
        raise NotImplementedError


class ApiErrorMiddleware(ApiMiddleware):
    def api_call(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        status = response.status_code
        if status < 400 or "json" in response.get("Content-Type", ""):
            return response
        exc = getattr(request, "_api_exception", None)
        if isinstance(exc, Exception):
            translated = exception_handler(exc, {})  # Django has logged it already
            if translated is not None:
                return translated
        if status == 404:
            return error_response(404, "not_found", f"There is no API endpoint at {request.path}.")
        code, detail = _BY_STATUS.get(status, ("error", f"The request failed (HTTP {status})."))
        return error_response(status, code, detail)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if request.path.startswith(API_PREFIX):
            return response_for_unhandled(exception)
        return None


class QueueWaitMiddleware(ApiMiddleware):
    """Work beyond capacity is told to wait: an API call that waited in gunicorn's
    queue longer than API_QUEUE_MAX_SECONDS gets 503 `unavailable` with Retry-After
    before anything runs, instead of an answer after the node's HTTP timeout."""

    def api_call(self, request: HttpRequest) -> HttpResponse:
        waited = queue_wait.waited()
        limit = settings.API_QUEUE_MAX_SECONDS
        if limit and waited is not None and waited > limit:
            return error_response(
                503,
                "unavailable",
                f"The coordinator is over capacity (this call waited {waited:.0f} s for a "
                "thread): nothing was done; retry after Retry-After seconds.",
            )
        return self.get_response(request)
