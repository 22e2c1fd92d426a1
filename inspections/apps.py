from __future__ import annotations

from django.apps import AppConfig


class InspectionsConfig(AppConfig):
    name = "inspections"
    verbose_name = "Inspections"

    def ready(self) -> None:
        from indexer.signals import nodes_disabled

        from . import tasks
        from .services import end_node_inspections

        nodes_disabled.connect(end_node_inspections, dispatch_uid="inspections.end_node_leases")
        tasks.register_tasks()
