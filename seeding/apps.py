from __future__ import annotations

from django.apps import AppConfig


class SeedingConfig(AppConfig):
    name = "seeding"
    verbose_name = "Seeding"

    def ready(self) -> None:
        from indexer.signals import nodes_disabled

        from .services import end_node_leases

        nodes_disabled.connect(end_node_leases, dispatch_uid="seeding.end_node_leases")
