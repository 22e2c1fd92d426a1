"""Which ranges a lane works, from the settings.

The tail lane works ranges with priority <= TAIL_PRIORITY; the history lane
the rest within LEASE_PRIORITY_MIN..LEASE_PRIORITY_MAX and, with
LEASE_CAPTURE_ONLY, only ranges flagged capture. SQL classifies a range with
`group_lane_of(priority, capture, **lane_bounds())` (migration 0002), so the
range claim, a lane's `next` and the planned-work trigger agree.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from .models import Lane

LANES = tuple(lane.value for lane in Lane)


def lane_bounds() -> dict[str, Any]:
    """The bounds as query parameters (also the trigger's group_lane_config row)."""
    return {
        "tail_max": int(settings.TAIL_PRIORITY),
        "history_min": int(settings.LEASE_PRIORITY_MIN),
        "history_max": int(settings.LEASE_PRIORITY_MAX),
        "capture_only": bool(settings.LEASE_CAPTURE_ONLY),
    }
