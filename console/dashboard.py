"""The operators' dashboard: an admin page at /admin/dashboard/.

The view reads `selectors.dashboard` and draws the SVG; it writes nothing
(folding the rollup's hours is periodic upkeep, seeding/maintenance.py, and
the chart sums the minutes of hours not folded yet). It refreshes itself
with a meta refresh every DASHBOARD_REFRESH_SECONDS.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from usenet.numbers import ascii_digits

from . import charts, selectors


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "no recent headers"
    if seconds <= 0:
        return "done"
    minutes = int(seconds // 60)
    if minutes < 60:
        return f"{max(minutes, 1)}m"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours}h {minutes:02d}m"
    return f"{hours // 24}d {hours % 24}h"


def dashboard_view(request: HttpRequest) -> HttpResponse:
    # Clamped by the selector; what is not ASCII digits ("-5", "\u0661", 21 digits) is page 1.
    text = request.GET.get("page", "1")
    page = int(text) if ascii_digits(text) else 1
    search = request.GET.get("q", "")
    data = selectors.dashboard(search, page)
    groups: list[dict[str, Any]] = [
        {
            "row": group,
            "map": charts.coverage_svg(group.coverage, group.name) if group.coverage else None,
            "eta": duration(group.eta_seconds),
            "percent": 100 * group.reached / group.planned if group.planned else 0,
        }
        for group in data.groups
    ]
    context = {
        **admin.site.each_context(request),
        "title": "Dashboard",
        "data": data,
        "groups": groups,
        "hourly": charts.hourly_svg(data.hourly),
        "headers_last_day": sum(value for _, value in data.hourly),
        "colours": charts.COLOURS,
        "refresh": settings.DASHBOARD_REFRESH_SECONDS,
        "previous_page": data.page - 1 if data.page > 1 else None,
        "next_page": data.page + 1 if data.page < data.pages else None,
    }
    response = TemplateResponse(request, "admin/dashboard.html", context)
    response["Cache-Control"] = "no-store"
    return response
