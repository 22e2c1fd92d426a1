from __future__ import annotations

from django.apps import AppConfig


class SeedingConfig(AppConfig):
    name = "seeding"
    verbose_name = "Seeding"
