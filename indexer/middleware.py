"""A safety net under the API: anything that escapes a view still answers JSON.

DRF's exception handler maps errors raised inside views. Failures outside
them (the database dropping while middleware touches the session, an
unknown URL under /api/) are caught here, so a node always gets the
contract's error shape and never an HTML 500.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from indexer.api.errors import error_response, response_for_unhandled

API_PREFIX = "/api/"


class ApiErrorMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith(API_PREFIX):
            return self.get_response(request)
        try:
            response = self.get_response(request)
        except Exception as exc:
            return response_for_unhandled(exc)
        if response.status_code == 404 and "json" not in response.get("Content-Type", ""):
            return error_response(404, "not_found", f"There is no API endpoint at {request.path}.")
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if request.path.startswith(API_PREFIX):
            return response_for_unhandled(exception)
        return None
