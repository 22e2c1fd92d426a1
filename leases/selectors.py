"""Reads of the leases app: the lanes shown by /api/v1/status, seed_status and the admin."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from .queries import lanes_sql

STATUS_LIMIT = 500


def lanes_status(limit: int = STATUS_LIMIT) -> list[dict[str, Any]]:
    """Lanes that are held or have done work, live holders first (at most `limit`)."""
    rows = lanes_sql.fetchdicts("lanes_status", {"ttl": settings.LEASE_TTL_SECONDS, "limit": limit})
    for row in rows:
        for key in ("snapshot_next", "snapshot_age_seconds", "snapshot_size"):
            if row[key] is not None:
                row[key] = int(row[key])
        row["ranges_done"] = int(row["ranges_done"])
        row["headers"] = int(row["headers"])
    return rows


def live_lane_count() -> int:
    row = lanes_sql.fetchone("live_lane_count", {"ttl": settings.LEASE_TTL_SECONDS})
    return int(row[0]) if row else 0
