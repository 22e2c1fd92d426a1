"""Plain Django views outside the admin and the node API: /metrics."""

from __future__ import annotations

import hmac

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST

from .metrics import address_allowed, render_metrics


def metrics_allowed(request: HttpRequest) -> bool:
    """A scrape is allowed with the METRICS_TOKEN bearer token, from METRICS_ALLOW_IPS
    (loopback by default; REMOTE_ADDR, never a forwarded header) or in a staff session."""
    token = settings.METRICS_TOKEN
    header = request.META.get("HTTP_AUTHORIZATION", "")
    if token and header.startswith("Bearer "):
        if hmac.compare_digest(header.removeprefix("Bearer ").strip(), token):
            return True
    if address_allowed(request.META.get("REMOTE_ADDR", ""), settings.METRICS_ALLOW_IPS):
        return True
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_active and user.is_staff)


@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    if not metrics_allowed(request):
        return HttpResponse("Forbidden: see docs/console.md (metrics).\n", status=403)
    return HttpResponse(render_metrics(), content_type=CONTENT_TYPE_LATEST)
