from __future__ import annotations

from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Core"

    def ready(self) -> None:
        from . import (
            checks,  # noqa: F401  (registers the system checks)
            pgarrays,  # noqa: F401  (registers its dumpers before any connection opens)
        )
