from __future__ import annotations

from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class IndexerConfig(AppConfig):
    default = True  # the module also holds the admin's config below
    name = "indexer"
    verbose_name = "Indexer"

    def ready(self) -> None:
        from . import (
            checks,  # noqa: F401  (registers the system checks)
            pgarrays,  # noqa: F401  (registers its dumpers before any connection opens)
        )


class ConsoleAdminConfig(admin_apps.AdminConfig):
    """django.contrib.admin with the console's site (named in INSTALLED_APPS)."""

    default = False
    default_site = "indexer.admin_site.ConsoleAdminSite"
