from __future__ import annotations

from django.apps import AppConfig


class LeasesConfig(AppConfig):
    name = "leases"
    verbose_name = "Group leases"

    def ready(self) -> None:
        from seeding.signals import range_finished

        from .services import count_finished_range

        range_finished.connect(count_finished_range, dispatch_uid="leases.count_finished_range")
