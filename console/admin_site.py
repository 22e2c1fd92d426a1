"""The operators' console: Django's admin with extra pages (the dashboard).

Installed through `console.apps.ConsoleAdminConfig` in place of
django.contrib.admin, so `admin.site` is this site and every app registers
on it as usual. Extra pages come through get_urls() + admin_view().
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect
from django.urls import path, re_path

from core.admin_tools import nul_parameter, refused_page
from core.errors import Throttled

from .dashboard import dashboard_view
from .login_limits import login_buckets
from .permissions import DASHBOARD_PERMISSIONS, can_view_all


def login_refused(exc: Throttled) -> HttpResponse:
    response = HttpResponse(
        f"{exc.detail} Ask another operator if you have lost the password.\n",
        status=429,
        content_type="text/plain",
    )
    response["Retry-After"] = str(exc.retry_after)
    return response


# The catalog's pages were under /admin/indexer/ until the catalog became its
# own app; an old bookmark is sent on to the same page there.
MOVED_TO_CATALOG = r"^indexer/(?P<model>catalogfile|release|rulesetversion)/"


def moved_to_catalog(request: HttpRequest, model: str, rest: str) -> HttpResponse:
    old = f"/indexer/{model}/"
    return HttpResponsePermanentRedirect(
        request.get_full_path().replace(old, f"/catalog/{model}/", 1)
    )


class ConsoleAdminSite(admin.AdminSite):
    site_header = "Seed coordinator"
    site_title = "Seed coordinator"
    index_template = "admin/console_index.html"

    def admin_view(self, view: Callable[..., Any], cacheable: bool = False) -> Any:
        """Every admin page (lists, forms, the dashboard): a parameter holding a NUL
        is a 400 page saying so; a list filter or a search sent it to PostgreSQL,
        whose text cannot hold one (a 500)."""

        @wraps(view)
        def refusing_nul(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
            name = nul_parameter(request)
            if name is not None:
                sentence = (
                    f"The parameter {name!r} holds a NUL character (%00), which nothing "
                    "here can hold; send it without one."
                )
                return refused_page(self, request, sentence, request.path, "Back")
            return view(request, *args, **kwargs)

        return super().admin_view(refusing_nul, cacheable)

    def get_urls(self) -> list[Any]:
        return [
            path("dashboard/", self.admin_view(self.dashboard_view), name="dashboard"),
            re_path(MOVED_TO_CATALOG + r"(?P<rest>.*)$", moved_to_catalog),
            *super().get_urls(),
        ]

    def dashboard_view(self, request: HttpRequest) -> HttpResponse:
        """The dashboard sums up ranges, nodes, lanes, groups and files: a login needs
        to see each on its own page (view or change; console/permissions.py)."""
        if not can_view_all(request.user, DASHBOARD_PERMISSIONS):
            raise PermissionDenied(
                "The dashboard needs the view (or change) permission on "
                + ", ".join(DASHBOARD_PERMISSIONS)
                + "."
            )
        return dashboard_view(request)

    def index(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> Any:
        allowed = can_view_all(request.user, DASHBOARD_PERMISSIONS)
        return super().index(request, {**(extra_context or {}), "dashboard_allowed": allowed})

    def login(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> Any:
        """Django's login, throttled: failed attempts are counted in PostgreSQL
        (console/login_limits.py, shared by every host); past a limit a POST is
        refused with 429 before the password is even checked."""
        if request.method != "POST":
            return super().login(request, extra_context)
        buckets = login_buckets(request)
        try:
            buckets.check()
        except Throttled as exc:
            return login_refused(exc)
        response = super().login(request, extra_context)
        if response.status_code != 302:  # the form again: the login failed
            buckets.count_failure()
        return response
