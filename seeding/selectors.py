"""Reads of the seeding app: range totals by status (the status report, the
dashboard and /metrics read them)."""

from __future__ import annotations

from .models import RangeStatus
from .sql import queries


def range_totals() -> dict[str, dict[str, int]]:
    """Ranges, articles, reached, headers and files by status, from the summary.

    Leased ranges' progress is read live (the summary keeps only their count
    and articles). Cheap at any size: the metrics endpoint reads it too.
    """
    by_status = {
        s.value: {"ranges": 0, "articles": 0, "reached": 0, "headers": 0, "files": 0}
        for s in RangeStatus
    }
    for row in queries.fetchdicts("totals_by_status", {}):
        name = row.pop("status")
        if name in by_status:
            by_status[name].update({k: int(v or 0) for k, v in row.items()})
    live = queries.fetchdicts("leased_progress", {})[0]
    leased = by_status[RangeStatus.LEASED]
    for key in ("reached", "headers", "files"):
        leased[key] = int(live[key])
    return by_status
