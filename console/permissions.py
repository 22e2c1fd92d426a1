"""What a staff session needs to read the status and the dashboard: the view
permissions of the admin pages listing the rows they sum up (ranges, nodes,
lanes, catalog files; the dashboard's groups too). Node tokens read the status
whatever these say (core/api/permissions.py)."""

from __future__ import annotations

STATUS_PERMISSIONS = (
    "seeding.view_seedrange",
    "indexer.view_node",
    "leases.view_grouplane",
    "catalog.view_catalogfile",
)
DASHBOARD_PERMISSIONS = (*STATUS_PERMISSIONS, "indexer.view_group")
