from __future__ import annotations

from django.apps import AppConfig


class LeasesConfig(AppConfig):
    name = "leases"
    verbose_name = "Group leases"

    def ready(self) -> None:
        from indexer.signals import nodes_disabled
        from seeding import maintenance
        from seeding.signals import range_finished

        from .services import count_finished_range, release_node_lanes
        from .snapshot_objects import remove_expired_objects
        from .snapshots import remove_stale_parts

        range_finished.connect(count_finished_range, dispatch_uid="leases.count_finished_range")
        nodes_disabled.connect(release_node_lanes, dispatch_uid="leases.release_node_lanes")
        # Seeding's periodic upkeep runs this too (manage.py maintain, the lease path).
        maintenance.register(
            "remove_stale_snapshot_parts",
            "stale snapshot parts removed",
            remove_stale_parts,
            every=3600.0,
        )
        maintenance.register(
            "remove_expired_snapshot_objects",
            "replaced snapshot objects deleted",
            remove_expired_objects,
            every=300.0,
        )
