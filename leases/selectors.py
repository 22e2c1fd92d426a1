"""Reads of the leases app: the lanes shown by /api/v1/status, seed_status and the admin."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from .sql import queries

STATUS_LIMIT = 500


def lanes_status(limit: int = STATUS_LIMIT) -> list[dict[str, Any]]:
    """Lanes that are held or have done work, live holders first (at most `limit`)."""
    return queries.fetchdicts("lanes_status", {"ttl": settings.LEASE_TTL_SECONDS, "limit": limit})
