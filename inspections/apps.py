from __future__ import annotations

from django.apps import AppConfig


class InspectionsConfig(AppConfig):
    name = "inspections"
    verbose_name = "Inspections"

    def ready(self) -> None:
        from catalog.inspection import register_requeue
        from indexer.signals import nodes_disabled

        from . import tasks
        from .services import end_node_inspections, reinspect_releases

        nodes_disabled.connect(end_node_inspections, dispatch_uid="inspections.end_node_leases")
        register_requeue(reinspect_releases)  # the admin's and manage.py's "inspect again"
        tasks.register_tasks()
