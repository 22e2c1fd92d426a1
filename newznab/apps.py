from __future__ import annotations

from django.apps import AppConfig


class NewznabConfig(AppConfig):
    name = "newznab"
    verbose_name = "newznab API"
