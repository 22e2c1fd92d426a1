"""One structured log line per API request, and the 409 counter.

`api method=POST path=/api/v1/ranges/12/batch status=200 duration_ms=3.1
client=203.0.113.9 node=seed-1 range=12` on the `indexer.requests` logger (the
client's address as every limit keys it, core/client_address.py) (key=value, values
quoted when they hold spaces); with `LOG_FORMAT=json`, one JSON object with the
same fields as keys. Never the query string, headers or body: a
token or a news-server password cannot end up in the log from here.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from django.http import HttpRequest, HttpResponse

from core.api.middleware import ApiMiddleware
from core.api.permissions import NodeIdentity
from core.client_address import client_address
from core.metrics import CONFLICTS

logger = logging.getLogger("indexer.requests")

# URL parameters worth a field of their own.
URL_FIELDS = {"range_id": "range", "group_id": "group", "lane": "lane"}


def format_fields(fields: dict[str, Any]) -> str:
    """key=value pairs; a value with spaces, quotes, '=' or anything unprintable is
    quoted and escaped, so a client's path can never start a line of its own."""
    parts = []
    for key, value in fields.items():
        text = str(value)
        if not text or not text.isprintable() or any(c in text for c in ' "='):
            escaped = text.encode("unicode_escape").decode("ascii").replace('"', '\\"')
            text = f'"{escaped}"'
        parts.append(f"{key}={text}")
    return " ".join(parts)


class ApiRequestLogMiddleware(ApiMiddleware):
    def api_call(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        duration_ms = (time.perf_counter() - started) * 1000
        if response.status_code == 409:
            CONFLICTS.inc()
        fields: dict[str, Any] = {
            "method": request.method,
            "path": request.path,
            "status": response.status_code,
            "duration_ms": round(duration_ms, 1),
            "client": client_address(request),
        }
        # DRF puts the authenticated node on the request; a session user is never read here.
        user = request.__dict__.get("user")
        if type(user) is NodeIdentity:  # type(), not isinstance: a lazy session user stays lazy
            fields["node"] = user.name
        match = request.resolver_match
        if match is not None:
            for name, field in URL_FIELDS.items():
                if name in match.kwargs:
                    fields[field] = match.kwargs[name]
        # With LOG_FORMAT=json the fields become keys of the line (core/log_format.py).
        logger.info("api %s", format_fields(fields), extra={"fields": fields})
        return response
