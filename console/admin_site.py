"""The operators' console: Django's admin with extra pages (the dashboard).

Installed through `console.apps.ConsoleAdminConfig` in place of
django.contrib.admin, so `admin.site` is this site and every app registers
on it as usual. Extra pages come through get_urls() + admin_view().
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.urls import path

from .dashboard import dashboard_view


class ConsoleAdminSite(admin.AdminSite):
    site_header = "Seed coordinator"
    site_title = "Seed coordinator"
    index_template = "admin/console_index.html"

    def get_urls(self) -> list[Any]:
        return [
            path("dashboard/", self.admin_view(self.dashboard_view), name="dashboard"),
            *super().get_urls(),
        ]

    def dashboard_view(self, request: HttpRequest) -> HttpResponse:
        return dashboard_view(request)
