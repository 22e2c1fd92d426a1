"""The coordinator's settings with the fault suite's crash points on (core/crashpoints.py)."""

from __future__ import annotations

from coordinator.settings import *  # noqa: F403

CRASH_POINTS = True
