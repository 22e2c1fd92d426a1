"""What a staff session needs to read the status and the dashboard: the view
permissions of the admin pages listing the rows they sum up (ranges, nodes,
lanes, catalog files; the dashboard's groups too), each held as view or as
change, as the admin itself asks (`core.api.permissions.can_view`). Node
tokens read the status whatever these say (core/api/permissions.py)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from core.api.permissions import views_missing

STATUS_PERMISSIONS = (
    "seeding.view_seedrange",
    "indexer.view_node",
    "leases.view_grouplane",
    "catalog.view_catalogfile",
)
DASHBOARD_PERMISSIONS = (*STATUS_PERMISSIONS, "indexer.view_group")


def can_view_all(user: Any, permissions: Iterable[str]) -> bool:
    """Whether `user` sees every admin page these view permissions guard."""
    return not views_missing(user, permissions)
