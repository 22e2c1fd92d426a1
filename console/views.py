"""Plain Django views outside the admin and the node API: /metrics."""

from __future__ import annotations

import hmac

from django.conf import settings
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST

from core.api.errors import RETRY_AFTER_UNAVAILABLE
from core.client_address import address_in, client_address
from core.database_faults import if_unavailable

from .metrics import render_metrics
from .permissions import STATUS_PERMISSIONS, can_view_all


def bearer_matches(presented: str, token: str) -> bool:
    """Constant-time comparison of bytes: a non-ASCII str would make compare_digest raise."""
    return bool(token) and hmac.compare_digest(
        presented.encode("utf-8", "surrogateescape"), token.encode("utf-8")
    )


def metrics_allowed(request: HttpRequest) -> bool | None:
    """A scrape is allowed with the METRICS_TOKEN bearer token, from METRICS_ALLOW_IPS
    (loopback by default; the client's address, forwarded only by TRUSTED_PROXIES) or
    in a staff session holding the status's view permissions (the gauges are its
    totals). None: a bearer token was presented and is wrong (401, whatever the address)."""
    header = request.META.get("HTTP_AUTHORIZATION", "")
    if header.startswith("Bearer "):
        return (
            bearer_matches(header.removeprefix("Bearer ").strip(), settings.METRICS_TOKEN) or None
        )
    if address_in(client_address(request), settings.METRICS_ALLOW_IPS):
        return True
    user = getattr(request, "user", None)
    return bool(
        user is not None
        and user.is_active
        and user.is_staff
        and can_view_all(user, STATUS_PERMISSIONS)
    )


@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    allowed = metrics_allowed(request)
    if allowed is None:
        response = HttpResponse(
            "Unknown metrics token: see docs/console.md (metrics).\n", status=401
        )
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    if not allowed:
        return HttpResponse("Forbidden: see docs/console.md (metrics).\n", status=403)
    try:
        body = render_metrics()
    except DatabaseError as exc:  # the gauges need the database
        if not if_unavailable(exc):
            raise
        response = HttpResponse("The database is unavailable; scrape again later.\n", status=503)
        response["Retry-After"] = RETRY_AFTER_UNAVAILABLE
        return response
    return HttpResponse(body, content_type=CONTENT_TYPE_LATEST)
