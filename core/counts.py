"""Counts of big tables, exact up to COUNT_CAP rows and capped beyond.

A count(*) over hundreds of millions of catalog rows takes minutes; a count
that stops at COUNT_CAP + 1 reads at most that many rows. The admin's big
lists (core/admin_tools.py) and the catalog API's pages count this way.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

COUNT_CAP = 10_000


def capped_count(rows: QuerySet[Any]) -> int:
    """How many rows, counted up to COUNT_CAP + 1 (a count above COUNT_CAP means capped)."""
    return rows.order_by()[: COUNT_CAP + 1].count()
