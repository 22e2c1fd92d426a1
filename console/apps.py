from __future__ import annotations

from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class ConsoleConfig(AppConfig):
    """The operators' console: admin site, dashboard, status report and /metrics.

    The top layer: it reads every app below it and nothing imports it
    (docs/architecture.md).
    """

    default = True  # the module also holds the admin's config below
    name = "console"
    verbose_name = "Console"


class ConsoleAdminConfig(admin_apps.AdminConfig):
    """django.contrib.admin with the console's site (named in INSTALLED_APPS)."""

    default = False
    default_site = "console.admin_site.ConsoleAdminSite"
