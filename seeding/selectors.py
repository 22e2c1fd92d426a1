"""Reads of the seeding app: the status report nodes and operators see."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings

from indexer.space import catalog_full, leasing_paused
from indexer.sql import Queries
from leases.selectors import lanes_status

from .models import RangeStatus

status_sql = Queries(Path(__file__).parent / "sql" / "status.sql")


def paused_reason() -> str | None:
    """Why range leasing is paused, if it is (the database or the catalog is too big)."""
    return leasing_paused()


def seed_status() -> dict[str, Any]:
    by_status = {
        s.value: {"ranges": 0, "articles": 0, "reached": 0, "headers": 0, "files": 0}
        for s in RangeStatus
    }
    for row in status_sql.fetchdicts("ranges_by_status", {}):
        name = row.pop("status")
        by_status[name] = {k: int(v) for k, v in row.items()}
    nodes = [
        {
            "name": row["name"],
            "last_seen": row["last_seen_at"].isoformat() if row["last_seen_at"] else None,
            "disabled": row["disabled"],
            "live_leases": int(row["live_leases"]),
            "headers": int(row["headers"]),
        }
        for row in status_sql.fetchdicts("nodes_status", {"ttl": settings.LEASE_TTL_SECONDS})
    ]
    last_hour = status_sql.fetchone("headers_since", {"seconds": 3600})
    return {
        "ranges": by_status,
        "nodes": nodes,
        "lanes": lanes_status(),
        "headers_last_hour": int(last_hour[0]) if last_hour else 0,
        "paused": paused_reason(),
        "catalog_full": catalog_full(),
    }
